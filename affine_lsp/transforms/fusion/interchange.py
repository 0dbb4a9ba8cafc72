"""A nest's loops permuted before fusing into it, as MLIR's fusion does.

Before fusing producers into a nest, MLIR's `affine-loop-fusion` sinks the loops
of that nest that carry dependences inward (`sinkSequentialLoops`): a nest that
updates a buffer in place along its outer loop cannot take a producer's slice at
that loop's depth, but once that loop is innermost the producer fuses at the
depth of the loops that carry nothing. We do the same with the loop
transformations (`affine_lsp.transforms.loops.permute`, which proves the
permutation by exact dataflow); the fusion into the permuted nest is then proven
like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.ir import AffineForOp, FuncOp, ModuleModel
from affine_lsp.poly import IslSession, PolyError
from affine_lsp.poly.budgets import Budget
from affine_lsp.transforms.functions import parse_function


@dataclass
class Permuted:
    """A document with one nest's perfect band permuted (proven), and where that nest
    now starts."""

    new_text: bytes
    edits: list  # the TextEdits from the original text
    function: FuncOp  # the function after the permutation, modelled from `new_text`
    nest_offset: int
    order: list[str]  # the band's induction variables in their new order


def sinking_order(nest: AffineForOp, model: ModuleModel, budget: Budget) -> list[int] | None:
    """MLIR's order for the perfect band of `nest`: the loops that carry no dependence
    first, then those that do, each group in its original order (new position ->
    index in the band); None when that is the order already."""
    from affine_lsp.transforms.loops import NestAnalysis, perfect_band

    band = perfect_band(nest)
    if len(band) < 2:
        return None
    session = IslSession(budget)
    try:
        with session.errors("the dependences the loops carry"):  # (isl's own errors too)
            analysis = NestAnalysis(session, nest, model)
            carried = [analysis.carried_by(loop) is not None for loop in band]
    except PolyError:
        return None
    order = [k for k in range(len(band)) if not carried[k]]
    order += [k for k in range(len(band)) if carried[k]]
    return None if order == list(range(len(band))) else order


def sink_sequential_loops(
    data: bytes, model: ModuleModel, function: FuncOp, nest: AffineForOp, budget: Budget
) -> Permuted | None:
    """`nest` with its dependence-carrying loops sunk inward, or None when there is
    nothing to sink or the permutation is refused."""
    from affine_lsp.transforms.loops import iv_name, perfect_band, permute

    order = sinking_order(nest, model, budget)
    if order is None:
        return None
    band = perfect_band(nest)[: len(order)]
    positions = [order.index(k) for k in range(len(order))]
    result = permute(data, model, nest, positions, budget)
    if result.new_text is None:
        return None
    try:
        permuted = parse_function(result.new_text, function, model)
    except PolyError:
        return None
    if not any(
        isinstance(op, AffineForOp) and op.span.start_byte == nest.span.start_byte
        for op in permuted.walk()
    ):
        return None
    return Permuted(
        result.new_text,
        list(result.edits),
        permuted,
        nest.span.start_byte,
        [iv_name(band[k]) for k in order],
    )
