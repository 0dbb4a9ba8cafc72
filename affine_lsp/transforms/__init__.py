"""Source-to-source transformations as minimal text edits: loop fusion (`fusion`)
and the classic loop transformations (`loops`), each a package with its own face.

The modules here are shared by both (they import them directly; `functions`:
a function's errors, a rewritten function parsed back and verified, which
values may be symbols; `cursor`: the loops at a cursor or selection; `bounds`:
isl texts as affine forms, printed as MLIR bounds and maps). What other layers use of them:

    apply_edits(data, edits), sorted_edits, OverlappingEdits, EditMap
                                     byte edits (`edits`)
    line_start(data, offset), next_line_start(data, offset)
                                     the whole lines around an offset (`edits`)
    minimal_edits(old, new)          the smallest line edits between two texts (`diff`)
    FreshNames, names_in             fresh SSA names (`naming`)
"""

from affine_lsp.transforms.diff import minimal_edits
from affine_lsp.transforms.edits import (
    EditMap,
    OverlappingEdits,
    apply_edits,
    line_start,
    next_line_start,
    sorted_edits,
)
from affine_lsp.transforms.naming import FreshNames, names_in

__all__ = [
    "EditMap",
    "FreshNames",
    "OverlappingEdits",
    "apply_edits",
    "line_start",
    "minimal_edits",
    "names_in",
    "next_line_start",
    "sorted_edits",
]
