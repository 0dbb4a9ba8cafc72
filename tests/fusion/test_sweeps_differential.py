"""Differential testing of fusion on generated stencil sweeps (`sweepgen`): what
`fuse --line` (best depth and each depth) and `fuse --all` write, shifted fusion
included, run with mlir-runner, prints what the original prints. A seeded slice of
the sweeps part of `benchmarks/transforms_differential.py`."""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import pytest

from affine_lsp.testing import oracle, sweepdiff, sweepgen

PROGRAMS = int(os.environ.get("AFFINE_LSP_SWEEP_PROGRAMS", "8"))
FIRST_SEED = 700


def _check(seed: int) -> list[tuple[int, str, str, bool, str, str]]:
    report = sweepdiff.check_program(seed, sweepgen.generate(seed).text)
    if report.original_failed:
        return [(seed, "original", "", False, "original-failed", report.original_failed)]
    return [(seed, row[1], row[2], row[3], row[4], row[6]) for row in report.rows]


def test_generated_sweeps_stay_in_bounds_and_vary():
    programs = [sweepgen.generate(seed) for seed in range(40)]
    assert {p.depth for p in programs} == {1, 2, 3}
    features = Counter(f for p in programs for f in p.features)
    for feature in ("time_loop", "symbolic", "backwards", "bounds_differ", "index_use"):
        assert features[feature] > 0, features
    assert sweepgen.generate(3).text == sweepgen.generate(3).text


@pytest.mark.slow
@pytest.mark.oracle
def test_fused_sweeps_compute_what_the_originals_compute():
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    seeds = range(FIRST_SEED, FIRST_SEED + PROGRAMS)
    with ProcessPoolExecutor(max(1, min(2, os.cpu_count() or 1))) as pool:
        rows = [row for found in pool.map(_check, seeds) for row in found]
    assert not [r for r in rows if r[4] == "original-failed"], rows
    wrong = [r for r in rows if r[3] and r[4] != "same"]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[:3]}"
    applied = Counter(r[2] for r in rows if r[3])
    assert applied["fuse-shift"] > 0 and applied["fuse"] > 0, applied
