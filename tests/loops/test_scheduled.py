"""Transformations written by the code generator: perfect skews that compose, time
tiling of stencils (skewed bands tiled in n-D), tiles of imperfect bands, and
wavefronts. Each result is proven when applied; the oracle tests also run it."""

from __future__ import annotations

import re

import pytest

from affine_lsp.poly import Budget
from affine_lsp.testing import oracle
from affine_lsp.transforms.loops import SKEW, TILE, WAVEFRONT, Spec
from tests.loops.helpers import applied, refused, run
from tests.loops.stencils import GEMM, JACOBI_1D, JACOBI_2D, SEIDEL
from tests.schedule.driver import with_main

SEIDEL_SKEW = Spec(SKEW, skews=((1,), (2, 1)))  # (t, t + i, 2t + i + j)


def _headers(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "affine.for" in line]


def _as_kernel(text: str) -> str:
    return re.sub(r"func\.func @\w+\(", "func.func @kernel(", text, count=1)


def _runs_the_same(before: str, after: str) -> None:
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    verdict = oracle.equivalent(with_main(_as_kernel(before)), with_main(_as_kernel(after)))
    assert verdict.same, verdict.detail


# -- skew -----------------------------------------------------------------------------------


def test_a_skew_keeps_the_band_perfect():
    after = applied(SEIDEL, "affine.for %t", Spec(SKEW, factor=1))
    assert _headers(after) == [
        "affine.for %t = 0 to 4 {",
        "affine.for %i_skew = affine_map<(d0) -> (d0 + 1)>(%t) to "
        "affine_map<(d0) -> (d0 + 11)>(%t) {",
        "affine.for %j = 1 to 11 {",
    ]
    assert "affine.apply" not in after
    assert "%a0 = affine.load %A[%i_skew - %t - 1, %j - 1] : memref<12x12xf64>" in after
    assert "affine.store %v, %A[%i_skew - %t, %j] : memref<12x12xf64>" in after


def test_skews_compose():
    once = applied(SEIDEL, "affine.for %t", Spec(SKEW, skews=((1,), (1, 0))))
    twice = applied(once, "affine.for %i_skew", Spec(SKEW, factor=1))
    assert _headers(twice)[2] == (
        "affine.for %j_skew = affine_map<(d0, d1) -> (d0 + d1 + 1)>(%t, %i_skew) to "
        "affine_map<(d0, d1) -> (d0 + d1 + 11)>(%t, %i_skew) {"
    )
    # (t, t + i, t + j) then j by the skewed i: the subscripts say where each point was.
    assert "%a8 = affine.load %A[%i_skew - %t + 1, %j_skew - %t - %i_skew + 1]" in twice
    again = applied(twice, "affine.for %t", Spec(SKEW, skews=((0,), (1, 0))))
    assert "%a8 = affine.load %A[%i_skew - %t + 1, %j_skew - %t * 2 - %i_skew + 1]" in again


@pytest.mark.oracle
def test_composed_skews_run_the_same():
    once = applied(SEIDEL, "affine.for %t", Spec(SKEW, skews=((1,), (1, 0))))
    twice = applied(once, "affine.for %i_skew", Spec(SKEW, factor=1))
    _runs_the_same(SEIDEL, twice)


def test_a_skew_keeps_the_guards_of_fused_sweeps_inside_the_perfect_band():
    after = applied(JACOBI_1D, "affine.for %t", Spec(SKEW, factor=2))
    assert _headers(after) == [
        "affine.for %t = 0 to 10 {",
        "affine.for %i_skew = affine_map<(d0) -> (d0 * 2 + 1)>(%t) to "
        "affine_map<(d0) -> (d0 * 2 + 40)>(%t) {",
    ]
    assert after.count("affine.if") == 2
    assert "// the second sweep, one iteration behind" in after
    assert "affine.store %a, %A[%i_skew - %t * 2 - 1] : memref<40xf64>" in after


# -- time tiling ----------------------------------------------------------------------------


