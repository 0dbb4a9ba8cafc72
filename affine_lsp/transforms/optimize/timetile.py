"""Time tiling: the band isl finds only after a skew (a stencil's time loop and its
space loops), realised as a skew that keeps the band perfect, then a tiling of the
skewed band.

isl's rows for the band must be a unit lower-triangular skew of the nest's loops,
the same for every statement up to a constant (the shift of a second sweep, which
the code generator places itself): member k = x_k + sum(F[k][m] * x_m, m < k).
The skew is `Spec(SKEW, skews=F)`, the tiling `Spec(TILE, sizes=...)` of the
skewed band; both come from the code generator of `transforms.schedule` (a
`Spec` with `skews`), and this path is taken only where it is there.

Tile sizes come from the cost model on the band in skewed coordinates: the
subscripts rewritten in terms of y = F x (x = F^-1 y), the trip counts of the
loops they skew (a run of a skewed loop makes as many iterations), sizes from `TIME_TILES` and
`SPACE_TILES` (the tiles of a skewed band are partial at its edges whatever
their size); the innermost loop may run whole (only the loops before it tiled).

Inside the tiles, a recurrence along the innermost skewed loop (a statement that
reads, at the next iteration, what it wrote: seidel-2d's `A[i, j - 1]`) is one
chain of dependent updates; a wavefront of R rows of the loop before it
(`Spec(WAVEFRONT, factor=R)`) runs R such chains at once, R from the cost model
(`wavefront_rows`), taken when the model predicts a gain.

Last, each innermost loop of the tiles whose next iterations read again what it
loads (a sweep's `%A[%i - 1]`, `%A[%i]`, `%A[%i + 1]`) carries those values in
registers (`Spec(SCALAR_REPLACE)`): one load per statement instance, the
neighbours built from registers by the vectorizer (measured on jacobi-1d: each
innermost loop of its 64x2048 tiles bound by its three unaligned vector loads
before, two of them across cache lines).
"""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import product
from typing import Any

import islpy as isl

from affine_lsp.ir import AffineForOp
from affine_lsp.poly import Budget, PolyError
from affine_lsp.transforms.loops import SCALAR_REPLACE, SKEW, TILE, WAVEFRONT, Spec
from affine_lsp.transforms.optimize import scheduler
from affine_lsp.transforms.optimize.bands import BandDependences, recurrences
from affine_lsp.transforms.optimize.nest import Nest
from affine_lsp.transforms.optimize.realise import Realiser
from affine_lsp.transforms.optimize.scheduler import Band
from affine_lsp.transforms.performance import (
    Body,
    Choice,
    Loop,
    Machine,
    Ref,
    estimate,
    footprint,
    wavefront_rows,
)

MOST_CARRIED_LOOPS = 8
"""The innermost loops of the tiles scalar replacement is tried on, at most."""
MOST_CARRIED_DEPTH = 3
"""Scalar replacement is tried in the tiles of bands of at most this many loops, and
not after a wavefront (a recurrence: what the sweep reads it wrote): the proof of
the whole chain of heat-3d's (four loops) ran out of its isl operations on every
attempt, 140 s in all, and so did seidel-2d's after its wavefront."""


def skew_rows(band: Band, depth: int) -> tuple[tuple[int, ...], ...] | None:
    """F (row k - 1: the factors of loops 0..k-1 added to loop k) when every
    statement's rows are the same unit lower-triangular skew of its first `depth`
    loops (up to constants); None otherwise."""
    found: tuple[tuple[int, ...], ...] | None = None
    for rows in band.rows:
        if len(rows) != depth:
            return None
        if any(len(row.coefficients) < depth for row in rows):
            continue  # (a statement with fewer loops: fdtd-2d's row of ey, a constant)
        factors = []
        for k, row in enumerate(rows):
            coefficients = row.coefficients
            if coefficients[k] != 1 or any(coefficients[m] for m in range(k + 1, depth)):
                return None
            if any(coefficients[depth:]):
                return None
            if k:
                factors.append(tuple(coefficients[:k]))
        if found is None:
            found = tuple(factors)
        elif found != tuple(factors):
            return None
    if found is None or not any(any(row) for row in found):
        return None
    return found


