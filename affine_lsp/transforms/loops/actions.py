"""The loop transformations as code actions, plain data for the language server.

With the cursor on or in an `affine.for` (the loop whose header holds the
cursor, else the innermost loop around it): "Interchange %i and %j", "Tile
32×32" (imperfect bands too), "Unroll %i by 4" (or fully), "Unroll and jam %i by
2", "Parallelize %i", "Hoist invariant code out of %i", "Distribute %i", "Skew
%j by 1 (against %i)", where neither loop of a pair is parallel "Wavefront of %i
and %j" and "Tile 32×32 and run the tiles in wavefront", "Scalar replacement in
%k" (where the body accesses an element the loop does not move), and, where
interchange or tiling is illegal but a skew makes it legal, "Skew %j by 1 and
...". Legality comes from the dependences, decided within
`budgets.TRANSFORM_PLANNING` (the nest's dependences are computed once for all
of them); illegal actions come
disabled with the dependence they would break. Edits are computed when an
action is chosen (`resolve()`): the rewrite is written and proven then, and a
failed proof disables it. Nothing is offered in a function with errors.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from affine_lsp.checks import TextEdit
from affine_lsp.ir import AffineAccessOp, AffineForOp, ModuleModel, function_of
from affine_lsp.poly import Budget, IslSession, PolyError, budgets, time_limits_enabled
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.cursor import loops_holding, starting_on_line
from affine_lsp.transforms.functions import has_errors
from affine_lsp.transforms.loops.core import (
    DISTRIBUTE,
    HOIST,
    INTERCHANGE,
    PARALLELIZE,
    SCALAR_REPLACE,
    SKEW,
    TILE,
    UNROLL,
    UNROLL_JAM,
    WAVEFRONT,
    Context,
    Spec,
    check_only,
    module_of,
    transform,
)
from affine_lsp.transforms.loops.nest import (
    band_chain,
    body_ops,
    constant_trip_count,
    inner_loop,
)
from affine_lsp.transforms.loops.scheduled import aligned_band

KIND = "refactor.rewrite"

FULL_UNROLL_OFFER = 16
"""Loops with a constant trip count up to this are also offered "Unroll fully"."""


@dataclass(frozen=True)
class LoopOptions:
    """What the settings choose: tile sizes (one repeats for every loop of the
    band), the unroll and unroll-and-jam factors."""

    tile_sizes: tuple[int, ...] = (32,)
    unroll_factor: int = 4
    unroll_jam_factor: int = 2


@dataclass
class LoopAction:
    """One code action: a title, its edits (None until resolved) or why it is disabled."""

    title: str
    kind: str = KIND
    edits: list[TextEdit] | None = None
    disabled_reason: str | None = None
    preferred: bool = False
    spec: Spec | None = None
    _compute: Callable[[float | None], tuple[list[TextEdit], str | None]] | None = field(
        default=None, repr=False
    )

    def resolve(self, time_limit: float | None = None) -> list[TextEdit]:
        """Write and prove the transformation if not done yet, within `time_limit`
        seconds (default `budgets.ACTION_RESOLVE_SECONDS`); empty and disabled if
        the proof fails."""
        if self.edits is None and self._compute is not None:
            edits, reason = self._compute(time_limit or budgets.ACTION_RESOLVE_SECONDS)
            self._compute = None
            if reason is not None:
                edits, self.disabled_reason = [], reason
            self.edits = edits
        return self.edits or []


def loop_at(
    model: ModuleModel, start: int, end: int, line_of: Callable[[int], int]
) -> AffineForOp | None:
    """The loop whose header line holds the cursor, else the innermost loop around it."""
    around = loops_holding(model, start, end)
    if not around:
        return None
    on_line = starting_on_line(around, line_of(start), line_of)
    return on_line[0] if on_line else around[-1]


def tile_sizes(options: LoopOptions, depth: int) -> tuple[int, ...]:
    sizes = options.tile_sizes or (32,)
    if len(sizes) == 1:
        return sizes * depth
    return sizes[:depth]


def splitting_sizes(band: list[AffineForOp], sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The tile sizes of the longest outer part of `band` whose every loop they split
    into more than one tile (a size at or above a loop's trip count is no tiling)."""
    kept = []
    for loop, size in zip(band, sizes, strict=False):
        trips = constant_trip_count(loop)
        if trips is not None and trips <= size:
            break
        kept.append(size)
    return tuple(kept)


def _specs(loop: AffineForOp, options: LoopOptions) -> list[Spec]:
    specs = []
    inner = inner_loop(loop)
    if inner is not None:
        specs.append(Spec(INTERCHANGE))
    band = _band(loop, 3)
    sizes = splitting_sizes(band, tile_sizes(options, len(band)))
    if sizes:
        specs.append(Spec(TILE, sizes=sizes))
    trips = constant_trip_count(loop)
    if trips is None or trips >= options.unroll_factor:
        specs.append(Spec(UNROLL, factor=options.unroll_factor))
    if trips is not None and 0 < trips <= FULL_UNROLL_OFFER:
        specs.append(Spec(UNROLL, factor=None))
    if any(isinstance(op, AffineForOp) for op in body_ops(loop)):
        specs.append(Spec(UNROLL_JAM, factor=options.unroll_jam_factor))
    specs.append(Spec(PARALLELIZE))
    specs.append(Spec(HOIST))
    if len(body_ops(loop)) >= 2:
        specs.append(Spec(DISTRIBUTE))
    if len(_band(loop, 2)) == 2:
        specs.append(Spec(SKEW, factor=1))
    if any(isinstance(op, AffineAccessOp) for op in body_ops(loop)):
        specs.append(Spec(SCALAR_REPLACE))
    return specs


