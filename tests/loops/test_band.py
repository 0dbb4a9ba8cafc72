"""Interchange, permute, tile and skew of perfect bands."""

from __future__ import annotations

from affine_lsp.transforms.loops import INTERCHANGE, PERMUTE, SKEW, TILE, Spec
from tests.loops.fixtures import MATMUL, STENCIL, TRIANGLE
from tests.loops.helpers import applied, changed_lines, refused, run


def test_interchange_swaps_the_headers_and_keeps_everything_else():
    after = applied(MATMUL, "affine.for %i", Spec(INTERCHANGE))
    removed, added = changed_lines(MATMUL, after)
    assert removed == {"  affine.for %i = 0 to %n {", "    affine.for %j = 0 to 48 {"}
    assert added == {"  affine.for %j = 0 to 48 {", "    affine.for %i = 0 to %n {"}
    assert "      // the reduction" in after and after.startswith("// C += A * B")


def test_interchange_in_the_stencil_names_the_dependence_and_a_skew():
    reason = refused(STENCIL, "affine.for %i", Spec(INTERCHANGE))
    assert reason == (
        "iteration (i, j) reads %A[i - 1, j + 1], written by iteration (i - 1, j + 1); "
        "after interchange it would run first; skew %j by 1 first"
    )
    assert run(STENCIL, "affine.for %i", Spec(INTERCHANGE)).hint == Spec(INTERCHANGE, skew=1)


def test_skewed_interchange_of_the_stencil_is_proven():
    after = applied(STENCIL, "affine.for %i", Spec(INTERCHANGE, skew=1))
    assert "affine.for %j_skew = 1 to 18 {" in after
    assert (
        "affine.for %i = max affine_map<(d0) -> (1, d0 - 8)>(%j_skew) to "
        "min affine_map<(d0) -> (10, d0 + 1)>(%j_skew) {"
    ) in after
    # The band stays perfect: the old iv is substituted into the subscripts.
    assert "affine.apply" not in after
    assert "%v = affine.load %A[%i - 1, %j_skew - %i + 1] : memref<10x10xf32>" in after
    assert "affine.store %w, %A[%i, %j_skew - %i] : memref<10x10xf32>" in after


def test_permute_a_three_deep_band():
    after = applied(MATMUL, "affine.for %i", Spec(PERMUTE, permutation=(1, 2, 0)))
    headers = [line.strip() for line in after.splitlines() if "affine.for" in line]
    assert headers == [
        "affine.for %k = 0 to 32 {",
        "affine.for %i = 0 to %n {",
        "affine.for %j = 0 to 48 {",
    ]
    assert "nothing to do" in refused(MATMUL, "affine.for %i", Spec(PERMUTE, permutation=(0, 1)))


def test_interchange_of_a_triangle_computes_new_bounds():
    after = applied(TRIANGLE, "affine.for %i", Spec(INTERCHANGE))
    headers = [line.strip() for line in after.splitlines() if "affine.for" in line]
    assert headers == [
        "affine.for %j = 0 to 16 {",
        "affine.for %i = affine_map<(d0) -> (d0)>(%j) to 16 {",
    ]


def test_tile_a_rectangular_band_with_partial_and_symbolic_tiles():
    after = applied(MATMUL, "affine.for %i", Spec(TILE, sizes=(32, 32)))
    assert "affine.for %i_tile = 0 to %n step 32 {" in after
    assert "affine.for %j_tile = 0 to 48 step 32 {" in after
    assert (
        "affine.for %i = affine_map<(d0) -> (d0)>(%i_tile) to "
        "min affine_map<(d0)[s0] -> (d0 + 32, s0)>(%i_tile)[%n] {"
    ) in after
    assert "min affine_map<(d0) -> (d0 + 32, 48)>(%j_tile)" in after
    assert "// the reduction" in after  # the body is copied, comments included


