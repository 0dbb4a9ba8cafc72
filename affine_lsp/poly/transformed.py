"""An iteration space as a transformation left it: tiles and moved points.

`group_tiles`: a loop whose iv is determined by the other loops of the nest, and
that groups several points under each of its values, only says which group
(tile) a point is in: such loops are left out of the axes and their groups drawn
as outlines around the points (tiling writes `%i_tile` around `%i`; a nest tiled
by hand the same way is drawn the same way). A determined loop that only
repeats another drawn loop's iv, one value for one (fusion leaves `%i = %k`), is
left out of the axes too, without outlines. No point is lost: the remaining
coordinates tell every point apart.

`mark_moved`: with each point's origin (`IterationSpace.origins`: the iteration
of the original loops it repeats, read from the new code), the points drawn
elsewhere than their origin was are `moved` (skewing, interchange), and the
places they came from are their `ghosts`.

Both take the space's drawn points as they are (all of them, or the sample).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from affine_lsp.poly.points import Point
from affine_lsp.poly.space import Arrow, IterationSpace


def _project(point: Point, dims: Sequence[int]) -> Point:
    return tuple(point[d] for d in dims)


def tile_dims(points: Sequence[Point], k: int) -> list[int]:
    """The dimensions (outermost first) that only group points: each is determined by
    the other remaining dimensions over `points`, and some value of it holds more
    than one point."""
    grouped: list[int] = []
    kept = list(range(k))
    for d in range(k):
        if len(kept) == 1:
            break
        others = [e for e in kept if e != d]
        seen: dict[Point, int] = {}
        sizes: dict[int, int] = {}
        determined = True
        for point in points:
            rest = _project(point, others)
            value = seen.setdefault(rest, point[d])
            if value != point[d]:
                determined = False
                break
            sizes[point[d]] = sizes.get(point[d], 0) + 1
        if determined and sizes and max(sizes.values()) > 1:
            grouped.append(d)
            kept.remove(d)
    return grouped


def _copies(points: Sequence[Point], d: int, e: int) -> bool:
    """Whether dimensions `d` and `e` determine each other over `points` (one value of
    one for each value of the other: a loop that repeats another's iv, as fusion
    leaves `%i` running with `%k`)."""
    forward: dict[int, int] = {}
    backward: dict[int, int] = {}
    for point in points:
        if forward.setdefault(point[d], point[e]) != point[e]:
            return False
        if backward.setdefault(point[e], point[d]) != point[d]:
            return False
    return True


def group_tiles(space: IterationSpace) -> IterationSpace:
    """The space drawn on the loops that are not tile loops, each point with its tile
    (`tiles`, `tile_ivs`); the space itself when there is no tile loop. A determined
    loop that only copies another drawn loop's iv is left out of the axes too, but
    outlines nothing."""
    k = len(space.ivs)
    grouped = tile_dims(space.points, k)
    if not grouped or k < 2:
        return space
    kept = [d for d in range(k) if d not in grouped]
    tiling = [d for d in grouped if not any(_copies(space.points, d, e) for e in kept)]

    def project(point: Point) -> Point:
        return _project(point, kept)

    distances: dict[tuple[str, str], dict[Point, int]] = {}
    for key, counts in space.distances.items():
        merged = distances.setdefault(key, {})
        for distance, number in counts.items():
            short = project(distance)
            merged[short] = merged.get(short, 0) + number
    return replace(
        space,
        ivs=[space.ivs[d] for d in kept],
        points=[project(p) for p in space.points],
        strides=tuple(space.strides[d] for d in kept),
        box=[space.box[d] for d in kept],
        then_points=frozenset(project(p) for p in space.then_points),
        else_points=frozenset(project(p) for p in space.else_points),
        arrows=[
            Arrow(a.kind, a.memref, project(a.source), project(a.target)) for a in space.arrows
        ],
        distances=distances,
        origins={project(p): o for p, o in space.origins.items()},
        tile_ivs=[space.ivs[d] for d in tiling],
        tiles={project(p): _project(p, tiling) for p in space.points} if tiling else {},
    )


def mark_moved(space: IterationSpace) -> IterationSpace:
    """The space with its `moved` points and their `ghosts` (the box grows to show
    them); unchanged when the origins are unknown or have another number of
    coordinates than the points drawn."""
    k = len(space.ivs)
    origins = space.origins
    if not origins or any(len(o) != k for o in origins.values()):
        return space
    moved = frozenset(p for p in space.points if origins.get(p, p) != p)
    ghosts = frozenset(origins[p] for p in moved)
    box = [
        (min([low, *(g[d] for g in ghosts)]), max([high, *(g[d] for g in ghosts)]))
        for d, (low, high) in enumerate(space.box)
    ]
    return replace(space, moved=moved, ghosts=ghosts, box=box)
