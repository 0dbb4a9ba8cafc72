"""Loop fusion that is proven legal: one core for the CLI and the code actions.

PairFusion(data, model, function, first, second, mode, options)
    every depth at which `first` fuses into `second` (mode PRODUCER_CONSUMER or
    SIBLING): legality (exact dataflow check of the fused text), extra
    computation, edits, as `Candidate`s; `.best()`. Options: `FusionOptions`.
fuse_all(data, options, only)   fusion over a document: dead nests removed, greedy
                                runs, a bounded search over their order (`FuseAllResult`
                                of `Fusion`s and `Removed` nests, the pairs left apart
                                as `Considered`, with why).
fusion_actions(...)             the editor's code actions (`FusionAction`s).
shift_text(amounts)             a shift in messages (`shifted by 1`, `aligned`).
functions, nest_at, nest_on_line, next_nest, loops_in, memrefs_touched
                                finding nests and what they touch.
"""

from affine_lsp.transforms.fusion.actions import FusionAction, fusion_actions
from affine_lsp.transforms.fusion.engine import (
    PRODUCER_CONSUMER,
    SIBLING,
    Candidate,
    FusionOptions,
    PairFusion,
)
from affine_lsp.transforms.fusion.greedy import (
    Considered,
    FuseAllResult,
    Fusion,
    Removed,
    fuse_all,
)
from affine_lsp.transforms.fusion.nests import (
    functions,
    loops_in,
    memrefs_touched,
    nest_at,
    nest_on_line,
    next_nest,
)
from affine_lsp.transforms.fusion.shift import shift_text

__all__ = [
    "PRODUCER_CONSUMER",
    "SIBLING",
    "Candidate",
    "Considered",
    "FuseAllResult",
    "Fusion",
    "FusionAction",
    "FusionOptions",
    "PairFusion",
    "Removed",
    "functions",
    "fusion_actions",
    "fuse_all",
    "loops_in",
    "memrefs_touched",
    "nest_at",
    "nest_on_line",
    "next_nest",
    "shift_text",
]
