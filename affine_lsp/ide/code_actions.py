"""Code actions: the quick fixes diagnostics carry, and the loop-fusion rewrites
of `affine_lsp.transforms.fusion` (when that part is installed)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from affine_lsp.checks import Diagnostic, TextEdit
from affine_lsp.ide.analysis import DocumentAnalysis

logger = logging.getLogger("affine_lsp.ide")

QUICKFIX = "quickfix"
REWRITE = "refactor.rewrite"

try:  # the fusion actions are optional until their layer lands
    from affine_lsp.transforms.fusion.actions import fusion_actions as _fusion_actions
except ImportError:  # pragma: no cover - depends on the build
    _fusion_actions = None


@dataclass
class Action:
    title: str
    kind: str
    edits: list[TextEdit] | None  # None: compute with `resolve()`
    diagnostics: list[Diagnostic] = field(default_factory=list)
    preferred: bool = False
    disabled_reason: str | None = None
    source: Any = field(default=None, repr=False)  # what `resolve()` asks for the edits

    def resolve(self) -> list[TextEdit]:
        if self.edits is None and self.source is not None:
            self.edits = list(self.source.resolve())
            reason = getattr(self.source, "disabled_reason", None)
            if reason and not self.edits:
                self.disabled_reason = reason
        return self.edits or []


def fusion_available() -> bool:
    return _fusion_actions is not None


def _wanted(only: list[str] | None, kind: str) -> bool:
    """LSP's `only` filter: a kind matches itself and its sub-kinds."""
    return only is None or any(kind == k or kind.startswith(k + ".") for k in only)


def quick_fixes(analysis: DocumentAnalysis, start: int, end: int) -> list[Action]:
    """The fixes of the current diagnostics that overlap [start, end]."""
    actions = []
    for diagnostic in analysis.diagnostics():
        span = diagnostic.span
        if span.end_byte < start or span.start_byte > end:
            continue
        for fix in diagnostic.fixes:
            actions.append(
                Action(fix.title, QUICKFIX, list(fix.edits), [diagnostic], fix.preferred)
            )
    return actions


def fusion(analysis: DocumentAnalysis, start: int, end: int, tolerance: float) -> list[Action]:
    """The "Fuse loops" rewrites at the cursor (none if the fusion layer is absent)."""
    if _fusion_actions is None:
        return []
    view = analysis.view_at(start)
    if view is None or view.item.operation is None:
        return []
    from affine_lsp.transforms.fusion.engine import FusionOptions

    options = FusionOptions(tolerance=tolerance)
    found = _fusion_actions(analysis.document, view.model, start, end, options)
    return [
        Action(
            a.title,
            a.kind,
            a.edits,
            preferred=a.preferred,
            disabled_reason=a.disabled_reason,
            source=a,
        )
        for a in found
    ]


def code_actions(
    analysis: DocumentAnalysis,
    start: int,
    end: int,
    only: list[str] | None = None,
    tolerance: float = 0.3,
) -> list[Action]:
    actions: list[Action] = []
    if _wanted(only, QUICKFIX):
        actions += quick_fixes(analysis, start, end)
    if _wanted(only, REWRITE):
        try:
            actions += fusion(analysis, start, end, tolerance)
        except Exception:
            logger.exception("fusion actions failed")
    return actions
