"""Fuzzing stages for the editor features (`affine_lsp.ide`): the incremental
analysis, and every request of the server's table (`affine_lsp.server.HANDLERS`)
at the fuzzer's offsets, through the `ide` call its handler makes. Registered in
`affine_lsp.testing.fuzz.STAGES`."""

from __future__ import annotations

import random
from collections.abc import Callable
from contextlib import suppress
from typing import Protocol

from lsprotocol import types

from affine_lsp.ide import (
    completion,
    folding,
    hover,
    inlay_hints,
    navigation,
    panel,
    picture,
    planning,
    symbols,
)
from affine_lsp.ide import semantic_tokens as tokens
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.code_actions import REFACTORINGS, quick_fixes
from affine_lsp.ide.records import OPERATION
from affine_lsp.ir import ModuleModel
from affine_lsp.poly import LOOPS, budgets
from affine_lsp.syntax import ContentChange, SourceDocument
from affine_lsp.transforms.loops import loop_actions

ITERATION_DOMAIN = "affine-lsp/iterationDomain"
ITERATION_SPACE = "affine-lsp/iterationSpace"
PREVIEW_REFACTORING = "affine-lsp/previewRefactoring"


class StageContext(Protocol):
    """What these stages read of the fuzzer's context (`fuzz.FuzzContext`)."""

    document: SourceDocument
    model: ModuleModel
    rng: random.Random
    offsets: list[int]
    editor_analysis: DocumentAnalysis | None


def _rename(analysis: DocumentAnalysis, offset: int) -> None:
    with suppress(navigation.RenameError):
        navigation.rename(analysis, offset, "renamed")


def _code_actions(analysis: DocumentAnalysis, offset: int) -> None:
    """Quick fixes, and where each refactoring's plan would be looked up (planning
    itself is the fusion stage's)."""
    quick_fixes(analysis, offset, offset + 10)
    record = analysis.record_at(offset)
    if record is not None and record.kind == OPERATION:
        planning.anchors_of(analysis, record)
        for refactoring in REFACTORINGS:
            planning.designated(analysis, record, refactoring, offset, offset)


def _prepare_rename(analysis: DocumentAnalysis, offset: int) -> None:
    with suppress(navigation.RenameError):
        navigation.prepare_rename(analysis, offset)


AT_OFFSET: dict[str, Callable[[DocumentAnalysis, int], object]] = {
    types.TEXT_DOCUMENT_HOVER: hover.hover,
    ITERATION_DOMAIN: hover.iteration_domain,
    types.TEXT_DOCUMENT_COMPLETION: completion.completions,
    types.TEXT_DOCUMENT_DEFINITION: navigation.definition,
    types.TEXT_DOCUMENT_REFERENCES: lambda a, at: navigation.references(a, at, True),
    types.TEXT_DOCUMENT_PREPARE_RENAME: _prepare_rename,
    types.TEXT_DOCUMENT_RENAME: _rename,
    types.TEXT_DOCUMENT_CODE_ACTION: _code_actions,
    types.TEXT_DOCUMENT_INLAY_HINT: lambda a, at: inlay_hints.inlay_hints(a, at, at + 200),
    types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE: lambda a, at: tokens.semantic_tokens(
        a.document, at, at + 200
    ),
}
"""Requests at a position or range: the `ide` call of their handler."""

WHOLE_DOCUMENT: dict[str, Callable[[DocumentAnalysis], object]] = {
    types.TEXT_DOCUMENT_DOCUMENT_SYMBOL: lambda a: symbols.document_symbols(a.document),
    types.TEXT_DOCUMENT_FOLDING_RANGE: lambda a: folding.folding_ranges(a.document),
    types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL: lambda a: tokens.semantic_tokens(a.document),
}
"""Requests about the whole document."""

NOT_HERE: dict[str, str] = {
    types.INITIALIZE: "no document",
    types.INITIALIZED: "no document",
    types.SHUTDOWN: "no document",
    types.WORKSPACE_DID_CHANGE_CONFIGURATION: "no document",
    types.WORKSPACE_DID_CHANGE_WATCHED_FILES: "reads project files from disk",
    types.TEXT_DOCUMENT_DID_OPEN: "every stage starts from the opened document",
    types.TEXT_DOCUMENT_DID_CHANGE: "the editor_edits stage",
    types.TEXT_DOCUMENT_DID_CLOSE: "no analysis",
    types.CODE_ACTION_RESOLVE: "the fusion_resolve stage",
    "affine-lsp.checkWorkspace": "reads files; its analysis is the opened document's",
    ITERATION_SPACE: "the editor_pictures stage (at one offset: its pictures are large)",
    PREVIEW_REFACTORING: "the editor_preview stage",
}
"""Methods of the table these stages do not call, and what covers them instead."""