def test_tiling_seidel_is_refused_with_the_dependence_and_the_skew_that_makes_it_legal():
    result = run(SEIDEL, "affine.for %t", Spec(TILE, sizes=(2, 4, 4)))
    assert not result.applied
    assert result.reason == (
        "iteration (t, i, j) reads %A[i - 1, j + 1], written by iteration (t, i - 1, j + 1); "
        "after tiling 2×4×4 it would run first; skew %i by %t, %j by 2×%t + %i first"
    )
    assert result.hint == Spec(TILE, sizes=(2, 4, 4), skews=((1,), (2, 1)))


def test_seidel_time_tiled_after_its_skew():
    skewed = applied(SEIDEL, "affine.for %t", SEIDEL_SKEW)
    tiled = run(skewed, "affine.for %t", Spec(TILE, sizes=(2, 4, 4)))
    assert tiled.applied, tiled.reason
    text = tiled.new_text.decode()  # type: ignore[union-attr]
    headers = _headers(text)
    assert headers[0] == "affine.for %t_tile = 0 to 4 step 2 {"
    assert headers[1].startswith("affine.for %i_skew_tile = ")
    assert headers[2].startswith("affine.for %j_skew_tile = ")
    assert [h.split(" =")[0] for h in headers[3:]] == [
        "affine.for %t",
        "affine.for %i_skew",
        "affine.for %j_skew",  # (one memref: the point loop stays skewed)
    ]
    assert "affine.if" not in text and "affine.apply" not in text
    assert tiled.summary == "tiled by 2×4×4"


@pytest.mark.oracle
def test_time_tiled_seidel_runs_the_same():
    tiled = applied(SEIDEL, "affine.for %t", Spec(TILE, sizes=(2, 4, 4), skews=((1,), (2, 1))))
    _runs_the_same(SEIDEL, tiled)


def test_jacobi_1d_time_tiled_has_one_unit_stride_loop_per_sweep():
    result = run(JACOBI_1D, "affine.for %t", Spec(TILE, sizes=(4, 16), skew=2))
    assert result.applied, result.reason
    text = result.new_text.decode()  # type: ignore[union-attr]
    assert result.summary == "skewed %i by 2; tiled by 4×16; one innermost loop per statement"
    assert "affine.if" not in text
    assert _headers(text)[:3] == [
        "affine.for %t_tile = 0 to 10 step 4 {",
        "affine.for %i_tile = affine_map<(d0) -> ((d0) floordiv 8 * 16)>(%t_tile) to "
        "min affine_map<(d0) -> (58, d0 * 2 + 46)>(%t_tile) step 16 {",
        "affine.for %t = max affine_map<(d0, d1) -> (d0, (d1) floordiv 2 - 19)>(%t_tile, "
        "%i_tile) to min affine_map<(d0) -> (10, d0 + 4)>(%t_tile) {",
    ]
    # The two sweeps, each in its own innermost loop over %i_skew, the second shifted.
    inner = [h for h in _headers(text) if h.startswith("affine.for %i_skew")]
    assert inner == [
        "affine.for %i_skew = max affine_map<(d0, d1) -> (d0, d1 * 2 + 1)>(%i_tile, %t) to "
        "min affine_map<(d0, d1) -> (d0 + 16, d1 * 2 + 39)>(%i_tile, %t) {",
        "affine.for %i_skew = max affine_map<(d0, d1) -> (d0, d1 * 2 + 2)>(%i_tile, %t) to "
        "min affine_map<(d0, d1) -> (d0 + 16, d1 * 2 + 40)>(%i_tile, %t) {",
    ]


@pytest.mark.oracle
def test_time_tiled_jacobi_1d_runs_the_same():
    _runs_the_same(JACOBI_1D, applied(JACOBI_1D, "affine.for %t", Spec(TILE, (), (4, 16), skew=2)))


