"""Loop fusion that is proven legal: one core for the CLI and the code actions.

PairFusion(data, model, function, first, second, mode, options)
    every depth at which `first` fuses into `second` (mode PRODUCER_CONSUMER or
    SIBLING): legality (exact dataflow check of the fused text), extra
    computation, edits, as `Candidate`s; `.best()`. Options: `FusionOptions`.
fuse_all(data, options, only)   greedy fusion over a document (`FuseAllResult`
                                of `Fusion`s).
fusion_actions(...)             the editor's code actions (`FusionAction`s).
function_of, nest_at, nest_on_line, next_nest   finding nests.

Used by the loop transformations too: parse_function (re-parse a rewritten
function and verify it), has_errors (syntax or verifier errors in a function),
is_valid_symbol (a value usable as a symbol of a rewritten bound).
"""

from affine_lsp.transforms.fusion.actions import FusionAction, fusion_actions, has_errors
from affine_lsp.transforms.fusion.engine import (
    PRODUCER_CONSUMER,
    SIBLING,
    Candidate,
    FusionOptions,
    PairFusion,
)
from affine_lsp.transforms.fusion.greedy import FuseAllResult, Fusion, fuse_all
from affine_lsp.transforms.fusion.nests import function_of, nest_at, nest_on_line, next_nest
from affine_lsp.transforms.fusion.render import is_valid_symbol
from affine_lsp.transforms.fusion.verify import parse_function

__all__ = [
    "PRODUCER_CONSUMER",
    "SIBLING",
    "Candidate",
    "FuseAllResult",
    "Fusion",
    "FusionAction",
    "FusionOptions",
    "PairFusion",
    "function_of",
    "fusion_actions",
    "fuse_all",
    "has_errors",
    "is_valid_symbol",
    "nest_at",
    "nest_on_line",
    "next_nest",
    "parse_function",
]
