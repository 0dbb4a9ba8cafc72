"""Unroll (by a factor, with a remainder loop, fully) and unroll-and-jam."""

from __future__ import annotations

from affine_lsp.transforms.loops import UNROLL, UNROLL_JAM, Spec
from tests.loops.fixtures import MATMUL, REDUCE, STENCIL, TILED, TRIANGLE_TILE
from tests.loops.helpers import applied, refused, run


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


# -- loops with min and max bounds (the point loops of tiles) -------------------------------


def _headers(text: str) -> list[str]:
    return [
        line.strip()
        for line in text.splitlines()
        if ("affine.for %" in line and "_tile =" not in line) or "affine.if" in line
    ]


def test_unroll_of_a_point_loop_ending_at_a_min_has_an_epilogue():
    after = applied(TILED, "affine.for %k =", Spec(UNROLL, factor=2))
    headers = _headers(after)
    # floor commutes with min: the unrolled loop stops at the split of the ragged bound
    assert (
        "affine.for %k = #start(%k_tile) to min affine_map<(d0) -> "
        "(d0 + 4, d0 + (-d0 + 9) floordiv 2 * 2)>(%k_tile) step 2 {" in headers
    )
    # the remainder runs from that split to the original bound
    assert (
        "affine.for %k = affine_map<(d0) -> (d0 + (-d0 + 9) floordiv 2 * 2)>(%k_tile) to min "
        "#k_end(%k_tile) {" in headers
    )
    assert "%k_1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%k)" in after


def test_unroll_needs_no_remainder_where_every_tile_runs_a_multiple_of_the_factor():
    # 10 - %i_tile is 10, 6 or 2: always even
    result = run(TILED, "affine.for %i =", Spec(UNROLL, factor=2))
    assert result.applied and result.summary == "unrolled %i by 2"
    assert result.new_text is not None
    assert "affine.for %i = #start(%i_tile) to min #i_end(%i_tile) step 2 {" in (
        result.new_text.decode()
    )


def test_unroll_by_a_factor_that_does_not_divide_the_tile_separates_full_tiles():
    result = run(TILED, "affine.for %k =", Spec(UNROLL, factor=3))
    assert result.applied, result.reason
    assert result.summary == (
        "unrolled %k by 3 in full tiles with a remainder loop (partial tiles run the original loop)"
    )
    assert result.new_text is not None
    assert _headers(result.new_text.decode())[2:] == [
        "affine.if affine_set<(d0) : (-d0 + 5 >= 0)>(%k_tile) {",
        "affine.for %k = affine_map<(d0) -> (d0)>(%k_tile) to affine_map<(d0) -> (d0 + 3)>"
        "(%k_tile) step 3 {",
        "affine.for %k = affine_map<(d0) -> (d0 + 3)>(%k_tile) to affine_map<(d0) -> (d0 + 4)>"
        "(%k_tile) {",
        "affine.for %k = #start(%k_tile) to min #k_end(%k_tile) {",
    ]


def test_unroll_of_a_loop_from_a_max_to_a_min_unrolls_its_full_tiles():
    after = applied(TRIANGLE_TILE, "affine.for %i =", Spec(UNROLL, factor=4))
    assert _headers(after) == [
        "affine.for %ii = 0 to 64 step 16 {",
        "affine.for %j = 0 to 64 {",
        "affine.if affine_set<(d0, d1)[s0] : (d0 - d1 >= 0, s0 - d0 - 16 >= 0)>(%ii, %j)[%n] {",
        "affine.for %i = affine_map<(d0) -> (d0)>(%ii) to affine_map<(d0) -> (d0 + 16)>(%ii) "
        "step 4 {",
        "affine.for %i = max #lower(%ii, %j) to min #upper(%ii)[%n] {",
    ]
    assert "%v_3 = affine.load %A[%i_3, %j] : memref<64x64xf32>" in after


NO_FULL_TILE = """#lower = affine_map<(d0)[s0] -> (d0, s0)>
#upper = affine_map<(d0)[s0] -> (d0 * 2 + 40, s0)>
func.func @band(%A: memref<64xf32>, %m: index, %n: index) {
  affine.for %t = 0 to 8 {
    affine.for %i = max #lower(%t)[%m] to min #upper(%t)[%n] {
      %v = affine.load %A[%i] : memref<64xf32>
      %w = arith.addf %v, %v : f32
      affine.store %w, %A[%i] : memref<64xf32>
    }
  }
  return
}
"""


