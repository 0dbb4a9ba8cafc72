"""Performance hints: the fixture's `expected-hint` annotations, exactly; never an
error or a warning; off with the setting."""

from __future__ import annotations

from pathlib import Path

from affine_lsp.checks import CheckOptions, Severity
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ir import build_module
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.performance import Machine, performance_hints
from tests.checks.fixtures import expected_annotations

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "hints.mlir"
MACHINE = Machine(caches=(32 * 1024, 1024 * 1024, 32 * 1024 * 1024))


def _hints(text: str) -> list[tuple[int, str]]:
    data = text.encode()
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    found = []
    for item in model.items:
        if item.operation is not None:
            for hint in performance_hints(item.operation, data, MACHINE):
                assert hint.severity == Severity.HINT
                found.append((document.point(hint.span.start_byte)[0], hint.message))
    return sorted(found)


def test_the_fixture_gets_exactly_the_hints_it_expects():
    text = FIXTURE.read_text()
    expected = sorted(
        (a.line, a.text) for a in expected_annotations(text) if a.severity == Severity.HINT
    )
    assert _hints(text) == expected


def test_the_editor_shows_them_as_hints_on_the_loop_unless_switched_off():
    text = FIXTURE.read_text().split("// -----")[0]
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    hints = [d for d in analysis.diagnostics() if d.code == "performance"]
    assert hints and all(d.severity == Severity.HINT for d in hints)
    assert text.encode()[hints[0].span.start_byte : hints[0].span.end_byte] == b"affine.for"
    quiet = DocumentAnalysis.from_text(text, options=CheckOptions(performance_hints=False))
    quiet.analyse_all()
    assert not [d for d in quiet.diagnostics() if d.code == "performance"]


def test_an_item_with_errors_gets_no_hint():
    text = FIXTURE.read_text().split("// -----")[0].replace("%A[%j, %i]", "%A[%j, %k]")
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    assert not [d for d in analysis.diagnostics() if d.code == "performance"]


def test_the_settings_switch_them_off_and_make_the_action_tune():
    from affine_lsp.ide.settings import parse_settings

    assert parse_settings({})[0].check_options().performance_hints
    settings, problems = parse_settings(
        {"performanceHints": {"enabled": False}, "optimize": {"tune": True}}
    )
    assert problems == []
    assert not settings.check_options().performance_hints
    assert settings.optimize_options().tune
    _, wrong = parse_settings({"performanceHints": {"enabled": "maybe"}})
    assert wrong and "performanceHints.enabled" in wrong[0]
