"""Scalar replacement: elements a loop does not move kept in registers."""

from __future__ import annotations

import importlib

from affine_lsp.transforms.loops import SCALAR_REPLACE, UNROLL, UNROLL_JAM, Spec
from tests.loops.fixtures import MATMUL, TILED
from tests.loops.helpers import applied, refused, run

REPLACE = Spec(SCALAR_REPLACE)


def test_a_reduction_in_memory_is_carried_through_the_loop():
    result = run(MATMUL, "affine.for %k", REPLACE)
    assert result.applied, result.reason
    assert result.summary == "scalar replacement: %C[%i, %j] carried through %k in registers"
    assert result.new_text is not None
    lines = [line.strip() for line in result.new_text.decode().splitlines()]
    start = lines.index("// the reduction") + 1
    assert lines[start : start + 9] == [
        "%c_init = affine.load %C[%i, %j] : memref<64x48xf32>",
        "%c_final = affine.for %k = 0 to 32 iter_args(%c = %c_init) -> (f32) {",
        "%a = affine.load %A[%i, %k] : memref<64x32xf32>",
        "%b = affine.load %B[%k, %j] : memref<32x48xf32>",
        "%p = arith.mulf %a, %b : f32",
        "%s = arith.addf %c, %p : f32",  # the same arithmetic, in the same order
        "affine.yield %s : f32",
        "}",
        "affine.store %c_final, %C[%i, %j] : memref<64x48xf32>",
    ]


def test_every_accumulator_of_an_unrolled_and_jammed_body_in_one_step():
    jammed = applied(TILED, "affine.for %j =", Spec(UNROLL_JAM, factor=2))
    jammed = applied(jammed, "affine.for %i =", Spec(UNROLL_JAM, factor=2))
    result = run(jammed, "affine.for %k =", REPLACE)
    assert result.applied, result.reason
    assert result.summary == (
        "scalar replacement: %C[%i, %j], %C[%i, %j_1], %C[%i_1, %j], %C[%i_1, %j_1] "
        "carried through %k in registers"
    )
    assert result.new_text is not None
    after = result.new_text.decode()
    assert (
        "%c_final, %c_1_final, %c_2_final, %c_3_final = affine.for %k = #start(%k_tile) to "
        "min #k_end(%k_tile) iter_args(%c = %c_init, %c_1 = %c_1_init, %c_2 = %c_2_init, "
        "%c_3 = %c_3_init) -> (f32, f32, f32, f32) {" in after
    )
    assert "affine.yield %s, %s_1, %s_2, %s_3 : f32, f32, f32, f32" in after
    assert "affine.store %c_3_final, %C[%i_1, %j_1] : memref<10x11xf32>" in after


# %x[%i] is only read in %j (loaded once before it, in each place it was loaded);
# %y[%i] is read, then written; %j already carries %acc.
MIXED = """func.func @mixed(%A: memref<8x8xf32>, %x: memref<8xf32>, %y: memref<8xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %total = affine.for %i = 0 to 8 iter_args(%t = %zero) -> (f32) {
    %r = affine.for %j = 0 to 8 iter_args(%acc = %t) -> (f32) {
      %a = affine.load %A[%i, %j] : memref<8x8xf32>
      %scale = affine.load %x[%i] : memref<8xf32>
      %yi = affine.load %y[%i] : memref<8xf32>
      %p = arith.mulf %a, %scale : f32
      %q = arith.addf %yi, %p : f32
      affine.store %q, %y[%i] : memref<8xf32>
      %acc2 = arith.addf %acc, %a : f32
      affine.yield %acc2 : f32
    }
    affine.yield %r : f32
  }
  return %total : f32
}
"""


