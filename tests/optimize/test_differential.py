"""Optimized generated nests run with mlir-runner against the originals (0
mismatches): a seeded slice of `benchmarks/transforms_differential.py --mode
optimize`."""

from __future__ import annotations

import os

import pytest

from affine_lsp.testing import oracle
from affine_lsp.testing.optimizediff import check_optimized

PROGRAMS = int(os.environ.get("AFFINE_LSP_OPTIMIZE_PROGRAMS", "8"))
FIRST_SEED = 100


@pytest.mark.oracle
def test_optimized_nests_compute_what_the_originals_compute():
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    programs = [check_optimized(seed) for seed in range(FIRST_SEED, FIRST_SEED + PROGRAMS)]
    wrong = [(p.seed, p.steps, p.verdict, p.detail[:300]) for p in programs if p.changed]
    wrong = [w for w in wrong if w[2] != "same"]
    assert not wrong
    changed = [p for p in programs if p.changed]
    assert len(changed) >= PROGRAMS // 4, [p.verdict for p in programs]
