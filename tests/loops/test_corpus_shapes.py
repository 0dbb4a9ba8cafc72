"""Programs in the shapes where every transformation tried at every loop of real-world
MLIR ended in a refusal about our own output or an error exit: each is now applied
and proven, or refused in words about the user's code."""

from __future__ import annotations

import importlib

from affine_lsp.cli import main
from affine_lsp.transforms.loops import (
    DISTRIBUTE,
    PARALLELIZE,
    TILE,
    UNROLL,
    UNROLL_JAM,
    Spec,
)
from tests.loops.helpers import applied, refused

# A function inside an explicit module, using one of the module's globals: the proof's
# re-parse of the function alone lost the global ("'table' does not reference a valid
# global memref").
IN_MODULE = """module {
  memref.global "private" constant @table : memref<4xi16> = dense<[1, 2, 3, 4]>
  func.func @fill() -> memref<8x4xi8> {
    %t = memref.get_global @table : memref<4xi16>
    %c7 = arith.constant 7 : i8
    %out = memref.alloc() : memref<8x4xi8>
    affine.for %i = 0 to 8 {
      affine.for %j = 0 to 4 {
        affine.store %c7, %out[%i, %j] : memref<8x4xi8>
      }
    }
    return %out : memref<8x4xi8>
  }
}
"""


def test_a_function_in_a_module_with_globals_is_transformed():
    after = applied(IN_MODULE, "affine.for %i", Spec(UNROLL, factor=2))
    assert "affine.for %i = 0 to 8 step 2 {" in after
    assert "affine.for %j_1 = 0 to 4 {" in after
    assert "affine.for %i_tile" in applied(IN_MODULE, "affine.for %i", Spec(TILE, sizes=(4, 2)))


# The second part uses a value the first part's memref.load defines, through a pure op:
# the rewrite left it undefined ("use of undeclared SSA value name '%c'").
LOAD_USED_LATER = """func.func @split(%A: memref<8xf32>, %B: memref<8xf32>, %C: memref<8xi32>) {
  affine.for %i = 0 to 8 {
    %c = memref.load %C[%i] : memref<8xi32>
    %v = affine.load %A[%i] : memref<8xf32>
    affine.store %v, %B[%i] : memref<8xf32>
    %x = arith.sitofp %c : i32 to f32
    affine.store %x, %A[%i] : memref<8xf32>
  }
  return
}
"""


def test_distribute_keeps_what_a_part_uses_with_it():
    after = applied(LOAD_USED_LATER, "affine.for %i", Spec(DISTRIBUTE))
    second = after[after.rindex("affine.for %i") :]
    assert "%c = memref.load %C[%i] : memref<8xi32>" in second
    assert "%x = arith.sitofp %c : i32 to f32" in second


# The second part's affine.if takes a value the first part computes: the value goes
# with the part that uses it.
CONDITION_USED_LATER = """func.func @guard(%A: memref<9xf32>, %B: memref<9xf32>) {
  affine.for %i = 0 to 8 {
    %c = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %v = affine.load %A[%i] : memref<9xf32>
    affine.store %v, %B[%i] : memref<9xf32>
    affine.if affine_set<(d0) : (d0 - 4 >= 0)>(%c) {
      %w = affine.load %B[%c] : memref<9xf32>
      affine.store %w, %A[%c] : memref<9xf32>
    }
  }
  return
}
"""


def test_distribute_keeps_an_affine_if_with_the_value_of_its_condition():
    after = applied(CONDITION_USED_LATER, "affine.for %i", Spec(DISTRIBUTE))
    # the guarded copy writes %A[i + 1] before the next iteration reads it: it runs first
    first, second = after.split("  affine.for %i = 0 to 8 {")[1:]
    assert "%c = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)" in first
    assert "affine.if affine_set<(d0) : (d0 - 4 >= 0)>(%c) {" in first
    assert "affine.store %v, %B[%i] : memref<9xf32>" in second and "%c" not in second


# A loop in the generic form: the unrolled text did not parse.
GENERIC = """#zero = affine_map<() -> (0)>
#eight = affine_map<() -> (8)>
func.func @g(%A: memref<8xf32>) {
  "affine.for"() <{lowerBoundMap = #zero, operandSegmentSizes = array<i32: 0, 0, 0>,
                   step = 1 : index, upperBoundMap = #eight}> ({
  ^bb0(%i: index):
    %v = affine.load %A[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    affine.store %w, %A[%i] : memref<8xf32>
    "affine.yield"() : () -> ()
  }) : () -> ()
  return
}
"""


def test_a_generic_form_loop_is_refused_where_its_header_would_be_rewritten():
    for spec in (Spec(UNROLL, factor=2), Spec(TILE, sizes=(2,))):
        assert refused(GENERIC, '"affine.for"', spec) == (
            '%i is written in the generic form ("affine.for"(...)): its header can be '
            "rewritten only in the custom form (affine.for %i = ... to ... { ... })"
        )
    # what writes no header of its own still applies
    assert "affine.parallel (%i) = (0) to (8) {" in applied(
        GENERIC, '"affine.for"', Spec(PARALLELIZE)
    )
    assert '"affine.for"' not in applied(GENERIC, '"affine.for"', Spec(UNROLL, factor=None))