def _inverse(rows: tuple[tuple[int, ...], ...], depth: int) -> list[list[int]]:
    """x = M y for y = F x (F unit lower-triangular with the skew rows)."""
    skew = [[1 if m == k else 0 for m in range(depth)] for k in range(depth)]
    for k, row in enumerate(rows, start=1):
        for m, factor in enumerate(row):
            skew[k][m] = factor
    inverse = [[0] * depth for _ in range(depth)]
    for k in range(depth):  # forward substitution, column by column of the identity
        for column in range(depth):
            value = 1 if k == column else 0
            for m in range(k):
                value -= skew[k][m] * inverse[m][column]
            inverse[k][column] = value
    return inverse


def skewed_body(nest: Nest, rows: tuple[tuple[int, ...], ...], depth: int) -> Body:
    """The cost model's view of the band in skewed coordinates."""
    inverse = _inverse(rows, depth)
    first = max(nest.statements, key=lambda s: len(s.loops))  # (not a peeled iteration)
    if len(first.loops) < depth:
        raise ValueError("no statement runs in every loop of the band")
    # Each run of a skewed loop makes as many iterations as the loop it skews (its
    # bounds move with the loops outside it): the box the skewed band spans over
    # every run is larger, and would count iterations that never run.
    trips = [nest.trip(loop) for loop in first.loops[:depth]]
    groups: dict[tuple, list[tuple[int | None, ...]]] = {}
    meta: dict[tuple, tuple[tuple[int | None, ...], int]] = {}
    for statement in nest.statements:
        if len(statement.loops) < depth:
            continue  # (a peeled iteration beside the band: once per outer iteration)
        for access in statement.accesses:
            transformed = []
            for row in access.coefficients:
                x = list(row[:depth]) + [0] * (depth - len(row[:depth]))
                transformed.append(
                    tuple(sum(x[m] * inverse[m][k] for m in range(depth)) for k in range(depth))
                )
            key = (access.memref, tuple(transformed), access.is_write)
            groups.setdefault(key, []).append(access.constants)
            meta[key] = (access.shape, access.element_bytes)
    refs = []
    for (memref, coefficients, writes), constants in groups.items():
        shape, element = meta[(memref, coefficients, writes)]
        spread = []
        for dim in range(len(coefficients)):
            values = [v for c in constants if dim < len(c) and (v := c[dim]) is not None]
            spread.append(max(values) - min(values) if values else 0)
        refs.append(
            Ref(memref, coefficients, tuple(spread), shape, element, writes, len(constants))
        )
    names = first.loop_names()[:depth]
    loops = tuple(
        Loop(name, trip, False, k == depth - 1)
        for k, (name, trip) in enumerate(zip(names, trips, strict=True))
    )
    operations = max(1, sum(len(s.accesses) for s in nest.statements if len(s.loops) >= depth))
    return Body(loops, (), tuple(refs), operations)


