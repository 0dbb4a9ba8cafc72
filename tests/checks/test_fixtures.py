"""Our fixtures in MLIR's idiom: the checker produces exactly the annotated
errors and warnings; mlir-opt agrees on the fixtures of rules it checks too."""

from __future__ import annotations

import pytest

from affine_lsp.checks.registry import RULES
from tests.checks.fixtures import MLIR_CHECKED, OURS, compare, file_diagnostics, fixture_files
from tests.oracle_tools import mlir_opt_path, run_tool


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_matches_annotations(path):
    problems = compare(path)
    assert not problems, "\n".join(problems)


def test_every_rule_has_a_fixture():
    produced = {d.code for path in fixture_files() for _, d in file_diagnostics(path.read_bytes())}
    missing = sorted(set(RULES) - produced)
    assert not missing, f"codes without a fixture: {missing}"


def test_oracle_fixtures_are_rules_mlir_checks():
    """Codes produced in fixtures/mlir are codes registered as checked by MLIR."""
    for path in sorted(MLIR_CHECKED.glob("*.mlir")):
        for _, diagnostic in file_diagnostics(path.read_bytes()):
            if diagnostic.code in RULES and diagnostic.severity.label == "error":
                assert RULES[diagnostic.code].mlir_checks, (path.name, diagnostic.code)
    assert list(OURS.glob("*.mlir"))


@pytest.mark.oracle
@pytest.mark.parametrize("path", sorted(MLIR_CHECKED.glob("*.mlir")), ids=lambda p: p.name)
def test_mlir_opt_agrees(path):
    opt = mlir_opt_path()
    result = run_tool(
        [
            opt,
            "--allow-unregistered-dialect",
            "--split-input-file",
            "--verify-diagnostics",
            str(path),
        ],
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_checker_docs_have_the_registry_table():
    """docs/checker.md lists every code as the registry does (regenerate the table
    with `python -m affine_lsp.checks.docs`)."""
    from pathlib import Path

    from affine_lsp.checks.docs import DOCS_PAGE, rules_table

    page = (Path(__file__).resolve().parents[2] / DOCS_PAGE).read_text()
    assert rules_table() in page


@pytest.mark.oracle
def test_result_type_fixes_satisfy_mlir():
    """Declaring the result type a fix offers makes mlir-opt accept the op (each
    fixture chunk with such a fix has no other error)."""
    from affine_lsp.checks.chunks import split_chunks

    opt = mlir_opt_path()
    applied = 0
    for path in sorted(MLIR_CHECKED.glob("*.mlir")):
        for chunk in split_chunks(path.read_bytes()):
            for _, diagnostic in file_diagnostics(chunk.data):
                for fix in diagnostic.fixes:
                    if not fix.title.startswith("Declare the result as"):
                        continue
                    text = bytearray(chunk.data)
                    for edit in sorted(fix.edits, key=lambda e: -e.span.start_byte):
                        text[edit.span.start_byte : edit.span.end_byte] = edit.new_text.encode()
                    result = run_tool(
                        [opt, "--allow-unregistered-dialect", "-"],
                        stdin=text.decode(),
                        check=False,
                        timeout=60,
                    )
                    assert result.returncode == 0, (path.name, fix.title, result.stderr[:500])
                    applied += 1
    assert applied >= 5