def test_unroll_of_bounds_no_two_of_which_are_a_constant_apart_is_refused():
    reason = refused(NO_FULL_TILE, "affine.for %i", Spec(UNROLL, factor=2))
    assert reason == (
        "%i starts at a max of several bounds and ends at a min of bounds none of which is a "
        "constant number of iterations after one of its starts: its iterations cannot be "
        "grouped by 2"
    )


CONSTANT_APART = """func.func @window(%A: memref<64xf32>) {
  affine.for %t = 0 to 60 step 4 {
    affine.for %i = affine_map<(d0) -> (d0)>(%t) to affine_map<(d0) -> (d0 + 3)>(%t) {
      %v = affine.load %A[%i] : memref<64xf32>
      %w = arith.addf %v, %v : f32
      affine.store %w, %A[%i] : memref<64xf32>
    }
  }
  return
}
"""


def test_a_loop_whose_bounds_are_a_constant_apart_unrolls_fully():
    after = applied(CONSTANT_APART, "affine.for %i", Spec(UNROLL, factor=None))
    assert "affine.for %i" not in after
    assert "%i_3 = affine.apply affine_map<(d0) -> (d0 + 2)>(%t)" in after
    assert "%v_2 = affine.load %A[%i_3] : memref<64xf32>" in after


def test_unroll_and_jam_of_tiled_point_loops_jams_every_depth():
    after = applied(TILED, "affine.for %i =", Spec(UNROLL_JAM, factor=2))
    # the copies of %j and of %k inside it are fused: one %k loop
    assert after.count("affine.for %k =") == 1
    assert "%a_1 = affine.load %A[%i_1, %k] : memref<10x9xf32>" in after
    assert after.index("%c = affine.load %C[%i, %j]") < after.index("%c_1 = affine.load")


def test_unroll_and_jam_with_a_ragged_min_keeps_a_remainder():
    result = run(TILED, "affine.for %j =", Spec(UNROLL_JAM, factor=2))
    assert result.applied and result.summary == "unrolled and jammed %j by 2 with a remainder loop"
    assert result.new_text is not None
    after = result.new_text.decode()
    assert after.count("affine.for %k =") == 2  # jammed in the main loop, and the remainder's
    assert "%b_1 = affine.load %B[%k, %j_1] : memref<9x11xf32>" in after


def test_index_computations_alike_in_every_copy_are_written_once():
    once = applied(TILED, "affine.for %j =", Spec(UNROLL_JAM, factor=2))
    twice = applied(once, "affine.for %i =", Spec(UNROLL_JAM, factor=2))
    assert twice.count("affine.apply affine_map<(d0) -> (d0 + 1)>(%j)") == 1


# Jamming the %k copies too would run (i + 1, j, k) before (i, j, k + 1), which writes
# what it reads: the copies of %k stay one after the other.
DEEPER = """func.func @deeper(%A: memref<9x4x9xf32>) {
  affine.for %i = 1 to 9 {
    affine.for %j = 0 to 4 {
      affine.for %k = 0 to 8 {
        %v = affine.load %A[%i - 1, %j, %k + 1] : memref<9x4x9xf32>
        affine.store %v, %A[%i, %j, %k] : memref<9x4x9xf32>
      }
    }
  }
  return
}
"""


def test_unroll_and_jam_jams_one_level_where_deeper_would_break_a_dependence():
    after = applied(DEEPER, "affine.for %i", Spec(UNROLL_JAM, factor=2))
    assert after.count("affine.for %j") == 1
    assert after.count("affine.for %k") == 2


