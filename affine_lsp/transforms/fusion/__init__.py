"""Loop fusion that is proven legal: one core for the CLI and the code actions.

PairFusion(data, model, function, first, second, mode, options)
    every depth at which `first` fuses into `second`: legality (exact dataflow
    check of the fused text), extra computation, edits; `.best()`.
fuse_all(data, options, only)   fusion over a document: dead nests removed, greedy
                                runs, a bounded search over their order.
fusion_actions(...)             (in `.actions`) the editor's code actions.
"""

from affine_lsp.transforms.fusion.actions import FusionAction, fusion_actions
from affine_lsp.transforms.fusion.engine import (
    PRODUCER_CONSUMER,
    SIBLING,
    Candidate,
    FusionOptions,
    PairFusion,
)
from affine_lsp.transforms.fusion.greedy import FuseAllResult, Fusion, Removed, fuse_all
from affine_lsp.transforms.fusion.nests import function_of, nest_at, next_nest

__all__ = [
    "PRODUCER_CONSUMER",
    "SIBLING",
    "Candidate",
    "FuseAllResult",
    "Fusion",
    "FusionAction",
    "FusionOptions",
    "PairFusion",
    "Removed",
    "function_of",
    "fusion_actions",
    "fuse_all",
    "nest_at",
    "next_nest",
]
