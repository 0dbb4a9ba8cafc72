"""No false errors on MLIR 22's own test suite (`../shared/upstream/`): every chunk
`mlir-opt` accepts gets no syntax error and no error diagnostic (warnings and hints
only from the lint and legacy groups). The suite checks a fixed slice of the files;
the slow test and `benchmarks/upstream_conformance.py` check all of them.

Run with `-s` to see the figures."""

from __future__ import annotations

import pytest

from affine_lsp.testing.upstream import Summary, read_chunks, run
from tests.corpus_data import UPSTREAM, require_upstream

SLICE = 5  # every fifth file, in path order


def _report(summary: Summary) -> list[str]:
    valid = summary.valid_chunks
    failing = summary.failing_chunks()
    print(
        f"\nupstream files: {len(summary.outcomes)}, valid chunks: {len(valid)}, "
        f"with false diagnostics: {len(failing)}, {summary.cpu_seconds:.1f} s CPU"
    )
    for directory, total, wrong in summary.by_directory(1):
        print(f"  {directory}: {wrong}/{total}")
    problems = [f"{f.where}: [{f.code}] {f.message}" for f in summary.findings[:20]]
    problems += [f"crash in {o.path}: {o.crash}" for o in summary.crashes()]
    return problems


def test_a_slice_of_mlir_tests_gets_no_false_errors():
    require_upstream()
    paths = sorted(read_chunks(UPSTREAM))[::SLICE]
    summary = run(UPSTREAM, paths)
    problems = _report(summary)
    assert len(summary.valid_chunks) > 1000
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_the_whole_mlir_test_suite_gets_no_false_errors():
    require_upstream()
    summary = run(UPSTREAM)
    problems = _report(summary)
    found, missed = summary.affine_memref_recall()
    total = len(found) + len(missed)
    print(f"invalid affine/memref chunks with an error on MLIR's line: {len(found)}/{total}")
    assert len(summary.valid_chunks) > 10000
    assert not problems, "\n".join(problems)
    assert len(found) >= 19  # of 21 (the other two: an op of MLIR's test dialect)
