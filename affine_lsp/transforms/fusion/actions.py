"""The "Fuse loops" code actions, as plain data for the language server.

With the cursor on or in a loop nest:
  * "Fuse with the next loop nest (depth d, +x% compute)", one per depth;
    the best one is preferred; illegal depths and depths over the tolerance
    come disabled, with the reason (the dependence they would break), unless the
    second nest's iterations shifted make them legal: "Fuse with the next loop
    nest, shifted by 1 (depth d, +0% compute)";
  * "Fuse sibling loop nests (...)" when the two nests read a memref in common;
  * "Fuse all loop nests in @f" (its edits are computed on `resolve()`).
Nothing is offered when the function has errors. Every enabled action's text is
parsed again and checked by the verifier before it is offered.

Planning has a budget (`budgets.FUSION_PLANNING`): depths whose legality is not
decided within it are offered without their cost and analysed when chosen
(`resolve()`, within `budgets.ACTION_RESOLVE_SECONDS`); "Fuse all" is always
computed then.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from affine_lsp.checks import (
    CheckOptions,
    Severity,
    TextEdit,
    check_document,
)
from affine_lsp.ir import AffineForOp, FuncOp, ModuleModel, function_of
from affine_lsp.poly import Budget, NotAffine, budgets, deadline_after, time_limits_enabled
from affine_lsp.syntax import SourceDocument, encode
from affine_lsp.transforms.diff import minimal_edits
from affine_lsp.transforms.edits import OverlappingEdits, apply_edits, sorted_edits
from affine_lsp.transforms.functions import has_errors, parse_function
from affine_lsp.transforms.fusion.engine import (
    PRODUCER_CONSUMER,
    SIBLING,
    Candidate,
    FusionOptions,
    PairFusion,
)
from affine_lsp.transforms.fusion.greedy import fuse_all
from affine_lsp.transforms.fusion.nests import (
    are_siblings,
    loops_in,
    nest_at,
    nest_blocks,
    next_nest,
)
from affine_lsp.transforms.fusion.shift import shift_text

KIND = "refactor.rewrite"

TOO_COMPLEX = "too complex to analyse in time"


@dataclass
class FusionAction:
    """One code action: a title, its edits (None until resolved) or why it is disabled."""

    title: str
    kind: str = KIND
    edits: list[TextEdit] | None = None
    disabled_reason: str | None = None
    preferred: bool = False
    _compute: Callable[[float | None], tuple[list[TextEdit] | None, str | None]] | None = field(
        default=None, repr=False
    )

    def resolve(self, time_limit: float | None = None) -> list[TextEdit]:
        """Compute the edits if they are not known yet, within `time_limit` seconds
        (default `budgets.ACTION_RESOLVE_SECONDS`); empty and disabled if that fails."""
        if self.edits is None and self._compute is not None:
            edits, reason = self._compute(time_limit or budgets.ACTION_RESOLVE_SECONDS)
            self._compute = None
            if reason is not None:  # never edits with a reason against them
                edits, self.disabled_reason = [], reason
            self.edits = edits
        return self.edits or []


def _percent(fraction: float | None) -> str:
    return f"+{round((fraction or 0.0) * 100)}%"


@dataclass
class Clock:
    """The time (and isl operations) left for planning; None: no limit beyond the
    options' own budget."""

    deadline: float | None
    max_operations: int | None = None
    seconds: float | None = None

    @classmethod
    def start(cls, seconds: float | None, max_operations: int | None = None) -> Clock:
        if not time_limits_enabled():
            seconds = None
        return cls(deadline_after(seconds), max_operations, seconds)

    def tighter_than(self, budget: Budget) -> bool:
        """Whether this clock may run out before `budget` does: only then can a
        question it left undecided be decided later, with more time."""
        operations = self.max_operations is not None and (
            not budget.max_operations or self.max_operations < budget.max_operations
        )
        seconds = self.seconds is not None and (
            budget.time_limit is None or self.seconds < budget.time_limit
        )
        return operations or seconds

    def options(self, options: FusionOptions) -> FusionOptions:
        return options.until(self.deadline, self.max_operations)


