"""Hover data: loop domains and trip counts, access relations, conditions."""

from __future__ import annotations

from affine_lsp.poly import (
    AccessDescription,
    Budget,
    ConditionDescription,
    LoopDescription,
    Unknown,
    budgets,
    describe_access,
    describe_condition,
    describe_loop,
)
from tests.cost import count_calls
from tests.poly.helpers import model_of, ops_named

TRIANGLE = """
func.func @f(%A: memref<100x100xf32>, %N: index) {
  affine.for %i = 0 to %N {
    affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {
      %v = affine.load %A[%i, %j + 1] : memref<100x100xf32>
      affine.store %v, %A[%j, %i] : memref<100x100xf32>
    }
  }
  return
}
"""


def test_loop_domain_uses_source_names_and_symbols_as_parameters():
    model = model_of(TRIANGLE)
    outer, inner = ops_named(model, "affine.for")
    assert describe_loop(outer, model) == LoopDescription("[N] -> { [i] : 0 <= i < N }", "N", "1")
    described = describe_loop(inner, model)
    assert isinstance(described, LoopDescription)
    assert described.domain == "[N] -> { [i, j] : 0 <= i < N and 0 <= j <= i }"
    assert described.trip_count == "i + 1"


def test_access_relation_and_footprint():
    model = model_of(TRIANGLE)
    load, store = ops_named(model, "affine.load") + ops_named(model, "affine.store")
    described = describe_access(load, model)
    assert isinstance(described, AccessDescription)
    assert described.relation == "[N] -> { [i, j] -> A[i, j + 1] }"
    assert described.footprint == "[N] -> { A[i0, i1] : 0 <= i0 < N and 0 < i1 <= 1 + i0 }"
    transposed = describe_access(store, model)
    assert isinstance(transposed, AccessDescription)
    assert transposed.relation == "[N] -> { [i, j] -> A[j, i] }"


def test_constant_trip_counts_with_steps_and_max_min_bounds():
    model = model_of(
        """
func.func @f(%N: index) {
  affine.for %i = 0 to 10 step 3 {
    affine.for %j = max affine_map<(d0) -> (d0 - 2, 0)>(%i)
        to min affine_map<(d0)[s0] -> (d0 + 3, s0)>(%i)[%N] {
    }
  }
  affine.for %k = 5 to 3 {
  }
  return
}
"""
    )
    first, second, empty = ops_named(model, "affine.for")
    assert describe_loop(first, model) == LoopDescription(
        "{ [i] : (i) mod 3 = 0 and 0 <= i <= 9 }", "4", "3"
    )
    described = describe_loop(second, model)
    assert isinstance(described, LoopDescription)
    assert described.trip_count == "min(i + 3, N) - max(i - 2, 0)"
    assert "j >= -2 + i" in described.domain and "j < N" in described.domain
    assert isinstance(describe_loop(empty, model), LoopDescription)
    assert describe_loop(empty, model).trip_count == "0"  # type: ignore[union-attr]


def test_parallel_loop_and_vector_access():
    model = model_of(
        """
func.func @f(%A: memref<64x64xf32>) {
  affine.parallel (%x, %y) = (0, 0) to (64, 16) step (1, 4) {
    %v = affine.vector_load %A[%x, %y * 4] : memref<64x64xf32>, vector<4xf32>
  }
  return
}
"""
    )
    (loop,) = ops_named(model, "affine.parallel")
    described = describe_loop(loop, model)
    assert isinstance(described, LoopDescription)
    assert described.trip_count == "64, 4" and described.step == "1, 4"
    (load,) = ops_named(model, "affine.vector_load")
    access = describe_access(load, model)
    assert isinstance(access, AccessDescription)
    assert "4y <= o0 <= 3 + 4y" in access.relation


def test_memref_load_with_composed_affine_indices():
    model = model_of(
        """
#shift = affine_map<(d0)[s0] -> (d0 + s0)>
func.func @f(%A: memref<?xf32>, %n: index) {
  %c2 = arith.constant 2 : index
  affine.for %i = 0 to 8 {
    %k = affine.apply #shift(%i)[%c2]
    %m = arith.muli %k, %c2 : index
    %v = memref.load %A[%m] : memref<?xf32>
  }
  return
}
"""
    )
    (load,) = ops_named(model, "memref.load")
    access = describe_access(load, model)
    assert isinstance(access, AccessDescription)
    assert access.relation == "{ [i] -> A[2i + 4] }"
    assert access.footprint == "{ A[i0] : (i0) mod 2 = 0 and 4 <= i0 <= 18 }"