def _methods(stages: dict[str, Callable[..., object]]) -> list[str]:
    """The server's methods that `stages` covers, in the table's order; a method of the
    table that no stage covers (nor `NOT_HERE` explains) is an error."""
    from affine_lsp.server import HANDLERS

    missing = [
        row.method
        for row in HANDLERS
        if row.method not in AT_OFFSET
        and row.method not in WHOLE_DOCUMENT
        and row.method not in NOT_HERE
    ]
    if missing:
        raise LookupError(f"no fuzz stage for {', '.join(missing)}: add one to editor_stages")
    return [row.method for row in HANDLERS if row.method in stages]


def _analysis(ctx: StageContext) -> DocumentAnalysis:
    """The analysis of the document as opened (of a copy: `_edits` goes on to edit it)."""
    analysis = ctx.editor_analysis
    if analysis is None:
        analysis = DocumentAnalysis(ctx.document.snapshot())
        analysis.analyse_all()
        ctx.editor_analysis = analysis
    return analysis


def _requests(ctx: StageContext) -> None:
    analysis = _analysis(ctx)
    methods = _methods(AT_OFFSET)
    for offset in ctx.offsets:
        for method in methods:
            AT_OFFSET[method](analysis, offset)


def _whole_document(ctx: StageContext) -> None:
    analysis = _analysis(ctx)
    for method in _methods(WHOLE_DOCUMENT):
        WHOLE_DOCUMENT[method](analysis)


def _edits(ctx: StageContext) -> None:
    """Random edits through the incremental analysis of the opened document (which
    is then no longer the requests' analysis)."""
    analysis = _analysis(ctx)
    ctx.editor_analysis = None
    for _ in range(3):
        size = len(analysis.document.data)
        start = ctx.rng.randint(0, size)
        end = min(size, start + ctx.rng.choice([0, 1, 10]))
        text = ctx.rng.choice(["", " ", "}", "{", "%x", "\n// -----\n", "affine.for"])
        positions = (analysis.document.position(start), analysis.document.position(end))
        analysis.apply_changes([ContentChange(text, positions)])
        for _step in analysis.analyse():
            pass
        analysis.diagnostics()


def _pictures(ctx: StageContext) -> None:
    """The picture of the first loop's iteration space (as the hover draws it, within
    the fuzz budget), and a hover with its picture and the panel's picture at the
    first offset."""
    loop = next((op for op in ctx.model.walk() if isinstance(op, LOOPS)), None)
    if loop is not None:
        picture.draw(
            loop,
            ctx.model,
            ctx.document,
            style=picture.SMALL,
            limits=budgets.HOVER_PICTURE_LIMITS,
            budget=budgets.FUZZ_PICTURE,
        )
    analysis = _analysis(ctx)
    for offset in ctx.offsets[:1]:
        hover.hover(analysis, offset, pictures=True)
        panel.loop_picture(analysis, offset, budgets.FUZZ_PICTURE)


def _preview(ctx: StageContext) -> None:
    """The panel's preview of the first loop transformation enabled at the first offset
    (computed within the fuzz budgets; the loop_transforms stages computed it first)."""
    analysis = _analysis(ctx)
    document = analysis.document
    for offset in ctx.offsets[:1]:
        record = analysis.record_at(offset)
        view = analysis.view_at(offset)
        if record is None or view is None or record.kind != OPERATION:
            continue
        loop = panel.loop_at(view.model, offset, lambda at: document.point(at)[0])
        if loop is None:
            continue
        actions = loop_actions(
            document,
            view.model,
            offset,
            offset,
            budget=budgets.FUZZ_TRANSFORM_PLANNING,
            resolve=budgets.FUZZ_TRANSFORM,
        )
        action = next((a for a in actions if a.disabled_reason is None), None)
        if action is not None:
            edits = action.resolve(budgets.FUZZ_RESOLVE_SECONDS)
            reason = action.disabled_reason
            budget = budgets.FUZZ_PICTURE
            panel.preview(analysis, record, loop, action.title, edits, reason, 0, budget)


STAGES: dict[str, Callable[[StageContext], None]] = {
    "editor_requests": _requests,
    "editor_pictures": _pictures,
    "editor_preview": _preview,
    "editor_document": _whole_document,
    "editor_edits": _edits,
}
