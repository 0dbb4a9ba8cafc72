"""The loop structure transformations work on: bodies, perfect bands, headers.

A *perfect band* starting at a loop is the chain of loops where each loop's body
holds exactly the next loop (and its terminator); transformations that reorder
iterations (interchange, permute, tile, skew) work on bands.
"""

from __future__ import annotations

from affine_lsp.ir import AffineBound, AffineForOp, Block, ModuleModel, Operation, Value
from affine_lsp.syntax import Span


def body_block(loop: AffineForOp) -> Block | None:
    body = loop.body
    return body.entry if body is not None else None


def body_ops(loop: AffineForOp) -> list[Operation]:
    """The ops of a loop's body, without its `affine.yield`."""
    block = body_block(loop)
    if block is None:
        return []
    return [op for op in block.operations if op.name != "affine.yield"]


def yield_of(loop: AffineForOp) -> Operation | None:
    block = body_block(loop)
    if block is None or not block.operations:
        return None
    last = block.operations[-1]
    return last if last.name == "affine.yield" else None


def inner_loop(loop: AffineForOp) -> AffineForOp | None:
    """The loop that is the whole body of `loop` (None if the body holds anything else)."""
    ops = body_ops(loop)
    if len(ops) == 1 and isinstance(ops[0], AffineForOp):
        return ops[0]
    return None


def perfect_band(loop: AffineForOp, limit: int | None = None) -> list[AffineForOp]:
    """`loop` and the loops perfectly nested in it, outermost first (at most `limit`)."""
    band = [loop]
    while limit is None or len(band) < limit:
        inner = inner_loop(band[-1])
        if inner is None:
            break
        band.append(inner)
    return band


def band_chain(loop: AffineForOp, limit: int | None = None) -> list[AffineForOp]:
    """`loop` and the loops nested in it one per body, other ops beside them allowed
    (an imperfect band), outermost first (at most `limit`)."""
    band = [loop]
    while limit is None or len(band) < limit:
        ops = body_ops(band[-1])
        loops = [op for op in ops if isinstance(op, AffineForOp)]
        others = [op for op in ops if op.regions and not isinstance(op, AffineForOp)]
        if len(loops) != 1 or any(
            isinstance(inner, AffineForOp) for op in others for inner in op.walk()
        ):
            break
        band.append(loops[0])
    return band


def iv(loop: AffineForOp) -> Value:
    value = loop.induction_variable
    if value is None:
        raise ValueError("affine.for without an induction variable")
    return value


def iv_name(loop: AffineForOp) -> str:
    return iv(loop).name


def header_span(loop: AffineForOp) -> Span:
    """From `affine.for` (after any results) to just before the body's `{`."""
    body = loop.body
    if body is None:
        raise ValueError("affine.for without a body")
    start = loop.name_span.start_byte
    return Span(start, body.span.start_byte)


def loops_at(root: Operation) -> list[AffineForOp]:
    """Every affine.for under `root`, in document order."""
    return [op for op in root.walk() if isinstance(op, AffineForOp)]


def constant_bounds(loop: AffineForOp) -> tuple[int, int] | None:
    """(lower, upper) when both bounds are plain integer constants."""
    lower, upper = loop.lower, loop.upper
    if lower is None or upper is None:
        return None
    low = _constant(lower)
    high = _constant(upper)
    if low is None or high is None:
        return None
    return low, high


def _constant(bound: AffineBound) -> int | None:
    if bound.shorthand_constant is not None:
        return bound.shorthand_constant
    return None


def constant_trip_count(loop: AffineForOp) -> int | None:
    bounds = constant_bounds(loop)
    if bounds is None:
        return None
    low, high = bounds
    step = loop.step or 1
    return max(0, -(-(high - low) // step))


def uses_value(root: Operation, value: Value) -> bool:
    """Whether any op under `root` uses `value`."""
    for op in root.walk():
        for use in op.operands:
            if use.value is value:
                return True
    return False


def defined_under(value: Value, root: Operation) -> bool:
    """Whether `value` is defined by an op under `root` or is a block argument of one
    of its regions (or of regions nested in it)."""
    if value.owner_block is not None:
        op = value.owner_block.parent_op
    else:  # a result is inside `root` when its op is strictly inside
        op = value.defining_op.parent_op if value.defining_op is not None else None
    while op is not None:
        if op is root:
            return True
        op = op.parent_op
    return False


def ops_by_start(root: Operation | ModuleModel) -> dict[int, Operation]:
    """The ops under `root` by the offset they start at (the outermost of ops starting
    at one offset)."""
    found: dict[int, Operation] = {}
    for op in root.walk():
        found.setdefault(op.span.start_byte, op)
    return found
