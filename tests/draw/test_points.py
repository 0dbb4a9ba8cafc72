"""poly.points.scan against isl's own enumeration (foreach_point) on seeded random
sets: unions, equalities, divisions (mod), existentials, sampling lattices."""

from __future__ import annotations

import random

import islpy as isl
import pytest

from affine_lsp.poly.points import Unbounded, bounding_box, scan

SET = isl.dim_type.set


def _reference(points: isl.Set, strides=None, origin=None) -> list[tuple[int, ...]]:
    dims = points.dim(SET)
    strides = strides or [1] * dims
    origin = origin or [0] * dims
    found = set()

    def add(point: isl.Point) -> None:
        coordinates = tuple(int(str(point.get_coordinate_val(SET, d))) for d in range(dims))
        if all((x - o) % s == 0 for x, s, o in zip(coordinates, strides, origin, strict=True)):
            found.add(coordinates)

    points.foreach_point(add)
    return sorted(found)


FIXED = [
    "{ [i, j] : 0 <= i < 10 and 0 <= j <= i }",
    "{ [i, j] : 0 <= i < 10 and 0 <= j < 7 and (i + 2j) mod 3 = 0 }",
    "{ [i] : exists (e0: i <= 99 and e0 >= 0 and 2e0 <= i and 7e0 >= 50 + i) }",
    "{ [i, j, k] : 0 <= i < 5 and i <= j < 2i + 3 and (k - j) mod 2 = 0 and 0 <= k < 9 }",
    "{ [i, j] : 0 <= i < 10 and 0 <= j < 10 and not (i = j) }",
    "{ [i, j] : 2i = 3j and 0 <= i < 30 }",
    "{ [i, j] : 0 <= i < 20 and 0 <= j < 20 and (i mod 4 = 1 or j mod 3 = 2) }",
    "{ [i, j] : 0 <= 3i + 2j <= 17 and 0 <= i - j <= 5 }",
    "{ [] }",
    "{ [i] : 1 = 0 }",
]


@pytest.mark.parametrize("text", FIXED)
def test_fixed_sets(text):
    points = isl.Set(text)
    assert scan(points) == _reference(points)
    dims = points.dim(SET)
    if dims:
        assert scan(points, [2] * dims, [1] * dims) == _reference(points, [2] * dims, [1] * dims)


def test_random_sets():
    rng = random.Random(5)
    for _ in range(400):
        dims = rng.randint(1, 3)
        names = [f"x{d}" for d in range(dims)]
        parts = [f"{rng.randint(-3, 0)} <= {n} <= {rng.randint(0, 8)}" for n in names]
        for _ in range(rng.randint(0, 3)):
            terms = " + ".join(f"{rng.randint(-3, 3)}*{n}" for n in names)
            parts.append(f"{terms} {rng.choice(['<=', '>=', '='])} {rng.randint(-5, 5)}")
        for _ in range(rng.randint(0, 2)):
            parts.append(
                f"({names[-1]} + {rng.randint(0, 3)}*{names[0]} - {rng.randint(0, 3)}) "
                f"mod {rng.randint(2, 4)} = {rng.randint(0, 1)}"
            )
        text = f"{{ [{', '.join(names)}] : {' and '.join(parts)} }}"
        if rng.random() < 0.3:
            box = " and ".join(f"0 <= {n} <= 3" for n in names)
            text = text[:-2] + f" or {box} }}"
        points = isl.Set(text)
        strides = [rng.randint(1, 3) for _ in names]
        origin = [rng.randint(-2, 2) for _ in names]
        assert scan(points) == _reference(points), text
        assert scan(points, strides, origin) == _reference(points, strides, origin), text


def test_bounding_box_and_unbounded_sets():
    assert bounding_box(isl.Set("{ [i, j] : 0 <= i < 5 and i <= j <= 2i }")) == [(0, 4), (0, 8)]
    with pytest.raises(Unbounded):
        bounding_box(isl.Set("{ [i] : i >= 0 }"))
    with pytest.raises(Unbounded):
        bounding_box(isl.Set("[n] -> { [i] : 0 <= i < n }"))


def test_scan_stops_when_told():
    class Stop(Exception):
        pass

    def stop() -> None:
        raise Stop

    with pytest.raises(Stop):
        scan(isl.Set("{ [i, j] : 0 <= i < 200 and 0 <= j < 200 }"), check=stop)