def test_read_only_elements_are_hoisted_and_carried_values_kept():
    result = run(MIXED, "%r = affine.for", REPLACE)
    assert result.applied, result.reason
    assert result.summary == (
        "scalar replacement: %y[%i] carried through %j in registers; %x[%i] loaded once before %j"
    )
    assert result.new_text is not None
    lines = [line.strip() for line in result.new_text.decode().splitlines()]
    start = lines.index("%scale = affine.load %x[%i] : memref<8xf32>")
    assert lines[start : start + 10] == [
        "%scale = affine.load %x[%i] : memref<8xf32>",
        "%yi_init = affine.load %y[%i] : memref<8xf32>",
        "%r, %yi_final = affine.for %j = 0 to 8 iter_args(%acc = %t, %yi = %yi_init) -> "
        "(f32, f32) {",
        "%a = affine.load %A[%i, %j] : memref<8x8xf32>",
        "%p = arith.mulf %a, %scale : f32",
        "%q = arith.addf %yi, %p : f32",
        "%acc2 = arith.addf %acc, %a : f32",
        "affine.yield %acc2, %q : f32, f32",
        "}",
        "affine.store %yi_final, %y[%i] : memref<8xf32>",
    ]


def test_unroll_of_a_loop_after_scalar_replacement():
    replaced = applied(TILED, "affine.for %k =", REPLACE)
    after = applied(replaced, "%c_final = affine.for %k", Spec(UNROLL, factor=2))
    assert "%s_1 = arith.addf %s, %p_1 : f32" in after  # the chain of the accumulator


ALIASED = """func.func @alias(%C: memref<8x8xf32>, %A: memref<8x8xf32>) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 8 {
      affine.for %k = 0 to 8 {
        %a = affine.load %A[%i, %k] : memref<8x8xf32>
        %c = affine.load %C[%i, %j] : memref<8x8xf32>
        %s = arith.addf %c, %a : f32
        affine.store %s, %C[%i, %j] : memref<8x8xf32>
        affine.store %a, %C[%k, %j] : memref<8x8xf32>
      }
    }
  }
  return
}
"""


def test_an_element_another_access_may_touch_stays_in_memory():
    reason = refused(ALIASED, "affine.for %k", REPLACE)
    assert reason == "%C[%i, %j] may also be written as %C[%k, %j] in %k's body"


def test_the_proof_refuses_an_element_another_access_touches():
    # Without the plan's check the rewrite is written, and its proof refuses it.
    result = run(ALIASED, "affine.for %k", REPLACE, check=False)
    assert not result.applied
    assert result.reason == (
        "cannot analyse the loop: another access in the loop may touch a promoted element"
    )


MAY_NOT_RUN = """func.func @maybe(%C: memref<8xf32>, %A: memref<8x8xf32>, %m: index) {
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to %m {
      %a = affine.load %A[%i, %k] : memref<8x8xf32>
      %c = affine.load %C[%i] : memref<8xf32>
      %s = arith.addf %c, %a : f32
      affine.store %s, %C[%i] : memref<8xf32>
    }
  }
  return
}
"""


def test_a_loop_that_may_not_run_is_replaced_where_it_runs():
    result = run(MAY_NOT_RUN, "affine.for %k", REPLACE)
    assert result.applied, result.reason
    assert result.summary == (
        "scalar replacement: %C[%i] carried through %k in registers (where %k runs at all)"
    )
    assert result.new_text is not None
    lines = [line.strip() for line in result.new_text.decode().splitlines()]
    start = lines.index("affine.if affine_set<()[s0] : (s0 - 1 >= 0)>()[%m] {")
    assert lines[start + 1 : start + 3] == [
        "%c_init = affine.load %C[%i] : memref<8xf32>",
        "%c_final = affine.for %k = 0 to %m iter_args(%c = %c_init) -> (f32) {",
    ]
    assert lines[start + 7 : start + 9] == ["affine.store %c_final, %C[%i] : memref<8xf32>", "}"]


def test_a_loop_without_invariant_accesses_is_refused():
    assert refused(MATMUL, "affine.for %i", REPLACE) == (
        "no access in %i's body is to an element %i does not move, nor read again by its "
        "next iterations"
    )


WRITTEN_TWICE = """func.func @twice(%C: memref<8xf32>, %A: memref<8x8xf32>) {
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 8 {
      %a = affine.load %A[%i, %k] : memref<8x8xf32>
      %c = affine.load %C[%i] : memref<8xf32>
      %s = arith.addf %c, %a : f32
      affine.store %s, %C[%i] : memref<8xf32>
      affine.store %a, %C[%i] : memref<8xf32>
    }
  }
  return
}
"""


