"""The loops at a cursor or selection, found without walking the whole model: the
search goes down only into ops whose span holds the range, so its cost is the depth
of the position, not the size of the document (code actions ask at every loop)."""

from __future__ import annotations

from collections.abc import Callable

from affine_lsp.ir import AffineForOp, ModuleModel, Operation


def loops_holding(model: ModuleModel, start: int, end: int) -> list[AffineForOp]:
    """The affine.for ops whose span holds [start, end], in document order (outer
    loops first), as a walk of the whole model would list them."""
    found: list[AffineForOp] = []
    stack: list[Operation] = list(model.operations())
    stack.reverse()
    while stack:
        op = stack.pop()
        span = op.span
        if not (span.start_byte <= start and end <= span.end_byte):
            continue  # nothing under it holds the range either
        if isinstance(op, AffineForOp):
            found.append(op)
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend(reversed(block.operations))
    return found


def starting_on_line(
    loops: list[AffineForOp], line: int, line_of: Callable[[int], int]
) -> list[AffineForOp]:
    """Those of `loops` (as `loops_holding` lists them for a range starting on `line`)
    whose first line is `line`: a suffix of the list, since their starts only grow
    and none starts after the range."""
    first = len(loops)
    while first > 0 and line_of(loops[first - 1].span.start_byte) == line:
        first -= 1
    return loops[first:]
