"""Optimize one nest: schedule it, choose with the cost model, realise with proven
transformations.

1. **Schedule.** isl's scheduler on the nest's statements (`scheduler.py`) gives
   its permutable bands, their parallel members and the skews and shifts they
   need; the answer is reported, and guides what follows.
2. **Time tiling.** Where isl's outermost band is a skew of every statement's
   loops (a stencil), it is realised as that skew and a tiling of the skewed band
   (`timetile.py`, with the code generator's skews where `Spec` has them).
3. **Perfect bands.** A loop whose body holds several loops or statements is
   distributed (innermost such loop first, each piece proven) when the cost model
   prefers the pieces, each with its best schedule, to the loop kept whole (the
   pieces give up the reuse of what they share); a loop kept whole may still be
   unrolled and jammed; a nest distributed for nothing is put back.
4. **Each band.** The cost model (`transforms.performance`) picks the loop order
   among the legal ones (stride 1 innermost, reuse), tile sizes (divisors of the
   trip counts, or whole vectors with a partial last tile where that pays, the
   innermost a multiple of the vector lanes, the tile's working set within the
   caches), an unroll-and-jam factor within the vector registers,
   the outermost parallel loop, and scalar replacement of a reduction kept in
   memory (where `Spec` has it); each is applied as a transformation, proven, in
   that order.
5. **Proof of the whole.** The composed steps are proven against the original
   (`Realiser.finish`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import islpy as isl

from affine_lsp.ir import (
    UPSTREAM,
    AffineForOp,
    Dialects,
    ModuleModel,
    Operation,
    build_module,
    function_of,
)
from affine_lsp.poly import Budget, IslSession, PolyError, budgets
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.fusion import PRODUCER_CONSUMER, PairFusion
from affine_lsp.transforms.loops import (
    DISTRIBUTE,
    INTERCHANGE,
    PARALLELIZE,
    PERMUTE,
    SCALAR_REPLACE,
    SKEW,
    TILE,
    UNROLL_JAM,
    Spec,
    iv_name,
    perfect_band,
)
from affine_lsp.transforms.loops.scalar_replace import stores_repeated
from affine_lsp.transforms.optimize import scheduler
from affine_lsp.transforms.optimize.bands import (
    BandDependences,
    body_of,
    fused_body,
    restricted,
)
from affine_lsp.transforms.optimize.nest import Nest
from affine_lsp.transforms.optimize.nest import Statement as NestStatement
from affine_lsp.transforms.optimize.realise import Realiser
from affine_lsp.transforms.optimize.scheduler import Band, Schedule
from affine_lsp.transforms.optimize.schedules import SCHEDULE_BUDGET, scheduled
from affine_lsp.transforms.optimize.stencil import time_step_scheduled
from affine_lsp.transforms.optimize.timestep import FUSE_STEP, TimeStepFusion, step_shifts
from affine_lsp.transforms.optimize.timetile import time_tile
from affine_lsp.transforms.performance import (
    JAM_PAYS,
    MIN_TILED_TRIPS,
    Body,
    Choice,
    Machine,
    apart_factor,
    estimate,
    jam_choice,
    jam_factor,
    machine,
    memory_order,
    memory_streams,
    reduction_in_memory,
    register_tile,
    scaled_tiles,
    tile_sizes,
    vectorisable,
)

MIN_GAIN = 1.05
"""A band whose predicted gain is below this is left as it is."""
DISTRIBUTION_GAIN = 0.95
"""Distribute only where the pieces cost at most this much of the whole."""


@dataclass(frozen=True)
class Options:
    """machine: None for this one; tile_scale: the model's tile sizes times this
    (snapped to divisors of the trip counts), and jam: whether to unroll-and-jam
    at all (the variants `--tune` times)."""

    machine: Machine | None = None
    parallelize: bool = True
    budget: Budget = budgets.TRANSFORM  # per step
    tile_scale: float = 1.0
    jam: bool = True
    most_jam: int = 8  # the largest unroll-and-jam factor
    deadline: float | None = None  # time.perf_counter() by which to stop taking steps
    min_tiled_trips: int = MIN_TILED_TRIPS  # shorter loops are not tiled
    explore: int | None = None  # testing: random legal choices from this seed, any gain
    register_tile: bool = False  # a register tile wherever one fits, even for no predicted gain
    dialects: Dialects = UPSTREAM  # the project's: the text is modelled and proven with them


@dataclass
class Outcome:
    """What optimizing a nest did: the new text (None: nothing changed), the steps
    taken in words, those not taken and why, the predicted gain, the schedule
    isl found (in words) and notes."""

    new_text: bytes | None
    steps: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    gain: float | None = None
    schedule: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cycles: tuple[float, float] = (0.0, 0.0)  # predicted: original, optimized

    @property
    def applied(self) -> bool:
        return self.new_text is not None

    @property
    def gain_words(self) -> str:
        """The predicted gain as what it is: the ratio of the cost model's cycle counts,
        an estimate (measured gains differ, `docs/optimize.md`); "" when none."""
        return f"; model: {self.gain:.1f}x fewer cycles" if self.gain else ""


def optimize_nest(
    data: bytes, model: ModuleModel, root: AffineForOp, options: Options | None = None
) -> Outcome:
    """Optimize the nest of `root` (an outermost loop, or any loop: the nest from
    it). Never raises on the input: what cannot be done is in the outcome."""
    try:
        return _optimized(data, model, root, options or Options())
    except _UNFORESEEN as error:  # input we did not foresee: said, never a crash
        reason = (
            error.reason if isinstance(error, PolyError) else f"{type(error).__name__}: {error}"
        )
        return Outcome(None, notes=[f"cannot optimize this nest (internal error: {reason})"])


_UNFORESEEN = (PolyError, isl.Error, ValueError, KeyError, IndexError, AttributeError, TypeError)


def _optimized(data: bytes, model: ModuleModel, root: AffineForOp, options: Options) -> Outcome:
    target = options.machine or machine()
    outcome = Outcome(None)
    found = _describe_schedule(model, root, outcome)
    realiser = Realiser(data, model, root, options.budget, deadline=options.deadline)
    tiled = _time_tiled(realiser, found, target, options, outcome)
    if not tiled:
        _make_perfect(realiser, root, target, options, outcome)
        for index in range(len(realiser.nests())):
            _optimize_loops(realiser, (index,), target, options, outcome)
        if realiser.taken and all(t.spec.kind == DISTRIBUTE for t in realiser.taken):
            while realiser.taken:  # (distributed for nothing: the reuse is kept instead)
                realiser.undo()
            outcome.notes.append("no step pays after the distribution: the nest is kept whole")
    final = realiser.finish()
    outcome.steps = [  # (one step applied to several loops alike: said once)
        t.words
        for k, t in enumerate(realiser.taken)
        if k == 0 or t.words != realiser.taken[k - 1].words
    ]
    outcome.refused += realiser.refused
    before, after = outcome.cycles
    if before and after:
        outcome.gain = before / after
    if final != data:
        outcome.new_text = final
    return outcome


# -- 1. the schedule -----------------------------------------------------------------------


def _describe_schedule(
    model: ModuleModel, root: AffineForOp, outcome: Outcome
) -> tuple[Nest, Schedule] | None:
    try:
        nest, found = time_step_scheduled(model, root) or scheduled(model, root)
    except PolyError as error:
        outcome.notes.append(f"no schedule from isl: {error.reason}")
        return None
    outcome.schedule = found.describe(nest)
    return nest, found


def _time_tiled(
    realiser: Realiser,
    found: tuple[Nest, Schedule] | None,
    target: Machine,
    options: Options,
    outcome: Outcome,
) -> bool:
    """The nest time tiled, when isl's outermost band is a skew of every statement's
    loops (`timetile.py`)."""
    if found is None or options.explore is not None:
        return False
    nest, schedule = found
    band = schedule.outermost()
    if band is None or not (band.permutable and band.skewed()):
        return False
    if set(band.statements) != {s.name for s in nest.statements}:
        return False
    tried = len(realiser.refused)
    scale = options.tile_scale
    cycles = time_tile(realiser, nest, band, target, scale)
    if cycles is None:
        cycles = _fused_and_time_tiled(realiser, nest, band, target, scale)
        if cycles is not None:
            del realiser.refused[tried : tried + 1]
    if cycles is None and _fused_siblings(realiser, outcome):
        fused = realiser.at((0,))
        try:
            session = IslSession(SCHEDULE_BUDGET)
            with session.errors("the nest"):
                refreshed = Nest.of(session, fused, realiser.model) if fused else None
        except PolyError:
            refreshed = None
        if refreshed is not None:
            cycles = time_tile(realiser, refreshed, band, target, scale)
        if cycles is None:
            realiser.undo()  # (the fusions pay only with the time tiles)
        else:  # (what the band refused before its loops were fused is no news)
            del realiser.refused[tried : tried + 1]
    if cycles is None:
        return False
    _add_cycles(outcome, *cycles)
    return True


def _fused_and_time_tiled(
    realiser: Realiser, nest: Nest, band: Band, target: Machine, scale: float = 1.0
) -> tuple[float, float] | None:
    """The sweeps of a time step fused as isl's band shifts them (`timestep.py`),
    then time tiled; nothing kept (None) when either is not done."""
    shifts = step_shifts(nest, band)
    root = realiser.at((0,))
    if shifts is None or root is None:
        return None
    words = f"fused the loops of {iv_name(root)}"
    moved = sorted({shift for shift in shifts.values() if any(shift)})
    if moved:
        words += " (shifted by " + ", ".join(",".join(map(str, s[1:])) for s in moved) + ")"
    planner = TimeStepFusion(shifts)
    before = len(realiser.refused)
    if not realiser.apply(root, Spec(FUSE_STEP), words, words, planner):
        del realiser.refused[before:]  # (tried on isl's word: the time tiles were asked)
        return None
    fused = realiser.at((0,))
    refreshed = None
    if fused is not None:
        try:
            session = IslSession(SCHEDULE_BUDGET)
            with session.errors("the nest"):
                refreshed = Nest.of(session, fused, realiser.model)
        except PolyError:
            refreshed = None
    cycles = None
    if refreshed is not None:
        cycles = time_tile(realiser, refreshed, band, target, scale)
    if cycles is None:
        realiser.undo()
        del realiser.refused[before:]  # (about the fused text, not the user's)
    return cycles


def _fused_siblings(realiser: Realiser, outcome: Outcome) -> bool:
    """Fuse the loops of the band's last loop into one, one pair after the other
    (fusion with a shift where the dependences need one: the sweeps of a stencil's
    time step), so that the band is perfect; each fusion checked by fusion's own
    exact comparison. False (nothing kept) when one does not fuse."""
    root = realiser.at((0,))
    if root is None:
        return False
    depth = len(perfect_band(root))
    place = (0,) + (0,) * (depth - 1)
    while True:
        last = realiser.at(place)
        if last is None:
            break
        function = function_of(last)
        ops = _body(last)
        loops = [op for op in ops if isinstance(op, AffineForOp)]
        if function is None or len(loops) < 2:
            return len(loops) == 1 and realiser.taken != []
        if len(loops) != len(ops):
            break  # (code between the loops)
        fusion = PairFusion(
            realiser.data, realiser.model, function, loops[0], loops[1], PRODUCER_CONSUMER
        )
        best = _deepest_fusion(fusion)
        if best is None or best.new_text is None:
            break
        shift = getattr(best, "shift", ())
        words = f"fused the loops of {iv_name(last)}" + (
            f" (the second shifted by {', '.join(map(str, shift))})" if any(shift) else ""
        )
        if not realiser.adopt(best.new_text, words, f"fuse the loops of {iv_name(last)}"):
            break
    realiser.undo()
    return False


def _deepest_fusion(fusion: PairFusion) -> Any:
    """The fusion of every loop of the pair, shifted where the dependences need it
    (both sweeps under one innermost loop: the time tiles give each statement an
    innermost loop of its own again), else fusion's own best choice."""
    shifted = getattr(fusion, "shifted", None)  # (fusion with a shift, where it is there)
    depths = fusion.depths()
    if shifted is not None and depths:
        found = shifted(depths[-1])
        if found is not None and found.new_text is not None:
            return found
    return fusion.best()