TIME_TILES = (4, 8, 16, 32, 64)
SPACE_TILES = (16, 32, 64, 128, 256)
INNER_TILES = (*SPACE_TILES, 512, 1024, 2048)
"""The tile sizes tried for the time loop, the space loops and the innermost loop
of a skewed band: its tiles are partial at the band's edges whatever their size,
and small ones cost more in their bounds than they save. Measured, one interleaved
run each: jacobi-1d 64x2048 1.07x faster than 32x1024, jacobi-2d and fdtd-2d 64x16
(the innermost loop whole) 1.04x and 1.17x faster than 32x16."""
SMALL_SPACE_TILE = 8
"""Tried too for the outer space loops of a band of three space loops: a tile of
heat-3d 16 x 16 rows of a whole innermost loop does not fit in L2, and 8 x 8 rows
ran 1.2x faster than 16 x 16 rows of 32."""
MIN_TIME_GAIN = 1.05
SKEWED_FIT = 1.0
"""The part of L2 what a tile touches over two consecutive time steps may take
(`step_footprint`: what it reuses from one step to the next)."""
SKEWED_L2 = 2
"""The estimates that choose a skewed band's tiles count this many times L2 (the
cost model's traffic keeps half of each cache for what it does not count; a tile
of a time step runs alone on its core). Measured, one interleaved run: jacobi-2d
32x16 with j whole 1.16x faster than 16x16x512, fdtd-2d 32x16 with j whole 1.6x
faster than 32x32x256, heat-3d 16x16x8 with k whole 1.17x faster than 4x8x8,
seidel-2d 32x14 with j whole 1.3x faster than 16x14x1024."""
NEAR = 1.05
"""Tiles the model predicts within this factor of the best are as good to it: of
those, the longest innermost loop is taken (each run of it starts and ends with
the bounds of a skewed tile and a vector loop's remainder, which the model does
not count: measured on jacobi-1d, 32x1024 ran 1.3x faster than 32x256, and on
heat-3d the innermost loop whole 1.2x faster than 16)."""
PIECE_CYCLES = 80.0
"""Cycles each piece of a skewed tile costs beyond its iterations (`pieces`: one run
of the loops inside the band's last tiled loop; short rows, each a jump in memory
where the prefetcher starts again, the bounds of a skewed tile, a vector loop's
remainder). Measured on heat-3d, one loaded run: 16x16x8 (about 490,000 pieces of
8 rows) 1.93x the original, 16x8 with j and k whole (3,000 pieces of 8 planes)
2.19-2.27x: about 80 cycles a piece."""
PLANE_ROWS = (4, SMALL_SPACE_TILE)
"""The rows of the first space loop a plane tile takes (`plane_tiles`)."""
PLANE_SHARE = 0.5
"""The share of L3 the box of a plane tile over all its time steps may take (the
share of a cache the cost model lets a working set take)."""


def skewed_tile_sizes(
    body: Body, target: Machine, skews: tuple[tuple[int, ...], ...] = ()
) -> tuple[int, ...]:
    """Sizes of `TIME_TILES` (the first loop), `SPACE_TILES` (the others; and
    `SMALL_SPACE_TILE` with three space loops) and `INNER_TILES` (the innermost,
    which may also run whole), among the tiles whose footprint over two time steps
    fits in L2 (`SKEWED_FIT`), cycles estimated with `SKEWED_L2` times L2: of those
    within `NEAR` of the fewest predicted cycles, the longest innermost loop, then the
    most iterations in a tile (fewer tiles, fewer partial ones at the band's edges),
    then the fewest cycles. Every estimate adds `PIECE_CYCLES` per piece of a tile
    (`pieces`, with the band's skews F). With three or more space loops, plane
    tiles (`plane_tiles`) are candidates too, estimated with an array's read and
    write of the same subscripts counted once (`shared_lines`)."""
    order = tuple(range(len(body.band)))
    trips = [loop.trip for loop in body.band]
    choices: list[list[int]] = [[t for t in TIME_TILES if t < trips[0]] or [trips[0]]]
    space = (SMALL_SPACE_TILE, *SPACE_TILES) if len(trips) > 3 else SPACE_TILES
    for k in range(1, len(trips)):
        inner = k == len(trips) - 1
        found = [t for t in (INNER_TILES if inner else space) if t < trips[k]]
        if inner:
            found.append(trips[k])
        choices.append(found or [trips[k]])
    untiled = tuple(trips)
    roomy = _roomy(target)
    counted = shared_lines(body)

    def cycles(sizes: tuple[int, ...], seen: Body = body) -> float:
        found = estimate(seen, Choice(order, sizes), roomy).cycles
        return found + PIECE_CYCLES * pieces(trips, sizes, skews)

    candidates = [(cycles(untiled), untiled)]
    for sizes in product(*choices):
        if step_footprint(body, sizes, target.line_bytes) > target.cache(2) * SKEWED_FIT:
            continue
        candidates.append((cycles(tuple(sizes)), tuple(sizes)))
    for sizes in plane_tiles(trips):
        if footprint(counted, sizes, target.line_bytes) <= target.cache(3) * PLANE_SHARE:
            candidates.append((cycles(sizes, counted), sizes))
    fewest = min(cycles for cycles, _ in candidates)
    near = [(cycles, sizes) for cycles, sizes in candidates if cycles <= fewest * NEAR]
    return max(near, key=lambda found: (found[1][-1], math.prod(found[1]), -found[0]))[1]