def test_tile_of_the_stencil_is_refused_and_skew_then_tile_is_proven():
    reason = refused(STENCIL, "affine.for %i", Spec(TILE, sizes=(4, 4)))
    assert "after tiling 4×4 it would run first; skew %j by 1 first" in reason
    after = applied(STENCIL, "affine.for %i", Spec(TILE, sizes=(4, 4), skew=1))
    assert "affine.for %i_tile = 0 to 10 step 4 {" in after
    assert "%j_skew_tile" not in after and "%j_tile" in after


def test_tiles_larger_than_the_iteration_space_are_legal():
    assert run(STENCIL, "affine.for %i", Spec(TILE, sizes=(32, 32))).applied


def test_skew_alone_is_always_legal():
    after = applied(STENCIL, "affine.for %i", Spec(SKEW, factor=2))
    assert (
        "affine.for %j_skew = affine_map<(d0) -> (d0 * 2)>(%i) to "
        "affine_map<(d0) -> (d0 * 2 + 9)>(%i) {"
    ) in after


def test_a_negative_skew_makes_a_tile_point_loop_count_from_zero():
    # MATMUL's i tiled by 16: the point loop skewed by -1 x the tile loop runs from 0
    # (to 16, or what is left of %n), its subscripts i_tile + i_skew.
    tiled = applied(MATMUL, "affine.for %i", Spec(TILE, sizes=(16,)))
    skewed = applied(tiled, "affine.for %i_tile", Spec(SKEW, factor=-1))
    assert (
        "affine.for %i_skew = 0 to min affine_map<(d0)[s0] -> (16, s0 - d0)>(%i_tile)[%n] {"
    ) in skewed
    assert "%A[%i_tile + %i_skew, %k]" in skewed
    assert "all 0" in refused(STENCIL, "affine.for %i", Spec(SKEW, factor=0))


def test_band_refusals_say_why():
    assert "no loop is nested directly in %k" in refused(MATMUL, "affine.for %k", Spec(INTERCHANGE))
    assert "3 tile sizes for 2 nested loops from %i" in refused(
        STENCIL, "affine.for %i", Spec(TILE, sizes=(2, 2, 2))
    )


def test_a_loop_written_on_one_line_is_refused_not_mangled():
    text = STENCIL.replace(
        "    affine.for %j = 0 to 9 {\n      %v", "    affine.for %j = 0 to 9 { %v"
    ).replace("memref<10x10xf32>\n    }\n  }", "memref<10x10xf32> }\n  }")
    assert "its header line" in refused(text, "affine.for %i", Spec(INTERCHANGE))


# A legal tiling whose proof needs isl's dataflow checked: over the tiled code, isl's
# compute_flow (and its lexmax) gives the read of `%B0[2, %i]` at the first `%j` of the
# third `%j` tile the write of the first tile's last `%j`, not the second tile's (found
# by benchmarks/transforms_differential.py, seed 1; islpy 2025.2.5 and 2026.2.2). The
# check of poly/dataflow.py rejects that answer and takes the lexmax over the relation
# coalesced, which passes it (tests/poly/test_dataflow.py).
REDUCE_INTO_ROW = """func.func @kernel(%B0: memref<8x8xf32>, %B1: memref<8x8xf32>, %n: index) {
  affine.for %i = 2 to 8 {
    affine.for %j = 2 to %n step 2 {
      %x1 = affine.load %B1[%i - 1, %j] : memref<8x8xf32>
      %a2 = affine.load %B0[2, %i] : memref<8x8xf32>
      %v3 = arith.maximumf %a2, %x1 : f32
      affine.store %v3, %B0[2, %i] : memref<8x8xf32>
    }
  }
  return
}
"""


def test_tiling_a_strided_reduction_with_a_symbolic_bound_is_proven():
    after = applied(REDUCE_INTO_ROW, "affine.for %i", Spec(TILE, sizes=(3, 3)))
    assert "affine.for %i_tile = 2 to 8 step 3 {" in after
    assert "affine.for %j_tile = 2 to %n step 6 {" in after
