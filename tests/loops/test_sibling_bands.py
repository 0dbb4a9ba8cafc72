"""Time tiling through the pieces a shifted fusion peels: a time loop whose body
holds sibling nests (the rows one sweep runs alone, beside the fused nest) is
skewed and tiled as one band, their loops aligned with the band's innermost
loops, each peeled piece placed at the iteration it came from. Each result is
proven when applied; the oracle tests also run it."""

from __future__ import annotations

import re

import pytest

from affine_lsp.ide.code_actions import prepare_loop_transforms
from affine_lsp.testing import oracle
from affine_lsp.transforms.loops import SKEW, TILE, Spec
from affine_lsp.transforms.loops.actions import LoopOptions
from tests.ide.helpers import analysed, offset_of
from tests.loops.helpers import applied, refused, run
from tests.loops.stencils import JACOBI_2D_PEELED, JACOBI_2D_PEELED_BOTH, SIBLING_READ_AHEAD
from tests.schedule.driver import with_main

TIME_SKEW = Spec(SKEW, skews=((2,), (2, 0)))  # (t, 2t + i, 2t + j)


def _headers(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "affine.for" in line]


def _runs_the_same(before: str, after: str) -> None:
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    kernel = r"func\.func @\w+\("
    verdict = oracle.equivalent(
        with_main(re.sub(kernel, "func.func @kernel(", before, count=1)),
        with_main(re.sub(kernel, "func.func @kernel(", after, count=1)),
    )
    assert verdict.same, verdict.detail


def test_a_skew_of_the_time_loop_takes_the_peeled_rows_into_the_band():
    result = run(JACOBI_2D_PEELED, "affine.for %t", TIME_SKEW)
    assert result.applied, result.reason
    assert result.summary == "skewed %i by 2×%t, %j by 2×%t; one innermost loop per statement"
    text = result.new_text.decode()  # type: ignore[union-attr]
    # The peeled rows keep their own loops, now over the skewed %j like the fused nest.
    row = "affine.for %j_skew = affine_map<(d0) -> (d0 * 2 + 1)>(%t) to "
    assert [h.startswith(row) for h in _headers(text)] == [False, True, False, True, True, True]
    assert "affine.store %value, %B[1, %j_skew - %t * 2] : memref<10x10xf64>" in text
    assert "affine.store %value, %A[8, %j_skew - %t * 2] : memref<10x10xf64>" in text
    assert "affine.if" not in text and "affine.apply" not in text


@pytest.mark.oracle
def test_the_skewed_peeled_rows_run_the_same():
    _runs_the_same(JACOBI_2D_PEELED, applied(JACOBI_2D_PEELED, "affine.for %t", TIME_SKEW))


def test_tiling_the_peeled_form_names_the_dependence_and_the_skew_that_makes_it_legal():
    reason = refused(JACOBI_2D_PEELED_BOTH, "affine.for %t", Spec(TILE, sizes=(2, 8, 8)))
    assert reason.startswith("iteration (t, j) reads %A[1, j], written by iteration (")
    assert reason.endswith(
        "after tiling 2×8×8 it would run first; skew %i by 2×%t, %j by 2×%t first"
    )


def test_the_peeled_form_time_tiles_after_its_skew_with_one_loop_per_statement():
    skewed = applied(JACOBI_2D_PEELED_BOTH, "affine.for %t", TIME_SKEW)
    result = run(skewed, "affine.for %t", Spec(TILE, sizes=(2, 8, 8)))
    assert result.applied, result.reason
    assert result.summary == "tiled by 2×8×8; one innermost loop per statement"
    text = result.new_text.decode()  # type: ignore[union-attr]
    assert _headers(text)[:3] == [
        "affine.for %t_tile = 0 to 3 step 2 {",
        "affine.for %i_skew_tile = 0 to min affine_map<(d0) -> (13, d0 * 2 + 11)>(%t_tile) "
        "step 8 {",
        "affine.for %j_skew_tile = 0 to min affine_map<(d0) -> (14, d0 * 2 + 12)>(%t_tile) "
        "step 8 {",
    ]
    # The peeled rows run inside the tiles, over the skewed %j (the last one placed
    # where the fused nest would write it: one column later).
    assert "affine.store %value_4, %B[1, %j_skew - %t * 2] : memref<10x10xf64>" in text
    assert "affine.store %value_4, %A[8, %j_skew - %t * 2 - 1] : memref<10x10xf64>" in text


@pytest.mark.oracle
def test_the_time_tiled_peeled_form_runs_the_same():
    skewed = applied(JACOBI_2D_PEELED_BOTH, "affine.for %t", TIME_SKEW)
    _runs_the_same(
        JACOBI_2D_PEELED_BOTH, applied(skewed, "affine.for %t", Spec(TILE, (), (2, 8, 8)))
    )


