"""Fuzzing stages for the editor features (`affine_lsp.ide`): the incremental
analysis, and every request at the fuzzer's offsets. Registered in
`affine_lsp.testing.fuzz.STAGES`."""

from __future__ import annotations

from contextlib import suppress

from affine_lsp.ide import completion, folding, hover, inlay_hints, navigation, picture, symbols
from affine_lsp.ide import semantic_tokens as tokens
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.code_actions import quick_fixes
from affine_lsp.poly import budgets
from affine_lsp.poly.space import LOOPS
from affine_lsp.syntax import ContentChange


def _analysis(ctx) -> DocumentAnalysis:
    """The analysis of the document as opened (of a copy: `_edits` goes on to edit it)."""
    analysis = getattr(ctx, "_editor_analysis", None)
    if analysis is None:
        analysis = DocumentAnalysis(ctx.document.snapshot())
        analysis.analyse_all()
        ctx._editor_analysis = analysis
    return analysis


def _requests(ctx) -> None:
    analysis = _analysis(ctx)
    for offset in ctx.offsets:
        hover.hover(analysis, offset)
        hover.iteration_domain(analysis, offset)
        completion.completions(analysis, offset)
        navigation.definition(analysis, offset)
        navigation.references(analysis, offset, True)
        with suppress(navigation.RenameError):
            navigation.rename(analysis, offset, "renamed")
        quick_fixes(analysis, offset, offset + 10)
        inlay_hints.inlay_hints(analysis, offset, offset + 200)


def _whole_document(ctx) -> None:
    document = ctx.document
    symbols.document_symbols(document)
    folding.folding_ranges(document)
    tokens.semantic_tokens(document)


def _edits(ctx) -> None:
    """Random edits through the incremental analysis of the opened document (which
    is then no longer the requests' analysis)."""
    analysis = _analysis(ctx)
    del ctx._editor_analysis
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


def _pictures(ctx) -> None:
    """The picture of the first loop's iteration space (as the hover draws it, within
    the fuzz budget), and a hover with its picture at the first offset."""
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


STAGES = {
    "editor_requests": _requests,
    "editor_pictures": _pictures,
    "editor_document": _whole_document,
    "editor_edits": _edits,
}
