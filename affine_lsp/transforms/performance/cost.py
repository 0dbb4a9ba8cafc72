"""The cost model: what a loop order, tile sizes and unroll-and-jam cost on this
machine, in numbers a reader can check by hand (`docs/optimize.md` works
examples through it).

It sees a *band* (loops one inside the other, outermost first, each with its trip
count) and the *references* of the statements inside it (an array, its
subscripts as integer coefficients of the band's loops and of the loops inside
the band, the element size, the shape). From those alone:

- **stride** of a reference along a loop: elements between the addresses of two
  consecutive iterations (row-major). 0: the reference stays in a register over
  that loop; 1: consecutive, a cache line serves `line / element` iterations;
  anything else touches a new line at every iteration.
- **footprint** of a part of the nest: the bytes each array touches while the
  loops of that part run (the box of its subscripts, the last dimension rounded
  to cache lines, references to one array with the same coefficients counted
  once with their offsets' spread).
- **traffic** into a cache of `size` bytes: the largest innermost part of the
  nest whose footprint fits in half the cache is loaded once; the first loop
  outside it streams (each further iteration brings in only the footprint's
  growth by one iteration: the new row of a stencil, the next row of B); the
  loops outside that one repeat it all. In lines. Tiling adds loops (a tile loop
  over `N / T` tiles outside, a point loop of `T` inside), which changes which
  part fits.
- **cycles**: computing, `runs of the innermost loop * (steps * max(operations,
  loads) / ISSUE + LOOP_CYCLES)` with `ceil(trip / lanes)` steps when the innermost loop
  can be vectorised (every reference of stride 0 or 1 along it, and no dependence
  it carries), else `trip`; unroll-and-jam by F saves the loads of the
  references that do not move along the jammed loop (F - 1 of every F), and
  scalar replacement the loads and stores of the elements the innermost loop
  does not move and writes (kept in registers). A reduction along the innermost
  loop is a chain of dependent updates: at least `MEMORY_LATENCY` cycles per
  iteration (`REGISTER_LATENCY` once scalar replacement keeps it in a register),
  divided by the independent chains unroll-and-jam makes (copies that update
  other elements). Memory, per level, `traffic *
  LINE_CYCLES[level]` (lines from L2, from L3, from memory). They overlap: cycles
  = the largest of them + `UNHIDDEN` of the memory cycles.
- **predicted gain** = cycles(original) / cycles(chosen).

Choices: the **loop order** puts the loop with the fewest lines per iteration
innermost (stride 1 or 0 for most references), and the rest outside it by the
same measure (Kennedy and McKinley's memory order), keeping parallel loops
outermost when the order allows. **Tile sizes** are divisors of the trip counts
(no partial tile, no `min` in the bounds), the innermost one a multiple of the
vector lanes, and whole vectors that leave a partial last tile (counted as what
it is: its own steps and start, its remainder beyond the unroll-and-jam factor
unjammed), chosen for the fewest cycles among the sizes whose tile fits in half
of L2; of tiles predicting as many cycles, the one whose register tile makes the
most independent updates (`chained_share`).
**Unroll-and-jam** of the loop just outside the innermost one (its copies land
in the innermost loop's body), by the largest factor in `JAM_FACTORS` that
divides its trip count and whose jammed copies fit in the vector registers: one
register per reference that moves along the jammed loop per copy, plus one per
reference that does not (loaded, or kept, once for all the copies); in a
vectorised innermost loop, the copies read at most `CACHE_STREAMS` rows at once
of arrays that do not stay in L1 (`cache_streams`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product

from affine_lsp.transforms.performance.machine import Machine

LINE_CYCLES = (0.5, 2.0, 8.0)
"""Cycles per cache line brought into L1 from L2, into L2 from L3, into L3 from
memory (throughput figures of a current core, rounded)."""
UNHIDDEN = 0.1
"""The share of the memory cycles that computing does not hide."""

ISSUE = 2
"""Arithmetic operations, and loads, a core starts per cycle (each)."""
MEMORY_LATENCY = 6.0
"""Cycles between two updates of one element kept in memory (a store forwarded to
the next load, then the add)."""
REGISTER_LATENCY = 4.0
"""Cycles between two updates of one element kept in a register (the add)."""
LOOP_CYCLES = 6.0
"""Cycles each start of the innermost loop costs (its set-up, a partial vector)."""
JAM_FACTORS = (8, 4, 2)
OUTER_JAM_FACTORS = (2, 4)
"""Factors of the second loop of a register tile (`register_tile`)."""
JAM_PAYS = 0.98
"""A register tile is taken where it predicts at most this share of the cycles."""
FEWER_LINES = 0.5
"""A register tile predicting as many cycles (bound by its operations) is taken where
it brings less than this share of the lines into L2: the bandwidth of the caches
shared with the other cores, which the cycles leave out (measured: syrk's 4 x 2
register tile 2.8x the original, j jammed by 8 alone 1.4x); of two register tiles
predicting as many cycles, the one with fewer lines (syr2k's 4 x 2 rather than
2 x 4: 4.5x against 2.2x in one run)."""
MEMORY_STREAMS = 4
"""Rows of arrays larger than the last cache that an unroll-and-jam may stream from
memory at once (each copy reads another row of each array that moves along the
jammed loop)."""
CACHE_STREAMS = 2
"""Rows of arrays beyond L1 that the copies of an unroll-and-jam may read at once in a
vectorised innermost loop (`cache_streams`): each copy reads another row, a cache line
per vector step, and the core keeps only a few such streams coming into L1 (measured:
doitgen's `C4[s, p]`, 460 KB from L2, with s jammed into the vector loop over p: by 2
9.8x the original, by 4 7.0x, by 8 7.3x, not jammed 8.7x; the same loops in C with
`C4` of 32 KB, in L1, are fastest jammed by 4 or 8). The cap holds in untiled bands
only (`tiled_band`): in tiles, whose sizes bound what a tile brings into the caches,
3mm's products tiled (i, k) 20x40 with 4 x 4 register tiles ran 16.2x the original
where the tiles the cap leaves (10x4, 2 x 4) ran 12.3x, in one interleaved run)."""
APART_FACTOR = 2
"""Copies of an unroll-and-jam taken half the loop apart where consecutive rows streamed
from memory would slow the nest down (`apart_factor`; measured: gesummv's i jammed by 2
with copies 1500 rows apart 6.2x the original, 4 copies 750 apart 5.1x, not jammed 4.6x,
consecutive copies 3.6x, in one interleaved run)."""
TILE_RANGE = (4, 512)
"""Tile sizes considered: divisors of the trip count in this range."""
TILE_PAYS = 0.98
"""A tile is taken where it predicts at most this share of the cycles of the best
before it; tiles within it of the best predict as many."""
LONGEST_CHAIN = 4
"""A register tile whose copies update one element more times than this one after
the other in an iteration (2 x 8: 8) gives way to one predicting as many cycles
with shorter chains (measured on 3mm: 4 x 4 14.3x the original, 2 x 8 12.6x; on
2mm and covariance, 4 x 4 no faster than their 2 x 4, one run each under load)."""
SHORTLIST = 48
SHORTLIST_SHARE = 0.9
"""The tiles `tile_sizes` measures with their register tile: at most `SHORTLIST`,
within 1 / `SHORTLIST_SHARE` of the fewest cycles with unroll-and-jam alone."""
MIN_TILED_TRIPS = 16
"""Loops with fewer iterations are not tiled."""
CACHE_SHARE = 0.5
"""The share of a cache the model lets a working set take."""


Jam = tuple[int, int] | None
"""An unroll-and-jam: (band index, factor), or none."""


@dataclass(frozen=True)
class Ref:
    """References to one array with the same coefficients: their subscripts'
    coefficients per array dimension over the model's loops (band, then inner),
    the spread of their constant offsets per dimension, and how many there are."""

    array: str
    coefficients: tuple[tuple[int, ...], ...]
    spread: tuple[int, ...]
    shape: tuple[int | None, ...]
    element_bytes: int
    writes: bool
    count: int = 1

    def stride(self, loop: int) -> int | None:
        """Elements between two consecutive iterations of `loop` (None: unknown)."""
        return row_major_stride(self.coefficients, self.shape, loop)


def row_major_stride(
    coefficients: tuple[tuple[int, ...], ...], shape: tuple[int | None, ...], loop: int
) -> int | None:
    """Elements between the addresses of two consecutive iterations of `loop` for a
    subscript whose dimension d moves by `coefficients[d][loop]` in an array of
    `shape` (row-major); None when a size that matters is unknown (dynamic)."""
    stride = 0
    span: int | None = 1
    for dim in reversed(range(len(coefficients))):
        coefficient = coefficients[dim][loop]
        if coefficient:
            if span is None:
                return None
            stride += coefficient * span
        size = shape[dim] if dim < len(shape) else None
        span = None if size is None or span is None else span * size
    return stride


@dataclass(frozen=True)
class Loop:
    """A loop of the band: `parallel` when it carries no dependence where it is,
    `alone` when it carries none even innermost (with every other loop of the band
    fixed): the vector lanes of its iterations are independent."""

    name: str
    trip: int
    parallel: bool = False
    alone: bool = True
    ragged: bool = False
    """Its bounds depend on another loop of the band (a triangle): its tiles along
    the diagonal are partial (`min` and `max` bounds)."""


@dataclass(frozen=True)
class Body:
    """What the model sees: the band's loops (outermost first), the loops inside
    the band (always run whole, innermost last), the references, and the arithmetic
    operations per innermost iteration."""

    band: tuple[Loop, ...]
    inner: tuple[Loop, ...]
    refs: tuple[Ref, ...]
    operations: int

    @property
    def loops(self) -> tuple[Loop, ...]:
        return self.band + self.inner


@dataclass(frozen=True)
class Level:
    """One loop of a (possibly tiled) schedule: which loop of the body it runs,
    how many iterations, and how far its iv moves the body's loop (its extent
    inside it: T for a point loop, N for an untiled loop, 1 for a tile loop)."""

    loop: int
    trip: int
    extent: int
    repeats: float | None = None
    """How often it runs its body on average, where that is not `trip`: a tile loop
    whose last tile is partial (`N / T` rather than `ceil(N / T)` full tiles)."""

    @property
    def runs(self) -> float:
        return self.trip if self.repeats is None else self.repeats


@dataclass(frozen=True)
class Choice:
    """A schedule of the body: its loop order (indices into `Body.band`), tile
    sizes (in that order; the trip count: not tiled), unroll-and-jam, and whether
    the elements the innermost loop does not move are kept in registers (scalar
    replacement)."""

    order: tuple[int, ...]
    tiles: tuple[int, ...]
    jam: tuple[int, int] | None = None  # (band index, factor)
    promote: bool = False
    outer_jam: tuple[int, int] | None = None  # the loop outside `jam`'s too: a register tile
    apart: bool = False  # `jam`'s copies half its loop apart (`apart_factor`)
    rows: int | None = None  # a recurrence along the innermost loop, run R rows at once

    def tiled(self, body: Body) -> bool:
        return any(t < body.band[k].trip for k, t in zip(self.order, self.tiles, strict=True))


@dataclass
class Estimate:
    """Cycles of a choice, and how they add up (for the reader)."""

    cycles: float
    traffic: tuple[float, ...]  # lines into L1, L2, L3
    compute: float
    vectorised: bool
    notes: list[str] = field(default_factory=list)


# -- the pieces ----------------------------------------------------------------------------


def levels_of(body: Body, choice: Choice) -> list[Level]:
    """The loops a choice runs, outermost first: tile loops, point loops, inner loops."""
    found: list[Level] = []
    for k, size in zip(choice.order, choice.tiles, strict=True):
        trip = body.band[k].trip
        if size < trip:
            partial = trip / size if trip % size else None  # (the last tile, partial)
            found.append(Level(k, math.ceil(trip / size), 1, partial))
    for k, size in zip(choice.order, choice.tiles, strict=True):
        trip = body.band[k].trip
        found.append(Level(k, min(size, trip), min(size, trip)))
    offset = len(body.band)
    for k, loop in enumerate(body.inner):
        found.append(Level(offset + k, loop.trip, loop.trip))
    return found


def footprint(body: Body, extents: Sequence[int], line: int) -> int:
    """Bytes the references touch while each loop k moves over `extents[k]`
    iterations (the last array dimension rounded up to whole lines)."""
    return _footprint(body, tuple(extents), line)


@lru_cache(maxsize=1 << 16)
def _footprint(body: Body, extents: tuple[int, ...], line: int) -> int:
    total = 0
    for ref in body.refs:
        elements = 1
        dims = len(ref.coefficients)
        for dim in range(dims):
            extent = 1 + ref.spread[dim]
            for k, coefficient in enumerate(ref.coefficients[dim]):
                extent += abs(coefficient) * (extents[k] - 1)
            size = ref.shape[dim] if dim < len(ref.shape) else None
            if size is not None:
                extent = min(extent, size)
            if dim == dims - 1:
                per_line = max(1, line // ref.element_bytes)
                extent = math.ceil(extent / per_line) * per_line
            elements *= extent
        total += elements * ref.element_bytes
    return total


def traffic(body: Body, levels: list[Level], cache: int, line: int) -> float:
    """Lines brought into a cache of `cache` bytes. The largest innermost part of
    the nest whose footprint fits in `CACHE_SHARE` of it is loaded once; the first
    loop outside it that does not fit streams: a run of it brings in its footprint
    once (each further iteration only what the part did not hold yet); the loops
    outside that one repeat it all. An innermost loop that does not fit streams
    the same way (a column walked down: a line per element)."""
    budget = cache * CACHE_SHARE
    extents = [1] * len(body.loops)
    size = footprint(body, extents, line)
    for position in reversed(range(len(levels))):
        level = levels[position]
        trial = list(extents)
        trial[level.loop] = _after(trial[level.loop], level, level.trip)
        trial_size = footprint(body, trial, line)
        if trial_size > budget:
            return trial_size / line * math.prod(outer.runs for outer in levels[:position])
        extents, size = trial, trial_size
    return size / line


def _after(extent: int, level: Level, count: int) -> int:
    """The extent of a loop's iv after `count` iterations of `level` (one of its
    loops: a tile loop multiplies what its point loop covers, a point or whole loop
    covers `count` values)."""
    if level.extent == 1:  # a tile loop: each iteration moves by what is inside
        return extent * min(count, level.trip)
    return max(extent, min(count, level.trip))


def vectorisable(body: Body, loop: int) -> bool:
    """Every reference moves by 0 or 1 element along `loop`, and `loop` carries no
    dependence when innermost (a reduction along it, or a chain of updates, is not
    vectorised: reassociating floating-point sums would change the results)."""
    loops = body.loops
    if loop < len(loops) and not loops[loop].alone:
        return False
    return all(ref.stride(loop) in (0, 1) for ref in body.refs)


def jammed_levels(body: Body, levels: list[Level], jams: Sequence[tuple[int, int]]) -> list[Level]:
    """The levels with each unroll-and-jam by F of a loop the band does not tile
    taken as what it does to the order of the iterations: a tile of F of that loop
    whose point loop runs just outside the innermost loop (the jammed copies), its
    own level then running `trip / F` times, each moving it by F (syrk's 4 x 2
    register tile streams each row of `A[j, k]` once for 4 rows `i`). In a tile,
    the tile's footprint is in the cache already; the copies change nothing there."""
    if not jams or not levels:
        return levels
    found = list(levels)
    inside: list[Level] = []
    for loop, factor in jams:
        place = max((p for p, level in enumerate(found) if level.loop == loop), default=None)
        if place is None or place == len(found) - 1 or factor <= 1:
            continue
        level = found[place]
        if level.trip % factor or level.extent != body.loops[loop].trip:
            continue
        found[place] = Level(loop, level.trip // factor, 1)
        inside.append(Level(loop, factor, factor))
    return found[:-1] + inside + found[-1:]


def estimate(body: Body, choice: Choice, machine: Machine) -> Estimate:
    jams = [jam for jam in (choice.outer_jam, choice.jam) if jam is not None]
    levels = jammed_levels(body, levels_of(body, choice), jams)
    line = machine.line_bytes
    lines = tuple(traffic(body, levels, size, line) for size in machine.caches)
    iterations = math.prod(loop.trip for loop in body.loops)
    innermost = levels[-1] if levels else Level(0, 1, 1)
    vector = vectorisable(body, innermost.loop)
    lanes = max((machine.lanes(ref.element_bytes) for ref in body.refs), default=1)
    kept = promoted(body, innermost.loop) if choice.promote else set()
    loads = sum(
        ref.count
        * math.prod(
            _jammed_loads(body, choice, loop, factor)
            for loop, factor in jams
            if ref.stride(loop) == 0
        )
        for k, ref in enumerate(body.refs)
        if k not in kept
    )  # (a reference that does not move along a jammed loop: loaded once for its copies)
    work = max(body.operations, loads) / ISSUE
    compute = _innermost_cycles(body, choice, innermost, iterations, lanes if vector else 1, work)
    notes = []
    chains = promoted(body, innermost.loop)
    if any(not body.refs[k].writes for k in chains):  # a reduction along the innermost loop
        latency = REGISTER_LATENCY if choice.promote else MEMORY_LATENCY
        independent = 1
        for loop, factor in jams:
            if any(body.refs[k].stride(loop) != 0 for k in chains):
                independent *= factor  # the jammed copies update other elements
        compute = max(compute, iterations * latency / independent)
        notes.append(f"a chain of dependent updates: {latency} cycles per {independent}")
    if choice.rows is not None:  # each iteration reads what the one before it wrote
        latency = recurrence_latency(body)
        compute = max(compute, iterations * latency / choice.rows)
        notes.append(f"a recurrence along the innermost loop: {latency} cycles per {choice.rows}")
    memory = [count * cycles for count, cycles in zip(lines, LINE_CYCLES, strict=False)]
    if not vector:
        notes.append("innermost loop not vectorisable")
    total = max(compute, *memory) + UNHIDDEN * sum(memory)
    return Estimate(total, lines, compute, vector, notes)


def _innermost_cycles(
    body: Body, choice: Choice, innermost: Level, iterations: int, lanes: int, work: float
) -> float:
    """Cycles of the runs of the innermost loop: `ceil(trip / lanes)` steps of `work`
    and `LOOP_CYCLES` per run. A tiled innermost loop whose trip count its tile size
    does not divide runs, per pass over the loop, its full tiles and one partial
    tile of the remainder (its own steps, its own start)."""
    size = max(1, innermost.trip)
    whole = body.loops[innermost.loop].trip if innermost.loop < len(body.loops) else size
    if innermost.extent != size or size >= whole or whole % size == 0:
        runs = iterations / size  # how often the innermost loop starts
        return runs * (math.ceil(size / lanes) * work + LOOP_CYCLES)
    full, rest = divmod(whole, size)
    steps = full * math.ceil(size / lanes) + math.ceil(rest / lanes)
    return iterations / whole * (steps * work + (full + 1) * LOOP_CYCLES)


def _jammed_loads(body: Body, choice: Choice, loop: int, factor: int) -> float:
    """The share of the loads of a reference that does not move along a loop jammed
    by `factor`: 1 / factor, except for the iterations of a partial last tile beyond
    a multiple of `factor` (the remainder the unroll-and-jam runs alone)."""
    if loop >= len(body.band) or loop not in choice.order:
        return 1 / factor
    trip = body.band[loop].trip
    size = choice.tiles[choice.order.index(loop)]
    alone = (trip % size) % factor if size < trip else trip % factor
    share = alone / trip
    return (1 - share) / factor + share


def recurrence_latency(body: Body) -> float:
    """Cycles from one update of a recurrence to the next: the store forwarded to
    the next load, then every operation of the iteration one after the other (at
    most that many are on the chain)."""
    return MEMORY_LATENCY + REGISTER_LATENCY * body.operations


def wavefront_rows(body: Body, machine: Machine) -> int:
    """Rows of a wavefront that break a recurrence along the innermost loop into
    independent chains: enough to hide its latency behind their work, fewer than
    the vector lanes (as many rows as lanes are vectorised across the rows, into
    gathers)."""
    lanes = max((machine.lanes(ref.element_bytes) for ref in body.refs), default=1)
    loads = sum(ref.count for ref in body.refs)
    work = max(body.operations, loads) / ISSUE
    return max(1, min(lanes - 1, math.ceil(recurrence_latency(body) / max(work, 1.0))))


def promoted(body: Body, loop: int) -> set[int]:
    """The references (indices) scalar replacement keeps in registers along `loop`:
    those that do not move along it, of an array the body also writes there."""
    still = [k for k, ref in enumerate(body.refs) if ref.stride(loop) == 0]
    written = {
        (body.refs[k].array, body.refs[k].coefficients) for k in still if body.refs[k].writes
    }
    return {k for k in still if (body.refs[k].array, body.refs[k].coefficients) in written}


def reduction_in_memory(body: Body, loop: int) -> bool:
    """An element that `loop` does not move is read and written at every iteration."""
    kept = promoted(body, loop)
    return any(not body.refs[k].writes for k in kept)


def gain(body: Body, original: Choice, chosen: Choice, machine: Machine) -> float:
    return estimate(body, original, machine).cycles / max(
        1.0, estimate(body, chosen, machine).cycles
    )


# -- the choices ---------------------------------------------------------------------------


def lines_per_iteration(body: Body, loop: int, line: int) -> float:
    """Lines one iteration of `loop` brings in when it runs innermost: 0 for a
    reference that does not move, stride * element / line for a short stride, 1
    otherwise (Kennedy and McKinley's loop cost, per iteration)."""
    total = 0.0
    for ref in body.refs:
        stride = ref.stride(loop)
        if stride == 0:
            continue
        if stride is not None and abs(stride) * ref.element_bytes < line:
            total += ref.count * abs(stride) * ref.element_bytes / line
        else:
            total += ref.count
    return total


def memory_order(body: Body, line: int, allowed: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """Of the `allowed` orders of the band, the one whose loops are sorted by
    `lines_per_iteration`, costliest outermost (parallel loops first on a tie)."""
    costs = [lines_per_iteration(body, k, line) for k in range(len(body.band))]

    def key(order: tuple[int, ...]) -> tuple:
        # Innermost first: the cheapest loop innermost matters most.
        inner_first = tuple(costs[k] for k in reversed(order))
        parallel_outer = tuple(0 if body.band[k].parallel else 1 for k in order)
        return (inner_first, parallel_outer, order)

    return min(allowed, key=key)


def divisors(count: int, low: int, high: int) -> list[int]:
    return [d for d in range(low, min(high, count) + 1) if count % d == 0]


def tile_sizes(
    body: Body,
    order: tuple[int, ...],
    machine: Machine,
    min_trips: int = MIN_TILED_TRIPS,
    dividing: bool = True,
    promote: bool = False,
) -> tuple[int, ...]:
    """Tile sizes for the band in `order` (the trip count where a loop is not
    tiled; tiled loops come first): divisors of the trip counts (with `dividing`
    False, as in a skewed band whose tiles are partial anyway: powers of two), the
    innermost a multiple of the vector lanes where one divides, then whole vectors
    that leave a partial last tile (`partial_sizes`), whose tile fits in
    `CACHE_SHARE` of L2, with the fewest predicted cycles (`estimate`, with the
    unroll-and-jam `jam_choice` finds for them): each must predict `TILE_PAYS` of
    the cycles of the best before it (its loops, and a partial tile its remainder,
    must pay). Then, outside triangles, each of the `SHORTLIST` with the register
    tile `register_tile` finds for it (`promote`: with scalar replacement): of those
    predicting as many cycles as the best (within `TILE_PAYS`), the one whose copies
    make the most independent updates (`chained_share`), where that is not the best."""
    lanes = max((machine.lanes(ref.element_bytes) for ref in body.refs), default=1)
    candidates: list[list[int]] = []
    partial: list[list[int]] = []
    ragged = any(loop.ragged for loop in body.band)  # (a triangle's tiles are partial anyway)
    for position, k in enumerate(order):
        trip = body.band[k].trip
        sizes = [trip]
        extra: list[int] = []
        if trip >= min_trips:
            if dividing:
                found = [d for d in divisors(trip, *TILE_RANGE) if d < trip]
                extra = [] if ragged else partial_sizes(trip, lanes)
            else:
                found = [2**e for e in range(1, 10) if TILE_RANGE[0] // 2 <= 2**e < trip]
            if position == len(order) - 1:
                found = [d for d in found if d % lanes == 0]
            sizes += _spread(found)
        candidates.append(sizes)
        partial.append(sizes + extra)
    untiled = tuple(body.band[k].trip for k in order)
    l2 = machine.cache(2) * CACHE_SHARE

    def jammed(sizes: tuple[int, ...]) -> float:
        jam = jam_choice(body, order, sizes, machine)
        return estimate(body, Choice(order, sizes, jam, promote), machine).cycles

    def measured(sizes: tuple[int, ...]) -> tuple[Estimate, tuple[Jam, Jam]]:
        jam = jam_choice(body, order, sizes, machine)
        outer, jam = register_tile(body, order, sizes, jam, machine, promote)
        choice = Choice(order, sizes, jam, promote, outer_jam=outer)
        return estimate(body, choice, machine), (outer, jam)

    best, best_cycles = untiled, jammed(untiled)
    dividing_ones = list(product(*candidates))
    # (the tiles that divide the trip counts first: a partial tile must pay for its remainder)
    ordered = [*dividing_ones, *(s for s in product(*partial) if s not in set(dividing_ones))]
    shortlist: list[tuple[float, int, tuple[int, ...]]] = []
    for rank, sizes in enumerate(ordered):
        tiled = [size < trip for size, trip in zip(sizes, untiled, strict=True)]
        if sizes == untiled or tiled != sorted(tiled, reverse=True):
            continue  # (untiled loops only after the tiled ones)
        extents = [1] * len(body.loops)
        for k, size in zip(order, sizes, strict=True):
            extents[k] = size
        for k, loop in enumerate(body.inner):
            extents[len(body.band) + k] = loop.trip
        if footprint(body, extents, machine.line_bytes) > l2:
            continue
        found = jammed(sizes)
        shortlist.append((found, rank, sizes))
        if found < best_cycles * TILE_PAYS:  # (a tile must pay for its loops)
            best, best_cycles = sizes, found
    if best == untiled or ragged:
        return best  # (no register tile in a triangle's partial tiles)
    # Of the tiles predicting as many cycles with their register tiles, one whose copies
    # make more independent updates (`chained_share`: 3mm's 4 x 4 rather than 2 x 8).
    if update_chain(body, (jam_choice(body, order, best, machine),)) <= LONGEST_CHAIN:
        return best
    chosen, tile = measured(best)
    share = chained_share(body, tile)
    shortlist.sort()
    kept = [s for s in shortlist[:SHORTLIST] if s[0] * SHORTLIST_SHARE <= shortlist[0][0]]
    ties: list[tuple[float, bool, int, float, int, tuple[int, ...]]] = []
    for _, rank, sizes in kept:
        tiled, its_tile = measured(sizes)
        tiled_share = chained_share(body, its_tile)
        short = update_chain(body, its_tile) <= LONGEST_CHAIN
        if tiled.cycles * TILE_PAYS <= chosen.cycles and short and tiled_share < share:
            leaves = any(body.band[k].trip % size for k, size in zip(order, sizes, strict=True))
            volume = -math.prod(sizes)  # (the largest: fewer runs of the loops outside j)
            ties.append((tiled_share, leaves, volume, tiled.cycles, rank, sizes))
    return min(ties)[-1] if ties else best


def partial_sizes(trip: int, lanes: int) -> list[int]:
    """Tile sizes that leave a partial last tile (`min` in the bounds): the powers of
    two times the vector lanes in `TILE_RANGE` below `trip` that do not divide it."""
    low, high = TILE_RANGE
    sizes = (lanes * 2**e for e in range(1, 10))
    return [s for s in sizes if low <= s <= high and s < trip and trip % s]


def scaled_tiles(
    body: Body, order: tuple[int, ...], tiles: tuple[int, ...], scale: float, machine: Machine
) -> tuple[int, ...]:
    """The tiled sizes times `scale`, each snapped to the nearest divisor of its
    trip count (a multiple of the lanes for the innermost loop, where one divides)."""
    lanes = max((machine.lanes(ref.element_bytes) for ref in body.refs), default=1)
    found = []
    for position, (k, size) in enumerate(zip(order, tiles, strict=True)):
        trip = body.band[k].trip
        if size >= trip:
            found.append(size)
            continue
        choices = [d for d in divisors(trip, TILE_RANGE[0], trip - 1)]
        if position == len(order) - 1:
            choices = [d for d in choices if d % lanes == 0] or choices
        target = size * scale
        found.append(min(choices, key=lambda d: abs(math.log(d / target))) if choices else size)
    return tuple(found)


def _spread(sizes: list[int], keep: int = 6) -> list[int]:
    """At most `keep` of the sizes, spread over the range (the search stays small)."""
    if len(sizes) <= keep:
        return sizes
    step = (len(sizes) - 1) / (keep - 1)
    return sorted({sizes[round(k * step)] for k in range(keep)})


def jam_choice(
    body: Body,
    order: tuple[int, ...],
    tiles: tuple[int, ...],
    machine: Machine,
    most: int = JAM_FACTORS[0],
) -> tuple[int, int] | None:
    """(band index, factor) of an unroll-and-jam of the loop just outside the
    innermost one (its copies are jammed into the innermost loop's body), when
    references do not move along it (they are loaded, or kept, once for all the
    copies); None when none pays (`jam_factor`)."""
    if len(order) < 2:
        return None
    position = len(order) - 2
    k = order[position]
    extents = tile_extents(body, order, tiles)
    capped = not tiled_band(body, order, tiles)
    factor = jam_factor(body, k, tiles[position], machine, most, order[-1], extents, capped)
    return None if factor is None else (k, factor)


def tiled_band(body: Body, order: tuple[int, ...], tiles: tuple[int, ...]) -> bool:
    """Whether some loop of the band is cut into tiles (smaller than its trip count)."""
    return any(size < body.band[k].trip for k, size in zip(order, tiles, strict=True))


def tile_extents(body: Body, order: tuple[int, ...], tiles: tuple[int, ...]) -> list[int]:
    """Each loop's iterations in one tile (the loops inside the band whole)."""
    extents = [loop.trip for loop in body.loops]
    for k, size in zip(order, tiles, strict=True):
        extents[k] = min(size, body.band[k].trip)
    return extents


def register_tile(
    body: Body,
    order: tuple[int, ...],
    tiles: tuple[int, ...],
    jam: tuple[int, int] | None,
    machine: Machine,
    promote: bool = False,
    forced: bool = False,
) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """(outer_jam, jam): `jam` (of the loop just outside the innermost one) with
    the loop outside it unrolled and jammed too, a register tile, where that has
    fewer predicted cycles (each reference loaded once for the copies of the jammed
    loops it does not move along), its registers fit (`tile_registers`), the outer
    factor divides that loop's tile, and no rows streamed from memory are added
    (`memory_streams`); else (None, `jam`). Of register tiles predicting as many
    cycles and lines, the one with the smallest `chained_share` whose rows it
    updates fit in `CACHE_SHARE` of L1 (`written_rows`; measured on 3mm: 4 x 4 14.3x
    the original, 2 x 8 12.6x, one interleaved run; on 2mm, whose 4 rows of 960
    doubles do not fit in 24 KB, 4 x 4 about 5% slower than 2 x 4). With `forced`
    (a candidate `--tune` times), the register tile with the fewest predicted cycles
    is taken even where it does not predict fewer than `jam` alone."""
    if jam is None or len(order) < 3:
        return None, jam
    outer = order[-3]
    size = tiles[-3]
    if memory_streams(body, outer, machine) or not any(ref.stride(outer) == 0 for ref in body.refs):
        return None, jam
    best: tuple[tuple[int, int] | None, tuple[int, int] | None] = (None, jam)
    extents = tile_extents(body, order, tiles)
    # (rows read a vector at a time, in an untiled band: `jam_factor`)
    streamed = vectorisable(body, order[-1]) and not tiled_band(body, order, tiles)
    kept = estimate(body, Choice(order, tiles, jam, promote), machine)
    best_cycles = math.inf if forced else kept.cycles
    best_lines = kept.traffic[1] if len(kept.traffic) > 1 else 0.0
    for outer_factor in OUTER_JAM_FACTORS:
        if size % outer_factor:
            continue
        for factor in JAM_FACTORS:
            if factor > jam[1] or tiles[-2] % factor:
                continue
            pair = ((outer, outer_factor), (jam[0], factor))
            if tile_registers(body, pair) > machine.registers - 2:
                continue
            if streamed and cache_streams(body, pair, order[-1], extents, machine) > CACHE_STREAMS:
                continue
            choice = Choice(order, tiles, pair[1], promote, outer_jam=pair[0])
            found = estimate(body, choice, machine)
            cycles = found.cycles
            lines = found.traffic[1] if len(found.traffic) > 1 else 0.0
            fewer = cycles < best_cycles * (1.0 if forced else JAM_PAYS)
            share = 1.0 if best[0] is not None else FEWER_LINES  # (tile against tile)
            as_many = cycles <= best_cycles / JAM_PAYS and lines < best_lines * share
            shorter = (
                best[0] is not None
                and cycles <= best_cycles / JAM_PAYS
                and lines <= best_lines
                and update_chain(body, (jam,)) > LONGEST_CHAIN >= update_chain(body, pair)
                and (
                    update_chain(body, best) > LONGEST_CHAIN
                    or chained_share(body, pair) < chained_share(body, best)
                )
                and written_rows(body, order, tiles, pair[0]) <= machine.cache(1) * CACHE_SHARE
            )
            if fewer or as_many or shorter:
                best, best_cycles, best_lines = (pair[0], pair[1]), cycles, lines
    return best


def written_rows(
    body: Body, order: tuple[int, ...], tiles: tuple[int, ...], outer: tuple[int, int]
) -> int:
    """Bytes of the rows a register tile updates along the innermost loop, one per
    copy of its outer loop (`C[i, j]` of gemm's `i` by 4: 4 rows of j), which stay in
    L1 while the jammed loop runs (3mm: 4 rows of 720 doubles, 23 KB of 48 KB)."""
    loop, factor = outer
    rows = {
        (ref.array, ref.coefficients): ref.element_bytes
        for ref in body.refs
        if ref.writes and ref.stride(loop) != 0 and ref.stride(order[-1]) != 0
    }
    return sum(factor * tiles[-1] * size for size in rows.values())


def update_chain(body: Body, jams: Sequence[tuple[int, int] | None]) -> int:
    """Updates of one element one after the other in an iteration of the innermost
    loop: the factors of the jammed loops that do not move an element the body
    writes (gemm's `k` jammed by 8: 8 dependent adds of `C[i, j]`)."""
    chain = 1
    for jam in jams:
        if jam is not None and any(ref.writes and ref.stride(jam[0]) == 0 for ref in body.refs):
            chain *= jam[1]
    return chain


def chained_share(body: Body, jams: Sequence[tuple[int, int] | None]) -> float:
    """The share of the copies of a register tile that update one element one after
    the other in an iteration of the innermost loop (the copies of a jammed loop that
    does not move an element the body writes): gemm's `i` by 2 around `k` by 8, 8
    dependent adds of `C[i, j]` among 16 copies; 4 x 4, 4 among 16 (4 chains at once)."""
    chain, copies = 1, 1
    for jam in jams:
        if jam is None:
            continue
        loop, factor = jam
        copies *= factor
        if any(ref.writes and ref.stride(loop) == 0 for ref in body.refs):
            chain *= factor
    return chain / copies


def tile_registers(body: Body, jams: Sequence[tuple[int, int]]) -> int:
    """Registers the copies of a register tile hold: each reference once per copy of
    every jammed loop it moves along."""
    return sum(
        ref.count * math.prod(factor for loop, factor in jams if ref.stride(loop) != 0)
        for ref in body.refs
    )


def jam_factor(
    body: Body,
    loop: int,
    trip: int,
    machine: Machine,
    most: int = JAM_FACTORS[0],
    innermost: int | None = None,
    extents: Sequence[int] | None = None,
    streams_capped: bool = True,
) -> int | None:
    """The largest factor of `JAM_FACTORS` (at most `most`) dividing `trip` whose
    jammed copies fit in the registers (one per reference that moves along `loop`
    per copy, plus one per reference that does not), when some reference does not
    move along it.

    Where the innermost loop is vectorised and each copy reads another row of an
    array beyond L1 (`cache_streams`; `extents`: each loop's iterations in a tile,
    whole loops by default), the copies read at most `CACHE_STREAMS` such rows at
    once, unless `streams_capped` is False (a tiled band).

    Where rows of arrays larger than the last cache move along `loop`
    (`memory_streams`), the copies stream several rows from memory at once: that
    pays only where the copies share an element they write (stored once for all
    of them instead of once each: bicg's `s[j]`, 2.5x faster jammed by 4), and for
    at most `MEMORY_STREAMS` rows; where they share only what they read, the
    nest is bound by memory already and the rows at once slow it down (measured:
    gesummv 25% slower jammed by 2 than not, 3-4x slower by 4; mvt's `x1[i]`
    product 1.9x slower by 4).

    `innermost`: the loop the copies are jammed into (the body's last by default)."""
    inner = len(body.loops) - 1 if innermost is None else innermost
    packed = not vectorisable(body, inner)
    shared = sum(ref.count for ref in body.refs if ref.stride(loop) == 0)
    if shared == 0:
        return None
    streams = memory_streams(body, loop, machine)
    if streams and not any(ref.writes and ref.stride(loop) == 0 for ref in body.refs):
        return None  # (rows streamed from memory, and no store saved)
    for factor in JAM_FACTORS:
        if factor > most or factor * streams > MEMORY_STREAMS:
            continue
        jams = [(loop, factor)]
        capped = streams_capped and not packed
        if capped and cache_streams(body, jams, inner, extents, machine) > CACHE_STREAMS:
            continue
        if (
            trip % factor == 0
            and jam_registers(body, loop, factor, machine, packed) <= machine.registers - 2
        ):
            return factor
    return None


def apart_factor(
    body: Body, loop: int, trip: int, machine: Machine, most: int = JAM_FACTORS[0]
) -> int | None:
    """`APART_FACTOR` where `jam_factor` refuses to jam `loop` for rows streamed from
    memory that save no store, and its copies can be taken `trip / F` iterations apart
    instead (a tile of `trip / F` whose tile loop is unrolled and jammed inside it): each
    copy streams a row far from the others' (consecutive rows at once slow the nest
    down), and the copies' chains of dependent updates along the innermost loop are
    independent. `loop` must be parallel, share a reference the copies read once (`x[j]`),
    and the rows at once stay within `MEMORY_STREAMS`; None otherwise."""
    factor = APART_FACTOR
    if factor > most or trip % factor or not body.band[loop].parallel:
        return None
    streams = memory_streams(body, loop, machine)
    if not streams or factor * streams > MEMORY_STREAMS:
        return None
    if any(ref.writes and ref.stride(loop) == 0 for ref in body.refs):
        return None  # (a store saved: `jam_factor` jams consecutive rows)
    if not any(ref.stride(loop) == 0 for ref in body.refs):
        return None
    if jam_registers(body, loop, factor, machine) > machine.registers - 2:
        return None
    return factor


def jam_registers(
    body: Body, loop: int, factor: int, machine: Machine, packed: bool = False
) -> int:
    """Registers the copies of an unroll-and-jam of `loop` by `factor` hold: one per
    reference that does not move along it, one per copy of a reference that moves.
    With `packed` (the innermost loop is not vectorised: the copies are what the
    compiler puts in the vector lanes), the copies of a reference moving by one
    element are consecutive elements, a vector register holding as many of them as
    it has lanes (symm's `C[k, j]` jammed by 8 along j: one register of 8 doubles
    with AVX-512). Where the innermost loop is vectorised, each copy is a vector of
    its own (gemm's `A[i, k]` jammed along k: a broadcast per copy)."""
    total = 0
    for ref in body.refs:
        stride = ref.stride(loop)
        if stride == 0:
            total += ref.count
        elif stride == 1 and packed:
            total += ref.count * math.ceil(factor / machine.lanes(ref.element_bytes))
        else:
            total += ref.count * factor
    return total


def cache_streams(
    body: Body,
    jams: Sequence[tuple[int, int]],
    innermost: int,
    extents: Sequence[int] | None,
    machine: Machine,
) -> int:
    """Rows beyond L1 that the innermost loop reads at once with the jammed loops'
    copies (`jams`: (loop, factor)): each reference that moves along the innermost
    loop (a row read there) and along a jammed loop by a cache line or more counts
    once per copy of the jammed loops that move it so (another row each), where its
    array's part in a tile (`extents`: each loop's iterations in one, whole loops by
    default) is larger than `CACHE_SHARE` of L1 (it does not stay there from one
    use to the next), and the array fits in the last cache (rows from memory are
    `memory_streams`'). A load and a store of one element are one row."""
    whole = [loop.trip for loop in body.loops] if extents is None else list(extents)
    budget = machine.cache(1) * CACHE_SHARE
    last = machine.caches[-1] * CACHE_SHARE if machine.caches else 0
    found: dict[tuple[str, tuple[tuple[int, ...], ...]], int] = {}
    for ref in body.refs:
        if ref.stride(innermost) == 0:
            continue
        copies = 1
        for loop, factor in jams:
            stride = ref.stride(loop)
            if stride is None or abs(stride) * ref.element_bytes >= machine.line_bytes:
                copies *= factor
        if copies == 1:
            continue  # (the copies read the same rows)
        if all(size is not None for size in ref.shape):
            if math.prod(size or 1 for size in ref.shape) * ref.element_bytes > last:
                continue
        alone = Body(body.band, body.inner, (ref,), body.operations)
        if footprint(alone, whole, machine.line_bytes) > budget:
            found[(ref.array, ref.coefficients)] = copies
    return sum(found.values())


def memory_streams(body: Body, loop: int, machine: Machine) -> int:
    """Rows streamed from memory that each copy of an unroll-and-jam of `loop` adds:
    the arrays larger than `CACHE_SHARE` of the last cache that `loop` moves by a
    cache line or more (another row; one per array and coefficients: a load and a
    store of one element are one)."""
    last = machine.caches[-1] * CACHE_SHARE if machine.caches else 0
    found = set()
    for ref in body.refs:
        stride = ref.stride(loop)
        if stride is not None and abs(stride) * ref.element_bytes < machine.line_bytes:
            continue  # (the copies read the same lines)
        if any(size is None for size in ref.shape):
            continue
        if math.prod(size or 1 for size in ref.shape) * ref.element_bytes > last:
            found.add((ref.array, ref.coefficients))
    return len(found)
