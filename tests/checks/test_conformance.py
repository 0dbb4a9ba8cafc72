"""Acceptance gates of the checker over the shared upstream corpus and the seeds.

Run with `-s` to see the figures."""

from __future__ import annotations

from collections import Counter

import pytest

from affine_lsp.checks import Diagnostic, Severity, check_document
from affine_lsp.syntax import SourceDocument
from tests.corpus_data import chunks, expected_errors, require_shared, seed_examples
from tests.oracle_tools import mlir_opt_path, run_tool
from tests.test_syntax_gates import INVALID_SEED_EXAMPLES

# Seed examples that parse but are not valid MLIR, and the rule that says why.
INVALID_SEED_SEMANTICS = {
    "affine-dialect.txt:434": "affine-operand-not-index",  # %N: i32 bound to a symbol
    "affine-dialect-legacy.md:140": "affine-operand-not-index",  # the same example
    "affine-dialect.txt:928": "ssa-type-mismatch",  # %tag is memref<1xi32, 4>, typed as 2
    # "Same effect" / "equivalent generic form" variants that reuse the first one's names
    # at the top level: as one piece of MLIR, the second definition is a redefinition.
    "affine-dialect.txt:525": "ssa-redefinition",
    "memref-dialect.txt:441": "ssa-redefinition",
    # A rank-reducing subview of [2, 5) in a dimension of size 4 (MLIR 22 agrees).
    "memref-dialect.txt:1148": "memref-slice-bounds",
    # Strides given as values (%c1) are dynamic, so MLIR 22 infers strides [?, ?]; the
    # declared layout has stride 1 for d1 (MLIR 22 agrees).
    "memref-dialect.txt:1079": "memref-result-type",
}

# Seed examples MLIR 22 accepts but that deserve a lint warning.
SEED_LINTS = {
    "affine-dialect.txt:961": "lint-dma-subscript-count",  # 2 subscripts, rank-1 memrefs
}

# Seed examples are fragments: they use values, aliases and globals defined
# elsewhere, and put ops such as memref.alloca where a function body would be.
FRAGMENT_CODES = {
    "ssa-undefined",
    "alias-undefined",
    "memref-global-reference",
    "memref-alloca-scope",
}

CATEGORIES = "abcde"


def _errors(text: str) -> list[tuple[int, Diagnostic]]:
    document = SourceDocument(text)
    return [
        (document.point(d.span.start_byte)[0], d)
        for d in check_document(document)
        if d.severity == Severity.ERROR
    ]


def test_conformance_with_mlir_expected_errors():
    """Share of annotated lines (categories a-e) where we report an error."""
    require_shared()
    by_chunk = {(c.file, c.number): c for c in chunks()}
    error_lines: dict[tuple[str, int], set[int]] = {}
    counts: Counter = Counter()
    for expected in expected_errors():
        if expected.category not in CATEGORIES:
            continue
        key = (expected.file, expected.chunk)
        if key not in error_lines:
            chunk = by_chunk[key]
            error_lines[key] = {chunk.first_line + line for line, _ in _errors(chunk.text)}
        hit = expected.target_line in error_lines[key]
        counts[(expected.category, expected.produced_by_mlir22, hit)] += 1
    print()
    for produced in (True, False):
        label = "produced by MLIR 22" if produced else "not produced by MLIR 22"
        parts = []
        for category in CATEGORIES:
            hits = counts[(category, produced, True)]
            total = hits + counts[(category, produced, False)]
            parts.append(f"{category} {hits}/{total}")
        hits = sum(counts[(c, produced, True)] for c in CATEGORIES)
        total = hits + sum(counts[(c, produced, False)] for c in CATEGORIES)
        print(f"{label}: {', '.join(parts)}; all {hits}/{total} = {hits / total:.1%}")
    produced_hits = sum(counts[(c, True, True)] for c in CATEGORIES)
    produced_total = produced_hits + sum(counts[(c, True, False)] for c in CATEGORIES)
    # The goal: 95% of the lines where MLIR 22 reports an error (docs/checker.md has the figure).
    assert produced_hits / produced_total >= 0.95


def test_no_errors_on_verifying_chunks():
    require_shared()
    valid = [c for c in chunks() if c.verifies]
    failing = []
    for chunk in valid:
        codes = {d.code for _, d in _errors(chunk.text)}
        if codes:
            failing.append((chunk.label, sorted(codes)))
    print(f"\nverifying chunks: {len(valid)}, with errors: {len(failing)} {failing[:5]}")
    assert not failing


def test_no_errors_on_valid_seed_examples():
    require_shared()
    checked = failing = 0
    for example in seed_examples():
        if example.label in INVALID_SEED_EXAMPLES:
            continue
        checked += 1
        codes = {d.code for _, d in _errors(example.text)} - FRAGMENT_CODES
        expected = INVALID_SEED_SEMANTICS.get(example.label)
        if expected is not None:
            assert expected in codes, (example.label, codes)
            continue
        lint = SEED_LINTS.get(example.label)
        if lint is not None:
            warnings = {d.code for d in check_document(SourceDocument(example.text))}
            assert lint in warnings, (example.label, warnings)
        if codes:
            failing += 1
            print(f"{example.label}: {sorted(codes)}")
    print(f"\nvalid seed examples: {checked}, with errors: {failing}")
    assert checked > 60 and not failing


@pytest.mark.oracle
def test_no_errors_on_verifying_chunks_in_the_generic_form():
    """mlir-opt prints every verifying chunk in the generic form (`"affine.for"(...)`,
    `"memref.subview"(...)`); those are the same programs, so no errors either."""
    require_shared()
    valid = [c for c in chunks() if c.verifies]
    separator = "\n// -----\n"
    result = run_tool(
        [
            mlir_opt_path(),
            "--allow-unregistered-dialect",
            "--split-input-file",
            "--mlir-print-op-generic",
            "-",
        ],
        stdin=separator.join(c.text for c in valid),
        timeout=300,
    )
    printed = result.stdout.split("// -----")
    assert len(printed) == len(valid)
    failing = []
    for chunk, text in zip(valid, printed, strict=True):
        codes = {d.code for _, d in _errors(text)}
        if codes:
            failing.append((chunk.label, sorted(codes)))
    print(f"\ngeneric-form chunks: {len(valid)}, with errors: {len(failing)} {failing[:5]}")
    assert not failing