def test_a_store_the_same_iteration_overwrites_is_dropped():
    # The first store goes; %C[%i] is then read once and written once: carried, in the
    # same step.
    result = run(WRITTEN_TWICE, "affine.for %k", REPLACE)
    assert result.applied, result.reason
    assert result.summary == (
        "scalar replacement: %C[%i] kept in registers within each iteration of %k "
        "(0 loads and 1 store fewer); %C[%i] carried through %k in registers"
    )
    assert result.new_text is not None
    after = result.new_text.decode()
    assert "affine.store %s" not in after
    assert "affine.yield %a : f32" in after
    assert "affine.store %c_final, %C[%i] : memref<8xf32>" in after


READ_TWICE = """func.func @twice(%C: memref<8xf32>, %A: memref<8x8xf32>) {
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 8 {
      %a = affine.load %A[%i, %k] : memref<8x8xf32>
      %c = affine.load %C[%i] : memref<8xf32>
      %d = affine.load %C[%i] : memref<8xf32>
      %s = arith.addf %c, %d : f32
      %t = arith.addf %s, %a : f32
      affine.store %t, %C[%i] : memref<8xf32>
    }
  }
  return
}
"""


def test_an_element_read_twice_then_written_stays_in_memory():
    assert refused(READ_TWICE, "affine.for %k", REPLACE) == (
        "%C[%i] is accessed in %k's body other than read once, then written once"
    )


# gemm's k jammed by 2 into the j loop: each copy loads and stores %C[%i, %j].
JAMMED = """func.func @jammed(%C: memref<8x16xf64>, %A: memref<8x16xf64>, %B: memref<8x16xf64>) {
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 8 step 2 {
      %k_1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%k)
      affine.for %j = 0 to 16 {
        %a = affine.load %A[%k, %j] : memref<8x16xf64>
        %b = affine.load %B[%k, %j] : memref<8x16xf64>
        %p = arith.mulf %a, %b : f64
        %c = affine.load %C[%i, %j] : memref<8x16xf64>
        %s = arith.addf %c, %p : f64
        affine.store %s, %C[%i, %j] : memref<8x16xf64>
        %next = affine.load %C[%i + 1, %j] : memref<8x16xf64>
        affine.store %next, %A[%i, %j] : memref<8x16xf64>
        %a_1 = affine.load %A[%k_1, %j] : memref<8x16xf64>
        %b_1 = affine.load %B[%k_1, %j] : memref<8x16xf64>
        %p_1 = arith.mulf %a_1, %b_1 : f64
        %c_1 = affine.load %C[%i, %j] : memref<8x16xf64>
        %s_1 = arith.addf %c_1, %p_1 : f64
        affine.store %s_1, %C[%i, %j] : memref<8x16xf64>
      }
    }
  }
  return
}
"""


STORE_NEXT = "affine.store %next, %A[%i, %j] : memref<8x16xf64>"


def test_an_element_stored_then_loaded_in_one_iteration_stays_in_a_register():
    result = run(JAMMED, "affine.for %j", REPLACE)
    assert result.applied, result.reason
    assert result.summary == (
        "scalar replacement: %C[%i, %j] kept in registers within each iteration of %j "
        "(1 load and 1 store fewer)"
    )
    assert result.new_text is not None
    lines = [line.strip() for line in result.new_text.decode().splitlines()]
    start = lines.index("affine.for %j = 0 to 16 {") + 1
    assert lines[start : start + 12] == [
        "%a = affine.load %A[%k, %j] : memref<8x16xf64>",
        "%b = affine.load %B[%k, %j] : memref<8x16xf64>",
        "%p = arith.mulf %a, %b : f64",
        "%c = affine.load %C[%i, %j] : memref<8x16xf64>",
        "%s = arith.addf %c, %p : f64",  # its store is overwritten below: dropped
        "%next = affine.load %C[%i + 1, %j] : memref<8x16xf64>",  # another row
        "affine.store %next, %A[%i, %j] : memref<8x16xf64>",  # another memref
        "%a_1 = affine.load %A[%k_1, %j] : memref<8x16xf64>",
        "%b_1 = affine.load %B[%k_1, %j] : memref<8x16xf64>",
        "%p_1 = arith.mulf %a_1, %b_1 : f64",
        "%s_1 = arith.addf %s, %p_1 : f64",  # the value stored above, not a load
        "affine.store %s_1, %C[%i, %j] : memref<8x16xf64>",
    ]


