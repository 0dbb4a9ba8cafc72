""" "Optimize nest" as a code action, plain data for the language server.

Offered at every outermost loop of a function without errors, at once: nothing is
computed when it is offered (no isl work, so the lightbulb is never held up).
Its edits are computed when it is chosen (`resolve`): `optimize_nest` within the
time it is given (each step's budget shrinks to what is left), or, with
`tune`, the candidates compiled and timed (`tune_function`, falling back to the
model when the tools are missing). When nothing pays, or nothing can be done,
the action comes back disabled with the reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from affine_lsp.checks import TextEdit
from affine_lsp.ir import UPSTREAM, AffineForOp, Dialects, ModuleModel, function_of
from affine_lsp.poly import budgets, time_limits_enabled
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.cursor import loops_holding
from affine_lsp.transforms.diff import minimal_edits
from affine_lsp.transforms.functions import has_errors
from affine_lsp.transforms.optimize.optimizer import Options, Outcome, optimize_nests
from affine_lsp.transforms.optimize.tune import TuneError
from affine_lsp.transforms.optimize.tuning import tune_function
from affine_lsp.transforms.performance import Machine

KIND = "refactor.rewrite"
TITLE = "Optimize nest"
TUNE_SECONDS = 300.0
"""How long a tuned "Optimize nest" may take (it compiles and runs candidates)."""


@dataclass(frozen=True)
class OptimizeOptions:
    """What the settings choose: whether to time candidates (`optimize.tune`); the
    machine to plan for (None: this one)."""

    tune: bool = False
    machine: Machine | None = None


@dataclass
class OptimizeAction:
    """The action: its title, its edits (None until resolved) or why it is disabled,
    and, once resolved, what was done in words."""

    title: str
    kind: str = KIND
    edits: list[TextEdit] | None = None
    disabled_reason: str | None = None
    preferred: bool = False
    summary: str = ""
    _compute: Callable[[float | None], tuple[list[TextEdit], str | None, str]] | None = field(
        default=None, repr=False
    )

    def resolve(self, time_limit: float | None = None) -> list[TextEdit]:
        """Optimize the nest now (within `time_limit` seconds, by default
        `budgets.ACTION_RESOLVE_SECONDS`); empty and disabled when nothing changes."""
        if self.edits is None and self._compute is not None:
            edits, reason, self.summary = self._compute(time_limit)
            self._compute = None
            if reason is not None:
                edits, self.disabled_reason = [], reason
            self.edits = edits
        return self.edits or []


def outermost_at(
    model: ModuleModel, start: int, end: int, line_of: Callable[[int], int]
) -> AffineForOp | None:
    """The nest a cursor or selection is in: the outermost loop around it."""
    around = loops_holding(model, start, end)
    return around[0] if around else None


def optimize_actions(
    document: SourceDocument,
    model: ModuleModel,
    start: int,
    end: int,
    options: OptimizeOptions | None = None,
) -> list[OptimizeAction]:
    """ "Optimize nest" at the nest around [start, end] (byte offsets), to resolve
    when chosen; nothing in a function with errors."""
    options = options or OptimizeOptions()
    loop = outermost_at(model, start, end, lambda offset: document.point(offset)[0])
    if loop is None:
        return []
    function = function_of(loop)
    if function is None or has_errors(document, model, function):
        return []
    data = bytes(document.source)
    at = loop.span.start_byte
    function_start = function.span.start_byte

    dialects = model.dialects

    def compute(seconds: float | None) -> tuple[list[TextEdit], str | None, str]:
        return _optimized(data, function_start, at, options, seconds, dialects)

    return [OptimizeAction(TITLE, _compute=compute)]


def _optimized(
    data: bytes,
    function_start: int,
    at: int,
    options: OptimizeOptions,
    seconds: float | None,
    dialects: Dialects = UPSTREAM,
) -> tuple[list[TextEdit], str | None, str]:
    """(edits, None, what was done) or ([], why not, what was tried)."""
    limit = seconds or (TUNE_SECONDS if options.tune else budgets.ACTION_RESOLVE_SECONDS)
    deadline = time.perf_counter() + limit if time_limits_enabled() else None
    model_options = Options(machine=options.machine, deadline=deadline, dialects=dialects)
    words = ""
    new = None
    reports = None
    if options.tune:
        try:
            tuned = tune_function(data, function_start, [at], model_options)
        except TuneError as error:
            words = f"not tuned ({error.reason}); "
        else:
            new, reports, words = tuned.data, tuned.reports, tuned.words + "; "
    if new is None or reports is None:
        new, reports = optimize_nests(data, [at], model_options)
    outcome = reports[0].outcome if reports else Outcome(None)
    words += _words(outcome)
    if new == data:
        return [], _why_not(outcome), words
    return minimal_edits(data, new), None, words


def _words(outcome: Outcome) -> str:
    if not outcome.steps:
        return "nothing done"
    return ", ".join(outcome.steps) + outcome.gain_words


def _why_not(outcome: Outcome) -> str:
    """Why the nest is left as it is, in the user's terms."""
    if outcome.refused:
        return f"nothing that pays could be done: {outcome.refused[0]}"
    if outcome.notes:
        return f"nothing to gain: {outcome.notes[-1]}"
    return "nothing to gain: the cost model sees no better schedule"
