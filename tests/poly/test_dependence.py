"""Dependences between accesses of two ops or nests: kinds, distances, directions."""

from __future__ import annotations

from affine_lsp.ir import FuncOp
from affine_lsp.poly import Unknown
from affine_lsp.poly.dependence import dependences
from tests.poly.helpers import model_of, ops_named

SOURCE = """
func.func @f(%A: memref<100xf32>, %B: memref<100x100xf32>, %N: index) {
  affine.for %i = 1 to 99 {
    %v = affine.load %A[%i - 1] : memref<100xf32>
    affine.store %v, %A[%i] : memref<100xf32>
  }
  affine.for %i = 0 to 10 {
    affine.for %j = 0 to 10 {
      %w = affine.load %B[%i + 1, %j] : memref<100x100xf32>
      affine.store %w, %B[%i, %j] : memref<100x100xf32>
    }
  }
  affine.for %k = 0 to %N {
    %u = affine.load %A[%k + 1] : memref<100xf32>
    affine.store %u, %A[%k] : memref<100xf32>
  }
  return
}
"""


def _nests():
    model = model_of(SOURCE)
    loops = [op for op in ops_named(model, "affine.for") if isinstance(op.parent_op, FuncOp)]
    return model, loops


def test_raw_carried_by_a_loop():
    model, (first, _, _) = _nests()
    found = dependences(first, first, model)
    assert not isinstance(found, Unknown)
    (dependence,) = found
    assert dependence.kind == "RAW" and dependence.memref == "%A"
    assert dependence.distance == (1,) and dependence.direction == ("<",)
    assert dependence.relation == "{ [i] -> [i' = 1 + i] : 0 < i <= 97 }"


def test_war_with_two_loops():
    model, (_, second, _) = _nests()
    found = dependences(second, second, model)
    assert not isinstance(found, Unknown)
    (dependence,) = found
    assert dependence.kind == "WAR"
    assert dependence.distance == (1, 0) and dependence.direction == ("<", "=")


def test_dependences_between_nests_in_every_kind():
    model, (first, _, third) = _nests()
    found = dependences(first, third, model)
    assert not isinstance(found, Unknown)
    kinds = sorted(d.kind for d in found)
    assert kinds == ["RAW", "WAR", "WAW"]
    assert all(d.common_loops == 0 and d.distance == () for d in found)
    raw = next(d for d in found if d.kind == "RAW")
    assert "N" in raw.relation


def test_unknown_for_non_affine_code():
    model = model_of(
        """
func.func @g(%A: memref<10xindex>, %B: memref<10xf32>) {
  affine.for %i = 0 to 10 {
    %k = affine.load %A[%i] : memref<10xindex>
    %v = memref.load %B[%k] : memref<10xf32>
    memref.store %v, %B[%i] : memref<10xf32>
  }
  return
}
"""
    )
    (loop,) = ops_named(model, "affine.for")
    assert isinstance(dependences(loop, loop, model), Unknown)
