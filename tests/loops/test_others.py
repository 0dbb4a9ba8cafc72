"""Parallelize, hoist, distribute."""

from __future__ import annotations

from affine_lsp.transforms.loops import DISTRIBUTE, HOIST, PARALLELIZE, Spec
from tests.loops.fixtures import BODY, MATMUL, REDUCE, STENCIL
from tests.loops.helpers import applied, refused


def test_parallelize_a_loop_without_carried_dependences():
    after = applied(MATMUL, "affine.for %j", Spec(PARALLELIZE))
    assert "affine.parallel (%j) = (0) to (48) {" in after
    assert "affine.for %k = 0 to 32 {" in after


def test_parallelize_refuses_a_carried_dependence():
    assert refused(MATMUL, "affine.for %k", Spec(PARALLELIZE)) == (
        "iteration k reads %C[i, j], written by iteration k - 1: a dependence carried by %k"
    )
    assert "a dependence carried by %i" in refused(STENCIL, "affine.for %i", Spec(PARALLELIZE))


def test_parallelize_reductions():
    after = applied(REDUCE, "%sum, %max = affine.for", Spec(PARALLELIZE))
    assert (
        '%sum_1:2 = affine.parallel (%i) = (0) to (%n) reduce ("addf", "maximumf") -> (f32, f32) {'
        in after
    )
    assert "affine.yield %v, %v : f32, f32" in after
    assert "%sum_2 = arith.addf %zero, %sum_1#0 : f32" in after
    assert "affine.store %sum_2, %out[0]" in after


def test_hoist_moves_invariant_ops_before_the_loop():
    after = applied(BODY, "affine.for %i", Spec(HOIST))
    assert after.index("  %t = arith.mulf %x, %x : f32\n  affine.for %i") > 0
    assert "    // scale\n    %a = affine.load" in after


INVARIANT_LOAD = """func.func @rows(%A: memref<8xf32>, %B: memref<8x8xf32>, %n: index) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 8 {
      %a = affine.load %A[%i] : memref<8xf32>
      affine.store %a, %B[%i, %j] : memref<8x8xf32>
    }
    affine.for %j = 0 to %n {
      %a = affine.load %A[%i] : memref<8xf32>
      affine.store %a, %B[%i, %j] : memref<8x8xf32>
    }
  }
  return
}
"""


def test_hoist_an_invariant_load():
    after = applied(INVARIANT_LOAD, "affine.for %j = 0 to 8", Spec(HOIST))
    assert "    %a_1 = affine.load %A[%i] : memref<8xf32>\n    affine.for %j = 0 to 8 {" in after
    assert "affine.store %a_1, %B[%i, %j]" in after  # renamed: %a is used in the next loop
    # %C[i, j] is written in the loop: its load stays
    assert "nothing in %k is loop-invariant" in refused(MATMUL, "affine.for %k", Spec(HOIST))
    # a loop that may run zero times keeps its loads
    assert "%j may run zero times" in refused(
        INVARIANT_LOAD, "affine.for %j = 0 to %n", Spec(HOIST)
    )


def test_distribute_splits_along_dependence_cycles():
    after = applied(BODY, "affine.for %i", Spec(DISTRIBUTE))
    assert after.count("affine.for %i = 1 to 32 {") == 2
    first = after.index("affine.store %y, %B[%i]")
    second = after.index("affine.store %b, %C[%i]")
    assert first < after.index("affine.for %i", first) < second


def test_distribute_refuses_one_cycle():
    reason = refused(STENCIL, "affine.for %j", Spec(DISTRIBUTE))
    assert "has one statement" in reason
