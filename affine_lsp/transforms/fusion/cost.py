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
from affine_lsp.poly import Level, NotAffine, Window, budgets, enclosing_levels, fraction, minmax

DEFAULT_SYMBOL = 100


def _params_as_dims(points: isl.Set) -> isl.Set:
    return points.move_dims(
        isl.dim_type.set, 0, isl.dim_type.param, 0, points.dim(isl.dim_type.param)
    )


def _box_size(points: isl.Set) -> float:
    """The number of points of the box around a parameter-free set (inf if unbounded)."""
    size = 1.0
    for k in range(points.dim(isl.dim_type.set)):
        low, high = points.dim_min_val(k), points.dim_max_val(k)
        if not (low.is_int() and high.is_int()):
            return float("inf") if not (low.is_nan() or high.is_nan()) else 0.0
        size *= max(0, int(fraction(high)) - int(fraction(low)) + 1)
    return size


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
        context = self.window.context
        around = {
            context.get_dim_name(isl.dim_type.param, k)
            for k in range(context.dim(isl.dim_type.param))
        }
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
            # Ivs of the loops around the window range over their iterations; other
            # symbols are taken as DEFAULT_SYMBOL.
            fixed = (
                " and ".join(f"{p} = {DEFAULT_SYMBOL}" for p in params if p not in around) or "true"
            )

            def bounds_of(
                text: str = text,
                fixed: str = fixed,
                params=params,
                ctx=self.session.ctx,
                context: isl.Set = context,
            ):
                trip = isl.PwAff.read_from_str(ctx, text)
                assert domain.set is not None
                trip = trip.intersect_domain(domain.set)
                trip = trip.intersect_params(
                    isl.Set.read_from_str(ctx, f"[{', '.join(params)}] -> {{ : {fixed} }}")
                )
                trip = trip.intersect_params(context)
                # Where the bounds cross, the loop runs 0 times (not a negative count).
                running = trip.nonneg_set()
                if running.is_empty():
                    return isl.Val.nan(ctx), isl.Val.nan(ctx)
                low = trip.min_val() if trip.domain().is_subset(running) else isl.Val.zero(ctx)
                return low, trip.intersect_domain(running).max_val()

            def counted(
                params=params,
                fixed: str = fixed,
                start: str = start.text,
                end: str = end.text,
                step: int = step,
                ctx=self.session.ctx,
                context: isl.Set = context,
            ) -> float | None:
                assert domain.set is not None
                where = isl.Set.read_from_str(ctx, f"[{', '.join(params)}] -> {{ : {fixed} }}")
                points = domain.set.intersect_params(where).intersect_params(context)
                if _box_size(_params_as_dims(points)) > budgets.FUSION_COST_COUNTED_POINTS:
                    return None
                dims = ", ".join([*domain.dims, "_n"])
                iterations = isl.Set.read_from_str(
                    ctx,
                    f"[{', '.join(params)}] -> {{ [{dims}] : _n >= 0 and "
                    f"{step} * _n < ({end}) - ({start}) }}",
                )
                lifted = points.insert_dims(isl.dim_type.set, len(domain.dims), 1)
                iterations = iterations.intersect(lifted)
                total = _params_as_dims(points).count_val()
                if total.is_zero():
                    return 0.0
                run = _params_as_dims(iterations).count_val()
                return float(fraction(run)) / float(fraction(total))

            low, high = self.session.run(bounds_of, "a trip count")
            if low.is_zero() and not high.is_nan():
                # The bounds cross somewhere: (min + max) / 2 is no average there.
                exact = self.session.run(counted, "a trip count")
                if exact is not None:
                    product *= exact
                    continue
            if low.is_nan() or high.is_nan():
                product = 0.0
                continue
            if low.is_infty() or high.is_infty() or low.is_neginfty():
                product *= DEFAULT_SYMBOL
                continue
            average = (float(fraction(low)) + float(fraction(high))) / 2
            product *= max(0.0, average)
        return product
