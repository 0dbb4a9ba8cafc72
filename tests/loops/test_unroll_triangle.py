"""Unroll-and-jam around inner loops whose bounds depend on the unrolled iv (triangles:
the copies jammed where they all run, the rest in loops of their own) or that carry a
value through iter_args (each copy's value carried), and scalar replacement in the
jammed loops. Each result is proven; the oracle tests run it too."""

from __future__ import annotations

import importlib

import pytest

from affine_lsp.ide.code_actions import prepare_loop_transforms
from affine_lsp.testing import oracle
from affine_lsp.transforms.loops import SCALAR_REPLACE, UNROLL_JAM, Spec
from affine_lsp.transforms.loops.actions import LoopOptions
from tests.ide.helpers import analysed, apply_text_edits, offset_of
from tests.loops.helpers import applied, refused, run
from tests.schedule.driver import with_main

LOWER = """func.func @kernel(%A: memref<16x16xf64>, %B: memref<16x16xf64>) {
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {
      %v = affine.load %A[%i, %j] : memref<16x16xf64>
      affine.store %v, %B[%j, %i] : memref<16x16xf64>
    }
  }
  return
}
"""

UPPER = """func.func @kernel(%A: memref<16x16xf64>, %B: memref<16x16xf64>) {
  affine.for %i = 0 to 16 {
    affine.for %j = affine_map<(d0) -> (d0)>(%i) to 16 {
      %v = affine.load %A[%i, %j] : memref<16x16xf64>
      affine.store %v, %B[%j, %i] : memref<16x16xf64>
    }
  }
  return
}
"""

# syrk's update after its (k, j) interchange: C[i, j] += A[i, k] * A[j, k] for j <= i.
SYRK = """func.func @kernel(%C: memref<12x12xf64>, %A: memref<12x10xf64>) {
  affine.for %i = 0 to 12 {
    affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {
      affine.for %k = 0 to 10 {
        %aik = affine.load %A[%i, %k] : memref<12x10xf64>
        %ajk = affine.load %A[%j, %k] : memref<12x10xf64>
        %product = arith.mulf %aik, %ajk : f64
        %c = affine.load %C[%i, %j] : memref<12x12xf64>
        %sum = arith.addf %c, %product : f64
        affine.store %sum, %C[%i, %j] : memref<12x12xf64>
      }
    }
  }
  return
}
"""

# Iteration (i, j) reads what (i - 1, j + 1) wrote: jamming i would run it first.
WAVE = """func.func @kernel(%A: memref<17x17xf64>) {
  affine.for %i = 1 to 16 {
    affine.for %j = 0 to affine_map<(d0) -> (d0)>(%i) {
      %v = affine.load %A[%i - 1, %j + 1] : memref<17x17xf64>
      affine.store %v, %A[%i, %j] : memref<17x17xf64>
    }
  }
  return
}
"""

STEP = """func.func @kernel(%A: memref<16x16xf64>) {
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) step 2 {
      %v = affine.load %A[%i, %j] : memref<16x16xf64>
      affine.store %v, %A[%j, %i] : memref<16x16xf64>
    }
  }
  return
}
"""

# gesummv's row: two sums in memory, of two arrays, carried by one loop.
TWO_SUMS = """func.func @kernel(%A: memref<8x8xf64>, %x: memref<8xf64>, %t: memref<8xf64>,
                   %y: memref<8xf64>) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 8 {
      %a = affine.load %A[%i, %j] : memref<8x8xf64>
      %xj = affine.load %x[%j] : memref<8xf64>
      %ax = arith.mulf %a, %xj : f64
      %ti = affine.load %t[%i] : memref<8xf64>
      %t_sum = arith.addf %ax, %ti : f64
      affine.store %t_sum, %t[%i] : memref<8xf64>
      %yi = affine.load %y[%i] : memref<8xf64>
      %y_sum = arith.addf %ax, %yi : f64
      affine.store %y_sum, %y[%i] : memref<8xf64>
    }
  }
  return
}
"""

# symm's column update: the k loop carries temp2; the copies of j each carry their own.
SYMM = """func.func @kernel(%C: memref<8x12xf64>, %A: memref<8x8xf64>, %B: memref<8x12xf64>) {
  %zero = arith.constant 0.0 : f64
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 12 {
      %bij = affine.load %B[%i, %j] : memref<8x12xf64>
      %temp2 = affine.for %k = 0 to affine_map<(d0) -> (d0)>(%i)
          iter_args(%sum = %zero) -> (f64) {
        %aik = affine.load %A[%i, %k] : memref<8x8xf64>
        %ckj = affine.load %C[%k, %j] : memref<8x12xf64>
        %update = arith.mulf %bij, %aik : f64
        %ckj_new = arith.addf %ckj, %update : f64
        affine.store %ckj_new, %C[%k, %j] : memref<8x12xf64>
        %bkj = affine.load %B[%k, %j] : memref<8x12xf64>
        %product = arith.mulf %bkj, %aik : f64
        %next = arith.addf %sum, %product : f64
        affine.yield %next : f64
      }
      %cij = affine.load %C[%i, %j] : memref<8x12xf64>
      %result = arith.addf %cij, %temp2 : f64
      affine.store %result, %C[%i, %j] : memref<8x12xf64>
    }
  }
  return
}
"""

