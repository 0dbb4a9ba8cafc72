"""Computation slices: which iterations of the first nest each iteration of the
second nest needs, as loop bounds for a copy of the first nest.

The relation `R = { [c_1..c_d] -> [p_1..p_K] }` pairs an iteration prefix of the
second nest (its loops `1..d`) with the iterations of the first nest's slice
loops that must run before it (from any affine relation: shifts, strides,
transposes, several accesses). For each slice loop, bounds in terms of the
`c` ivs come from the constraints of R's projection (its simple hull); they are
combined with the loop's own bounds (max/min lists), pruned of candidates that
never decide the bound, aligned to the loop's step, and a loop proved to run
exactly once is promoted (its iv becomes an expression of the `c` ivs). The
result over-approximates what is needed; the rewrite is verified afterwards.

All expressions here are isl text over context names: `_d0.._d{d-1}` for the
second nest's ivs, `_q{k}` for the copy's loops, and the window's parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.ir import AffineForOp, Operation
from affine_lsp.poly import (
    Domain,
    DomainBuilder,
    IslSession,
    Level,
    NotAffine,
    Scope,
    Term,
    Window,
    enclosing_levels,
    fraction,
    minmax,
)


@dataclass
class LoopPlan:
    """What the copy of one loop of the first nest looks like."""

    loop: AffineForOp
    context: list[str]  # dims its bounds may use
    name: str  # its own dim (`_q{k}`) when it stays a loop
    lowers: list[str] | None = None  # None: keep the source header
    uppers: list[str] | None = None
    promoted: str | None = None  # the iv's value when the loop runs exactly once
    value: str | None = None  # same, kept even when the copy cannot drop the loop
    inner: tuple[list[str], list[str]] = ([], [])  # dims and constraints of its body
    outer: tuple[list[str], list[str]] = ([], [])  # ... of the loop itself
    own: tuple[list[str], list[str]] = ([], [])  # the source bounds, over `outer`


@dataclass
class SlicePlan:
    depth: int
    consumer_loops: list[AffineForOp]
    loops: dict[int, LoopPlan] = field(default_factory=dict)
    params: list[str] = field(default_factory=list)
    prefix: Domain | None = None  # the second nest's loops around the copy

    def plan_of(self, loop: AffineForOp) -> LoopPlan:
        return self.loops[id(loop)]


def producer_loops(root: AffineForOp) -> list[AffineForOp]:
    return [op for op in root.walk() if isinstance(op, AffineForOp)]


def loop_ancestors(loop: Operation, root: AffineForOp) -> list[AffineForOp]:
    """The affine.for ops strictly between `root` (included) and `loop`, outermost first."""
    if loop is root:
        return []
    chain = []
    current = loop.parent_op
    while current is not None:
        if isinstance(current, AffineForOp):
            chain.append(current)
        if current is root:
            break
        current = current.parent_op
    chain.reverse()
    return chain


def _linear_text(terms: list[tuple[int, str]], constant: int) -> str:
    parts = [f"{c}*{n}" if c != 1 else n for c, n in terms if c]
    if constant or not parts:
        parts.append(str(constant))
    return " + ".join(parts).replace("+ -", "- ")


def slice_bounds(relation: isl.Map, position: int) -> tuple[list[str], list[str]]:
    """Lower and (exclusive) upper bound texts of out dim `position` over the in dims."""
    count = relation.dim(isl.dim_type.out)
    alone = relation.project_out(isl.dim_type.out, position + 1, count - position - 1)
    alone = alone.project_out(isl.dim_type.out, 0, position)
    if alone.is_empty():
        return [], []
    hull = alone.simple_hull()
    lowers: list[str] = []
    uppers: list[str] = []
    inputs = hull.dim(isl.dim_type.in_)
    for constraint in hull.get_constraints():
        own = int(fraction(constraint.get_coefficient_val(isl.dim_type.out, 0)))
        if own == 0:
            continue
        if any(
            not constraint.get_coefficient_val(isl.dim_type.div, k).is_zero()
            for k in range(hull.dim(isl.dim_type.div))
        ):
            continue
        terms = [
            (int(fraction(constraint.get_coefficient_val(isl.dim_type.in_, k))), f"_d{k}")
            for k in range(inputs)
        ]
        terms += [
            (
                int(fraction(constraint.get_coefficient_val(isl.dim_type.param, k))),
                hull.get_dim_name(isl.dim_type.param, k) or "",
            )
            for k in range(hull.dim(isl.dim_type.param))
        ]
        constant = int(fraction(constraint.get_constant_val()))
        rest = _linear_text(terms, constant)
        negated = _linear_text([(-c, n) for c, n in terms], -constant)
        if own > 0 or constraint.is_equality():
            scale = abs(own)
            text = negated if own > 0 else rest
            lowers.append(text if scale == 1 else f"ceil(({text})/{scale})")
        if own < 0 or constraint.is_equality():
            scale = abs(own)
            text = rest if own < 0 else negated
            uppers.append(f"{text} + 1" if scale == 1 else f"floor(({text})/{scale}) + 1")
    return lowers, uppers


class SlicePlanner:
    """Plans the copy of `producer` placed at the start of `consumer_loops[-1]`'s body."""

    def __init__(
        self,
        session: IslSession,
        window: Window,
        producer: AffineForOp,
        consumer_loops: list[AffineForOp],
    ) -> None:
        self.session = session
        self.window = window
        self.producer = producer
        self.consumer_loops = consumer_loops
        self.depth = len(consumer_loops)
        builder = DomainBuilder(session, window.resolver)
        self.builder = builder
        levels, _ = enclosing_levels(consumer_loops[-1], window.block)
        self.prefix: Domain = builder.build([*levels, Level(consumer_loops[-1])])
        if len(self.prefix.dims) != self.depth:
            raise NotAffine("the insertion loops are not a simple chain")
        self.params: set[str] = set(self.prefix.params)

    # -- isl helpers ---------------------------------------------------------------

    def _params(self) -> str:
        return ", ".join(sorted(self.params))

    def _pw(self, context: list[str], text: str) -> isl.PwAff:
        return self.session.run(
            lambda: isl.PwAff.read_from_str(
                self.session.ctx,
                f"[{self._params()}] -> {{ [{', '.join(context)}] -> [({text})] }}",
            ),
            "a bound",
        )

    def _context_set(self, context: list[str], constraints: list[str]) -> isl.Set:
        text = " and ".join(self.prefix.constraints + constraints) or "true"
        result = self.session.set(f"[{self._params()}] -> {{ [{', '.join(context)}] : {text} }}")
        for negated in self.prefix.negated:
            excluded = self.session.set(
                f"[{self._params()}] -> {{ [{', '.join(context)}] : {' and '.join(negated)} }}"
            )
            result = result.subtract(excluded)
        return result

    def _prune(
        self, context: list[str], domain: isl.Set, texts: list[str], lower: bool
    ) -> list[str]:
        """Drop candidates that another candidate always dominates on `domain`."""
        kept = list(range(len(texts)))
        for index in range(len(texts)):
            if len(kept) == 1:
                break
            mine = self._pw(context, texts[index])
            cover = None
            for other_index in kept:
                if other_index == index:
                    continue
                other = self._pw(context, texts[other_index])
                part = other.ge_set(mine) if lower else other.le_set(mine)
                cover = part if cover is None else cover.union(part)
            if cover is not None and self.session.run(lambda c=cover: domain.is_subset(c)):
                kept.remove(index)
        return [texts[i] for i in kept]

    def average_trips(self, plan: SlicePlan, default: int) -> dict[int, float]:
        """Average trip count of each loop of the copy over its context (symbols at
        `default`): what the copy will run, before writing it. (An isl failure, such
        as its operation cap, is a `PolyError`.)"""
        with self.session.errors("the trip counts of a slice"):
            return self._average_trips(plan, default)

    def _average_trips(self, plan: SlicePlan, default: int) -> dict[int, float]:
        trips: dict[int, float] = {}
        for loop_plan in plan.loops.values():
            if loop_plan.value is not None:
                trips[id(loop_plan.loop)] = 1.0
                continue
            dims, constraints = loop_plan.outer
            lowers = loop_plan.lowers or loop_plan.own[0]
            uppers = loop_plan.uppers or loop_plan.own[1]
            step = loop_plan.loop.step or 1
            start = lowers[0] if len(lowers) == 1 else f"max({', '.join(lowers)})"
            end = uppers[0] if len(uppers) == 1 else f"min({', '.join(uppers)})"
            trip = self._pw(dims, f"ceil((({end}) - ({start}))/{step})")
            domain = self._context_set(dims, constraints)
            fixed = " and ".join(f"{p} = {default}" for p in sorted(self.params)) or "true"
            at = self.session.set(f"[{self._params()}] -> {{ : {fixed} }}")

            def bounds(trip=trip, domain=domain, at=at):
                restricted = trip.intersect_domain(domain).intersect_params(at)
                return restricted.min_val(), restricted.max_val()

            low, high = self.session.run(bounds, "a trip count")
            if low.is_nan() or high.is_nan():
                trips[id(loop_plan.loop)] = 0.0
            elif not (low.is_int() and high.is_int()):
                trips[id(loop_plan.loop)] = float(default)
            else:
                trips[id(loop_plan.loop)] = max(
                    0.0, (float(fraction(low)) + float(fraction(high))) / 2
                )
        return trips

    def _runs_once(
        self, context: list[str], domain: isl.Set, lower: str, uppers: list[str], step: int
    ) -> bool:
        start = self._pw(context, lower)
        at_least = None
        at_most = None
        for text in uppers:
            end = self._pw(context, text)
            more = end.gt_set(start)
            at_least = more if at_least is None else at_least.intersect(more)
            once = end.le_set(self._pw(context, f"({lower}) + {step}"))
            at_most = once if at_most is None else at_most.union(once)
        return bool(
            at_least is not None
            and at_most is not None
            and self.session.run(lambda: domain.is_subset(at_least) and domain.is_subset(at_most))
        )

    # -- planning ------------------------------------------------------------------

    def plan(self, relation: isl.Map | None, slice_loops: list[AffineForOp]) -> SlicePlan:
        """Bounds for every loop of the copy; `relation` maps `c` to the slice loops' ivs.
        (An isl failure, such as its operation cap, is a `PolyError`.)"""
        with self.session.errors("the bounds of a slice"):
            return self._plan(relation, slice_loops)

    def _plan(self, relation: isl.Map | None, slice_loops: list[AffineForOp]) -> SlicePlan:
        if relation is not None:
            for position in range(relation.dim(isl.dim_type.param)):
                self.params.add(relation.get_dim_name(isl.dim_type.param, position) or "")
        bounds = {}
        if relation is not None:
            for position, loop in enumerate(slice_loops):
                bounds[id(loop)] = slice_bounds(relation, position)
        plan = SlicePlan(self.depth, self.consumer_loops)
        c_dims = [f"_d{k}" for k in range(self.depth)]
        # Per loop of the copy: its context dims, the constraints they carry, and how
        # the source ivs of its ancestors read in that context.
        context_of: dict[int, tuple[list[str], list[str], Scope]] = {}
        for index, loop in enumerate(producer_loops(self.producer)):
            parent = loop_ancestors(loop, self.producer)
            if parent:
                dims, constraints, parent_scope = context_of[id(parent[-1])]
            else:
                dims, constraints, parent_scope = c_dims, [], Scope()
            scope = Scope(dict(parent_scope.dims), frozenset(id(p) for p in parent) | {id(loop)})
            orig_lower = self.builder.bound_terms(loop.lower, scope)
            orig_upper = self.builder.bound_terms(loop.upper, scope)
            for term in orig_lower + orig_upper:
                self.params |= term.params
            step = loop.step or 1
            name = f"_q{index}"
            loop_plan = LoopPlan(loop, list(dims), name)
            loop_plan.outer = (list(dims), list(constraints))
            loop_plan.own = ([t.text for t in orig_lower], [t.text for t in orig_upper])
            lows, highs = bounds.get(id(loop), ([], []))
            if (lows or highs) and not loop.iter_args and not loop.results:
                if lows and step > 1:
                    if len(orig_lower) != 1:
                        lows = []  # cannot align to the step: keep the loop's own start
                    else:
                        start = orig_lower[0].text
                        lows = [
                            f"({start}) + {step}*ceil((({t}) - ({start}))/{step})" for t in lows
                        ]
                domain = self._context_set(dims, constraints)
                lowers = self._prune(dims, domain, [t.text for t in orig_lower] + lows, True)
                uppers = self._prune(dims, domain, [t.text for t in orig_upper] + highs, False)
                loop_plan.lowers, loop_plan.uppers = lowers, uppers
                if len(lowers) == 1 and self._runs_once(dims, domain, lowers[0], uppers, step):
                    loop_plan.promoted = loop_plan.value = lowers[0]
            plan.loops[id(loop)] = loop_plan
            iv = loop.induction_variable
            if iv is None:
                raise NotAffine("affine.for without an induction variable")
            if loop_plan.promoted is not None:
                scope.bind(iv, Term(f"({loop_plan.promoted})", None, frozenset(), True))
                context_of[id(loop)] = (dims, constraints, scope)
                loop_plan.inner = (list(dims), list(constraints))
                continue
            lows_used = loop_plan.lowers or [t.text for t in orig_lower]
            highs_used = loop_plan.uppers or [t.text for t in orig_upper]
            own = [f"{name} >= {t}" for t in lows_used] + [f"{name} < {t}" for t in highs_used]
            if step > 1:
                start = minmax("max", [Term(t, None, frozenset(), True) for t in lows_used])
                own.append(f"({name} - ({start.text})) mod {step} = 0")
            scope.bind(iv, Term.name(name))
            context_of[id(loop)] = ([*dims, name], constraints + own, scope)
            loop_plan.inner = ([*dims, name], constraints + own)
        plan.params = sorted(self.params)
        plan.prefix = self.prefix
        return plan
