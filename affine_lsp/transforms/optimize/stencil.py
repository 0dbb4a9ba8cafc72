"""A stencil's time-step band built from its dependence distances, without isl's
scheduler (whose search grows fast with the statements and loops: heat-3d's
nest does not finish within its CPU limit).

The pattern: an outermost time loop `t` around sweeps, each statement in loops
of its own under `t` (a statement with fewer loops, fdtd-2d's row `ey[0, j]`,
has its loops matched to the innermost ones of the band, a constant in the
others). The band gives each statement s the rows

    (t, f_1 t + x_1 + c_1(s), ..., f_m t + x_m + c_m(s))

with one skew factor f_d per space loop and a shift c_d(s) per statement:

- the shifts: every dependence within one time step must go forward (or stay)
  along every member, `c_d(target) - c_d(source) >= -(min of y_d - x_d)`, a
  system of difference constraints solved as longest paths (a cycle of positive
  weight: no such band, as in seidel-2d, whose sweep reads in place);
- the skews: the smallest `f_d` (at most `scheduler.MAX_COEFFICIENT`) with
  `f_d (t' - t) + y_d - x_d + c_d(target) - c_d(source) >= 0` on every
  dependence across time steps.

Every member is then non-negative on every dependence: the band is permutable
(tileable). The band is only a guide: what is built from it is checked against
the dependences and proven like every step.
"""

from __future__ import annotations

import islpy as isl

from affine_lsp.ir import AffineForOp, ModuleModel
from affine_lsp.poly import IslSession, PolyError, fraction, single_aff
from affine_lsp.transforms.optimize import scheduler
from affine_lsp.transforms.optimize.nest import Nest, Statement
from affine_lsp.transforms.optimize.scheduler import Band, Row, Schedule
from affine_lsp.transforms.optimize.schedules import SCHEDULE_BUDGET

Weights = dict[tuple[str, str], list[int]]


def time_step_schedule(nest: Nest) -> Schedule | None:
    """The nest's schedule as one skewed, shifted, permutable band (see the module
    docstring); None when the nest is not a time step of sweeps, or its
    dependences need more than shifts and skews by the time loop."""
    band = time_step_band(nest)
    if band is None:
        return None
    return Schedule((band,), "", "")


def time_step_band(nest: Nest) -> Band | None:
    """The band of `time_step_schedule`, or None."""
    statements = nest.statements
    if not nest.schedulable or not statements:
        return None
    depth = max(s.depth for s in statements)
    if depth < 2 or any(s.depth < 2 or s.loops[0] is not nest.root for s in statements):
        return None
    try:
        every, _ = scheduler.dependences(nest)
        deltas = _deltas(nest, every, depth)
        if deltas is None:
            return None
        shifts = _shifts(statements, deltas, depth)
        if shifts is None:
            return None
        skews = _skews(deltas, shifts, depth)
    except (PolyError, isl.Error):
        return None
    if skews is None or not any(skews):
        return None  # (a band without skews: isl's scheduler says as much)
    rows = tuple(_rows(s, depth, skews, shifts[s.name]) for s in statements)
    return Band(
        tuple(s.name for s in statements),
        True,
        (False,) * depth,
        rows,
        0,
    )


def _embedding(statement: Statement, depth: int) -> isl.Map:
    """The statement's iterations as points of the band's `depth` loops: its time
    loop first, its other loops the innermost ones, 0 in the loops it lacks."""
    own = statement.depth
    names = [f"x{k}" for k in range(own)]
    image = ["x0"] + ["0"] * (depth - own) + names[1:]
    text = f"{{ {statement.name}[{', '.join(names)}] -> [{', '.join(image)}] }}"
    found = isl.Map.read_from_str(statement.domain.get_ctx(), text)
    return found.align_params(statement.domain.get_space())