def plane_tiles(trips: list[int]) -> list[tuple[int, ...]]:
    """With three or more space loops, tiles of the time loop (`TIME_TILES`) and of
    `PLANE_ROWS` rows of the first space loop, every other loop whole: each time step
    of such a tile sweeps a few whole planes, contiguous in memory. What it reuses
    from one step to the next (its rows and the stencil's reach, in whole planes of
    each array) is more than L2 holds and comes from L3, where the tile's box over
    all its steps stays for the next tile along the first space loop (which slides
    along the same planes): that box must fit in `PLANE_SHARE` of L3."""
    if len(trips) < 4:
        return []
    times = [t for t in TIME_TILES if t < trips[0]]
    rows = [r for r in PLANE_ROWS if r < trips[1]]
    return [(t, r, *trips[2:]) for t in times for r in rows]


def shared_lines(body: Body) -> Body:
    """`body` with each array's write folded into its read of the same subscripts
    (the same lines: a stencil's `B[i, j]` written in one sweep and read in the
    other), so that the estimates count those lines once."""
    reads = {(ref.array, ref.coefficients) for ref in body.refs if not ref.writes}
    refs = []
    for ref in body.refs:
        key = (ref.array, ref.coefficients)
        if ref.writes and key in reads:
            continue
        if not ref.writes:
            folded = sum(
                other.count
                for other in body.refs
                if other.writes and (other.array, other.coefficients) == key
            )
            ref = replace(ref, count=ref.count + folded)
        refs.append(ref)
    return replace(body, refs=tuple(refs))


def pieces(trips: list[int], sizes: tuple[int, ...], skews: tuple[tuple[int, ...], ...]) -> int:
    """The pieces of a tiling of a skewed band: the runs of the loops inside its last
    tiled loop, one per iteration of the point loops outside it, in every tile.
    Along a loop skewed by F (its row of `skews`), a tile's points cover
    `trip + sum(F[m] * (size_m - 1))` values of it: its tiles, the partial ones at
    the band's edges included, number that over its size."""
    tiled = 0
    while tiled < len(sizes) and sizes[tiled] < trips[tiled]:
        tiled += 1
    if tiled == 0:
        return 0
    tiles = 1
    for k in range(tiled):
        factors = skews[k - 1] if 0 < k <= len(skews) else ()
        span = trips[k] + sum(f * (sizes[m] - 1) for m, f in enumerate(factors))
        tiles *= math.ceil(span / sizes[k])
    return tiles * math.prod(sizes[: tiled - 1])


def scaled_time_tiles(
    sizes: tuple[int, ...], trips: tuple[int, ...], scale: float
) -> tuple[int, ...]:
    """`sizes` times `scale` (at least 2), the loops that run whole left whole, a
    size that would reach the trip count left as it is (the loop stays tiled)."""
    if scale == 1.0:
        return sizes
    scaled = []
    for size, trip in zip(sizes, trips, strict=True):
        other = max(2, round(size * scale))
        scaled.append(other if size < trip and other < trip else size)
    return tuple(scaled)


