"""Code generation from per-statement schedules: a window of loop nests regenerated
in a new order by isl's AST generator, as ordinary affine MLIR.

    statements_of(window) -> list[Statement]
        the window's ops as statements (maximal runs of non-loop ops of a block,
        with their iteration domains); Unschedulable (a PolyError) says why not
    Scheduled(statements, times, dims, relation=None, extents={})
        per statement a time vector (isl expressions of its dims) in a common
        time space (or `relation`, the schedule as an isl union map: what isl's
        scheduler gives; `extents`: per statement a box of its dims its loops are
        generated over, its own domain an affine.if around each instance);
        Dimension(name, parallel, separate, loops) per time dim
    generate(session, data, window, scheduled, indent, unit, names) -> Generated
        the text (loops, guards, instances of the statements with their ivs
        substituted into their affine maps) and, per generated op, the `Copy`
        it is: the original op, its renames and the substitution of its ivs
    schedule_map(session, scheduled)      the time vectors as one isl union map

The generated text is proven like any rewrite (`transforms.loops.proof`).
"""

from affine_lsp.transforms.schedule.generate import (
    Dimension,
    Generated,
    Scheduled,
    generate,
    schedule_map,
)
from affine_lsp.transforms.schedule.instances import Copy
from affine_lsp.transforms.schedule.statements import Statement, Unschedulable, statements_of

__all__ = [
    "Copy",
    "Dimension",
    "Generated",
    "Scheduled",
    "Statement",
    "Unschedulable",
    "generate",
    "schedule_map",
    "statements_of",
]