# A reduction over tensors: affine.parallel reduces scalars only (the rewrite built an
# invalid reduce).
TENSORS = """func.func @t(%init: tensor<4xi16>, %delta: tensor<4xi16>) -> tensor<4xi16> {
  %r = affine.for %i = 0 to 4 iter_args(%acc = %init) -> (tensor<4xi16>) {
    %s = arith.addi %acc, %delta : tensor<4xi16>
    affine.yield %s : tensor<4xi16>
  }
  return %r : tensor<4xi16>
}
"""


def test_parallelize_of_a_reduction_over_tensors_is_refused():
    assert refused(TENSORS, "%r = affine.for", Spec(PARALLELIZE)) == (
        "%i carries %acc through iter_args as a reduction (addi) of tensor<4xi16> values: "
        "affine.parallel reduces only integers (not index)"
    )


# The loop's results are written on the line before `affine.for`.
RESULTS_ABOVE = """func.func @r(%A: memref<8xf32>) -> (f32, f32) {
  %z = arith.constant 0.0 : f32
  %sum, %max
      = affine.for %i = 0 to 8 iter_args(%s = %z, %m = %z) -> (f32, f32) {
    %v = affine.load %A[%i] : memref<8xf32>
    %s2 = arith.addf %s, %v : f32
    %m2 = arith.maximumf %m, %v : f32
    affine.yield %s2, %m2 : f32, f32
  }
  return %sum, %max : f32, f32
}
"""


def test_a_loop_is_found_from_the_line_of_its_affine_for(tmp_path, capsysbinary):
    path = tmp_path / "results.mlir"
    path.write_text(RESULTS_ABOVE)
    for line in ("3", "4"):
        assert main(["transform", str(path), "--line", line, "--unroll", "2"]) == 0
        assert b"affine.for %i = 0 to 8 step 2" in capsysbinary.readouterr().out
    assert main(["draw", str(path), "--line", "4"]) == 0
    assert capsysbinary.readouterr().out.startswith(b"<svg")


# A buffer allocated and freed in each iteration: the copies of an unrolled body
# allocate their own, whose contents at the end count for nothing (was refused: "%acc
# is deallocated here").
ALLOC_IN_LOOP = """func.func @rows(%A: memref<6x5xf32>, %out: memref<6xf32>) {
  affine.for %i = 0 to 6 {
    %acc = memref.alloc() : memref<1xf32>
    %zero = arith.constant 0.0 : f32
    affine.store %zero, %acc[0] : memref<1xf32>
    affine.for %j = 0 to 5 {
      %a = affine.load %A[%i, %j] : memref<6x5xf32>
      %s = affine.load %acc[0] : memref<1xf32>
      %t = arith.addf %s, %a : f32
      affine.store %t, %acc[0] : memref<1xf32>
    }
    %r = affine.load %acc[0] : memref<1xf32>
    affine.store %r, %out[%i] : memref<6xf32>
    memref.dealloc %acc : memref<1xf32>
  }
  return
}
"""


def test_a_loop_allocating_a_buffer_each_iteration_is_unrolled():
    after = applied(ALLOC_IN_LOOP, "affine.for %i", Spec(UNROLL, factor=2))
    assert "%acc_1 = memref.alloc() : memref<1xf32>" in after
    assert "affine.store %r_1, %out[%i_1] : memref<6xf32>" in after
    # each iteration's buffer is its own: no dependence between iterations through it
    assert "affine.parallel (%i) = (0) to (6) {" in applied(
        ALLOC_IN_LOOP, "affine.for %i", Spec(PARALLELIZE)
    )
    jammed = applied(ALLOC_IN_LOOP, "affine.for %i", Spec(UNROLL_JAM, factor=2))
    assert "memref.dealloc %acc_1 : memref<1xf32>\n  }" in jammed
    # the words name the buffer as written, not one per iteration
    assert "%acc[0]" in refused(ALLOC_IN_LOOP, "affine.for %i", Spec(DISTRIBUTE))


def test_the_buffer_of_an_enclosing_iteration_is_compared_at_the_end(monkeypatch):
    """Transforming the inner loop, the buffer outlives it (it is read after): the
    proof compares what the loop leaves in it."""
    unroll = importlib.import_module("affine_lsp.transforms.loops.unroll")
    original = unroll.rewrite

    def rewrite(context, plan):  # the remainder loses its store: the last sum is not kept
        result = original(context, plan)
        head, _, tail = result.text.rpartition("affine.store %t, %acc[0] : memref<1xf32>")
        result.text = head + tail
        return result

    assert applied(ALLOC_IN_LOOP, "affine.for %j", Spec(UNROLL, factor=2))
    monkeypatch.setattr(unroll, "rewrite", rewrite)
    assert "final contents" in refused(ALLOC_IN_LOOP, "affine.for %j", Spec(UNROLL, factor=2))


USE_AFTER_FREE = ALLOC_IN_LOOP.replace(
    "    memref.dealloc %acc : memref<1xf32>\n",
    "    memref.dealloc %acc : memref<1xf32>\n    %late = affine.load %acc[0] : memref<1xf32>\n",
)


def test_a_buffer_read_after_its_dealloc_is_not_analysed():
    assert refused(USE_AFTER_FREE, "affine.for %i", Spec(UNROLL, factor=2)) == (
        "cannot analyse the loop: %acc is deallocated here"
    )
