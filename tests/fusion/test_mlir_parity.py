"""`fuse --all` against MLIR's `affine-loop-fusion`, on seeded slices of generated
programs (the generator's default programs and the hazard-heavy profile): every
fused program computes what the original computes, and wherever MLIR's output is
correct we leave no more top-level nests than it does, unless the difference has
a known reason (`fusion_compare.classify`: an error of MLIR's that the values
hide, nests that share no memref, our cost model). The long run is
`benchmarks/fusion_differential.py --profile ...`; the default suite runs the
first program of each profile, the slow one eight.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import pytest

from affine_lsp.testing import fusion_compare, oracle

PROGRAMS = int(os.environ.get("AFFINE_LSP_PARITY_PROGRAMS", "8"))
FIRST_SEEDS = {"default": 9000, "hazards": 9500}
EXPLAINED = {"mlir-hidden-error", "independent", "cost"}


def _compare(seed: int, profile: str) -> fusion_compare.Comparison:
    result = fusion_compare.compare_program(seed, profile)
    result.texts.clear()
    return result


def _assert_parity(results: list[fusion_compare.Comparison]) -> None:
    wrong = [
        (r.seed, r.ours, r.detail[:300]) for r in results if r.ours not in ("same", "unchanged")
    ]
    assert not wrong, wrong
    fewer = [(r.seed, r.exception, r.detail[:300]) for r in results if r.fewer_than_mlir]
    assert all(exception in EXPLAINED for _, exception, _ in fewer), fewer
    # The slice must exercise fusion for real, and MLIR's pass too.
    assert sum(r.ours_fusions for r in results) >= max(1, len(results) // 2)
    assert sum(1 for r in results if r.mlir_correct) >= max(1, len(results) // 2)


@pytest.mark.oracle
def test_first_program_of_each_profile_against_mlir():
    """The fast slice (the default suite): one program of each profile."""
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    _assert_parity([_compare(first, profile) for profile, first in sorted(FIRST_SEEDS.items())])


@pytest.mark.slow
@pytest.mark.oracle
@pytest.mark.parametrize("profile", sorted(FIRST_SEEDS))
def test_fuse_all_leaves_no_more_nests_than_mlir(profile: str):
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    seeds = list(range(FIRST_SEEDS[profile], FIRST_SEEDS[profile] + PROGRAMS))
    with ProcessPoolExecutor(max(1, min(2, os.cpu_count() or 1))) as pool:
        results = list(pool.map(_compare, seeds, [profile] * len(seeds)))
    _assert_parity(results)