def test_an_access_that_may_touch_the_element_keeps_it_in_memory():
    # %C[%k, %j] is row %i where %k = %i: the load after it must read memory, and the
    # store before it stays (%C[%k, %j] may read it).
    text = JAMMED.replace(
        "%next = affine.load %C[%i + 1, %j]", "%next = affine.load %C[%k, %j]"
    ).replace(STORE_NEXT, "affine.store %next, %C[%k, %j] : memref<8x16xf64>")
    assert refused(text, "affine.for %j", REPLACE) == (
        "no access in %j's body is to an element %j does not move, nor read again by its "
        "next iterations"
    )


def test_the_proof_refuses_forwarding_past_a_store_to_the_element():
    # Without the plan's check the load is forwarded past %C[%k, %j] (row %i when
    # %k = %i), and the proof refuses it.
    text = JAMMED.replace(STORE_NEXT, "affine.store %next, %C[%k, %j] : memref<8x16xf64>")
    result = run(text, "affine.for %j", REPLACE, check=False)
    assert not result.applied
    assert result.reason is not None
    assert "does not hold what %c_1 held" in result.reason


def test_the_proof_refuses_a_forwarded_value_of_another_element(monkeypatch):
    wrongs = (
        ("%s_1 = arith.addf %s, %p_1", "%s_1 = arith.addf %p, %p_1"),  # another value
        ("%s_1 = arith.addf %s, %p_1", "%s_1 = arith.addf %next, %p_1"),  # another row
        ("%s_1 = arith.addf %s, %p_1", "%s_1 = arith.addf %c, %p_1"),  # before the store
    )
    _each_wrong_rewrite_refused(monkeypatch, "_rewrite_forwards", JAMMED, "affine.for %j", wrongs)


def _each_wrong_rewrite_refused(monkeypatch, writer: str, text: str, needle: str, wrongs) -> None:
    """Each (old, new) of `wrongs` made to the text scalar_replace's `writer` writes for
    the loop at `needle`: the proof refuses every one."""
    # (the module: the package's function of that name is shadowed once it is imported)
    scalar_replace = importlib.import_module("affine_lsp.transforms.loops.scalar_replace")
    written = getattr(scalar_replace, writer)
    for wrong in wrongs:

        def rewrite(context, plan, wrong=wrong):
            found = written(context, plan)
            assert wrong[0] in found.text
            found.text = found.text.replace(wrong[0], wrong[1], 1)
            return found

        monkeypatch.setattr(scalar_replace, writer, rewrite)
        result = run(text, needle, REPLACE)
        assert not result.applied, wrong


TWO_READS = """func.func @twice(%A: memref<8x8xf32>, %w: memref<8xf32>, %out: memref<8x8xf32>) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 8 {
      %a = affine.load %A[%i, %j] : memref<8x8xf32>
      %w1 = affine.load %w[%i] : memref<8xf32>
      %p = arith.mulf %a, %w1 : f32
      %w2 = affine.load %w[%i] : memref<8xf32>
      %q = arith.addf %p, %w2 : f32
      affine.store %q, %out[%i, %j] : memref<8x8xf32>
    }
  }
  return
}
"""


def test_the_loads_of_an_element_only_read_become_one_load():
    result = run(TWO_READS, "affine.for %j", REPLACE)
    assert result.applied, result.reason
    assert result.summary == "scalar replacement: %w[%i] loaded once before %j"
    assert result.new_text is not None
    after = result.new_text.decode()
    assert after.count("affine.load %w[%i]") == 1
    assert "%w1 = affine.load %w[%i] : memref<8xf32>\n    affine.for %j" in after
    assert "%q = arith.addf %p, %w1 : f32" in after