def verify_edits(
    data: bytes, edits: list[TextEdit], model: ModuleModel, function: FuncOp
) -> str | None:
    """Why the edited text does not verify (None if it does): the function is parsed
    again and checked by the verifier. Edits outside the function (never made by
    fusion) have the whole document checked instead."""
    span = function.span
    try:
        sorted_edits(edits)
    except OverlappingEdits as error:
        return f"the fused code's edits are inconsistent ({error})"
    if not all(
        span.start_byte <= e.span.start_byte <= e.span.end_byte <= span.end_byte for e in edits
    ):
        errors = [
            d.message
            for d in check_document(
                SourceDocument(apply_edits(data, edits)), CheckOptions(dialects=model.dialects)
            )
            if d.severity == Severity.ERROR
        ]
        return f"the fused code does not verify: {errors[0]}" if errors else None
    try:
        fused = parse_function(apply_edits(data, edits), function, model)
    except NotAffine as error:
        return error.reason
    growth = sum(len(encode(e.new_text)) - (e.span.end_byte - e.span.start_byte) for e in edits)
    if fused.span.end_byte != span.end_byte + growth:
        return "the fused code does not verify: the function does not end where it should"
    return None


def _deferred(title: str, evaluate: Callable[[Clock], FusionAction | None]) -> FusionAction:
    """An action analysed only when chosen (planning ran out of time): `evaluate`
    returns the action as it would have been offered."""

    def compute(seconds: float | None) -> tuple[list[TextEdit] | None, str | None]:
        action = evaluate(Clock.start(seconds))
        if action is None:
            return [], "nothing to fuse"
        if action.edits is None and action.disabled_reason is None:
            return [], TOO_COMPLEX  # still undecided
        if action.disabled_reason is not None or not action.edits:
            return [], action.disabled_reason or "nothing to fuse"
        return list(action.edits), None

    return FusionAction(title, _compute=compute)


@dataclass
class _Pair:
    """What every action of one pair of nests needs."""

    data: bytes
    model: ModuleModel
    function: FuncOp
    first: AffineForOp
    second: AffineForOp
    options: FusionOptions

    def fusion(self, mode: str, clock: Clock) -> PairFusion:
        options = clock.options(self.options)
        return PairFusion(
            self.data, self.model, self.function, self.first, self.second, mode, options
        )


def _pair_actions(pair: _Pair, clock: Clock) -> list[FusionAction]:
    prefix = "Fuse with the next loop nest"
    fusion = pair.fusion(PRODUCER_CONSUMER, clock)
    later = clock.tighter_than(pair.options.budget)  # undecided now, decidable later
    if fusion.failure is not None:
        if fusion.timed_out and later:
            return [_deferred(prefix, lambda later: _preferred(_pair_actions(pair, later)))]
        reason = TOO_COMPLEX if fusion.timed_out else fusion.failure
        return [FusionAction(prefix, disabled_reason=reason)]
    actions = []
    best = fusion.best()
    for depth in fusion.depths():
        candidate = fusion.choice(depth)
        if candidate.timed_out and later:

            def evaluate(later: Clock, depth: int = depth) -> FusionAction:
                candidate = pair.fusion(PRODUCER_CONSUMER, later).choice(depth)
                return _candidate_action(prefix, candidate, None, pair)

            actions.append(_deferred(f"{prefix} (depth {depth})", evaluate))
        else:
            actions.append(_candidate_action(prefix, candidate, best, pair))
    actions.sort(key=lambda a: (not a.preferred, a.disabled_reason is not None))
    return actions


def _preferred(actions: list[FusionAction]) -> FusionAction | None:
    """The action a deferred one stands for: the preferred enabled one, else the first."""
    enabled = [a for a in actions if a.disabled_reason is None and a.edits]
    if enabled:
        return next((a for a in enabled if a.preferred), enabled[0])
    return actions[0] if actions else None