def test_condition_and_where_it_holds():
    model = model_of(
        """
func.func @f(%N: index) {
  affine.for %i = 0 to 10 {
    affine.if affine_set<(d0)[s0] : (d0 - s0 >= 0, d0 mod 2 == 0)>(%i)[%N] {
    }
  }
  return
}
"""
    )
    (condition,) = ops_named(model, "affine.if")
    described = describe_condition(condition, model)
    assert isinstance(described, ConditionDescription)
    assert described.condition == "[N] -> { [i] : (i) mod 2 = 0 and i >= N }"
    assert described.holds_on == "[N] -> { [i] : (i) mod 2 = 0 and i >= N and 0 <= i <= 9 }"


def test_else_branch_is_the_complement():
    model = model_of(
        """
func.func @f(%A: memref<10xf32>) {
  affine.for %i = 0 to 10 {
    affine.if affine_set<(d0) : (d0 - 5 >= 0)>(%i) {
    } else {
      %v = affine.load %A[%i] : memref<10xf32>
    }
  }
  return
}
"""
    )
    (load,) = ops_named(model, "affine.load")
    access = describe_access(load, model)
    assert isinstance(access, AccessDescription)
    assert access.footprint == "{ A[i0] : 0 <= i0 <= 4 }"


def test_names_that_isl_cannot_use_are_adapted():
    model = model_of(
        """
func.func @f(%A: memref<10x10xf32>) {
  affine.for %0 = 0 to 10 {
    affine.for %max = 0 to 10 {
      %v = affine.load %A[%0, %max] : memref<10x10xf32>
    }
  }
  return
}
"""
    )
    (load,) = ops_named(model, "affine.load")
    access = describe_access(load, model)
    assert isinstance(access, AccessDescription)
    assert access.relation == "{ [_0, max_] -> A[_0, max_] }"


def test_non_affine_inputs_answer_unknown():
    model = model_of(
        """
func.func @f(%A: memref<10xindex>, %B: memref<10xf32>) {
  affine.for %i = 0 to 10 {
    %k = affine.load %A[%i] : memref<10xindex>
    %v = memref.load %B[%k] : memref<10xf32>
  }
  return
}
"""
    )
    (load,) = ops_named(model, "memref.load")
    described = describe_access(load, model)
    assert isinstance(described, Unknown) and "not affine" in described.reason
    assert isinstance(describe_loop(load, model), Unknown)


def test_undefined_alias_and_values_answer_unknown():
    model = model_of(
        """
func.func @f() {
  affine.for %i = 0 to #missing(%j) {
  }
  return
}
"""
    )
    (loop,) = ops_named(model, "affine.for")
    assert isinstance(describe_loop(loop, model), Unknown)


def test_budget_exhaustion_answers_unknown_quickly():
    model = model_of(TRIANGLE)
    inner = ops_named(model, "affine.for")[1]
    budget = Budget(max_operations=5, time_limit=None)
    described, calls = count_calls(lambda: describe_loop(inner, model, budget))
    assert isinstance(described, Unknown) and "budget" in described.reason
    assert calls < 20_000, f"{calls} calls before giving up"


def test_deep_nests_do_not_recurse_and_stay_within_budget():
    depth = 120
    lines = ["func.func @f(%A: memref<10xf32>) {"]
    for level in range(depth):
        lines.append("  " * (level + 1) + f"affine.for %i{level} = 0 to 2 {{")
    lines.append("  " * (depth + 1) + f"%v = affine.load %A[%i{depth - 1}] : memref<10xf32>")
    for level in reversed(range(depth)):
        lines.append("  " * (level + 1) + "}")
    lines += ["  return", "}"]
    model = model_of("\n".join(lines))
    (load,) = ops_named(model, "affine.load")
    described = describe_access(load, model)
    assert isinstance(described, AccessDescription | Unknown)


def test_a_typical_nest_is_described_within_a_small_fraction_of_the_hover_budget():
    """Hover latency itself is measured by benchmarks/lsp_latency.py; here, the
    deterministic part: a typical nest needs a few thousand isl operations, far
    below the hover's cap, so hovers on it never run out."""
    model = model_of(TRIANGLE)
    inner = ops_named(model, "affine.for")[1]
    (load,) = ops_named(model, "affine.load")
    assert budgets.HOVER.max_operations is not None
    small = Budget(max_operations=budgets.HOVER.max_operations // 20, time_limit=None)
    assert not isinstance(describe_loop(inner, model, small), Unknown)
    assert not isinstance(describe_access(load, model, small), Unknown)


def test_negative_factors_in_subscripts():
    model = model_of(
        """
func.func @f(%A: memref<100xf32>) {
  affine.for %i = 0 to 10 {
    %v = affine.load %A[%i * -1 + 12] : memref<100xf32>
    %w = affine.load %A[-2 * %i + 30] : memref<100xf32>
  }
  return
}
"""
    )
    first, second = ops_named(model, "affine.load")
    answer = describe_access(first, model)
    assert isinstance(answer, AccessDescription), answer
    assert answer.relation == "{ [i] -> A[-i + 12] }"
    answer = describe_access(second, model)
    assert isinstance(answer, AccessDescription), answer
    assert answer.relation == "{ [i] -> A[-2i + 30] }"
