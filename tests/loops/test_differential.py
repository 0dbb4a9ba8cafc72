"""Differential testing: every transformation at every loop of generated nests, run
with mlir-runner against the original (0 mismatches).

A seeded slice of `nestgen`'s programs (perfect and imperfect nests 1-3 deep,
symbolic and triangular bounds, steps of 2, shifted, strided and transposed
accesses, in-place updates, memory and iter_args reductions), and the same
programs tiled by 3 for the transformations of point loops (`min` bounds). The long run, with
MLIR's own passes and our conservatism, is `benchmarks/transforms_differential.py`.
"""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import pytest

from affine_lsp.testing import loopdiff, nestgen, oracle
from affine_lsp.transforms.loops import transform
from affine_lsp.transforms.loops.core import INTERNAL_ERROR

PROGRAMS = int(os.environ.get("AFFINE_LSP_TRANSFORM_PROGRAMS", "10"))
FIRST_SEED = 9000


def _check(seed: int) -> list[tuple[int, int, str, bool, str, str]]:
    nest = nestgen.generate(seed)
    # (the point loops of the tiled nest for every other program: the slice stays short)
    report = loopdiff.check_program(seed, nest.text, naive=False, tiled=seed % 2 == 1)
    if report.original_failed:
        return [(seed, 0, "original", False, "original-failed", report.original_failed)]
    return [
        (p.seed, p.line, p.label, p.applied, p.verdict, p.detail[:400]) for p in report.pairs
    ] + [
        (p.seed, p.line, p.label, False, "internal-error", p.reason or "")
        for p in report.pairs
        if (p.reason or "").startswith(INTERNAL_ERROR)
    ]


@pytest.mark.slow
@pytest.mark.oracle
def test_transformed_nests_compute_what_the_originals_compute():
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    seeds = range(FIRST_SEED, FIRST_SEED + PROGRAMS)
    with ProcessPoolExecutor(max(1, min(2, os.cpu_count() or 1))) as pool:
        pairs = [pair for found in pool.map(_check, seeds) for pair in found]
    wrong = [p for p in pairs if p[3] and p[4] != "same"]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[:3]}"
    assert not [p for p in pairs if p[4] in ("original-failed", "internal-error")]
    applied = Counter(p[2].split()[0] + (" tiled" if "[" in p[2] else "") for p in pairs if p[3])
    # The slice exercises the transformations for real.
    assert len(pairs) >= 10 * PROGRAMS
    assert sum(applied.values()) >= 3 * PROGRAMS, applied
    for kind in ("tile", "unroll", "parallelize", "interchange", "scalar-replace"):
        assert applied[kind] > 0, applied
    for kind in ("unroll", "unroll-jam", "scalar-replace"):  # on point loops ending at a min
        assert applied[f"{kind} tiled"] > 0, applied


def test_every_applied_transformation_of_a_few_nests_is_proven():
    """Without the runner: the proofs themselves go through on generated nests."""
    applied = 0
    for seed in range(2):
        nest = nestgen.generate(FIRST_SEED + seed)
        for line, _, _, _ in loopdiff.kernel_loops(nest.text):
            for spec in loopdiff.SPECS:
                loop, data, model = loopdiff._loops_by_line(nest.text)[line]
                result = transform(data, model, loop, spec)
                assert result.applied or result.reason
                assert not (result.reason or "").startswith(INTERNAL_ERROR), result.reason
                applied += result.applied
    assert applied >= 5
