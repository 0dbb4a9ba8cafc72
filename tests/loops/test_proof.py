"""The proof is the safety net: a rewrite that is wrong in any way is refused."""

from __future__ import annotations

import importlib

import pytest

from affine_lsp.transforms.loops import (
    INTERCHANGE,
    PARALLELIZE,
    SCALAR_REPLACE,
    TILE,
    UNROLL,
    Spec,
)
from affine_lsp.transforms.loops.text import Origin, Renames
from tests.loops.fixtures import MATMUL, REDUCE, STENCIL
from tests.loops.helpers import run


def _broken(monkeypatch, module_name: str, old: str, new: str, count: int = 1) -> None:
    """Make the transformation write `new` where it writes `old`."""
    module = importlib.import_module(f"affine_lsp.transforms.loops.{module_name}")
    original = module.rewrite

    def rewrite(context, plan):
        result = original(context, plan)
        assert old in result.text, result.text
        result.text = result.text.replace(old, new, count)
        return result

    monkeypatch.setattr(module, "rewrite", rewrite)


CASES = [
    # a copy that uses the wrong iteration (in a subscript, then outside one)
    ("unroll", MATMUL, "affine.for %k", Spec(UNROLL, factor=2), "%B[%k_1, %j]", "%B[%k, %j]"),
    ("unroll", MATMUL, "affine.for %k", Spec(UNROLL, factor=2), "(d0 + 1)>(%k)", "(d0 + 2)>(%k)"),
    # a copy that computes something else from the right values
    (
        "unroll",
        MATMUL,
        "affine.for %k",
        Spec(UNROLL, factor=2),
        "%p_1 = arith.mulf",
        "%p_1 = arith.addf",
    ),
    # a carried value from the wrong copy, or the wrong init of the remainder
    (
        "unroll",
        REDUCE,
        "%sum, %max",
        Spec(UNROLL, factor=2),
        "arith.addf %s2, %v_1",
        "arith.addf %s, %v_1",
    ),
    ("unroll", REDUCE, "%sum, %max", Spec(UNROLL, factor=2), "%m = %sum_1#1", "%m = %sum_1#0"),
    # a remainder loop that starts too late
    (
        "unroll",
        MATMUL,
        "affine.for %i",
        Spec(UNROLL, factor=2),
        "(0, (s0) floordiv 2 * 2)",
        "(1, (s0) floordiv 2 * 2)",
    ),
    # interchanged bounds mixed up, a tile that skips iterations
    (
        "band",
        MATMUL,
        "affine.for %i",
        Spec(INTERCHANGE),
        "affine.for %i = 0 to %n",
        "affine.for %i = 1 to %n",
    ),
    ("band", STENCIL, "affine.for %i", Spec(TILE, sizes=(4, 4), skew=1), "step 4", "step 5"),
    # a parallel reduction yielding the wrong value
    (
        "parallel",
        REDUCE,
        "%sum, %max",
        Spec(PARALLELIZE),
        "affine.yield %v, %v",
        "affine.yield %v, %zero",
    ),
    # scalar replacement: a carried value that is not what the store wrote, an init
    # from another element, a final store to another element, a body that reads
    # something else than the carried value
    *[
        ("scalar_replace", MATMUL, "affine.for %k", Spec(SCALAR_REPLACE), old, new)
        for old, new in (
            ("affine.yield %s : f32", "affine.yield %p : f32"),
            ("%c_init = affine.load %C[%i, %j]", "%c_init = affine.load %C[%j, %i]"),
            ("affine.store %c_final, %C[%i, %j]", "affine.store %c_final, %C[%j, %i]"),
            ("%s = arith.addf %c, %p", "%s = arith.addf %b, %p"),
        )
    ],
]


@pytest.mark.parametrize("module, text, needle, spec, old, new", CASES)
def test_a_wrong_rewrite_is_refused(monkeypatch, module, text, needle, spec, old, new):
    assert run(text, needle, spec).applied  # the right one is proven
    _broken(monkeypatch, module, old, new)
    result = run(text, needle, spec)
    assert not result.applied and result.reason


def test_a_naive_rewrite_of_an_illegal_transformation_is_not_proven():
    naive = run(STENCIL, "affine.for %i", Spec(INTERCHANGE), check=False, prove=False)
    assert naive.applied  # the text can be written...
    unproven = run(STENCIL, "affine.for %i", Spec(INTERCHANGE), check=False)
    assert not unproven.applied  # ...but the proof refuses it
    assert "not equivalent" in (unproven.reason or "")


TWO_ELEMENTS = """func.func @two(%w: memref<8xf32>, %x: memref<8xf32>, %out: memref<8x8xf32>) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 8 {
      %w1 = affine.load %w[%i] : memref<8xf32>
      %x1 = affine.load %x[%i] : memref<8xf32>
      %q = arith.addf %w1, %x1 : f32
      affine.store %q, %out[%i, %j] : memref<8x8xf32>
    }
  }
  return
}
"""


def test_one_load_cannot_stand_for_a_load_of_another_element(monkeypatch):
    scalar_replace = importlib.import_module("affine_lsp.transforms.loops.scalar_replace")
    assert run(TWO_ELEMENTS, "affine.for %j", Spec(SCALAR_REPLACE)).applied
    original = scalar_replace.rewrite

    def rewrite(context, plan):
        result = original(context, plan)
        result.text = result.text.replace("arith.addf %w1, %x1", "arith.addf %w1, %w1")
        w1, x1 = (e.load for e in plan.elements)
        hoisted = next(at for at, o in result.origins.items() if o.op is w1)
        result.also = {hoisted: [Origin(x1, Renames(), 0)]}
        return result

    monkeypatch.setattr(scalar_replace, "rewrite", rewrite)
    result = run(TWO_ELEMENTS, "affine.for %j", Spec(SCALAR_REPLACE))
    assert not result.applied
    assert result.reason == (
        "the rewritten code is not equivalent: affine.load would touch other elements of "
        "%w than the original"
    )
