"""Quick fixes from diagnostics, settings parsing and workspace checking."""

from __future__ import annotations

from affine_lsp.checks import Severity
from affine_lsp.ide.code_actions import code_actions, quick_fixes
from affine_lsp.ide.settings import Settings, parse_settings
from affine_lsp.ide.workspace import analysis_of, count_severities, mlir_files, read_file
from tests.ide.helpers import FIXTURES, analysed, apply_text_edits, fixture_text, offset_of

FIXES = fixture_text("fixes.mlir")


def _fix(needle: str, title_part: str) -> str:
    analysis = analysed(FIXES)
    at = offset_of(analysis, needle)
    actions = [a for a in quick_fixes(analysis, at, at) if title_part in a.title]
    assert len(actions) == 1, [a.title for a in quick_fixes(analysis, at, at)]
    assert actions[0].diagnostics and actions[0].kind == "quickfix"
    return apply_text_edits(analysis, actions[0].edits)


def test_legacy_migration_fix():
    assert _fix("func @legacy", "func.func").startswith("func.func @legacy(")


def test_symbol_wrap_fix():
    assert "affine.load %A[%i * symbol(%n)]" in _fix("%n]", "symbol(%n)")


def test_declare_missing_map_fix():
    fixed = _fix("#missing", "Declare #missing")
    assert "#missing = affine_map<(d0) -> (d0)>\nfunc.func @semi" in fixed
    assert not [d for d in analysed(fixed).diagnostics() if d.code == "alias-undefined"]


def test_lint_fix_and_kind_filter():
    assert "%x = affine.load %A[%i]" in _fix("memref.load", "affine.load")
    analysis = analysed(FIXES)
    at = offset_of(analysis, "memref.load")
    rewrites = code_actions(analysis, at, at, only=["refactor"])
    assert all(a.kind == "refactor.rewrite" for a in rewrites)
    assert [a.kind for a in code_actions(analysis, at, at, only=["quickfix"])] == ["quickfix"]


def test_no_fixes_away_from_diagnostics():
    analysis = analysed(FIXES)
    assert quick_fixes(analysis, 0, 0) != []  # the legacy `func` at the very start
    at = offset_of(analysis, "return")
    assert quick_fixes(analysis, at, at) == []


def test_settings_nested_dotted_and_prefixed():
    nested, problems = parse_settings(
        {"fusion": {"tolerance": 0.5}, "legacySyntax": {"severity": "error"}, "logLevel": "debug"}
    )
    assert problems == []
    assert nested == Settings(0.5, Severity.ERROR, True, "debug")
    dotted, _ = parse_settings({"affineLsp.lints.enabled": False, "fusion.tolerance": 1})
    assert dotted.lints is False and dotted.fusion_tolerance == 1.0
    assert dotted.check_options().lints is False


def test_bad_and_unknown_settings():
    base = Settings(fusion_tolerance=0.4)
    settings, problems = parse_settings(
        {"fusion": {"tolerance": -1}, "legacySyntax": {"severity": "loud"}, "other": 3}, base
    )
    assert settings == base  # bad values keep the previous ones; unknown keys are ignored
    assert len(problems) == 2 and "fusion.tolerance" in problems[0]
    assert parse_settings("nonsense")[1] and parse_settings(None) == (Settings(), [])


def test_workspace_files_and_counts(tmp_path):
    (tmp_path / "a.mlir").write_text(fixture_text("broken.mlir"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.mlir").write_text(FIXES)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "c.mlir").write_text("x")
    (tmp_path / "notes.txt").write_text("x")
    files = list(mlir_files(tmp_path))
    assert [f.relative_to(tmp_path).as_posix() for f in files] == ["a.mlir", "sub/b.mlir"]
    analysis = analysis_of(read_file(files[0]), Settings().check_options(), "utf-16")
    analysis.analyse_all()
    assert count_severities(analysis.diagnostics()) == (3, 0)
    assert list(mlir_files(FIXTURES / "nest.mlir")) == [FIXTURES / "nest.mlir"]


def test_fusion_actions_preferred_depth_and_lazy_fuse_all():
    analysis = analysed(fixture_text("fusion.mlir"))
    at = offset_of(analysis, "affine.for")
    actions = code_actions(analysis, at, at, only=["refactor.rewrite"])
    titles = [a.title for a in actions]
    assert titles[0] == "Fuse with the next loop nest (depth 2, +0% compute)"
    assert actions[0].preferred and actions[0].kind == "refactor.rewrite"
    fused = apply_text_edits(analysis, actions[0].edits)
    assert fused.count("affine.for %i") == 1 and not analysed(fused).diagnostics()
    fuse_all = next(a for a in actions if a.title.startswith("Fuse all"))
    assert fuse_all.edits is None and fuse_all.resolve()
    assert code_actions(analysis, at, at) == []  # without `only`, no fusion here


def test_fusion_is_computed_on_a_snapshot():
    from affine_lsp.ide.code_actions import prepare_fusion
    from affine_lsp.syntax import ContentChange

    analysis = analysed(fixture_text("fusion.mlir"))
    at = offset_of(analysis, "affine.for")
    compute = prepare_fusion(analysis, at, at, 0.3)
    original = analysis.document.text
    analysis.apply_changes([ContentChange("// edited meanwhile\n", ((0, 0), (0, 0)))])
    actions = compute()
    assert actions[0].edits is not None
    data = original.encode()
    for edit in sorted(actions[0].edits, key=lambda e: e.span.start_byte, reverse=True):
        data = data[: edit.span.start_byte] + edit.new_text.encode() + data[edit.span.end_byte :]
    assert data.decode().count("affine.for %i") == 1  # the edits fit the snapshot's text
