"""The order MLIR's fusion would sink a nest's loops to, asked under any cap of isl
operations: an answer or None, never isl's own error."""

from __future__ import annotations

from affine_lsp.ir import AffineForOp, ModuleModel
from affine_lsp.poly.budgets import Budget
from affine_lsp.transforms.fusion.interchange import sinking_order
from affine_lsp.transforms.fusion.nests import loops_in
from tests.fusion.helpers import function_named, model_of

IN_PLACE = """
func.func @in_place(%A: memref<16x16xf64>) {
  affine.for %i = 1 to 16 {
    affine.for %j = 0 to 16 {
      %a = affine.load %A[%i - 1, %j] : memref<16x16xf64>
      %b = affine.load %A[%i, %j] : memref<16x16xf64>
      %s = arith.addf %a, %b : f64
      affine.store %s, %A[%i, %j] : memref<16x16xf64>
    }
  }
  return
}
"""


def _nest() -> tuple[ModuleModel, AffineForOp]:
    model = model_of(IN_PLACE)
    body = function_named(model, "@in_place").body
    assert body is not None and body.entry is not None
    return model, loops_in(body.entry)[0]


def test_the_order_is_found_without_a_cap():
    model, nest = _nest()
    assert sinking_order(nest, model, Budget(None, None)) == [1, 0]


def test_a_cap_running_out_anywhere_gives_no_order():
    model, nest = _nest()
    answers = {str(sinking_order(nest, model, Budget(cap, None))) for cap in range(1, 2_000, 13)}
    assert answers <= {"None", "[1, 0]"}
    assert "None" in answers