def _wavefront_specs(
    loop: AffineForOp, options: LoopOptions, context: Context | None
) -> list[Spec]:
    """Where neither the loop nor the one inside it is parallel: its diagonals in
    turn (points, and tiles)."""
    chain = band_chain(loop, 3)
    if len(chain) < 2:
        return []
    specs = [Spec(WAVEFRONT)]
    tiles = splitting_sizes(chain, tile_sizes(options, len(chain)))
    if len(tiles) >= 2:  # (one row of tiles is no wavefront)
        specs.append(Spec(WAVEFRONT, sizes=tiles))
    if context is None:
        return specs  # (not known in time: offered, decided when chosen)
    try:
        with context.session.errors("the loop"):
            analysis = context.analysis()
            parallel = any(analysis.carried_by(loop) is None for loop in chain[:2])
    except PolyError:
        return specs
    return [] if parallel else specs


def _band(loop: AffineForOp, limit: int) -> list[AffineForOp]:
    """The loops a band transformation of `loop` takes (sibling nests beside them
    join it where the chain of single loops is shorter: a shifted fusion's pieces)."""
    chain = band_chain(loop, limit)
    if len(chain) < limit:
        longer = aligned_band(loop)[0][:limit]
        if len(longer) > len(chain):
            return longer
    return chain


def title_of(spec: Spec, loop: AffineForOp) -> str:
    band = _band(loop, 3)
    module = module_of(spec.kind)
    whole_band = spec.kind in (INTERCHANGE, TILE, SKEW, WAVEFRONT) or bool(spec.skew_rows())
    title: str = module.title(spec, band if whole_band else loop)
    return title


def _resolver(
    data: bytes, model: ModuleModel, loop: AffineForOp, spec: Spec, resolve: Budget
) -> Callable[[float | None], tuple[list[TextEdit], str | None]]:
    def compute(seconds: float | None) -> tuple[list[TextEdit], str | None]:
        budget = resolve
        if seconds is not None and time_limits_enabled():
            budget = Budget(budget.max_operations, seconds)
        result = transform(data, model, loop, spec, budget=budget)
        if not result.applied:
            return [], result.reason or "nothing to do"
        return list(result.edits), None

    return compute


def _planned(
    data: bytes,
    model: ModuleModel,
    loop: AffineForOp,
    spec: Spec,
    session: IslSession,
    contexts: dict[int, Context],
    resolve: Budget,
) -> list[LoopAction]:
    module = module_of(spec.kind)
    checked = check_only(data, model, loop, spec, module, session, contexts)
    title = title_of(spec, loop)
    if checked.timed_out:
        # Undecided within the planning budget: decided (and proven) when chosen.
        return [LoopAction(title, spec=spec, _compute=_resolver(data, model, loop, spec, resolve))]
    if checked.reason is not None:
        actions = [LoopAction(title, disabled_reason=checked.reason, spec=spec)]
        if checked.hint is not None:
            hint = checked.hint
            actions.append(
                LoopAction(
                    title_of(hint, loop),
                    spec=hint,
                    _compute=_resolver(data, model, loop, hint, resolve),
                )
            )
        return actions
    return [LoopAction(title, spec=spec, _compute=_resolver(data, model, loop, spec, resolve))]


def _context(contexts: dict[int, Context], loop: AffineForOp) -> Context | None:
    """The context the planned actions shared (None if the planning stopped early)."""
    return contexts.get(id(loop))


_CACHE: OrderedDict[tuple, list[LoopAction]] = OrderedDict()
_CACHE_SIZE = 32


def loop_actions(
    document: SourceDocument,
    model: ModuleModel,
    start_byte: int,
    end_byte: int,
    options: LoopOptions | None = None,
    budget: Budget = budgets.TRANSFORM_PLANNING,
    resolve: Budget = budgets.TRANSFORM,
) -> list[LoopAction]:
    """The loop transformation actions for a cursor or selection (byte offsets),
    planned within `budget`; a chosen action is written and proven within
    `resolve` (its time limit is the one `resolve()` gets)."""
    options = options or LoopOptions()
    data = document.source
    loop = loop_at(model, start_byte, end_byte, lambda offset: document.point(offset)[0])
    if loop is None:
        return []
    function = function_of(loop)
    if function is None:
        return []
    key = (
        hashlib.blake2b(data, digest_size=16).digest(),
        loop.span.start_byte,
        options,
        budget,
        resolve,
        model.dialects,  # (the same text is checked otherwise in another project)
    )
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    actions: list[LoopAction] = []
    if not has_errors(document, model, function):
        session = IslSession(budget)
        contexts: dict[int, Context] = {}
        for spec in _specs(loop, options):
            actions += _planned(data, model, loop, spec, session, contexts, resolve)
        for spec in _wavefront_specs(loop, options, _context(contexts, loop)):
            actions += _planned(data, model, loop, spec, session, contexts, resolve)
    _CACHE[key] = actions
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return actions