# -- 2. perfect bands ----------------------------------------------------------------------


def _make_perfect(
    realiser: Realiser, root: AffineForOp, target: Machine, options: Options, outcome: Outcome
) -> None:
    """Distribute the loops whose bodies hold several loops or statements, innermost
    level first, each proven; stop at the first refusal of a nest."""
    for _ in range(16):  # (each round distributes one loop)
        candidate = _imperfect_loop(realiser)
        if candidate is None:
            return
        name = iv_name(candidate)
        before = len(realiser.nests())
        words = f"distributed {name}"
        if not _distribution_pays(realiser, candidate, target, options, outcome):
            _mark_stuck(realiser, candidate)
            continue
        if not realiser.apply(candidate, Spec(DISTRIBUTE), words, f"distribute {name}"):
            _mark_stuck(realiser, candidate)
            continue
        after = len(realiser.nests())
        realiser.taken[-1].words = f"distributed {name}" + (
            f" into {after - before + 1} nests" if after > before else ""
        )


def _distribution_pays(
    realiser: Realiser, loop: AffineForOp, target: Machine, options: Options, outcome: Outcome
) -> bool:
    """Whether the model prefers the pieces of `loop`, each with its best schedule, to
    `loop` as it is (distribution gives up the reuse of what the pieces share)."""
    if options.explore is not None:
        return True
    session = IslSession(SCHEDULE_BUDGET)
    try:
        with session.errors("the nest"):
            nest = Nest.of(session, loop, realiser.model)
            every, _ = scheduler.dependences(nest)
            fused = fused_body(nest, loop, nest.statements)
            trip = fused.band[0].trip
            kept = estimate(fused, Choice((0,), (trip,)), target).cycles
            factor = jam_factor(fused, 0, trip, target, options.most_jam) if options.jam else None
            if factor is not None:  # (kept whole, it can still be unrolled and jammed)
                kept = min(kept, estimate(fused, Choice((0,), (trip,), (0, factor)), target).cycles)
            pieces = 0.0
            for statements, band in _pieces(nest, loop):
                names = {s.name for s in statements}
                distances = BandDependences(session, restricted(every, names), len(band))
                parallel = [distances.parallel(k) for k in range(len(band))]
                alone = [distances.alone(k) for k in range(len(band))]
                body = body_of(nest, band, parallel, alone, statements)
                identity = tuple(range(len(band)))
                choice = _modelled(
                    body, distances.orders() or [identity], distances.permutable(), target, options
                )
                pieces += estimate(body, choice, target).cycles
    except PolyError:
        return True  # (the distribution's own analysis decides)
    if pieces < kept * DISTRIBUTION_GAIN:
        return True
    outcome.notes.append(
        f"{iv_name(loop)} is kept whole: its pieces would not share what they read "
        f"(the model: {kept:.3g} cycles whole, {pieces:.3g} distributed)"
    )
    return False