def test_jacobi_2d_tiles_after_skewing_both_loops_by_twice_the_time():
    reason = refused(JACOBI_2D, "affine.for %t", Spec(TILE, sizes=(2, 4, 4)))
    assert reason.endswith("; skew %i by 2×%t, %j by 2×%t first")
    skewed = applied(JACOBI_2D, "affine.for %t", Spec(SKEW, skews=((2,), (2, 0))))
    # The union of the sweeps' domains: row 1 has no second sweep, row 13 no first.
    assert _headers(skewed)[1:] == [
        "affine.for %i_skew = affine_map<(d0) -> (d0 * 2 + 1)>(%t) to "
        "affine_map<(d0) -> (d0 * 2 + 14)>(%t) {",
        "affine.for %j_skew = max affine_map<(d0, d1) -> (d0 * 2 + 1, d1 - 11)>(%t, %i_skew) to "
        "min affine_map<(d0, d1) -> (d0 * 2 + 14, d1 + 12)>(%t, %i_skew) {",
    ]
    tiled = run(skewed, "affine.for %t", Spec(TILE, sizes=(2, 4, 4)))
    assert tiled.applied, tiled.reason
    assert "one innermost loop per statement" in tiled.summary


@pytest.mark.oracle
def test_time_tiled_jacobi_2d_runs_the_same():
    skewed = applied(JACOBI_2D, "affine.for %t", Spec(SKEW, skews=((2,), (2, 0))))
    _runs_the_same(JACOBI_2D, applied(skewed, "affine.for %t", Spec(TILE, sizes=(2, 4, 4))))


JACOBI_2D_TILE_OPERATIONS = 1_100_000
"""More isl operations than the proof of jacobi-2d's time tiles written with one copy of
each statement needs (about 1.0 million), fewer than with the tiles peeled (1.25)."""


def test_time_tiles_too_complex_to_prove_peeled_are_proven_unpeeled():
    skewed = applied(JACOBI_2D, "affine.for %t", Spec(SKEW, skews=((2,), (2, 0))))
    budget = Budget(JACOBI_2D_TILE_OPERATIONS, None)
    tiled = run(skewed, "affine.for %t", Spec(TILE, sizes=(2, 4, 4)), budget=budget)
    assert tiled.applied, tiled.reason
    assert "the point loops not peeled (bounded by min/max)" in tiled.summary
    assert tiled.new_text is not None
    text = tiled.new_text.decode()
    assert (
        "affine.for %i_skew = max affine_map<(d0, d1) -> (d0, d1 * 2 + 1)>(%i_skew_tile, %t)"
        in text
    )
    # With the operations the peeled tiles need, they are peeled as before (more loops).
    peeled = run(
        skewed, "affine.for %t", Spec(TILE, sizes=(2, 4, 4)), budget=Budget(2_000_000, None)
    )
    assert peeled.applied and "not peeled" not in peeled.summary
    assert peeled.new_text is not None
    assert peeled.new_text.count(b"affine.for") > text.count("affine.for")


def test_unpeeled_tiles_are_refused_too_when_they_are_too_complex():
    skewed = applied(JACOBI_2D, "affine.for %t", Spec(SKEW, skews=((2,), (2, 0))))
    result = run(skewed, "affine.for %t", Spec(TILE, sizes=(2, 4, 4)), budget=Budget(600_000, None))
    assert not result.applied and result.timed_out


@pytest.mark.oracle
def test_unpeeled_time_tiles_run_the_same():
    skewed = applied(JACOBI_2D, "affine.for %t", Spec(SKEW, skews=((2,), (2, 0))))
    tiled = run(skewed, "affine.for %t", Spec(TILE, sizes=(2, 4, 4), peel=False))
    assert tiled.applied and tiled.new_text is not None, tiled.reason
    _runs_the_same(JACOBI_2D, tiled.new_text.decode())


# -- imperfect bands -------------------------------------------------------------------------