def _roomy(target: Machine) -> Machine:
    """`target` with `SKEWED_L2` times its L2, for the estimates that choose a
    skewed band's tiles."""
    caches = list(target.caches)
    if len(caches) > 1:
        caches[1] *= SKEWED_L2
    return target.with_overrides(caches=tuple(caches))


def step_footprint(body: Body, sizes: tuple[int, ...], line: int) -> int:
    """Bytes a tile touches over two consecutive time steps: what it reuses from
    one step to the next (the box of its subscripts over all its time steps slides
    by the skew at each step, and holds more than the tile keeps at once)."""
    return footprint(body, [min(2, sizes[0]), *sizes[1:]], line)


def time_tile(
    realiser: Realiser, nest: Nest, band: Band, target: Machine, scale: float = 1.0
) -> tuple[float, float] | None:
    """Skew and tile the nest's band; (cycles before, after) by the model, or None
    when it does not apply (nothing taken then). `scale`: the tiles times this
    (`--tune`'s variants)."""
    depth = band.members
    rows = skew_rows(band, depth)
    if rows is None or depth < 2:
        return None
    if all(len(statement.loops) < depth for statement in nest.statements):
        return None
    body = skewed_body(nest, rows, depth)
    order = tuple(range(depth))
    untiled = tuple(loop.trip for loop in body.band)
    sizes = scaled_time_tiles(skewed_tile_sizes(body, target, rows), untiled, scale)
    target = _roomy(target)  # (the estimates that chose the sizes)
    before = estimate(body, Choice(order, untiled), target).cycles
    after = estimate(body, Choice(order, sizes), target).cycles
    tiled = 0
    while tiled < depth and sizes[tiled] < untiled[tiled]:
        tiled += 1
    if tiled == 0 or after * MIN_TIME_GAIN > before:
        return None
    full = sizes
    sizes = sizes[:tiled]  # (the loops after the tiled ones run whole)
    root = realiser.at((0,))
    if root is None:
        return None
    kept = realiser.budget
    realiser.budget = time_tile_budget(kept)  # (the chain's proof too, once taken)
    found = _skewed_and_tiled(realiser, nest, body, rows, (sizes, full), before, target)
    if found is None:
        realiser.budget = kept
    return found


def _skewed_and_tiled(
    realiser: Realiser,
    nest: Nest,
    body: Body,
    rows: tuple[tuple[int, ...], ...],
    tiles: tuple[tuple[int, ...], tuple[int, ...]],
    before: float,
    target: Machine,
) -> tuple[float, float] | None:
    """The skew and the tiles (`tiles`: the sizes of the tiled loops, and of every
    loop for the model), then a wavefront where a recurrence pays for one; (cycles
    before, after) by the model, or None (nothing taken)."""
    sizes, full = tiles
    depth = len(body.band)
    order = tuple(range(depth))
    untiled = tuple(loop.trip for loop in body.band)
    tiled = len(sizes)
    after = estimate(body, Choice(order, full), target).cycles
    rows_at_once = _wavefront(nest, body, rows, full, target)
    if rows_at_once > 1:
        if tiled > 1:  # (whole groups of rows in a tile: no group of fewer)
            sizes = _rows_multiple(sizes, rows_at_once)
            full = _rows_multiple(full, rows_at_once)
        before = estimate(body, Choice(order, untiled, rows=1), target).cycles
        after = estimate(body, Choice(order, full, rows=1), target).cycles
    root = realiser.at((0,))
    if root is None:
        return None
    fields: dict[str, Any] = {"skews": rows}  # (a field of the code generator's Spec)
    skew = Spec(SKEW, **fields)
    names = [loop.name.lstrip("%") for loop in body.band]
    if not realiser.apply(root, skew, "", "skew the band to make it tileable"):
        return None
    root = realiser.at((0,))
    shown = f"({', '.join(names[: len(sizes)])}) " + "x".join(str(s) for s in sizes)
    if root is None or not realiser.apply(
        root, Spec(TILE, sizes=sizes), f"tiled {shown}", f"tile {shown}"
    ):
        realiser.undo()  # (a skew alone does not pay)
        return None
    if rows_at_once > 1:
        point = realiser.at((0,) * (tiled + 2))  # (the point loop of the band's 2nd loop)
        words = f"wavefront of {rows_at_once} rows of %{names[1]} in each tile"
        if point is not None and realiser.apply(
            point, Spec(WAVEFRONT, factor=rows_at_once), words, words
        ):
            after = estimate(body, Choice(order, full, rows=rows_at_once), target).cycles
    if depth <= MOST_CARRIED_DEPTH and rows_at_once == 1:  # (not along a recurrence)
        carry_reuse(realiser)
    return before, after