def _pieces(nest: Nest, loop: AffineForOp) -> list[tuple[list[NestStatement], list[AffineForOp]]]:
    """The statements under each op of `loop`'s body, with the band each would have
    once `loop` is distributed (`loop` and the perfect band of a loop among them)."""
    found: dict[int, tuple[list[NestStatement], list[AffineForOp]]] = {}
    ops = _body(loop)
    for statement in nest.statements:
        op = statement.accesses[0].op
        top = op
        while top.parent_op is not None and top.parent_op is not loop:
            top = top.parent_op
        key = next((k for k, o in enumerate(ops) if o is top), -1)
        if key not in found:
            inner = perfect_band(top) if isinstance(top, AffineForOp) else []
            found[key] = ([], [loop, *inner])
        found[key][0].append(statement)
    return list(found.values())


def _mark_stuck(realiser: Realiser, loop: AffineForOp) -> None:
    stuck: set[int] = realiser.__dict__.setdefault("_stuck", set())
    stuck.add(loop.span.start_byte)


def _imperfect_loop(realiser: Realiser) -> AffineForOp | None:
    """The deepest loop of a nest's perfect chain whose body holds more than one op
    (and a loop among them), not refused before."""
    stuck: set[int] = realiser.__dict__.setdefault("_stuck", set())
    for nest in realiser.nests():
        if not isinstance(nest, AffineForOp):
            continue
        chain = _chain(nest)
        for loop in reversed(chain):
            ops = _body(loop)
            if len(ops) > 1 and any(isinstance(op, AffineForOp) for op in ops):
                if loop.span.start_byte not in stuck:
                    return loop
                break
    return None


