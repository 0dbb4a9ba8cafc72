"""Quick fixes, applied: each removes its diagnostic and brings no new error or
warning; where the fixed text has none left, mlir-opt accepts it. The fixture
`quick_fixes.mlir` (one in `mlir/`, one in `ours/`) holds the fixes whose corrected
text is determined: a valid dimension given as a symbol, operands split between the
dimension and symbol lists otherwise than the map's inputs, a wrong result type."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from affine_lsp.checks import Diagnostic, Fix, Severity, check_document, split_chunks
from affine_lsp.syntax import SourceDocument
from tests.checks.fixtures import MLIR_CHECKED, OURS, fixture_files
from tests.oracle_tools import mlir_opt_path, run_tool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SOURCES = [*fixture_files(), EXAMPLES / "mistakes.mlir"]


def _applied(data: bytes, fix: Fix) -> bytes:
    text = bytearray(data)
    for edit in sorted(fix.edits, key=lambda e: -e.span.start_byte):
        text[edit.span.start_byte : edit.span.end_byte] = edit.new_text.encode()
    return bytes(text)


def _serious(data: bytes) -> Counter[tuple[str, str]]:
    """(code, message) of the errors and warnings of a text."""
    return Counter(
        (d.code, d.message)
        for d in check_document(SourceDocument(data))
        if d.severity <= Severity.WARNING
    )


def _fixes(paths: list[Path]) -> Iterator[tuple[str, bytes, Diagnostic, Fix]]:
    for path in paths:
        for chunk in split_chunks(path.read_bytes()):
            for diagnostic in check_document(SourceDocument(chunk.data)):
                for fix in diagnostic.fixes:
                    line = path.read_bytes().count(b"\n", 0, chunk.start_byte)
                    line += chunk.data.count(b"\n", 0, diagnostic.span.start_byte) + 1
                    yield f"{path.name}:{line}: {fix.title}", chunk.data, diagnostic, fix


def test_every_fix_removes_its_diagnostic_and_brings_no_other():
    count = 0
    for where, data, diagnostic, fix in _fixes(SOURCES):
        before, after = _serious(data), _serious(_applied(data, fix))
        key = (diagnostic.code, diagnostic.message)
        if diagnostic.severity <= Severity.WARNING:
            assert after[key] < before[key], where
        assert not after - before, (where, after - before)
        count += 1
    assert count >= 50


QUICK_FIXES = [MLIR_CHECKED / "quick_fixes.mlir", OURS / "quick_fixes.mlir"]

# The line each fix writes, by the function of the fixture it is in.
FIXED_LINES = {
    "shorthand_bound": "affine.for %j = 0 to affine_map<(d0) -> (d0)>(%h) {",
    "map_bound": (
        "affine.for %j = max affine_map<(d0, d1)[s0] -> (d0 + d1, s0 * 2)>(%i, %h)[%n] to 100 {"
    ),
    "subscripts": "%v = affine.load %A[%i + %i, %i * 2] : memref<?x?xf32>",
    "condition": (
        "affine.if affine_set<(d0, d1)[s0] : (d0 - d1 >= 0, s0 - d0 - 1 >= 0)>(%i, %h)[%n] {"
    ),
    "parallel_bound": "affine.parallel (%p) = (0) to (%i + 1) {",
    "generic_result": (
        '%0 = "affine.min"(%i) <{map = affine_map<(d0) -> (d0, 8)>}> : (index) -> index'
    ),
    "apply_dims_short": "%k = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%i, %j)",
    "bound_dims_long": "affine.for %j = affine_map<(d0)[s0] -> (d0 + s0)>(%i)[%m] to 100 {",
    "set_dims_short": "affine.if affine_set<(d0, d1) : (d0 - d1 >= 0)>(%i, %j) {",
}


def _function(data: bytes) -> str:
    start = data.index(b"func.func @") + len(b"func.func @")
    return data[start : data.index(b"(", start)].decode()


def test_each_error_of_the_fixture_has_its_fix_and_the_result_checks_clean():
    seen = set()
    for path in QUICK_FIXES:
        for chunk in split_chunks(path.read_bytes()):
            name = _function(chunk.data)
            for diagnostic in check_document(SourceDocument(chunk.data)):
                if diagnostic.severity != Severity.ERROR:
                    continue
                if name == "no_fix":
                    assert not diagnostic.fixes, diagnostic.message
                    continue
                (fix,) = diagnostic.fixes
                fixed = _applied(chunk.data, fix)
                assert not _serious(fixed), (name, fix.title)
                lines = [line.strip() for line in fixed.decode().splitlines()]
                assert FIXED_LINES[name] in lines, (name, fix.title)
                seen.add(name)
    assert seen == set(FIXED_LINES)


def test_the_example_of_mistakes_offers_the_fixes_that_are_determined():
    data = (EXAMPLES / "mistakes.mlir").read_bytes()
    found = check_document(SourceDocument(data))
    errors = [d for d in found if d.severity == Severity.ERROR]
    fixed = {d.code: [f.title for f in d.fixes] for d in errors if d.fixes}
    assert fixed == {
        "affine-symbol-invalid": ["Bind %h as a dimension"],
        "affine-operand-count": ["Bind %j as a dimension"],
    }


@pytest.mark.oracle
def test_mlir_opt_accepts_what_the_fixes_write():
    opt = mlir_opt_path()
    checked = 0
    for where, data, _, fix in _fixes(SOURCES):
        fixed = _applied(data, fix)
        if _serious(fixed):
            continue  # other mistakes remain in that chunk
        result = run_tool(
            [opt, "--allow-unregistered-dialect", "-"],
            check=False,
            timeout=60,
            stdin=fixed.decode("utf-8", errors="surrogateescape"),
        )
        assert result.returncode == 0, (where, result.stderr[:800])
        checked += 1
    assert checked >= 20
