"""The "Fuse loops" code actions, as plain data for the language server.

With the cursor on or in a loop nest:
  * "Fuse with the next loop nest (depth d, +x% compute)", one per depth;
    the best one is preferred; illegal depths and depths over the tolerance
    come disabled, with the reason (the dependence they would break);
  * "Fuse sibling loop nests (...)" when the two nests read a memref in common;
  * "Fuse all loop nests in @f" (its edits are computed on `resolve()`).
Nothing is offered when the function has errors. Every enabled action's text is
checked by the verifier (`check_document`) before it is offered.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from affine_lsp.checks import Severity, check_document
from affine_lsp.checks.diagnostics import TextEdit
from affine_lsp.checks.runner import CheckOptions, ModuleContext, check_item
from affine_lsp.ir.model import AffineForOp, FuncOp, ModuleModel, TopLevelItem
from affine_lsp.syntax import SourceDocument, syntax_problems
from affine_lsp.transforms.diff import minimal_edits
from affine_lsp.transforms.edits import apply_edits
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
    function_of,
    loops_in,
    nest_at,
    nest_blocks,
    next_nest,
)

KIND = "refactor.rewrite"


@dataclass
class FusionAction:
    """One code action: a title, its edits (None until resolved) or why it is disabled."""

    title: str
    kind: str = KIND
    edits: list[TextEdit] | None = None
    disabled_reason: str | None = None
    preferred: bool = False
    _compute: Callable[[], tuple[list[TextEdit] | None, str | None]] | None = field(
        default=None, repr=False
    )

    def resolve(self) -> list[TextEdit]:
        """Compute the edits if they are not known yet (empty and disabled if that fails)."""
        if self.edits is None and self._compute is not None:
            self.edits, reason = self._compute()
            self._compute = None
            if reason is not None:
                self.disabled_reason = reason
        return self.edits or []


def _percent(fraction: float | None) -> str:
    return f"+{round((fraction or 0.0) * 100)}%"


def _item_of(model: ModuleModel, function: FuncOp) -> TopLevelItem | None:
    top = function
    while top.parent_op is not None:
        top = top.parent_op  # type: ignore[assignment]
    return next((item for item in model.items if item.operation is top), None)


def has_errors(document: SourceDocument, model: ModuleModel, function: FuncOp) -> bool:
    """Syntax or verifier errors inside the function."""
    span = function.span
    if any(
        span.start_byte <= p.span.start_byte <= span.end_byte
        for p in syntax_problems(document.tree)
    ):
        return True
    item = _item_of(model, function)
    if item is None:
        return True
    context = ModuleContext.from_model(model)
    return any(
        d.severity == Severity.ERROR and span.start_byte <= d.span.start_byte <= span.end_byte
        for d in check_item(item, context, CheckOptions())
    )


def _verified(data: bytes, edits: list[TextEdit]) -> str | None:
    """None if the edited document has no errors, else the first one."""
    errors = [
        d.message
        for d in check_document(SourceDocument(apply_edits(data, edits)))
        if d.severity == Severity.ERROR
    ]
    return f"the fused code does not verify: {errors[0]}" if errors else None


def _pair_actions(
    data: bytes,
    model: ModuleModel,
    function: FuncOp,
    first: AffineForOp,
    second: AffineForOp,
    options: FusionOptions,
) -> list[FusionAction]:
    fusion = PairFusion(data, model, function, first, second, PRODUCER_CONSUMER, options)
    if fusion.failure is not None:
        return [FusionAction("Fuse with the next loop nest", disabled_reason=fusion.failure)]
    actions = []
    best = fusion.best()
    for depth in fusion.depths():
        candidate = fusion.candidate(depth)
        actions.append(
            _candidate_action("Fuse with the next loop nest", candidate, best, options, data)
        )
    actions.sort(key=lambda a: (not a.preferred, a.disabled_reason is not None))
    return actions


def _candidate_action(
    prefix: str, candidate: Candidate, best: Candidate | None, options: FusionOptions, data: bytes
) -> FusionAction:
    if not candidate.legal:
        return FusionAction(f"{prefix} (depth {candidate.depth})", disabled_reason=candidate.reason)
    kept = ", keeps the first nest" if candidate.producer_kept else ""
    title = f"{prefix} (depth {candidate.depth}, {_percent(candidate.extra)} compute{kept})"
    if not candidate.within(options.tolerance):
        return FusionAction(
            title,
            disabled_reason=f"{_percent(candidate.extra)} compute exceeds the "
            f"{round(options.tolerance * 100)}% tolerance",
        )
    problem = _verified(data, candidate.edits)
    if problem is not None:
        return FusionAction(title, disabled_reason=problem)
    return FusionAction(title, edits=list(candidate.edits), preferred=candidate is best)


def _sibling_action(
    data: bytes,
    model: ModuleModel,
    function: FuncOp,
    first: AffineForOp,
    second: AffineForOp,
    options: FusionOptions,
) -> list[FusionAction]:
    if not are_siblings(first, second):
        return []
    fusion = PairFusion(data, model, function, first, second, SIBLING, options)
    if fusion.failure is not None:
        return [FusionAction("Fuse sibling loop nests", disabled_reason=fusion.failure)]
    best = fusion.best()
    if best is None:
        deepest = fusion.candidate(fusion.depths()[-1]) if fusion.depths() else None
        if deepest is None:
            return []
        return [_candidate_action("Fuse sibling loop nests", deepest, None, options, data)]
    return [_candidate_action("Fuse sibling loop nests", best, best, options, data)]


def _fuse_all_action(data: bytes, function: FuncOp, options: FusionOptions) -> FusionAction | None:
    if not any(len(loops_in(block)) >= 2 for block in nest_blocks(function)):
        return None
    name = function.symbol.lstrip("@")

    def compute() -> tuple[list[TextEdit] | None, str | None]:
        result = fuse_all(data, options, {name})
        if not result.fusions:
            return [], "no two nests in this function can be fused"
        edits = minimal_edits(data, result.text)
        return edits, _verified(data, edits)

    return FusionAction(f"Fuse all loop nests in {function.symbol}", _compute=compute)


_CACHE: OrderedDict[tuple, list[FusionAction]] = OrderedDict()
_CACHE_SIZE = 32


def fusion_actions(
    document: SourceDocument,
    model: ModuleModel,
    start_byte: int,
    end_byte: int,
    options: FusionOptions | None = None,
) -> list[FusionAction]:
    """The fusion code actions for a cursor or selection (byte offsets)."""
    options = options or FusionOptions()
    data = document.source
    nest = nest_at(model, start_byte, end_byte, lambda offset: document.point(offset)[0])
    if nest is None:
        return []
    function = function_of(nest)
    if function is None:
        return []
    key = (hashlib.blake2b(data, digest_size=16).digest(), nest.span.start_byte, options)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    if has_errors(document, model, function):
        actions: list[FusionAction] = []
    else:
        actions = []
        second = next_nest(nest)
        if second is not None:
            actions += _pair_actions(data, model, function, nest, second, options)
            actions += _sibling_action(data, model, function, nest, second, options)
        everything = _fuse_all_action(data, function, options)
        if everything is not None:
            actions.append(everything)
    _CACHE[key] = actions
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return actions