def _chain(root: AffineForOp) -> list[AffineForOp]:
    """The loops from `root` down while each body holds one loop, plus the loops of
    the first level that holds several (distribution works from the inside out)."""
    chain = perfect_band(root)
    last = chain[-1]
    inner = [op for op in _body(last) if isinstance(op, AffineForOp)]
    for loop in inner:
        chain += _chain(loop)
    return chain


def _body(loop: AffineForOp) -> list:
    body = loop.body.entry if loop.body is not None else None
    if body is None:
        return []
    return [op for op in body.operations if op.name != "affine.yield"]


# -- 3. each band ----------------------------------------------------------------------------


def _optimize_loops(
    realiser: Realiser,
    place: tuple[int, ...],
    target: Machine,
    options: Options,
    outcome: Outcome,
) -> None:
    """Optimize the perfect band of the loop at `place`, or, when its body holds
    several loops, each of them."""
    root = realiser.at(place)
    if root is None:
        return
    band = perfect_band(root)
    ops = _body(band[-1])
    inner = [op for op in ops if isinstance(op, AffineForOp)]
    if len(ops) > 1 and inner:
        below = place + (0,) * (len(band) - 1)
        if options.jam and options.explore is None:
            _jam_whole(realiser, below, target, options.most_jam, outcome)
        for index in range(len(inner)):
            _optimize_loops(realiser, (*below, index), target, options, outcome)
        return
    _optimize_band(realiser, place, target, options, outcome)