# Each copy of the second %j loop's body loads %y[%j] and stores it back: the copies
# run one after the other, not op by op.
ATAX = """func.func @atax(%A: memref<8x6xf32>, %x: memref<6xf32>, %y: memref<6xf32>,
                 %tmp: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  affine.for %i = 0 to 8 {
    affine.store %zero, %tmp[%i] : memref<8xf32>
    affine.for %j = 0 to 6 {
      %t = affine.load %tmp[%i] : memref<8xf32>
      %a = affine.load %A[%i, %j] : memref<8x6xf32>
      %xj = affine.load %x[%j] : memref<6xf32>
      %p = arith.mulf %a, %xj : f32
      %s = arith.addf %t, %p : f32
      affine.store %s, %tmp[%i] : memref<8xf32>
    }
    affine.for %j = 0 to 6 {
      %yj = affine.load %y[%j] : memref<6xf32>
      %a = affine.load %A[%i, %j] : memref<8x6xf32>
      %t = affine.load %tmp[%i] : memref<8xf32>
      %p = arith.mulf %a, %t : f32
      %s = arith.addf %yj, %p : f32
      affine.store %s, %y[%j] : memref<6xf32>
    }
  }
  return
}
"""


def test_unroll_and_jam_writes_the_copies_of_an_innermost_body_one_after_the_other():
    after = applied(ATAX, "affine.for %i", Spec(UNROLL_JAM, factor=2))
    second = after[after.rindex("affine.for %j") :]
    assert second.index("affine.store %s, %y[%j]") < second.index("%yj_1 = affine.load %y[%j]")
    # ops outside the jammed loops are written in place, copy after copy
    assert "affine.store %zero, %tmp[%i] : memref<8xf32>\n    affine.store %zero, %tmp[%i_1]" in (
        after
    )


TWO_SYMBOLS = """#both = affine_map<()[s0, s1] -> (s0, s1)>
func.func @two(%A: memref<64xf32>, %m: index, %n: index) {
  affine.for %t = 0 to 8 {
    affine.for %i = affine_map<(d0) -> (d0)>(%t) to min #both()[%m, %n] {
      %v = affine.load %A[%i] : memref<64xf32>
      affine.store %v, %A[%i] : memref<64xf32>
    }
  }
  return
}
"""


def test_unroll_before_two_ragged_bounds_is_refused():
    assert refused(TWO_SYMBOLS, "affine.for %i", Spec(UNROLL, factor=2)) == (
        "the loop ends at a min of several bounds that are not a multiple of 2 iterations "
        "from its start, and none of them is a constant number of iterations after it: its "
        "iterations cannot be grouped by 2"
    )


def test_interleaved_unroll_and_jam_writes_each_op_s_copies_side_by_side():
    # The copies update C[i, j] and C[i, j + 1]: apart, so op by op is legal.
    after = applied(MATMUL, "affine.for %j", Spec(UNROLL_JAM, factor=2, interleave=True))
    lines = [line.strip() for line in after.splitlines()]
    start = lines.index("affine.for %k = 0 to 32 {") + 1
    assert lines[start : start + 12] == [
        "%a = affine.load %A[%i, %k] : memref<64x32xf32>",
        "%a_1 = affine.load %A[%i, %k] : memref<64x32xf32>",
        "%b = affine.load %B[%k, %j] : memref<32x48xf32>",
        "%b_1 = affine.load %B[%k, %j_1] : memref<32x48xf32>",
        "%c = affine.load %C[%i, %j] : memref<64x48xf32>",
        "%c_1 = affine.load %C[%i, %j_1] : memref<64x48xf32>",
        "%p = arith.mulf %a, %b : f32",
        "%p_1 = arith.mulf %a_1, %b_1 : f32",
        "%s = arith.addf %c, %p : f32",
        "%s_1 = arith.addf %c_1, %p_1 : f32",
        "affine.store %s, %C[%i, %j] : memref<64x48xf32>",
        "affine.store %s_1, %C[%i, %j_1] : memref<64x48xf32>",
    ]


def test_interleaving_keeps_copies_that_touch_one_element_one_after_the_other():
    after = applied(ATAX, "affine.for %i", Spec(UNROLL_JAM, factor=2, interleave=True))
    # %y[%j] is updated by both copies: op by op would read it before the first update
    second = after[after.rindex("affine.for %j") :]
    assert second.index("affine.store %s, %y[%j]") < second.index("%yj_1 = affine.load %y[%j]")
    # (a plan interleaves all its innermost bodies or none: the first %j loop too)
    first = after[after.index("affine.for %j") : after.rindex("affine.for %j")]
    assert first.index("affine.store %s, %tmp[%i]") < first.index("%t_1 = affine.load")
