"""Unroll (by a factor, with a remainder loop, fully) and unroll-and-jam."""

from __future__ import annotations

from affine_lsp.transforms.loops import UNROLL, UNROLL_JAM, Spec
from tests.loops.fixtures import MATMUL, REDUCE, STENCIL
from tests.loops.helpers import applied, refused


def test_unroll_by_a_divisor_has_no_remainder():
    after = applied(MATMUL, "affine.for %k", Spec(UNROLL, factor=4))
    assert "affine.for %k = 0 to 32 step 4 {" in after
    assert "%k_3 = affine.apply affine_map<(d0) -> (d0 + 3)>(%k)" in after
    assert "%a_3 = affine.load %A[%i, %k_3] : memref<64x32xf32>" in after
    assert after.count("affine.for %k") == 1


def test_unroll_with_a_symbolic_bound_adds_a_remainder_loop():
    after = applied(MATMUL, "affine.for %i", Spec(UNROLL, factor=2))
    assert (
        "affine.for %i = 0 to affine_map<()[s0] -> ((s0) floordiv 2 * 2)>()[%n] step 2 {" in after
    )
    assert (
        "affine.for %i = max affine_map<()[s0] -> (0, (s0) floordiv 2 * 2)>()[%n] to %n {" in after
    )


def test_unroll_chains_iter_args_through_the_copies_and_the_remainder():
    after = applied(REDUCE, "%sum, %max = affine.for", Spec(UNROLL, factor=2))
    assert "%s2_1 = arith.addf %s2, %v_1 : f32" in after
    assert "affine.yield %s2_1, %m2_1 : f32, f32" in after
    assert "iter_args(%s = %sum_1#0, %m = %sum_1#1)" in after  # the remainder continues
    assert "affine.store %sum, %out[0]" in after  # later uses keep their names


def test_full_unroll_replaces_the_loop_and_its_results():
    after = applied(STENCIL, "affine.for %j", Spec(UNROLL, factor=None))
    assert "affine.for %j" not in after
    assert "%j_9 = arith.constant 8 : index" in after
    assert "%v_8 = affine.load %A[%i - 1, %j_9 + 1] : memref<10x10xf32>" in after


def test_unroll_refusals():
    assert "no constant trip count" in refused(MATMUL, "affine.for %i", Spec(UNROLL, factor=None))
    assert "runs only 9 times" in refused(STENCIL, "affine.for %j", Spec(UNROLL, factor=16))
    assert "at least 2" in refused(STENCIL, "affine.for %j", Spec(UNROLL, factor=1))


# The body ends without an affine.yield: an error (affine-yield-count), which the
# editor and the CLI refuse to transform; the transformation itself refuses too.
NO_YIELD = """func.func @no_yield(%n: index) -> index {
  %r = affine.for %i = 0 to 8 iter_args(%a = %n) -> index {
    %b = arith.addi %a, %i : index
  }
  return %r : index
}
"""


def test_unroll_of_a_loop_whose_body_yields_nothing_is_refused():
    for factor in (2, None):
        reason = refused(NO_YIELD, "affine.for %i", Spec(UNROLL, factor=factor))
        assert "does not yield a value for each of its" in reason


# Unrolled by 3 with a symbolic bound, the proof refused this legal unroll: isl's
# dataflow over the schedule as a map found the wrong last write of `%y`'s load in the
# remainder loop (`Window.flow_info` gives isl a schedule tree instead).
SYMBOLIC_TRIP = """func.func @kernel(%B: memref<8x8xf32>, %n: index) {
  affine.for %i = 1 to %n {
    affine.for %j = 2 to 6 {
      %x = affine.load %B[%j - 1, 0] : memref<8x8xf32>
      affine.store %x, %B[%j, 0] : memref<8x8xf32>
      %y = affine.load %B[1, %j] : memref<8x8xf32>
      affine.store %y, %B[%j - 1, 0] : memref<8x8xf32>
    }
  }
  return
}
"""


def test_unroll_by_three_with_a_symbolic_bound_is_proven():
    after = applied(SYMBOLIC_TRIP, "affine.for %i", Spec(UNROLL, factor=3))
    main = "affine.for %i = 1 to affine_map<()[s0] -> ((s0 - 1) floordiv 3 * 3 + 1)>()[%n] step 3"
    remainder = "affine.for %i = max affine_map<()[s0] -> (1, (s0 - 1) floordiv 3 * 3 + 1)>()[%n]"
    assert f"  {main} {{" in after and f"  {remainder} to %n {{" in after


def test_unroll_and_jam_of_the_matmul():
    after = applied(MATMUL, "affine.for %j", Spec(UNROLL_JAM, factor=2))
    assert "affine.for %j = 0 to 48 step 2 {" in after
    assert "%b_1 = affine.load %B[%k, %j_1] : memref<32x48xf32>" in after
    assert after.count("affine.for %k = 0 to 32 {") == 1  # jammed: one inner loop


def test_unroll_and_jam_of_the_stencil_is_refused():
    reason = refused(STENCIL, "affine.for %i", Spec(UNROLL_JAM, factor=2))
    assert reason == (
        "iteration (i, j) reads %A[i - 1, j + 1], written by iteration (i - 1, j + 1); "
        "after unroll-and-jam by 2 it would run first"
    )
