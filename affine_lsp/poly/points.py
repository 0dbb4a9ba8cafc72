"""The integer points of a bounded isl set without parameters, as Python tuples.

isl's `foreach_point` costs a callback and a `Val` per coordinate (about 12 µs
a point); a picture of a 32×32 nest cannot afford that. `scan` reads each basic
set's constraints once and runs them as a loop nest in Python instead: the
bounds of dimension `d` come from the constraints whose last dimension is `d`
(within the set's bounding box), constraints with integer divisions (`mod`,
steps) filter the candidates. Basic sets whose divisions isl cannot express
fall back to `foreach_point`. Points are deduplicated and sorted
lexicographically; `strides` keep only the points on a lattice (sampling).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import lcm

import islpy as isl

SET = isl.dim_type.set
DIV = isl.dim_type.div

Point = tuple[int, ...]


class Unbounded(ValueError):
    """The set has no bounding box (a dimension or a parameter is free)."""


def _fraction(value: isl.Val) -> Fraction:
    return Fraction(str(value))


def bounding_box(points: isl.Set) -> list[tuple[int, int]]:
    """(min, max) of every dimension; raises `Unbounded` when one has none."""
    if points.dim(isl.dim_type.param):
        raise Unbounded("the set has parameters")
    box = []
    for position in range(points.dim(SET)):
        low, high = points.dim_min_val(position), points.dim_max_val(position)
        if not (low.is_int() and high.is_int()):
            raise Unbounded(f"dimension {position} is unbounded")
        box.append((int(str(low)), int(str(high))))
    return box


@dataclass
class _Constraint:
    coefficients: list[int]  # per set dimension
    divs: list[int]  # per division
    constant: int
    equality: bool
    level: int  # the last dimension it depends on (-1: none)


@dataclass
class _Division:
    """floor((sum(coefficients * x) + sum(divs * d) + constant) / denominator), in integers."""

    coefficients: list[tuple[int, int]]  # (dimension, coefficient), the non-zero ones
    divs: list[tuple[int, int]]  # (division, coefficient)
    constant: int
    denominator: int
    level: int

    @staticmethod
    def of(
        coefficients: list[Fraction], divs: list[Fraction], constant: Fraction, level: int
    ) -> _Division:
        denominator = 1
        for value in (*coefficients, *divs, constant):
            denominator = lcm(denominator, value.denominator)
        return _Division(
            [(d, int(c * denominator)) for d, c in enumerate(coefficients) if c],
            [(m, int(c * denominator)) for m, c in enumerate(divs) if c],
            int(constant * denominator),
            denominator,
            level,
        )

    def value(self, point: list[int], div_values: list[int]) -> int:
        total = self.constant
        for d, c in self.coefficients:
            total += c * point[d]
        for m, c in self.divs:
            total += c * div_values[m]
        return total // self.denominator


class _Inexpressible(Exception):
    """A basic set with a division isl cannot write down: enumerate it with isl."""


def _read(basic: isl.BasicSet) -> tuple[list[_Constraint], list[_Division]]:
    dims, n_divs = basic.dim(SET), basic.dim(DIV)
    local = basic.get_local_space()
    divisions: list[_Division] = []
    for k in range(n_divs):
        try:
            aff = local.get_div(k)
        except isl.Error:
            raise _Inexpressible from None
        if aff.is_nan():
            raise _Inexpressible
        coefficients = [
            _fraction(aff.get_coefficient_val(isl.dim_type.in_, d)) for d in range(dims)
        ]
        nested = [_fraction(aff.get_coefficient_val(DIV, m)) for m in range(aff.dim(DIV))]
        level = max((d for d, c in enumerate(coefficients) if c), default=-1)
        for m, c in enumerate(nested):
            if c:
                level = max(level, divisions[m].level)
        constant = _fraction(aff.get_constant_val())
        divisions.append(_Division.of(coefficients, nested, constant, level))
    constraints = []
    for constraint in basic.get_constraints():
        coefficients = [int(str(constraint.get_coefficient_val(SET, d))) for d in range(dims)]
        divs = [int(str(constraint.get_coefficient_val(DIV, k))) for k in range(n_divs)]
        level = max((d for d, c in enumerate(coefficients) if c), default=-1)
        for k, c in enumerate(divs):
            if c:
                level = max(level, divisions[k].level)
        constraints.append(
            _Constraint(
                coefficients,
                divs,
                int(str(constraint.get_constant_val())),
                constraint.is_equality(),
                level,
            )
        )
    return constraints, divisions


def _scan_basic(
    basic: isl.BasicSet,
    box: list[tuple[int, int]],
    strides: Sequence[int],
    origin: Sequence[int],
    found: set[Point],
    check: Callable[[], None],
) -> None:
    constraints, divisions = _read(basic)
    dims = len(box)
    if any(c.level < 0 and not _holds(c, [], []) for c in constraints):
        return
    # Per level: bounds (div-free constraints ending there) and filters (the others).
    lowers: list[list[tuple[int, list[tuple[int, int]], int]]] = [[] for _ in range(dims)]
    uppers: list[list[tuple[int, list[tuple[int, int]], int]]] = [[] for _ in range(dims)]
    filters: list[list[_Constraint]] = [[] for _ in range(dims)]
    for c in constraints:
        if c.level < 0:
            continue
        a = c.coefficients[c.level]
        if any(c.divs) or a == 0:
            filters[c.level].append(c)
            continue
        rest = [(d, r) for d, r in enumerate(c.coefficients[: c.level]) if r]
        # a*x + rest.x + constant >= 0 (or = 0): a lower bound when a > 0, an upper
        # bound when a < 0; an equality is both.
        forward = (a, rest, c.constant)
        backward = (-a, [(d, -r) for d, r in rest], -c.constant)
        if a > 0 or c.equality:
            lowers[c.level].append(forward if a > 0 else backward)
        if a < 0 or c.equality:
            uppers[c.level].append(forward if a < 0 else backward)
    div_levels: list[list[int]] = [[] for _ in range(dims)]
    for k, division in enumerate(divisions):
        if division.level >= 0:
            div_levels[division.level].append(k)
    point = [0] * dims
    div_values: list[int] = [0] * len(divisions)
    for k, division in enumerate(divisions):
        if division.level < 0:
            div_values[k] = division.value(point, div_values)

    # Iterative depth-first loop nest: one (value, last value) cursor per level.
    cursors: list[list[int]] = []

    def bounds(level: int) -> tuple[int, int]:
        low, high = box[level]
        for a, rest, constant in lowers[level]:  # x >= ceil(-value / a)
            value = constant
            for d, r in rest:
                value += r * point[d]
            low = max(low, -(value // a))
        for a, rest, constant in uppers[level]:  # x <= floor(value / -a)
            value = constant
            for d, r in rest:
                value += r * point[d]
            high = min(high, value // -a)
        stride = strides[level]
        if stride > 1:
            low += (origin[level] - low) % stride
        return low, high

    checked = [bool(div_levels[level] or filters[level]) for level in range(dims)]

    def accepts(level: int) -> bool:
        for k in div_levels[level]:
            division = divisions[k]
            div_values[k] = division.value(point, div_values)
        return all(_holds(c, point, div_values) for c in filters[level])

    low, high = bounds(0)
    cursors.append([low, high])
    steps = 0
    while cursors:
        level = len(cursors) - 1
        cursor = cursors[-1]
        if cursor[0] > cursor[1]:
            cursors.pop()
            if cursors:
                cursors[-1][0] += strides[len(cursors) - 1]
            continue
        point[level] = cursor[0]
        steps += 1
        if steps % 4096 == 0:
            check()
        if checked[level] and not accepts(level):
            cursor[0] += strides[level]
            continue
        if level == dims - 1:
            found.add(tuple(point))
            cursor[0] += strides[level]
            continue
        low, high = bounds(level + 1)
        cursors.append([low, high])


def _holds(c: _Constraint, point: Sequence[int], div_values: Sequence[int]) -> bool:
    value = c.constant
    value += sum(a * x for a, x in zip(c.coefficients, point, strict=False) if a)
    value += sum(a * d for a, d in zip(c.divs, div_values, strict=False) if a)
    return value == 0 if c.equality else value >= 0


def lattice(space_of: isl.Set, strides: Sequence[int], origin: Sequence[int]) -> isl.Set:
    """The points `origin + strides * k` of the space of `space_of`."""
    names = [f"x{d}" for d in range(len(strides))]
    parts = [
        f"({name} - ({o})) mod {s} = 0"
        for name, s, o in zip(names, strides, origin, strict=True)
        if s > 1
    ]
    text = f"{{ [{', '.join(names)}] : {' and '.join(parts) or 'true'} }}"
    result = isl.Set.read_from_str(space_of.get_ctx(), text)
    return result.align_params(space_of.get_space()).set_tuple_id(space_of.get_tuple_id())


def scan(
    points: isl.Set,
    strides: Sequence[int] | None = None,
    origin: Sequence[int] | None = None,
    check: Callable[[], None] | None = None,
) -> list[Point]:
    """The integer points of `points` (bounded, no parameters), sorted; with `strides`,
    only those with `(x[d] - origin[d]) % strides[d] == 0`. `check()` is called now and
    then (to stop a long scan by raising)."""
    dims = points.dim(SET)
    strides = list(strides or [1] * dims)
    origin = list(origin or [0] * dims)
    check = check or (lambda: None)
    if points.is_empty():
        return []
    box = bounding_box(points)
    if dims == 0:
        return [()]
    found: set[Point] = set()
    try:
        expressed = points.compute_divs()
    except isl.Error:
        expressed = points
    for basic in expressed.get_basic_sets():
        try:
            _scan_basic(basic, box, strides, origin, found, check)
        except _Inexpressible:
            _foreach(basic, strides, origin, found)
    return sorted(found)


def _foreach(
    basic: isl.BasicSet, strides: Sequence[int], origin: Sequence[int], found: set[Point]
) -> None:
    dims = basic.dim(SET)

    def add(point: isl.Point) -> None:
        coordinates = tuple(int(str(point.get_coordinate_val(SET, d))) for d in range(dims))
        if all((x - o) % s == 0 for x, s, o in zip(coordinates, strides, origin, strict=True)):
            found.add(coordinates)

    isl.Set.from_basic_set(basic).foreach_point(add)
