"""Code actions: the quick fixes diagnostics carry, and the refactorings of
`REFACTORINGS`: "Fuse loops" from `affine_lsp.transforms.fusion`, the loop
transformations of `affine_lsp.transforms.loops` and "Optimize nest" from
`affine_lsp.transforms.optimize`.

A refactoring runs a dependence analysis, so its `prepare` reads what it needs
from the analysis now (a snapshot of the document) and returns a function that
computes the actions later, possibly in another thread or process, while the
document keeps being edited. The server plans them ahead (`ide.planning`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from affine_lsp.checks import Diagnostic, TextEdit
from affine_lsp.ide.analysis import DocumentAnalysis, children_overlapping
from affine_lsp.ide.records import OPERATION
from affine_lsp.ide.settings import Settings
from affine_lsp.ir import ModuleModel, Operation, build_operation_item
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.fusion import FusionOptions, fusion_actions, nest_at
from affine_lsp.transforms.loops import LoopOptions, loop_actions, loop_at
from affine_lsp.transforms.optimize import OptimizeOptions, optimize_actions, outermost_at

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


def _prepare_on_snapshot(
    analysis: DocumentAnalysis,
    start: int,
    found_at: Callable[[SourceDocument, ModuleModel], list[Any]],
) -> Callable[[], list[Action]]:
    """What both refactorings' `prepare` do: take a snapshot of the item at `start`
    (and its chunk's aliases and scope) now, and return a function that models it
    and turns `found_at(snapshot, model)`'s actions into `Action`s later."""
    record = analysis.record_at(start)
    if record is None or record.kind != OPERATION:
        return list
    snapshot = analysis.document.snapshot()
    chunk = analysis.chunks[record.chunk]
    aliases = chunk.alias_items
    alias_table = chunk.context.aliases
    scope = chunk.scope()
    dialects = analysis.options.dialects
    item_start = record.start

    def compute() -> list[Action]:
        root = snapshot.tree.root_node
        node = next(
            (n for n in children_overlapping(root, item_start, item_start) if n.type == OPERATION),
            None,
        )
        if node is None:
            return []
        item = build_operation_item(node, scope, alias_table, dialects=dialects)
        model = ModuleModel(items=[*aliases, item], dialects=dialects)
        return [
            Action(
                a.title,
                a.kind,
                a.edits,
                preferred=a.preferred,
                disabled_reason=a.disabled_reason,
                source=a,
            )
            for a in found_at(snapshot, model)
        ]

    return compute


def prepare_fusion(
    analysis: DocumentAnalysis, start: int, end: int, tolerance: float
) -> Callable[[], list[Action]]:
    """The fusion actions at [start, end], as a function to call later, possibly in
    another thread: it reads only a snapshot taken now."""
    options = FusionOptions(tolerance=tolerance)
    return _prepare_on_snapshot(
        analysis,
        start,
        lambda snapshot, model: fusion_actions(snapshot, model, start, end, options),
    )


def prepare_loop_transforms(
    analysis: DocumentAnalysis,
    start: int,
    end: int,
    options: LoopOptions | None = None,
) -> Callable[[], list[Action]]:
    """The loop transformation actions at [start, end] (interchange, tile, unroll,
    ...), as a function to call later, possibly in another thread: it reads only a
    snapshot taken now. Edits are computed (and proven) on `Action.resolve()`."""
    return _prepare_on_snapshot(
        analysis,
        start,
        lambda snapshot, model: loop_actions(snapshot, model, start, end, options),
    )


def prepare_optimize(
    analysis: DocumentAnalysis, start: int, end: int, options: OptimizeOptions
) -> Callable[[], list[Action]]:
    """The action "Optimize nest" at the nest around [start, end], to call later:
    offered without any analysis, its edits computed on `Action.resolve()`."""
    return _prepare_on_snapshot(
        analysis,
        start,
        lambda snapshot, model: optimize_actions(snapshot, model, start, end, options),
    )


def _no_actions() -> list[Action]:
    """A refactoring switched off by the settings offers nothing."""
    return []


Prepare = Callable[[DocumentAnalysis, int, int, Settings], Callable[[], list[Action]]]
Designate = Callable[[ModuleModel, int, int, Callable[[int], int]], Operation | None]


@dataclass(frozen=True)
class Refactoring:
    """A refactoring offered at loops.

    `prepare(analysis, start, end, settings)` gives its actions at a cursor or
    selection (byte offsets), as a function to call later; `designate(model, start,
    end, line_of)` names the loop those actions are about (the nest `nest_at`
    designates, as for fusion, unless the refactoring says otherwise): the
    server plans each refactoring at the start of every loop it designates, and
    answers a request with the plan of the loop designated there.
    """

    name: str
    prepare: Prepare
    designate: Designate = nest_at


REFACTORINGS: tuple[Refactoring, ...] = (
    Refactoring(
        "fusion", lambda a, s, e, settings: prepare_fusion(a, s, e, settings.fusion_tolerance)
    ),
    Refactoring(
        "loops",
        lambda a, s, e, settings: prepare_loop_transforms(a, s, e, settings.loop_options()),
        designate=loop_at,
    ),
    Refactoring(
        "optimize",
        lambda a, s, e, settings: (
            prepare_optimize(a, s, e, settings.optimize_options())
            if settings.optimize_offered
            else _no_actions
        ),
        designate=outermost_at,
    ),
)
"""Every refactoring the server plans and offers (one line each)."""


def code_actions(
    analysis: DocumentAnalysis,
    start: int,
    end: int,
    only: list[str] | None = None,
    tolerance: float = FusionOptions.tolerance,
    loop_options: LoopOptions | None = None,
) -> list[Action]:
    """Quick fixes and (when `only` asks for rewrites) the refactorings, computed
    here and now."""
    actions: list[Action] = []
    if wanted(only, QUICKFIX):
        actions += quick_fixes(analysis, start, end)
    if only is not None and wanted(only, REWRITE):
        settings = Settings(fusion_tolerance=tolerance)
        if loop_options is not None:
            settings = replace(
                settings,
                tile_sizes=loop_options.tile_sizes,
                unroll_factor=loop_options.unroll_factor,
                unroll_jam_factor=loop_options.unroll_jam_factor,
            )
        for refactoring in REFACTORINGS:
            found = refactoring.prepare(analysis, start, end, settings)()
            actions += [a for a in found if wanted(only, a.kind)]
    return actions
