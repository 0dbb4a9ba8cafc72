"""Where a `// -----` chunk ends: one rule (`checks.chunks.SPLIT_MARKER`) for `affine-lsp
check` and the editor's analysis, the one MLIR 22 follows: every `// -----` splits."""

from __future__ import annotations

import pytest

from affine_lsp.checks import CheckOptions, Severity
from affine_lsp.checks.chunks import split_chunks
from affine_lsp.cli.check import check_bytes
from tests.ide.helpers import analysed
from tests.oracle_tools import mlir_opt_path, run_tool

# Marker lines that split; the same alias is defined on either side, an error unless
# the marker splits the file.
SPLITTING = ["// -----", "  // -----  ", "// -----\t\r", "// note // -----", "//// -----"]
NOT_SPLITTING = ["//-----", "//   -----", "// - ----", "// ----"]
ALIAS = "#m = affine_map<(d0) -> (d0)>\n"


def _text(marker: str) -> str:
    function = "func.func @{}() {{\n  return\n}}\n"
    return f"{ALIAS}{function.format('a')}{marker}\n{ALIAS}{function.format('b')}"


def _errors(diagnostics) -> list[str]:
    return [d.code for d in diagnostics if d.severity == Severity.ERROR]


@pytest.mark.parametrize("marker", SPLITTING + NOT_SPLITTING)
def test_check_and_the_editor_split_alike(marker):
    splits = marker in SPLITTING
    text = _text(marker)
    assert len(split_chunks(text.encode())) == (2 if splits else 1)
    analysis = analysed(text)
    chunks = [r.chunk for r in analysis.records if r.kind == "operation"]
    assert chunks == ([0, 1] if splits else [0, 0])
    expected = [] if splits else ["alias-duplicate"]
    assert _errors(analysis.diagnostics()) == expected
    assert _errors(check_bytes(text.encode(), CheckOptions())) == expected


def test_what_follows_a_marker_on_its_line_starts_the_next_chunk():
    chunks = split_chunks(b"a // ----- b\nc // -----")
    assert [(c.start_byte, c.data) for c in chunks] == [(0, b"a "), (10, b" b\nc "), (23, b"")]


@pytest.mark.oracle
@pytest.mark.parametrize("marker", SPLITTING + NOT_SPLITTING)
def test_mlir_opt_splits_there_too(marker):
    result = run_tool(
        [mlir_opt_path(), "--split-input-file", "-"], check=False, stdin=_text(marker)
    )
    assert (result.returncode == 0) == (marker in SPLITTING), result.stderr
