"""Code actions: the quick fixes diagnostics carry, the "Fuse loops" rewrites of
`affine_lsp.transforms.fusion` and the loop transformations of
`affine_lsp.transforms.loops`.

Both run a dependence analysis, so they are only computed when asked for
explicitly, and on a snapshot of the document (`prepare_fusion`,
`prepare_loop_transforms`) so that they can run in another thread while the
document keeps being edited.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from affine_lsp.checks import Diagnostic, TextEdit
from affine_lsp.ide.analysis import DocumentAnalysis, children_overlapping
from affine_lsp.ide.records import OPERATION
from affine_lsp.ir import build_operation_item
from affine_lsp.ir.model import ModuleModel
from affine_lsp.transforms.fusion import FusionOptions, fusion_actions
from affine_lsp.transforms.loops.actions import LoopOptions, loop_actions

logger = logging.getLogger("affine_lsp.ide")

QUICKFIX = "quickfix"
REWRITE = "refactor.rewrite"


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


def wanted(only: list[str] | None, kind: str) -> bool:
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


def prepare_fusion(
    analysis: DocumentAnalysis, start: int, end: int, tolerance: float
) -> Callable[[], list[Action]]:
    """The fusion actions at [start, end], as a function to call later, possibly in
    another thread: it reads only a snapshot taken now."""
    record = analysis.record_at(start)
    if record is None or record.kind != OPERATION:
        return list
    snapshot = analysis.document.snapshot()
    chunk = analysis.chunks[record.chunk]
    aliases = chunk.alias_items
    scope = chunk.scope()
    item_start = record.start

    def compute() -> list[Action]:
        root = snapshot.tree.root_node
        node = next(
            (n for n in children_overlapping(root, item_start, item_start) if n.type == OPERATION),
            None,
        )
        if node is None:
            return []
        model = ModuleModel(items=[*aliases, build_operation_item(node, scope)])
        options = FusionOptions(tolerance=tolerance)
        found = fusion_actions(snapshot, model, start, end, options)
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

    return compute


def prepare_loop_transforms(
    analysis: DocumentAnalysis,
    start: int,
    end: int,
    options: LoopOptions | None = None,
) -> Callable[[], list[Action]]:
    """The loop transformation actions at [start, end] (interchange, tile, unroll,
    ...), as a function to call later, possibly in another thread: it reads only a
    snapshot taken now. Edits are computed (and proven) on `Action.resolve()`."""
    record = analysis.record_at(start)
    if record is None or record.kind != OPERATION:
        return list
    snapshot = analysis.document.snapshot()
    chunk = analysis.chunks[record.chunk]
    aliases = chunk.alias_items
    scope = chunk.scope()
    item_start = record.start

    def compute() -> list[Action]:
        root = snapshot.tree.root_node
        node = next(
            (n for n in children_overlapping(root, item_start, item_start) if n.type == OPERATION),
            None,
        )
        if node is None:
            return []
        model = ModuleModel(items=[*aliases, build_operation_item(node, scope)])
        found = loop_actions(snapshot, model, start, end, options)
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

    return compute


def code_actions(
    analysis: DocumentAnalysis,
    start: int,
    end: int,
    only: list[str] | None = None,
    tolerance: float = FusionOptions.tolerance,
    loop_options: LoopOptions | None = None,
) -> list[Action]:
    """Quick fixes and (when `only` asks for rewrites) fusion and the loop
    transformations, computed here and now."""
    actions: list[Action] = []
    if wanted(only, QUICKFIX):
        actions += quick_fixes(analysis, start, end)
    if only is not None and wanted(only, REWRITE):
        actions += prepare_fusion(analysis, start, end, tolerance)()
        actions += prepare_loop_transforms(analysis, start, end, loop_options)()
    return actions