TWO_CARRIED = """func.func @kernel(%A: memref<8x8xf64>, %out: memref<8x2xf64>) {
  %zero = arith.constant 0.0 : f64
  affine.for %i = 0 to 8 {
    %s, %m = affine.for %j = 0 to 8 iter_args(%a = %zero, %b = %zero) -> (f64, f64) {
      %v = affine.load %A[%i, %j] : memref<8x8xf64>
      %a2 = arith.addf %a, %v : f64
      %b2 = arith.maximumf %b, %v : f64
      affine.yield %a2, %b2 : f64, f64
    }
    affine.store %s, %out[%i, 0] : memref<8x2xf64>
    affine.store %m, %out[%i, 1] : memref<8x2xf64>
  }
  return
}
"""


def _headers(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "affine.for" in line]


def _runs_the_same(before: str, after: str) -> None:
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    verdict = oracle.equivalent(with_main(before), with_main(after))
    assert verdict.same, verdict.detail


def test_the_copies_of_a_triangle_are_jammed_where_they_all_run():
    after = applied(LOWER, "affine.for %i", Spec(UNROLL_JAM, factor=2))
    assert _headers(after) == [
        "affine.for %i = 0 to 16 step 2 {",
        "affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {",
        # copy 1's last iteration, j = i + 1: the rest of the triangle
        "affine.for %j = max affine_map<(d0) -> (0, d0 + 1)>(%i) to "
        "affine_map<(d0) -> (d0 + 2)>(%i) {",
    ]
    assert "affine.store %v_1, %B[%j, %i_1]" in after


def test_copies_that_start_later_run_their_first_iterations_before_the_jammed_loop():
    after = applied(UPPER, "affine.for %i", Spec(UNROLL_JAM, factor=3))
    assert _headers(after) == [
        "affine.for %i = 0 to 15 step 3 {",
        "affine.for %j = affine_map<(d0) -> (d0)>(%i) to "
        "min affine_map<(d0) -> (16, d0 + 2)>(%i) {",
        "affine.for %j = affine_map<(d0) -> (d0 + 1)>(%i) to "
        "min affine_map<(d0) -> (16, d0 + 2)>(%i) {",
        "affine.for %j = affine_map<(d0) -> (d0 + 2)>(%i) to 16 {",
        "affine.for %i = 15 to 16 {",  # the remainder of the unrolled loop
        "affine.for %j = affine_map<(d0) -> (d0)>(%i) to 16 {",
    ]


def test_a_triangular_unroll_and_jam_says_where_the_copies_run():
    result = run(LOWER, "affine.for %i", Spec(UNROLL_JAM, factor=2))
    assert result.summary == (
        "unrolled and jammed %i by 2; the copies of %j jammed where they all run, the rest "
        "of the triangle in loops of their own"
    )


def test_a_register_tile_of_a_triangle_composes():
    jammed = applied(SYRK, "affine.for %i", Spec(UNROLL_JAM, factor=2))
    assert "affine.for %k = 0 to 10 {" in jammed  # the copies of %k are jammed too
    tiled = applied(jammed, "affine.for %j = 0", Spec(UNROLL_JAM, factor=2))
    replaced = applied(tiled, "affine.for %k", Spec(SCALAR_REPLACE))
    assert "iter_args(%c = %c_init, %c_1 = %c_1_init, %c_2 = %c_2_init" in replaced


def test_a_triangular_unroll_and_jam_that_breaks_a_dependence_is_refused():
    assert refused(WAVE, "affine.for %i", Spec(UNROLL_JAM, factor=2)) == (
        "iteration (i, j) reads %A[i - 1, j + 1], written by iteration (i - 1, j + 1); "
        "after unroll-and-jam by 2 it would run first"
    )


def test_a_triangle_whose_inner_loop_steps_by_two_is_refused():
    assert refused(STEP, "affine.for %i", Spec(UNROLL_JAM, factor=2)) == (
        "the bounds of %j depend on %i and its step is not 1"
    )


def test_sums_of_two_arrays_are_carried_by_one_loop():
    after = applied(TWO_SUMS, "affine.for %j", Spec(SCALAR_REPLACE))
    assert "%ti_final, %yi_final = affine.for %j" in after