def _jam_whole(
    realiser: Realiser, place: tuple[int, ...], target: Machine, most: int, outcome: Outcome
) -> None:
    """Unroll-and-jam a loop that holds several loops (kept whole) when what its
    loops read does not move along it (`x[j]` of atax's `i`), unless its loops
    share rows streamed from memory (`memory_streams`: atax's row of `A`, read by
    both loops while it is in L1; jammed by 4, 4 rows are not: 2.4x slower)."""
    loop = realiser.at(place)
    if loop is None or loop.iter_args:
        return
    session = IslSession(SCHEDULE_BUDGET)
    try:
        with session.errors("the nest"):
            nest = Nest.of(session, loop, realiser.model)
            body = fused_body(nest, loop, nest.statements)
    except PolyError:
        return
    siblings = [op for op in _body(loop) if isinstance(op, AffineForOp)]
    if len(siblings) > 1 and memory_streams(body, 0, target):
        return  # (its loops share each row streamed from memory while it is in L1; F rows)
    factor = jam_factor(body, 0, body.band[0].trip, target, most)
    if factor is None:
        return
    before = estimate(body, Choice((0,), (body.band[0].trip,)), target).cycles
    after = estimate(body, Choice((0,), (body.band[0].trip,), (0, factor)), target).cycles
    words = f"unroll-and-jam {iv_name(loop)} by {factor}"
    if before / max(after, 1.0) < MIN_GAIN:
        return
    interleave = not vectorisable(body, _innermost_loop(body, (0,)))  # (`_optimize_band`)
    if realiser.apply(loop, Spec(UNROLL_JAM, factor=factor, interleave=interleave), words, words):
        _add_cycles(outcome, before, after)
    else:
        realiser.refused.pop()  # (tried on the model's word: no news for the user)


