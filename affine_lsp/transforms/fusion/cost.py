"""How much computation a loop nest does: each op counts once per execution.

Executions are estimated loop by loop: a loop's trip count is averaged over the
iterations of the loops around it (exact for constant and linear bounds);
symbols without a known value are taken as `DEFAULT_SYMBOL`. Conditions are
ignored (an upper estimate). Fusion compares the fused nest's cost with the
cost of the two nests it replaces.
"""

from __future__ import annotations

import islpy as isl

from affine_lsp.ir import AffineForOp, AffineIfOp, AffineParallelOp, AffineYieldOp, Operation
from affine_lsp.poly import Level, NotAffine, Window, enclosing_levels, fraction, minmax

DEFAULT_SYMBOL = 100


class CostModel:
    def __init__(self, window: Window) -> None:
        self.window = window
        self.session = window.session
        self._trips: dict[int, float] = {}

    def nest(self, root: Operation) -> float:
        total = 0.0
        for op in root.walk():
            if isinstance(op, AffineForOp | AffineIfOp | AffineParallelOp | AffineYieldOp):
                continue
            total += self.executions(op)
        return total

    def copy_estimate(self, root: Operation, trips: dict[int, float], per_copy: float) -> float:
        """Executions of the ops of `root` when copied `per_copy` times with its loops'
        trip counts in `trips` (a slice plan's estimate)."""
        total = 0.0
        for op in root.walk():
            if isinstance(op, AffineForOp | AffineIfOp | AffineParallelOp | AffineYieldOp):
                continue
            count = per_copy
            current = op.parent_op
            while current is not None:
                if isinstance(current, AffineForOp):
                    count *= trips.get(id(current), float(DEFAULT_SYMBOL))
                if current is root:
                    break
                current = current.parent_op
            total += count
        return total

    def executions(self, op: Operation) -> float:
        levels, _ = enclosing_levels(op, self.window.block)
        loops = [lv for lv in levels if not isinstance(lv.op, AffineIfOp)]
        count = 1.0
        for index, level in enumerate(loops):
            count *= self._trip(level, loops[:index])
        return count

    def _trip(self, level: Level, outer: list[Level]) -> float:
        key = id(level.op)
        if key not in self._trips:
            try:
                self._trips[key] = self._average_trip(level, outer)
            except NotAffine:
                self._trips[key] = float(DEFAULT_SYMBOL)
        return self._trips[key]

    def _average_trip(self, level: Level, outer: list[Level]) -> float:
        builder = self.window.builder
        domain = builder.build(outer)
        op = level.op
        if isinstance(op, AffineForOp):
            bounds = [
                (
                    builder.bound_terms(op.lower, domain.scope),
                    builder.bound_terms(op.upper, domain.scope),
                    op.step or 1,
                )
            ]
        elif isinstance(op, AffineParallelOp):
            steps = op.steps or [1] * len(op.lower)
            bounds = [
                (
                    builder.parallel_terms(lo, domain.scope),
                    builder.parallel_terms(hi, domain.scope),
                    s,
                )
                for lo, hi, s in zip(op.lower, op.upper, steps, strict=False)
            ]
        else:
            return 1.0
        product = 1.0
        for lows, highs, step in bounds:
            start, end = minmax("max", lows), minmax("min", highs)
            if start.value is not None and end.value is not None:
                product *= max(0, -((start.value - end.value) // step))
                continue
            params = sorted(start.params | end.params | domain.params)
            text = (
                f"[{', '.join(params)}] -> {{ [{', '.join(domain.dims)}] -> "
                f"[(ceil((({end.text}) - ({start.text}))/{step}))] }}"
            )
            fixed = " and ".join(f"{p} = {DEFAULT_SYMBOL}" for p in params) or "true"

            def bounds_of(
                text: str = text, fixed: str = fixed, params=params, ctx=self.session.ctx
            ):
                trip = isl.PwAff.read_from_str(ctx, text)
                assert domain.set is not None
                trip = trip.intersect_domain(domain.set)
                trip = trip.intersect_params(
                    isl.Set.read_from_str(ctx, f"[{', '.join(params)}] -> {{ : {fixed} }}")
                )
                return trip.min_val(), trip.max_val()

            low, high = self.session.run(bounds_of, "a trip count")
            if low.is_nan() or high.is_nan():
                product = 0.0
                continue
            if low.is_infty() or high.is_infty() or low.is_neginfty():
                product *= DEFAULT_SYMBOL
                continue
            average = (float(fraction(low)) + float(fraction(high))) / 2
            product *= max(0.0, average)
        return product