def test_the_proof_refuses_one_load_standing_for_another_element():
    text = TWO_READS.replace("%w2 = affine.load %w[%i]", "%w2 = affine.load %w[%j]")
    # %w[%j] moves with %j: only %w[%i] is replaced, and %w2 stays
    after = applied(text, "affine.for %j", REPLACE)
    assert "%w2 = affine.load %w[%j] : memref<8xf32>" in after


# Another store of the same memref could touch the element only for values of %i the
# loop around never takes (row %i + 2 is never row 2): the proof knows %i's range
# as the plan does (it refused: "another access in the loop may touch a promoted
# element").
APART_FOR_THESE_ROWS = """func.func @rows(%A: memref<8x8xi32>, %B: memref<8x8xi32>) {
  affine.for %i = 2 to 6 {
    affine.for %j = affine_map<(d0) -> (d0)>(%i) to 7 step 2 {
      %x = affine.load %B[%j, %i] : memref<8x8xi32>
      affine.store %x, %A[%i + 2, %j - 1] : memref<8x8xi32>
      %a = affine.load %A[2, %i + 1] : memref<8x8xi32>
      %m = arith.minsi %a, %x : i32
      affine.store %m, %A[2, %i + 1] : memref<8x8xi32>
    }
  }
  return
}
"""


def test_an_element_apart_from_the_other_accesses_for_the_outer_ivs_is_replaced():
    after = applied(APART_FOR_THESE_ROWS, "affine.for %j", REPLACE)
    assert "%a_init = affine.load %A[2, %i + 1] : memref<8x8xi32>" in after
    assert "affine.store %a_final, %A[2, %i + 1] : memref<8x8xi32>" in after
    # where the rows meet (%i from 0), the element stays in memory
    meeting = APART_FOR_THESE_ROWS.replace("affine.for %i = 2 to 6", "affine.for %i = 0 to 6")
    assert "may also be written" in refused(meeting, "affine.for %j", REPLACE)


# Two reductions of one row (gesummv's %tmp[%i] and %y[%i]): two arrays of the same type.
TWO_SUMS = """func.func @two(%A: memref<8x8xf64>, %B: memref<8x8xf64>, %x: memref<8xf64>,
                %tmp: memref<8xf64>, %y: memref<8xf64>) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 8 {
      %a = affine.load %A[%i, %j] : memref<8x8xf64>
      %xj = affine.load %x[%j] : memref<8xf64>
      %ax = arith.mulf %a, %xj : f64
      %t = affine.load %tmp[%i] : memref<8xf64>
      %t_sum = arith.addf %ax, %t : f64
      affine.store %t_sum, %tmp[%i] : memref<8xf64>
      %b = affine.load %B[%i, %j] : memref<8x8xf64>
      %bx = arith.mulf %b, %xj : f64
      %yi = affine.load %y[%i] : memref<8xf64>
      %y_sum = arith.addf %bx, %yi : f64
      affine.store %y_sum, %y[%i] : memref<8xf64>
    }
  }
  return
}
"""


def test_two_reductions_of_two_arrays_are_carried_together():
    result = run(TWO_SUMS, "affine.for %j", REPLACE)
    assert result.applied, result.reason
    assert result.summary == "scalar replacement: %tmp[%i], %y[%i] carried through %j in registers"


# One sweep of a 3-point stencil: each element of %A is read by three iterations.
SWEEP = """func.func @sweep(%A: memref<66xf64>, %B: memref<66xf64>, %n: index) {
  %third = arith.constant 0.33333 : f64
  affine.for %t = 0 to 8 {
    affine.for %i = affine_map<(d0) -> (d0 + 1)>(%t) to 65 {
      %left = affine.load %A[%i - 1] : memref<66xf64>
      %centre = affine.load %A[%i] : memref<66xf64>
      %right = affine.load %A[%i + 1] : memref<66xf64>
      %sum1 = arith.addf %left, %centre : f64
      %sum2 = arith.addf %sum1, %right : f64
      %value = arith.mulf %third, %sum2 : f64
      affine.store %value, %B[%i] : memref<66xf64>
    }
  }
  return
}
"""