def test_sinking_a_sibling_nest_that_breaks_a_dependence_is_refused_with_it():
    reason = refused(SIBLING_READ_AHEAD, "affine.for %t", Spec(TILE, sizes=(2, 4, 4)))
    assert reason == (
        "iteration (t, i, j) reads %C[j + 1], written by iteration (t, j + 1); "
        "after tiling 2×4×4 it would run first"
    )


def test_the_time_loop_of_the_peeled_form_offers_its_skew_and_its_tiling():
    analysis = analysed(JACOBI_2D_PEELED_BOTH)
    at = offset_of(analysis, "affine.for %t")
    options = LoopOptions(tile_sizes=(2, 4, 4))
    actions = prepare_loop_transforms(analysis, at, at, options)()
    titles = {a.title: a.disabled_reason for a in actions}
    assert titles["Skew %i by 1 (against %t)"] is None
    assert (titles["Tile 2×4×4"] or "").startswith("iteration (t, j) reads %A[1, j], written by")


# A statement beside the inner loop that writes one element the inner loop writes at
# only one of its iterations (%B1[0, %i + 2] against %B1[%i, %j - 2] at %i = 0) is no
# peeled piece: a place found for some of its instances would put them all at one.
PARTLY_REPEATED = """func.func @kernel(%B0: memref<8x8xf64>, %B1: memref<8x8xf64>) {
  affine.for %i = 0 to 6 {
    affine.for %j = 2 to affine_map<(d0) -> (d0 + 1)>(%i) {
      %x1 = affine.load %B1[%i - 2, %j - 2] : memref<8x8xf64>
      affine.store %x1, %B1[%i, %j - 2] : memref<8x8xf64>
    }
    %x2 = affine.load %B0[0, %i + 1] : memref<8x8xf64>
    affine.store %x2, %B1[0, %i + 2] : memref<8x8xf64>
  }
  return
}
"""


def test_a_statement_repeating_an_iteration_for_some_instances_only_keeps_its_place():
    result = run(PARTLY_REPEATED, "affine.for %i", Spec(TILE, sizes=(3, 3)))
    assert result.applied, result.reason


@pytest.mark.oracle
def test_the_tiled_nest_with_a_partly_repeated_statement_runs_the_same():
    after = applied(PARTLY_REPEATED, "affine.for %i", Spec(TILE, sizes=(3, 3)))
    _runs_the_same(PARTLY_REPEATED, after)


# The pieces a shifted fusion peeled, under a symbolic bound: the last one sits at
# %i = %n - 1, so its place in the skewed band names %n, and the tiles' bounds hold
# ceilings (`-((%n - %i_skew_tile) floordiv 3)`, MLIR's minus binding before floordiv).
PEELED_UP_TO_N = """func.func @kernel(%A: memref<12xf64>, %B: memref<12xf64>, %C: memref<12xf64>,
                   %n: index) {
  affine.for %t = 0 to 2 {
    affine.for %i = 2 to min affine_map<()[s0] -> (3, s0)>()[%n] {
      %a = affine.load %A[%i] : memref<12xf64>
      %b = affine.load %A[%i + 2] : memref<12xf64>
      %d = arith.subf %a, %b : f64
      affine.store %d, %B[%i] : memref<12xf64>
    }
    affine.for %i = 3 to %n {
      %a = affine.load %A[%i] : memref<12xf64>
      %b = affine.load %A[%i + 2] : memref<12xf64>
      %d = arith.subf %a, %b : f64
      affine.store %d, %B[%i] : memref<12xf64>
      %l = affine.load %B[%i - 3] : memref<12xf64>
      %r = affine.load %B[%i] : memref<12xf64>
      %s = arith.addf %l, %r : f64
      affine.store %s, %C[%i - 1] : memref<12xf64>
    }
    affine.for %i = max affine_map<()[s0] -> (2, s0 - 1)>()[%n] to %n {
      %l = affine.load %B[%i - 2] : memref<12xf64>
      %r = affine.load %B[%i + 1] : memref<12xf64>
      %s = arith.addf %l, %r : f64
      affine.store %s, %C[%i] : memref<12xf64>
    }
  }
  return
}
"""


def _tiled_up_to_n() -> str:
    skewed = applied(PEELED_UP_TO_N, "affine.for %t", Spec(SKEW, skews=((3,),)))
    result = run(skewed, "affine.for %t", Spec(TILE, sizes=(2, 4)))
    assert result.applied, result.reason
    assert result.summary == "tiled by 2×4; one innermost loop per statement"
    return result.new_text.decode()  # type: ignore[union-attr]


def test_peeled_pieces_placed_by_a_symbolic_bound_tile_after_a_skew():
    text = _tiled_up_to_n()
    assert re.search(r"affine.store %s_\d, %C\[%n - 1\] : memref<12xf64>", text)
    assert "-((s0 - d0) floordiv 3)" in text


@pytest.mark.oracle
def test_the_tiles_placed_by_a_symbolic_bound_run_the_same():
    _runs_the_same(PEELED_UP_TO_N, _tiled_up_to_n())