def test_an_imperfect_band_tiles_with_its_statement_sunk_into_the_first_tile():
    result = run(GEMM, "affine.for %i", Spec(TILE, sizes=(8, 8, 4)))
    assert result.applied, result.reason
    text = result.new_text.decode()  # type: ignore[union-attr]
    headers = _headers(text)
    assert headers[:3] == [
        "affine.for %i_tile = 0 to 20 step 8 {",
        "affine.for %j_tile = 0 to 18 step 8 {",
        "affine.for %k_tile = 0 to 12 step 4 {",
    ]
    # C *= beta runs once per (i, j), in the first k tile (the else branch of
    # `%k_tile >= 4`), before its k loop.
    assert "affine.if affine_set<(d0) : (d0 - 4 >= 0)>(%k_tile) {" in text
    assert text.count("%cb = arith.mulf %c, %beta : f64") == 1
    first_tile = text[text.index("} else {") :]
    assert first_tile.index("// C[i][j] *= beta") < first_tile.index("affine.for %k = 0 to 4 {")
    # No guard in the innermost loops: each is a plain run of the body.
    for block in text.split("affine.for %k = ")[1:]:
        assert "affine.if" not in block.split("}")[0]


@pytest.mark.oracle
def test_the_tiled_imperfect_band_runs_the_same():
    _runs_the_same(GEMM, applied(GEMM, "affine.for %i", Spec(TILE, sizes=(8, 8, 4))))


def test_sinking_that_breaks_a_dependence_is_refused_with_it():
    text = GEMM.replace(
        "      // C[i][j] *= beta\n      %c = affine.load %C[%i, %j]",
        "      // C[i][j] *= beta\n      %c = affine.load %C[%i, 0]",
    ).replace("affine.store %cb, %C[%i, %j]", "affine.store %cb, %C[%i, 0]")
    reason = refused(text, "affine.for %i", Spec(TILE, sizes=(8, 8, 4)))
    assert "after tiling 8×8×4 it would run first" in reason
    assert reason.startswith("iteration (i, j")


# -- wavefronts ------------------------------------------------------------------------------


def test_a_wavefront_runs_the_diagonals_2i_plus_j_of_seidel_in_parallel():
    result = run(SEIDEL, "affine.for %i", Spec(WAVEFRONT))
    assert result.applied, result.reason
    text = result.new_text.decode()  # type: ignore[union-attr]
    assert result.summary == "the points in wavefront along 2i + j"
    assert "affine.for %front = 3 to 31 {" in text
    assert (
        "affine.parallel (%i) = (max(1, (%front + 1) floordiv 2 - 5)) to "
        "(min(11, (%front + 1) floordiv 2)) {"
    ) in text
    assert "%a0 = affine.load %A[%i - 1, %front - %i * 2 - 1] : memref<12x12xf64>" in text


def test_a_wavefront_of_a_few_rows_at_once():
    result = run(SEIDEL, "affine.for %i", Spec(WAVEFRONT, factor=3))
    assert result.applied, result.reason
    headers = _headers(result.new_text.decode())  # type: ignore[union-attr]
    assert result.summary == "the points in wavefront along 2i + j"
    assert headers[1:] == [
        "affine.for %i_tile = 0 to 11 step 3 {",
        "affine.for %front = max affine_map<(d0) -> (3, d0 * 2 + 1)>(%i_tile) to "
        "min affine_map<(d0) -> (31, d0 * 2 + 15)>(%i_tile) {",
        "affine.for %i = max affine_map<(d0, d1) -> (1, d0, (d1 + 1) floordiv 2 - 5)>"
        "(%i_tile, %front) to min affine_map<(d0, d1) -> (11, d0 + 3, (d1 + 1) floordiv 2)>"
        "(%i_tile, %front) {",
    ]


@pytest.mark.oracle
def test_wavefronts_run_the_same():
    for spec in (Spec(WAVEFRONT), Spec(WAVEFRONT, factor=3)):
        _runs_the_same(SEIDEL, applied(SEIDEL, "affine.for %i", spec))


def test_tiles_run_in_wavefront_with_the_tiles_of_a_diagonal_in_parallel():
    result = run(SEIDEL, "affine.for %i", Spec(WAVEFRONT, sizes=(4, 4), skew=1))
    assert result.applied, result.reason
    text = result.new_text.decode()  # type: ignore[union-attr]
    assert "affine.for %tile_front = " in text
    assert "affine.parallel (%j_tile) = " in text  # the %i tile is the diagonal's rest
    assert result.summary == "skewed %j by 1; tiled by 4×4; the tiles of each diagonal in parallel"


