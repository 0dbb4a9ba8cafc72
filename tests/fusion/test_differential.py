"""Differential testing: fused programs, run with mlir-runner, print what the originals print.

A seeded slice of the generator's programs (producer-consumer chains, shifted,
strided and transposed accesses, in-place updates, reductions, WAR/WAW hazards,
live-out arguments, symbolic bounds...). The bigger run, with MLIR's own pass for
comparison, is `benchmarks/fusion_differential.py`.
"""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import pytest

from affine_lsp.checks import Severity, check_document
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing import oracle, progen
from affine_lsp.transforms.fusion import fuse_all

PROGRAMS = int(os.environ.get("AFFINE_LSP_FUSION_PROGRAMS", "200"))
FIRST_SEED = 5000


def _check(seed: int) -> tuple[int, str, int, str]:
    program = progen.generate(seed)
    result = fuse_all(program.text.encode())
    if not result.fusions:
        return seed, "unchanged", 0, ""
    text = result.text.decode()
    errors = [d for d in check_document(SourceDocument(text)) if d.severity == Severity.ERROR]
    if errors:
        return seed, "invalid", len(result.fusions), errors[0].message
    verdict = oracle.equivalent(program.text, text)
    return seed, verdict.outcome.value, len(result.fusions), verdict.detail[:500]


@pytest.mark.slow
@pytest.mark.oracle
def test_fused_programs_compute_what_the_originals_compute():
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    seeds = range(FIRST_SEED, FIRST_SEED + PROGRAMS)
    with ProcessPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
        results = list(pool.map(_check, seeds))
    outcomes = Counter(outcome for _, outcome, _, _ in results)
    wrong = [(s, o, d) for s, o, _, d in results if o not in ("same", "unchanged")]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[:3]}"
    # The slice must exercise fusion for real: most programs get fused.
    assert outcomes["same"] >= PROGRAMS // 2, outcomes
    assert sum(n for _, _, n, _ in results) >= PROGRAMS // 2