def _deltas(
    nest: Nest, dependences: isl.UnionMap, depth: int
) -> dict[tuple[str, str], isl.Set] | None:
    """Per pair of statements (source, target), the differences target - source of
    their dependent iterations in the band's loops."""
    embeddings = {s.name: _embedding(s, depth) for s in nest.statements}
    relations: list[isl.Map] = []
    dependences.foreach_map(relations.append)
    found: dict[tuple[str, str], isl.Set] = {}
    for relation in relations:
        source = relation.get_tuple_name(isl.dim_type.in_)
        target = relation.get_tuple_name(isl.dim_type.out)
        if source not in embeddings or target not in embeddings:
            return None
        moved = relation.apply_domain(embeddings[source]).apply_range(embeddings[target])
        difference = nest.session.run(lambda moved=moved: moved.deltas(), "the dependences")
        key = (source, target)
        found[key] = found[key].union(difference) if key in found else difference
    return found


def _slice(deltas: isl.Set, condition: str) -> isl.Set:
    depth = deltas.dim(isl.dim_type.set)
    names = ", ".join(f"d{k}" for k in range(depth))
    text = f"{{ [{names}] : {condition} }}"
    found = isl.Set.read_from_str(deltas.get_ctx(), text).align_params(deltas.get_space())
    return deltas.intersect(found)


def _shifts(
    statements: list[Statement], deltas: dict[tuple[str, str], isl.Set], depth: int
) -> dict[str, list[int]] | None:
    """Per statement, its shift along each space loop: the least that makes every
    dependence within a time step go forward (longest paths; None on a cycle of
    positive weight, or a distance that is not a constant)."""
    weights: Weights = {}
    for key, difference in deltas.items():
        same_step = _slice(difference, "d0 = 0")
        if same_step.is_empty():
            continue
        needed = []
        for d in range(1, depth):
            low = single_aff(same_step.dim_min(d))
            if low is None or not low.is_cst():
                return None
            needed.append(-int(fraction(low.get_constant_val())))
        weights[key] = needed
    names = [s.name for s in statements]
    shifts = {name: [0] * (depth - 1) for name in names}
    for _ in range(len(names) + 1):
        changed = False
        for (source, target), needed in weights.items():
            for d, weight in enumerate(needed):
                if shifts[target][d] < shifts[source][d] + weight:
                    shifts[target][d] = shifts[source][d] + weight
                    changed = True
        if not changed:
            break
    else:
        return None  # (a cycle of positive weight: no shifts order the time step)
    for d in range(depth - 1):
        lowest = min(shift[d] for shift in shifts.values())
        for shift in shifts.values():
            shift[d] -= lowest
    return shifts


def _skews(
    deltas: dict[tuple[str, str], isl.Set], shifts: dict[str, list[int]], depth: int
) -> list[int] | None:
    """Per space loop, the least factor of `t` that makes every dependence across
    time steps go forward along it (None: none up to `MAX_COEFFICIENT`)."""
    factors = []
    for d in range(1, depth):
        for factor in range(scheduler.MAX_COEFFICIENT + 1):
            if all(
                _slice(
                    difference,
                    f"d0 >= 1 and {factor} * d0 + d{d} + "
                    f"{shifts[target][d - 1] - shifts[source][d - 1]} < 0",
                ).is_empty()
                for (source, target), difference in deltas.items()
            ):
                factors.append(factor)
                break
        else:
            return None
    return factors


def _rows(statement: Statement, depth: int, skews: list[int], shift: list[int]) -> tuple[Row, ...]:
    """The statement's rows over its own loops (a loop it lacks: its constant)."""
    own = statement.depth
    missing = depth - own
    first = [1] + [0] * (own - 1)
    rows = [Row(tuple(first), 0)]
    for d in range(1, depth):
        coefficients = [skews[d - 1]] + [0] * (own - 1)
        if d > missing:
            coefficients[d - missing] = 1
        rows.append(Row(tuple(coefficients), shift[d - 1]))
    return tuple(rows)


def time_step_scheduled(model: ModuleModel, loop: AffineForOp) -> tuple[Nest, Schedule] | None:
    """The nest of `loop` and its time-step band (`time_step_schedule`), or None
    (isl's scheduler is asked then)."""
    session = IslSession(SCHEDULE_BUDGET)
    try:
        with session.errors("the schedule"):
            nest = Nest.of(session, loop, model)
            found = time_step_schedule(nest)
    except PolyError:
        return None
    return None if found is None else (nest, found)