def _optimize_band(
    realiser: Realiser,
    place: tuple[int, ...],
    target: Machine,
    options: Options,
    outcome: Outcome,
) -> None:
    root = realiser.at(place)
    if root is None:
        return
    band = perfect_band(root)
    session = IslSession(SCHEDULE_BUDGET)
    try:
        with session.errors("the nest"):
            nest = Nest.of(session, root, realiser.model)
            every, _ = scheduler.dependences(nest)
            distances = BandDependences(session, every, len(band))
            parallel = [distances.parallel(k) for k in range(len(band))]
            alone = [distances.alone(k) for k in range(len(band))]
            body = body_of(nest, band, parallel, alone)
            orders = distances.orders()
            permutable = distances.permutable()
    except PolyError as error:
        outcome.notes.append(f"{iv_name(root)}: not optimized ({error.reason})")
        return
    identity = tuple(range(len(band)))
    original = Choice(identity, tuple(loop.trip for loop in body.band))
    if options.explore is not None:
        chosen = _explored(body, orders or [identity], options.explore, place)
    else:
        chosen = _modelled(body, orders or [identity], permutable, target, options)
    order, tiles, jam = chosen.order, chosen.tiles, chosen.jam
    before = estimate(body, original, target).cycles
    after = estimate(body, chosen, target).cycles
    names = [loop.name for loop in body.band]
    shown_names = ", ".join(n.lstrip("%") for n in names)
    if options.explore is None and before / max(after, 1.0) < MIN_GAIN:
        outcome.notes.append(f"({shown_names}) is kept as it is: the model sees no gain")
        _add_cycles(outcome, before, before)
        return
    done_before = len(realiser.taken)

    def here(name: str) -> AffineForOp | None:
        return realiser.find(name, realiser.op_at(place))

    if order != identity:
        permutation = tuple(order.index(k) for k in range(len(order)))
        loop = realiser.at(place)
        shown = ", ".join(names[k].lstrip("%") for k in order)
        if loop is None or not realiser.apply(
            loop,
            Spec(PERMUTE, permutation=permutation),
            f"permuted ({shown_names}) to ({shown})",
            f"permute ({shown_names}) to ({shown})",
        ):
            order = identity
    ordered = [names[k] for k in order]
    tiled = [size < body.band[k].trip for k, size in zip(order, tiles, strict=True)]
    count = _tiled_prefix(tiled)
    if count:
        sizes = tiles[:count]
        loop = realiser.at(place)
        shown = ", ".join(n.lstrip("%") for n in ordered[:count])
        what = f"({shown}) " + "x".join(str(s) for s in sizes)
        if loop is None or not realiser.apply(
            loop, Spec(TILE, sizes=sizes), f"tiled {what}", f"tile {what}"
        ):
            count = 0
    # Copies jammed into an innermost loop LLVM does not vectorise (a reduction along
    # it): written op by op, where legal, so that its SLP vectorizer sees them together.
    interleave = not vectorisable(body, _innermost_loop(body, order))
    if chosen.outer_jam is not None and jam is not None:
        name = names[chosen.outer_jam[0]]
        loop = here(name)
        words = f"unroll-and-jam {name} by {chosen.outer_jam[1]}"
        if loop is None or not realiser.apply(
            loop,
            Spec(UNROLL_JAM, factor=chosen.outer_jam[1], interleave=interleave),
            words,
            words,
        ):
            jam = jam_choice(body, order, tiles, target, options.most_jam)  # (alone, then)
    outermost = f"{ordered[0]}_tile" if count else ordered[0]
    if jam is not None and chosen.apart:
        point = _jam_apart(realiser, here, names[jam[0]], body.band[jam[0]].trip, jam[1])
        if point is not None and names[jam[0]] == ordered[0]:
            outermost = point
        jam = None
    if jam is not None:
        name = names[jam[0]]
        loop = here(name)
        words = f"unroll-and-jam {name} by {jam[1]}"
        if loop is not None:
            spec = Spec(UNROLL_JAM, factor=jam[1], interleave=interleave)
            realiser.apply(loop, spec, words, words)
    if not chosen.promote:  # (the copies of a register tile updating one element)
        _forward_copies(realiser, place, names[order[-1]])
    if options.parallelize and body.band[order[0]].parallel:
        name = outermost
        loop = here(name)
        if loop is not None and not loop.iter_args:  # (reductions would be reassociated)
            realiser.apply(loop, Spec(PARALLELIZE), f"{name} parallel", f"parallelize {name}")
    if chosen.promote:  # (last: what it declares for the proof composes only there)
        name = names[order[-1]]
        loop = here(name)
        words = f"scalar replacement in {name}"
        if loop is not None:
            realiser.apply(loop, Spec(SCALAR_REPLACE), "", words)
    if len(realiser.taken) > done_before:
        _add_cycles(outcome, before, after)
    else:
        _add_cycles(outcome, before, before)