@pytest.mark.oracle
def test_tiles_in_wavefront_run_the_same():
    _runs_the_same(SEIDEL, applied(SEIDEL, "affine.for %i", Spec(WAVEFRONT, (), (4, 4), skew=1)))


def test_time_tiles_run_in_wavefront():
    spec = Spec(WAVEFRONT, sizes=(2, 4, 4), skews=((1,), (2, 1)))
    result = run(SEIDEL, "affine.for %t", spec)
    assert result.applied, result.reason
    headers = _headers(result.new_text.decode())  # type: ignore[union-attr]
    assert headers[0] == "affine.for %tile_front = 0 to 11 {"
    text = result.new_text.decode()  # type: ignore[union-attr]
    assert "affine.parallel (%i_tile) = " in text and "affine.parallel (%j_tile) = " in text


@pytest.mark.oracle
def test_time_tiles_in_wavefront_run_the_same():
    spec = Spec(WAVEFRONT, sizes=(2, 4, 4), skews=((1,), (2, 1)))
    _runs_the_same(SEIDEL, applied(SEIDEL, "affine.for %t", spec))


def test_a_wavefront_of_tiles_that_depend_on_each_other_is_refused():
    reason = refused(SEIDEL, "affine.for %i", Spec(WAVEFRONT, sizes=(4, 4)))
    assert reason.startswith("iteration (i, j) reads %A[i - 1, j + 1], written by iteration")
    assert reason.endswith("; skew %j by 1 first")


SKEWED_SWEEP = """func.func @sweep(%A: memref<64xf64>, %B: memref<64xf64>) {
  %third = arith.constant 0.33333 : f64
  affine.for %t = 0 to 8 {
    affine.for %i_skew = affine_map<(d0) -> (d0 * 2 + 1)>(%t)
        to affine_map<(d0) -> (d0 * 2 + 63)>(%t) {
      %a0 = affine.load %A[%i_skew - %t * 2 - 1] : memref<64xf64>
      %a1 = affine.load %A[%i_skew - %t * 2] : memref<64xf64>
      %a2 = affine.load %A[%i_skew - %t * 2 + 1] : memref<64xf64>
      %s0 = arith.addf %a0, %a1 : f64
      %s1 = arith.addf %s0, %a2 : f64
      %v = arith.mulf %third, %s1 : f64
      affine.store %v, %B[%i_skew - %t * 2] : memref<64xf64>
    }
  }
  return
}
"""


def test_a_skewed_band_tiles_with_its_point_loop_over_the_unskewed_iv():
    # The point loop's range moves with %t as its subscripts do (in a full tile, over the
    # fixed box %i_skew_tile to %i_skew_tile + 16 with %A[%i_skew - %t * 2], LLVM hoists
    # the alias check of %A and %B out of %t and does not vectorize it).
    result = run(SKEWED_SWEEP, "affine.for %t", Spec(TILE, sizes=(4, 16)))
    assert result.applied, result.reason
    text = result.new_text.decode()  # type: ignore[union-attr]
    assert (
        "affine.for %i = max affine_map<(d0, d1) -> (1, d0 - d1 * 2)>(%i_skew_tile, %t) to "
        "min affine_map<(d0, d1) -> (63, d0 - d1 * 2 + 16)>(%i_skew_tile, %t) {"
    ) in _headers(text)
    assert "%A[%i - 1]" in text and "%B[%i]" in text and "%i_skew -" not in text
    assert "affine.if" not in text and "affine.apply" not in text


@pytest.mark.oracle
def test_a_skewed_band_tiled_over_the_unskewed_iv_runs_the_same():
    tiled = applied(SKEWED_SWEEP, "affine.for %t", Spec(TILE, sizes=(4, 16)))
    _runs_the_same(SKEWED_SWEEP, tiled)
