"""The fusion code actions as plain data."""

from __future__ import annotations

from affine_lsp.checks import Severity, check_document
from affine_lsp.ir import build_module
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.edits import apply_edits
from affine_lsp.transforms.fusion import FusionOptions
from affine_lsp.transforms.fusion.actions import fusion_actions
from tests.fusion.test_engine import (
    LIVE_OUT,
    REVERSED_WAR,
    SIBLINGS,
    WAR,
    seed_program,
)


def _actions(text: str, needle: str, options: FusionOptions | None = None, column: int = 2):
    document = SourceDocument(text)
    model = build_module(document.tree.root_node)
    offset = text.index(needle) + column
    return document, fusion_actions(document, model, offset, offset, options)


def _applies_cleanly(document: SourceDocument, edits) -> bool:
    fused = SourceDocument(apply_edits(document.source, edits))
    return not [d for d in check_document(fused) if d.severity == Severity.ERROR]


def test_depths_with_costs_the_best_preferred_and_illegal_ones_disabled():
    text = seed_program()
    document, actions = _actions(text, "affine.for %arg5")
    titles = [a.title for a in actions]
    assert titles[:2] == [
        "Fuse with the next loop nest (depth 2, +0% compute)",
        "Fuse with the next loop nest (depth 1, +0% compute)",
    ]
    assert actions[0].preferred and actions[0].kind == "refactor.rewrite"
    disabled = [a for a in actions if a.disabled_reason]
    assert {a.title for a in disabled} >= {
        "Fuse with the next loop nest (depth 3)",
        "Fuse with the next loop nest (depth 4)",
    }
    assert all("in place" in (a.disabled_reason or "") for a in disabled)
    assert actions[0].edits and _applies_cleanly(document, actions[0].edits)
    everything = next(a for a in actions if a.title == "Fuse all loop nests in @main")
    assert everything.edits is None
    assert _applies_cleanly(document, everything.resolve())


def test_illegal_fusion_explains_the_dependence():
    text = REVERSED_WAR
    document, actions = _actions(text, "affine.for %i = 0 to 9 {\n    %v = affine.load %a")
    (pair, everything) = actions
    assert pair.title == "Fuse with the next loop nest (depth 1)"
    assert pair.disabled_reason == (
        "iteration i of the second nest writes %a[-i + 8], which iteration -i + 8 of the "
        "first nest reads"
    )
    assert everything.resolve() == [] and everything.disabled_reason


def test_fusion_that_needs_a_shift_is_offered_with_it():
    # Iteration i of the second nest writes %a[i + 1], which iteration i + 1 of the
    # first reads: shifted by one, the second nest's iteration i - 1 runs after the
    # first's iteration i.
    document, actions = _actions(WAR, "affine.for %i = 0 to 9 {\n    %v = affine.load %a")
    (pair, everything) = actions
    assert pair.title == "Fuse with the next loop nest, shifted by 1 (depth 1, +0% compute)"
    assert pair.preferred and pair.edits and _applies_cleanly(document, pair.edits)
    fused = apply_edits(document.source, pair.edits).decode()
    assert "affine.store %v_1, %a[%i] : memref<10xf32>" in fused
    assert "affine.if" not in fused


def test_over_the_tolerance_is_disabled_with_the_cost():
    document, actions = _actions(LIVE_OUT, "affine.for %i")
    (first, *_) = [a for a in actions if a.title.startswith("Fuse with the next")]
    assert "keeps the first nest" in first.title
    assert "exceeds the 30% tolerance" in (first.disabled_reason or "")
    _, relaxed = _actions(LIVE_OUT, "affine.for %i", FusionOptions(tolerance=2.0))
    assert relaxed[0].disabled_reason is None and relaxed[0].edits


def test_sibling_action():
    document, actions = _actions(SIBLINGS, "affine.for %i")
    sibling = next(a for a in actions if a.title.startswith("Fuse sibling loop nests"))
    assert sibling.title == "Fuse sibling loop nests (depth 2, +0% compute)"
    assert sibling.edits and _applies_cleanly(document, sibling.edits)


def test_nothing_offered_outside_loops_or_in_functions_with_errors():
    _, none = _actions(WAR, "return", column=0)
    assert none == []
    broken = WAR.replace("%v = affine.load %b[%i]", "%v = affine.load %b[%k]")
    _, refused = _actions(broken, "affine.for %i")
    assert refused == []