def test_elements_the_next_iterations_read_again_are_carried_to_them():
    result = run(SWEEP, "affine.for %i", REPLACE)
    assert result.applied, result.reason
    assert result.summary == (
        "scalar replacement: %A[%i - 1], %A[%i] carried to the next iterations of %i in "
        "registers (loaded once as %A[%i + 1])"
    )
    assert result.new_text is not None
    lines = [line.strip() for line in result.new_text.decode().splitlines()]
    start = lines.index("affine.for %t = 0 to 8 {") + 1
    assert lines[start : start + 12] == [
        "%i_first = affine.apply affine_map<(d0) -> (d0 + 1)>(%t)",
        "%left_init = affine.load %A[%i_first - 1] : memref<66xf64>",
        "%centre_init = affine.load %A[%i_first] : memref<66xf64>",
        "%left_last, %centre_last = affine.for %i = affine_map<(d0) -> (d0 + 1)>(%t) to 65 "
        "iter_args(%left = %left_init, %centre = %centre_init) -> (f64, f64) {",
        "%right = affine.load %A[%i + 1] : memref<66xf64>",
        "%sum1 = arith.addf %left, %centre : f64",  # the same arithmetic, in the same order
        "%sum2 = arith.addf %sum1, %right : f64",
        "%value = arith.mulf %third, %sum2 : f64",
        "affine.store %value, %B[%i] : memref<66xf64>",
        "affine.yield %centre, %right : f64, f64",
        "}",
        "}",
    ]


def test_a_loop_that_may_not_run_carries_its_reuse_where_it_runs():
    text = SWEEP.replace("to 65 {", "to %n {")
    after = applied(text, "affine.for %i", REPLACE)
    assert "affine.if affine_set<(d0)[s0] : (s0 - d0 - 2 >= 0)>(%t)[%n] {" in after
    assert "%i_first = affine.apply affine_map<(d0) -> (d0 + 1)>(%t)" in after


def test_a_loop_whose_lower_bound_is_a_max_is_written_once_per_expression():
    text = SWEEP.replace("affine_map<(d0) -> (d0 + 1)>(%t)", "max affine_map<(d0) -> (d0, 3)>(%t)")
    result = run(text, "affine.for %i", REPLACE)
    assert result.applied, result.reason
    assert result.new_text is not None
    lines = [line.strip() for line in result.new_text.decode().splitlines()]
    start = lines.index("affine.if affine_set<(d0) : (d0 - 3 >= 0)>(%t) {")
    assert lines[start + 1 : start + 5] == [
        "%i_first = affine.apply affine_map<(d0) -> (d0)>(%t)",
        "%left_init = affine.load %A[%i_first - 1] : memref<66xf64>",
        "%centre_init = affine.load %A[%i_first] : memref<66xf64>",
        "%left_last, %centre_last = affine.for %i = affine_map<(d0) -> (d0)>(%t) to 65 "
        "iter_args(%left = %left_init, "
        "%centre = %centre_init) -> (f64, f64) {",
    ]
    assert lines[start + 12 : start + 17] == [
        "} else {",
        "%i_first_1 = arith.constant 3 : index",
        "%left_init_1 = affine.load %A[%i_first_1 - 1] : memref<66xf64>",
        "%centre_init_1 = affine.load %A[%i_first_1] : memref<66xf64>",
        "%left_last_1, %centre_last_1 = affine.for %i = 3 to 65 iter_args(%left = "
        "%left_init_1, %centre = %centre_init_1) -> (f64, f64) {",
    ]


IN_PLACE = SWEEP.replace("%B[%i]", "%A[%i]")


def test_elements_the_loop_writes_are_not_carried():
    assert refused(IN_PLACE, "affine.for %i", REPLACE) == (
        "%A[%i - 1] may also be written as %A[%i] in %i's body"
    )


