"""MLIR's own loop-fusion tests: our `fuse --all` never breaks them and mostly matches
the loop structure their CHECK lines describe (`benchmarks/fusion_corpus.py` prints
the details)."""

from __future__ import annotations

import pytest

from tests.corpus_data import require_shared
from tests.fusion.corpus_check import compare_corpus
from tests.oracle_tools import mlir_opt_path, run_tool

# Function/RUN pairs whose structure matches MLIR's CHECK lines. The rest are cases
# where MLIR keeps the producer and fuses a recomputing copy, relies on ops of unknown
# effect, or where we fuse more or deeper, or remove a dead store (see the report).
MINIMUM_AGREEMENT = 78


def test_upstream_fusion_chunks():
    require_shared()
    results, errors = compare_corpus()
    assert not errors, errors[:3]
    agreeing = sum(1 for r in results if r.agrees)
    assert len(results) >= 100
    assert agreeing >= MINIMUM_AGREEMENT, f"{agreeing}/{len(results)}"


@pytest.mark.oracle
def test_fused_chunks_verify_with_mlir_opt():
    require_shared()
    mlir_opt = mlir_opt_path()
    results, _ = compare_corpus()
    texts = {r.fused_text for r in results if r.fused_text}
    assert len(texts) >= 40
    for text in texts:
        verdict = run_tool(
            [mlir_opt, "-allow-unregistered-dialect", "-", "-o", "/dev/null"],
            check=False,
            timeout=60,
            stdin=text,
        )
        assert verdict.returncode == 0, verdict.stderr[:2000]
