"""Names the model resolves, and the SSA errors it reports only where it understands
every op that scopes them."""

from __future__ import annotations

from affine_lsp.checks import Severity, check_document
from affine_lsp.ir import build_module
from affine_lsp.ir.model import Operation
from affine_lsp.syntax import SourceDocument


def _errors(text: str) -> list[tuple[str, str]]:
    """(code, the text the error is on) for each error."""
    document = SourceDocument(text)
    data = document.data
    return [
        (d.code, data[d.span.start_byte : d.span.end_byte].decode())
        for d in check_document(document)
        if d.severity == Severity.ERROR
    ]


def _op(text: str, name: str) -> Operation:
    model = build_module(SourceDocument(text).tree.root_node)
    return next(op for op in model.walk() if op.name == name)


def _arguments(op: Operation) -> list[str]:
    return [v.name for region in op.regions for v in region.blocks[0].arguments]


def test_scf_forall_defines_its_induction_variables_and_shared_outputs():
    text = """func.func @f(%t: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %r = scf.forall (%i) in (%n) shared_outs(%o = %t) -> (tensor<8xf32>) {
    "test.use"(%i, %o) : (index, tensor<8xf32>) -> ()
    scf.forall.in_parallel {
    }
  }
  return %r : tensor<8xf32>
}
"""
    assert _arguments(_op(text, "scf.forall")) == ["%i", "%o"]
    assert _errors(text) == []
    # Understood: a name it does not define is an error inside it.
    assert _errors(text.replace('"test.use"(%i, %o)', '"test.use"(%i, %nope)')) == [
        ("ssa-undefined", "%nope")
    ]


def test_gpu_launch_defines_ids_sizes_and_attributions():
    text = """func.func @f(%n: index) {
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %n, %gz = %n)
      threads(%tx, %ty, %tz) in (%sx = %n, %sy = %n, %sz = %n)
      workgroup(%w : memref<4xf32, 3>) {
    "test.use"(%bx, %gz, %tx, %sz, %w) : (index, index, index, index, memref<4xf32, 3>) -> ()
    gpu.terminator
  }
  return
}
"""
    launch = _op(text, "gpu.launch")
    assert set(_arguments(launch)) >= {"%bx", "%gz", "%tx", "%sz", "%w"}
    assert _errors(text) == []


def test_scf_parallel_induction_variables_are_region_arguments():
    text = """func.func @f(%n: index, %m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %m[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
"""
    assert _arguments(_op(text, "scf.parallel")) == ["%i"]
    assert _errors(text) == []


def test_skimmed_ops_may_define_names_we_cannot_see():
    text = """func.func @f(%n: index) {
  foo.loop %i, %j from %n {
    "test.use"(%i, %j) : (index, index) -> ()
  }
  foo.declare(%k : index)
  return
}
"""
    loop = _op(text, "foo.loop")
    assert _arguments(loop) == ["%i", "%j"]  # header names become region arguments
    assert _errors(text) == []


def test_a_name_skimmed_ops_do_not_explain_is_still_an_error_outside_them():
    text = """func.func @f() {
  foo.op {
    "test.use"(%hidden) : (index) -> ()
  }
  "test.use"(%hidden) : (index) -> ()
  return
}
"""
    assert _errors(text) == [("ssa-undefined", "%hidden")]


def test_a_result_name_may_be_reused_inside_its_own_regions():
    text = """func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
    assert _errors(text) == []
    # ...but its own result is not yet defined there.
    used = text.replace("    %0 = arith.addf %in, %out : f32\n", "")
    assert _errors(used) == [("ssa-dominance", "%0")]


def test_redefinitions_across_an_op_whose_scoping_is_unknown_are_not_errors():
    text = """func.func @f() {
  %x = arith.constant 0 : index
  "test.isolated"() ({
    %x = arith.constant 1 : index
    "test.use"(%x) : (index) -> ()
  }) : () -> ()
  scf.execute_region {
    %x = arith.constant 2 : index
    scf.yield
  }
  return
}
"""
    # The test dialect's op may be isolated from above; scf.execute_region is not.
    assert _errors(text) == [("ssa-redefinition", "%x")]


def test_no_dominance_errors_in_unreachable_blocks():
    text = """func.func @f() {
  return
^dead:
  %c1 = arith.constant 1 : i64
  %a = arith.addi %a, %c1 : i64
  cf.br ^dead
}
"""
    assert _errors(text) == []
    reachable = text.replace("  return\n", "  cf.br ^dead\n")
    assert _errors(reachable) == [("ssa-dominance", "%a")]