def test_the_proof_refuses_carrying_elements_the_loop_writes():
    result = run(IN_PLACE, "affine.for %i", REPLACE, check=False)
    assert not result.applied
    assert result.reason == (
        "cannot analyse the loop: a write in the loop may touch a rotating element"
    )


def test_the_proof_refuses_a_carried_reuse_that_holds_other_elements(monkeypatch):
    wrongs = (
        ("affine.yield %centre, %right", "affine.yield %right, %centre"),  # the order
        ("affine.yield %centre, %right", "affine.yield %left, %right"),  # one held twice
        ("%A[%i_first - 1]", "%A[%i_first + 1]"),  # another first element
        ("(d0) -> (d0 + 1)>(%t)\n", "(d0) -> (d0 + 2)>(%t)\n"),  # another first iteration
        (
            "iter_args(%left = %left_init, %centre = %centre_init)",
            "iter_args(%left = %centre_init, %centre = %left_init)",
        ),
        ("%right = affine.load %A[%i + 1]", "%right = affine.load %A[%i + 2]"),
    )
    _each_wrong_rewrite_refused(monkeypatch, "_rewrite_reuses", SWEEP, "affine.for %i", wrongs)


# bicg's i jammed by 2: %s[%j] is updated by both copies (kept in a register within an
# iteration), %q[%i] and %q[%i_1] are sums %j does not move (carried through it), %r[%i]
# and %r[%i_1] only read (loaded before it): all in one step.
BICG_JAMMED = """func.func @bicg(%A: memref<8x6xf64>, %s: memref<6xf64>, %q: memref<8xf64>,
                 %p: memref<6xf64>, %r: memref<8xf64>) {
  affine.for %i = 0 to 8 step 2 {
    %i_1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    affine.for %j = 0 to 6 {
      %sj = affine.load %s[%j] : memref<6xf64>
      %ri = affine.load %r[%i] : memref<8xf64>
      %a = affine.load %A[%i, %j] : memref<8x6xf64>
      %ra = arith.mulf %ri, %a : f64
      %s_sum = arith.addf %sj, %ra : f64
      affine.store %s_sum, %s[%j] : memref<6xf64>
      %qi = affine.load %q[%i] : memref<8xf64>
      %pj = affine.load %p[%j] : memref<6xf64>
      %ap = arith.mulf %a, %pj : f64
      %q_sum = arith.addf %qi, %ap : f64
      affine.store %q_sum, %q[%i] : memref<8xf64>
      %sj_1 = affine.load %s[%j] : memref<6xf64>
      %ri_1 = affine.load %r[%i_1] : memref<8xf64>
      %a_1 = affine.load %A[%i_1, %j] : memref<8x6xf64>
      %ra_1 = arith.mulf %ri_1, %a_1 : f64
      %s_sum_1 = arith.addf %sj_1, %ra_1 : f64
      affine.store %s_sum_1, %s[%j] : memref<6xf64>
      %qi_1 = affine.load %q[%i_1] : memref<8xf64>
      %pj_1 = affine.load %p[%j] : memref<6xf64>
      %ap_1 = arith.mulf %a_1, %pj_1 : f64
      %q_sum_1 = arith.addf %qi_1, %ap_1 : f64
      affine.store %q_sum_1, %q[%i_1] : memref<8xf64>
    }
  }
  return
}
"""


def test_within_iterations_and_invariant_elements_in_one_step():
    result = run(BICG_JAMMED, "affine.for %j", REPLACE)
    assert result.applied, result.reason
    assert result.summary == (
        "scalar replacement: %s[%j] kept in registers within each iteration of %j "
        "(1 load and 1 store fewer); %q[%i], %q[%i_1] carried through %j in registers; "
        "%r[%i], %r[%i_1] loaded once before %j"
    )
    assert result.new_text is not None
    after = result.new_text.decode()
    assert after.count("affine.load %s[%j]") == 1
    assert after.count("affine.store %s_sum") == 1
    assert "%s_sum_1 = arith.addf %s_sum, %ra_1 : f64" in after
    assert "affine.yield %q_sum, %q_sum_1 : f64, f64" in after