def _innermost_loop(body: Body, order: tuple[int, ...]) -> int:
    """The cost model's index of the band's innermost loop once in `order`."""
    return len(body.band) + len(body.inner) - 1 if body.inner else order[-1]


MAX_FORWARDED_LOOPS = 8
"""The most innermost loops (a tile's main part, its partial tiles) scalar replacement
within iterations is applied to."""


def _forward_copies(realiser: Realiser, place: tuple[int, ...], name: str) -> None:
    """Scalar replacement within each iteration of the loops `name` of the nest whose
    body stores one element more than once (the copies of an unroll-and-jam along a
    loop the element does not move with: each loads and stores it). LLVM cannot do it
    where the arrays may alias: 3mm's products ran 1.55x faster with it. A loop it does
    not apply to is left as it is, unreported."""

    def find() -> list[AffineForOp]:
        root = realiser.op_at(place)
        return [
            op
            for op in (root.walk() if root is not None else [])
            if isinstance(op, AffineForOp)
            and iv_name(op) == name
            and stores_repeated(realiser.data, op)
        ]

    realiser.apply_each(
        find, Spec(SCALAR_REPLACE), f"scalar replacement in {name}", MAX_FORWARDED_LOOPS
    )


def _jam_apart(realiser: Realiser, here: Any, name: str, trip: int, factor: int) -> str | None:
    """Unroll-and-jam `name` by `factor` with its copies `trip / factor` iterations apart
    (`apart_factor`): tiled by `trip / factor`, the point loop skewed by -1 x the tile
    loop (it counts from 0), the tile loop moved inside it and unrolled and jammed. The
    point loop's name, or None (the steps taken are undone)."""
    size = trip // factor
    tile, point = f"{name}_tile", f"{name}_skew"
    steps = (
        (name, Spec(TILE, sizes=(size,)), f"tiled ({name.lstrip('%')}) {size}"),
        (tile, Spec(SKEW, factor=-1), f"skewed {name} by -{tile}"),
        (tile, Spec(INTERCHANGE), f"interchanged {tile} and {point}"),
        (
            tile,
            Spec(UNROLL_JAM, factor=factor),
            f"unroll-and-jam {tile} by {factor} (copies {size} iterations of {name} apart)",
        ),
    )
    for number, (at, spec, words) in enumerate(steps):
        loop = here(at)
        if loop is None or not realiser.apply(loop, spec, words, words):
            for _ in range(number):
                realiser.undo()
            return None
    return point


def _modelled(
    body: Body,
    orders: list[tuple[int, ...]],
    permutable: bool,
    target: Machine,
    options: Options,
) -> Choice:
    """The cost model's choice: memory order, tile sizes, unroll-and-jam. In a
    triangle (a loop whose bounds depend on another of the band), the tiles along
    the diagonal are partial, with `min` and `max` bounds, and no register tile is
    unrolled and jammed in them: the untiled schedule with its register tile is
    taken where it predicts as few cycles (within `JAM_PAYS`)."""
    order = memory_order(body, target.line_bytes, orders)
    untiled = tuple(body.band[k].trip for k in order)
    tiles = untiled
    if permutable and len(order) >= 2:
        promote = reduction_in_memory(body, order[-1])
        tiles = tile_sizes(body, order, target, options.min_tiled_trips, promote=promote)
        if options.tile_scale != 1.0:
            tiles = scaled_tiles(body, order, tiles, options.tile_scale, target)
    chosen = _jammed(body, order, tiles, target, options)
    if tiles != untiled and any(loop.ragged for loop in body.band):
        whole = _jammed(body, order, untiled, target, options)
        if (
            whole.outer_jam is not None
            and estimate(body, whole, target).cycles * JAM_PAYS
            <= estimate(body, chosen, target).cycles
        ):
            return whole
    return chosen