def carry_reuse(realiser: Realiser) -> None:
    """Scalar replacement in each innermost loop of the nest whose next iterations read
    again what it loads (a loop it does not apply to, or whose proof with the steps
    before fails, is left as it is, unreported)."""
    realiser.apply_each(
        lambda: [loop for loop in _innermost(realiser) if not loop.iter_args],
        Spec(SCALAR_REPLACE),
        "",
        MOST_CARRIED_LOOPS,
    )


def _innermost(realiser: Realiser) -> list[AffineForOp]:
    """The nest's loops with no loop inside, in the order of the text."""
    found = []
    for top in realiser.tops():
        for op in top.walk():
            if isinstance(op, AffineForOp) and not any(
                isinstance(inner, AffineForOp) for inner in op.walk() if inner is not op
            ):
                found.append(op)
    return found


def _wavefront(
    nest: Nest,
    body: Body,
    rows: tuple[tuple[int, ...], ...],
    full: tuple[int, ...],
    target: Machine,
) -> int:
    """The rows of the band's second loop a wavefront in each tile runs at once
    (1: none), where a recurrence along the innermost loop makes one pay."""
    depth = len(body.band)
    if not recurrent(nest, rows, depth):
        return 1
    order = tuple(range(depth))
    rows_at_once = wavefront_rows(body, target)
    chained = estimate(body, Choice(order, full, rows=1), target).cycles
    broken = estimate(body, Choice(order, full, rows=rows_at_once), target).cycles
    return rows_at_once if rows_at_once > 1 and broken * MIN_TIME_GAIN <= chained else 1


def _rows_multiple(sizes: tuple[int, ...], rows: int) -> tuple[int, ...]:
    """`sizes` with the second one the nearest multiple of `rows` (at least `rows`):
    measured on seidel-2d with 7 rows, tiles of 14 to 56 rows ran 1.3x faster than
    tiles of 16 (groups of 7, 7 and 2)."""
    second = max(rows, round(sizes[1] / rows) * rows)
    return (sizes[0], second, *sizes[2:])


TIME_TILE_SECONDS = 3.0
"""How much longer than a step's own the proofs of time tiling may take (the
skew's, the tiles', a wavefront's and the whole chain's): each about a second of
CPU time on heat-3d and seidel-2d, which a loaded machine stretches past a
step's time limit."""


def time_tile_budget(budget: Budget) -> Budget:
    """`budget` with `TIME_TILE_SECONDS` times its time limit (its isl operation cap
    as it is)."""
    limit = budget.time_limit
    return Budget(budget.max_operations, None if limit is None else limit * TIME_TILE_SECONDS)


def recurrent(nest: Nest, rows: tuple[tuple[int, ...], ...], depth: int) -> bool:
    """A statement reads, at another iteration of the innermost skewed loop only,
    a value it wrote: a chain of dependent updates along that loop (False when
    isl cannot tell within its budget: no wavefront then)."""
    try:
        _, flow = scheduler.dependences(nest)
        distances = BandDependences(nest.session, recurrences(flow), depth)
        return distances.carried_innermost(rows)
    except (PolyError, isl.Error):
        return False