def _candidate_action(
    prefix: str, candidate: Candidate, best: Candidate | None, pair: _Pair
) -> FusionAction:
    if candidate.timed_out:
        return FusionAction(f"{prefix} (depth {candidate.depth})", disabled_reason=TOO_COMPLEX)
    if not candidate.legal:
        return FusionAction(f"{prefix} (depth {candidate.depth})", disabled_reason=candidate.reason)
    kept = ", keeps the first nest" if candidate.producer_kept else ""
    shifted = f", {shift_text(candidate.shift)}" if candidate.shift else ""
    title = (
        f"{prefix}{shifted} (depth {candidate.depth}, {_percent(candidate.extra)} compute{kept})"
    )
    tolerance = pair.options.tolerance
    if not candidate.within(tolerance):
        return FusionAction(
            title,
            disabled_reason=f"{_percent(candidate.extra)} compute exceeds the "
            f"{round(tolerance * 100)}% tolerance",
        )
    problem = verify_edits(pair.data, candidate.edits, pair.model, pair.function)
    if problem is not None:
        return FusionAction(title, disabled_reason=problem)
    return FusionAction(title, edits=list(candidate.edits), preferred=candidate is best)


def _sibling_actions(pair: _Pair, clock: Clock) -> list[FusionAction]:
    prefix = "Fuse sibling loop nests"
    if not are_siblings(pair.first, pair.second):
        return []
    fusion = pair.fusion(SIBLING, clock)
    later = clock.tighter_than(pair.options.budget)  # undecided now, decidable later
    if fusion.failure is not None:
        if fusion.timed_out and later:
            return [_deferred(prefix, lambda later: _preferred(_sibling_actions(pair, later)))]
        reason = TOO_COMPLEX if fusion.timed_out else fusion.failure
        return [FusionAction(prefix, disabled_reason=reason)]
    best = fusion.best()
    if best is None:
        deepest = fusion.candidate(fusion.depths()[-1]) if fusion.depths() else None
        if deepest is None:
            return []
        if deepest.timed_out and later:
            return [_deferred(prefix, lambda later: _preferred(_sibling_actions(pair, later)))]
        return [_candidate_action(prefix, deepest, None, pair)]
    return [_candidate_action(prefix, best, best, pair)]


def _fuse_all_action(
    data: bytes, model: ModuleModel, function: FuncOp, options: FusionOptions
) -> FusionAction | None:
    if not any(len(loops_in(block)) >= 2 for block in nest_blocks(function)):
        return None
    name = function.symbol.lstrip("@")

    def compute(seconds: float | None) -> tuple[list[TextEdit] | None, str | None]:
        result = fuse_all(data, options, {name}, time_limit=seconds)
        if not result.complete:
            return [], TOO_COMPLEX
        if not result.steps:
            return [], "no two nests in this function can be fused"
        edits = minimal_edits(data, result.text)
        problem = verify_edits(data, edits, model, function)
        return ([], problem) if problem else (edits, None)

    return FusionAction(f"Fuse all loop nests in {function.symbol}", _compute=compute)


_CACHE: OrderedDict[tuple, list[FusionAction]] = OrderedDict()
_CACHE_SIZE = 32


def fusion_actions(
    document: SourceDocument,
    model: ModuleModel,
    start_byte: int,
    end_byte: int,
    options: FusionOptions | None = None,
    time_limit: float | None = budgets.FUSION_PLANNING.time_limit,
) -> list[FusionAction]:
    """The fusion code actions for a cursor or selection (byte offsets), planned
    within `time_limit` seconds (None: only the options' budget); what is not
    decided by then is offered to be analysed when chosen (`resolve()`)."""
    # (the document's dialects, for what fusion models again itself)
    options = replace(options or FusionOptions(), dialects=model.dialects)
    operations = budgets.FUSION_PLANNING.max_operations if time_limit is not None else None
    clock = Clock.start(time_limit, operations)
    data = document.source
    nest = nest_at(model, start_byte, end_byte, lambda offset: document.point(offset)[0])
    if nest is None:
        return []
    function = function_of(nest)
    if function is None:
        return []
    key = (
        hashlib.blake2b(data, digest_size=16).digest(),
        nest.span.start_byte,
        options,
        time_limit,
    )
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    if has_errors(document, model, function):
        actions: list[FusionAction] = []
    else:
        actions = []
        second = next_nest(nest)
        if second is not None:
            pair = _Pair(data, model, function, nest, second, options)
            actions += _pair_actions(pair, clock)
            actions += _sibling_actions(pair, clock)
        everything = _fuse_all_action(data, model, function, options)
        if everything is not None:
            actions.append(everything)
    _CACHE[key] = actions
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return actions
