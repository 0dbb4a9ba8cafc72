"""No false errors on MLIR that mlir-opt prints (`affine_lsp.testing.generated`): a
seeded slice of the valid chunks of MLIR's test suite, each run through printing
options (the generic form, debug locations) and a pass pipeline drawn with a fixed
seed; every output mlir-opt accepts must get no syntax error and no error diagnostic.
`benchmarks/generated_mlir.py` runs every chunk. Run with `-s` to see the figures."""

from __future__ import annotations

import random

import pytest

from affine_lsp.testing.generated import PIPELINES, assignments, pipeline_name, run, valid_sources
from tests.corpus_data import UPSTREAM, require_upstream
from tests.oracle_tools import mlir_opt_path

EVERY = 150  # every 150th valid chunk: about 70 of them
PRINTERS: tuple[tuple[str, ...], ...] = (
    ("--mlir-print-op-generic",),
    ("--mlir-print-op-generic", "--mlir-print-debuginfo"),
)


@pytest.mark.slow
def test_what_mlir_opt_prints_from_a_slice_of_mlir_tests_gets_no_false_errors():
    require_upstream()
    opt = mlir_opt_path()
    sources = valid_sources(UPSTREAM, EVERY, offset=7)
    passes = [p for p in PIPELINES if p not in PRINTERS]
    rng = random.Random(1)
    pairs = [(source, rng.choice(PRINTERS)) for source in sources]
    pairs += assignments(sources, passes, per_source=1, seed=1)
    summary = run(opt, pairs, jobs=2, timeout=120.0, cache=None)
    failing = summary.failing_outputs()
    print(
        f"\n{len(sources)} chunks, {len(pairs)} mlir-opt runs, {len(summary.accepted)} "
        f"accepted, {len(failing)} with false diagnostics"
    )
    assert len(sources) > 50
    assert len(summary.accepted) > len(sources)  # most runs print something to check
    problems = [f"{f.where}: [{f.code}] {f.message}" for f in summary.findings[:20]]
    problems += [
        f"crash on {o.source.where} | {pipeline_name(o.pipeline)}: {c}" for o, c in summary.crashes
    ]
    assert not problems, "\n".join(problems)