@pytest.mark.oracle
def test_triangles_jammed_run_the_same():
    for text, factor in ((LOWER, 2), (LOWER, 3), (UPPER, 3)):
        _runs_the_same(text, applied(text, "affine.for %i", Spec(UNROLL_JAM, factor=factor)))
    jammed = applied(SYRK, "affine.for %i", Spec(UNROLL_JAM, factor=2))
    tiled = applied(jammed, "affine.for %j = 0", Spec(UNROLL_JAM, factor=2))
    replaced = applied(tiled, "affine.for %k", Spec(SCALAR_REPLACE))
    _runs_the_same(SYRK, replaced)
    _runs_the_same(TWO_SUMS, applied(TWO_SUMS, "affine.for %j", Spec(SCALAR_REPLACE)))
    for factor in (2, 3, 4):
        _runs_the_same(SYMM, applied(SYMM, "affine.for %j", Spec(UNROLL_JAM, factor=factor)))
    _runs_the_same(TWO_CARRIED, applied(TWO_CARRIED, "affine.for %i", Spec(UNROLL_JAM, factor=2)))


def test_the_copies_of_a_loop_with_iter_args_each_carry_their_value():
    result = run(SYMM, "affine.for %j", Spec(UNROLL_JAM, factor=2))
    assert result.summary == (
        "unrolled and jammed %j by 2; each copy's values carried through %k's iter_args"
    )
    after = applied(SYMM, "affine.for %j", Spec(UNROLL_JAM, factor=2))
    assert (
        "%temp2:2 = affine.for %k = 0 to affine_map<(d0) -> (d0)>(%i)\n"
        "          iter_args(%sum = %zero, %sum_1 = %zero) -> (f64, f64) {" in after
    )
    assert "affine.store %ckj_new_1, %C[%k, %j_1]" in after  # copy 1 in the jammed %k
    assert "affine.yield %next, %next_1 : f64, f64" in after
    assert "%result = arith.addf %cij, %temp2#0 : f64" in after
    assert "%result_1 = arith.addf %cij_1, %temp2#1 : f64" in after


def test_a_jammed_loop_carrying_several_values_carries_each_copy_s():
    after = applied(TWO_CARRIED, "affine.for %i", Spec(UNROLL_JAM, factor=2))
    assert (
        "%s:4 = affine.for %j = 0 to 8 iter_args(%a = %zero, %b = %zero, %a_1 = %zero, "
        "%b_1 = %zero) -> (f64, f64, f64, f64) {" in after
    )
    assert "affine.store %s#1, %out[%i, 1]" in after  # %m of copy 0
    assert "affine.store %s#3, %out[%i_1, 1]" in after  # %m of copy 1


def test_the_code_actions_offer_unroll_and_jam_of_a_triangle_and_across_iter_args():
    for text, needle, title in (
        (LOWER, "affine.for %i", "Unroll and jam %i by 2"),
        (SYMM, "affine.for %j", "Unroll and jam %j by 2"),
    ):
        analysis = analysed(text)
        at = offset_of(analysis, needle)
        actions = prepare_loop_transforms(analysis, at, at, LoopOptions(unroll_jam_factor=2))()
        action = next(a for a in actions if a.title == title)
        assert action.disabled_reason is None
        after = apply_text_edits(analysis, action.resolve())
        assert not analysed(after).diagnostics()


BROKEN = [
    # each copy's carried value: yields swapped, a copy reading another's result
    (SYMM, "affine.for %j", "affine.yield %next, %next_1", "affine.yield %next_1, %next"),
    (SYMM, "affine.for %j", "%cij_1, %temp2#1", "%cij_1, %temp2#0"),
    (SYMM, "affine.for %j", "%sum_1 = %zero", "%sum_1 = %bij"),
    # results named one by one (`%s, %m =`) are told apart by their position
    (
        TWO_CARRIED,
        "affine.for %i",
        "affine.store %s#1, %out[%i, 1]",
        "affine.store %s#0, %out[%i, 1]",
    ),
    # the rest of the triangle: one iteration too many, or none
    (LOWER, "affine.for %i", "(d0 + 2)>(%i) {", "(d0 + 3)>(%i) {"),
    (
        LOWER,
        "affine.for %i",
        "max affine_map<(d0) -> (0, d0 + 1)>",
        "max affine_map<(d0) -> (0, d0 + 2)>",
    ),
]


@pytest.mark.parametrize(("text", "needle", "old", "new"), BROKEN)
def test_the_proof_refuses_a_wrong_jam(monkeypatch, text, needle, old, new):
    module = importlib.import_module("affine_lsp.transforms.loops.unroll")
    original = module.rewrite

    def rewrite(context, plan):
        result = original(context, plan)
        assert old in result.text, result.text
        result.text = result.text.replace(old, new, 1)
        return result

    monkeypatch.setattr(module, "rewrite", rewrite)
    result = run(text, needle, Spec(UNROLL_JAM, factor=2))
    assert not result.applied
    assert result.reason
