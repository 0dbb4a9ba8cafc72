"""isl's scheduler on the statements of PolyBench-shaped nests: the bands the issue
names (gemm one permutable band (i, j, k) with i, j parallel; jacobi-2d (t, 2t + i,
2t + j) with the second sweep shifted; seidel-2d (t, t + i, 2t + i + j))."""

from __future__ import annotations

import pytest

from affine_lsp.poly import Budget, PolyError
from affine_lsp.transforms.optimize import Row, schedule_of
from tests.optimize.helpers import loop_on_line
from tests.optimize.kernels import GEMM, JACOBI_2D, MVT, SEIDEL_2D


def _outer(text: str, line: int):
    data, model, loop = loop_on_line(text, line)
    schedule, words = schedule_of(model, loop)
    band = schedule.outermost()
    assert band is not None, words
    return band, words


def test_gemm_is_one_permutable_band_with_two_parallel_loops():
    band, words = _outer(GEMM, 3)
    assert band.statements == ("S0", "S1")
    assert band.permutable
    assert band.coincident == (True, True, False)
    # S1's loops in source order are (i, k, j): the band is (i, j, k).
    assert band.rows_of("S1") == (Row((1, 0, 0), 0), Row((0, 0, 1), 0), Row((0, 1, 0), 0))
    assert band.rows_of("S0") == (Row((1, 0), 0), Row((0, 1), 0), Row((0, 0), 0))
    assert band.is_permutation() is False  # S0 runs before the k loop: a constant row
    assert "S1: (i, j, k)" in words[0]


def test_jacobi_2d_is_skewed_by_twice_the_time_and_its_second_sweep_shifted():
    band, words = _outer(JACOBI_2D, 4)
    assert band.permutable and band.members == 3
    assert band.rows_of("S0") == (Row((1, 0, 0), 0), Row((2, 1, 0), 0), Row((2, 0, 1), 0))
    assert band.rows_of("S1") == (Row((1, 0, 0), 0), Row((2, 1, 0), 1), Row((2, 0, 1), 1))
    assert band.skewed() and band.shifted()
    assert "S0: (t, 2t + i, 2t + j); S1: (t, 2t + i + 1, 2t + j + 1)" in words[0]


def test_seidel_2d_is_the_skewed_band_t_t_plus_i_2t_plus_i_plus_j():
    band, words = _outer(SEIDEL_2D, 4)
    assert band.permutable
    assert band.rows_of("S0") == (Row((1, 0, 0), 0), Row((1, 1, 0), 0), Row((2, 1, 1), 0))
    assert band.coincident == (False, False, False)
    assert "(t, t + i, 2t + i + j)" in words[0]


def test_mvt_first_loop_is_parallel_the_reduction_loop_is_not():
    band, _ = _outer(MVT, 3)
    assert band.coincident == (True, False)


ITER_ARGS = """func.func @f(%A: memref<16xf32>, %out: memref<1xf32>) {
  %zero = arith.constant 0.0 : f32
  affine.for %r = 0 to 4 {
    %sum = affine.for %i = 0 to 16 iter_args(%s = %zero) -> (f32) {
      %v = affine.load %A[%i] : memref<16xf32>
      %n = arith.addf %s, %v : f32
      affine.yield %n : f32
    }
    affine.store %sum, %out[0] : memref<1xf32>
  }
  return
}
"""


def test_a_nest_that_carries_values_is_not_scheduled_and_says_why():
    data, model, loop = loop_on_line(ITER_ARGS, 3)
    with pytest.raises(PolyError) as raised:
        schedule_of(model, loop)
    assert "carries values through iter_args" in raised.value.reason


def test_the_scheduler_stops_at_its_operation_cap():
    data, model, loop = loop_on_line(JACOBI_2D, 4)
    with pytest.raises(PolyError):
        schedule_of(model, loop, Budget(max_operations=2_000, time_limit=None))