def _jammed(
    body: Body, order: tuple[int, ...], tiles: tuple[int, ...], target: Machine, options: Options
) -> Choice:
    """The unroll-and-jam, register tile and scalar replacement for these tiles."""
    jam = jam_choice(body, order, tiles, target, options.most_jam) if options.jam else None
    promote = reduction_in_memory(body, order[-1])
    outer_jam, jam = register_tile(
        body, order, tiles, jam, target, promote, forced=options.register_tile
    )
    chosen = Choice(order, tiles, jam, promote, outer_jam=outer_jam)
    if jam is None and options.jam and len(order) >= 2 and tiles[-2] >= body.band[order[-2]].trip:
        factor = apart_factor(body, order[-2], tiles[-2], target, options.most_jam)
        if factor is not None:  # (copies far apart, where consecutive ones are refused)
            apart = Choice(order, tiles, (order[-2], factor), promote, apart=True)
            if (
                estimate(body, apart, target).cycles
                < estimate(body, chosen, target).cycles * JAM_PAYS
            ):
                return apart
    return chosen


def _explored(
    body: Body, orders: list[tuple[int, ...]], seed: int, place: tuple[int, ...]
) -> Choice:
    """A random legal order, random tile sizes (dividing the trip counts or not) and
    a random unroll-and-jam (at times its copies apart, the loop then not tiled,
    where the factor divides it): what the differential tests run, whatever it
    gains."""
    chooser = random.Random(seed * 7919 + sum(place) * 31 + len(place))
    order = chooser.choice(orders)
    tiles = []
    for k in order:
        trip = body.band[k].trip
        tiles.append(chooser.choice([trip, *range(2, max(2, min(trip, 9)))]))
    jam = None
    if len(order) >= 2 and chooser.random() < 0.6:
        jam = (order[-2], chooser.choice((2, 3, 4)))
    apart = False
    if jam is not None and chooser.random() < 0.5:
        trip = body.band[jam[0]].trip
        if trip > jam[1] and trip % jam[1] == 0:
            tiles[-2], apart = trip, True
    return Choice(order, tuple(tiles), jam, apart=apart)


def _add_cycles(outcome: Outcome, before: float, after: float) -> None:
    outcome.cycles = (outcome.cycles[0] + before, outcome.cycles[1] + after)


def _tiled_prefix(tiled: list[bool]) -> int:
    count = 0
    for flag in tiled:
        if not flag:
            break
        count += 1
    return count


# -- several nests ---------------------------------------------------------------------------


@dataclass
class NestReport:
    """One nest optimized: the line it started on (1-based), its loop, the outcome."""

    line: int
    loop: str
    outcome: Outcome


def optimize_nests(
    data: bytes, starts: list[int], options: Options | None = None
) -> tuple[bytes, list[NestReport]]:
    """Optimize the nests whose outermost loops start at these byte offsets, the last
    one first (each rewrites only its own lines, so the offsets of the nests before
    it hold); the new text and one report per nest, in document order."""
    reports: list[NestReport] = []
    dialects = (options or Options()).dialects
    for start in sorted(set(starts), reverse=True):
        model = build_module(SourceDocument(data).tree.root_node, dialects)
        loop = next(
            (
                op
                for op in model.walk()
                if isinstance(op, AffineForOp) and op.span.start_byte == start
            ),
            None,
        )
        if loop is None:
            continue
        line = data.count(b"\n", 0, start) + 1
        outcome = optimize_nest(data, model, loop, options)
        if outcome.new_text is not None:
            data = outcome.new_text
        reports.append(NestReport(line, iv_name(loop), outcome))
    reports.reverse()
    return data, reports


def outermost_loops(root: Operation) -> list[AffineForOp]:
    """The loops under `root` with no loop around them (below `root`)."""
    found = []
    for op in root.walk():
        if not isinstance(op, AffineForOp) or op is root:
            continue
        outer = op.parent_op
        while outer is not None and outer is not root and not isinstance(outer, AffineForOp):
            outer = outer.parent_op
        if outer is None or outer is root:
            found.append(op)
    return found
