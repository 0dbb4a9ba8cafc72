"""Iteration spaces for pictures: point counts, dependence arrows, marks, sampling, on
nests with known answers (tests/draw/fixtures/nests.mlir) and against a brute-force
oracle."""

from __future__ import annotations

import islpy as isl
import pytest

from affine_lsp.ir import FuncOp
from affine_lsp.poly.budgets import Budget, PictureLimits
from affine_lsp.poly.session import Unknown
from affine_lsp.poly.space import DEFAULT_VALUE, iteration_space
from affine_lsp.testing.progen import generate
from tests.draw.helpers import NO_IVS, arrow_counts, model_of, nests_text, outer_loop, space_of
from tests.draw.oracle import brute_force_arrows
from tests.draw.random_nests import random_nest
from tests.oracle_tools import mlir_opt_path, run_tool

UNLIMITED = PictureLimits(points=10**6, panels=10**6, arrows=10**7)


def test_rectangle_with_two_uniform_dependences():
    space = space_of("stencil")
    assert space.ivs == ["%i", "%j"]
    assert space.total == len(space.points) == 81
    assert space.box == [(1, 9), (1, 9)]
    assert arrow_counts(space) == {("RAW", (0, 1)): 72, ("RAW", (1, 0)): 72}
    assert space.distances == {("RAW", "%A"): {(0, 1): 72, (1, 0): 72}}
    assert not space.nearest_only and not space.sampled and not space.parameters


@pytest.mark.parametrize("n", [1, 4, 10])
def test_triangular_domain_with_a_symbolic_bound(n):
    space = space_of("triangle", {"n": n})
    assert space.total == len(space.points) == n * (n + 1) // 2
    assert all(j <= i for i, j in space.points)
    assert arrow_counts(space) == ({("RAW", (0, 1)): n * (n - 1) // 2} if n > 1 else {})
    (parameter,) = space.parameters
    assert (parameter.name, parameter.value, parameter.assumed) == ("n", n, False)
    assert space.domain == "[n] -> { [i, j] : 0 <= i < n and 0 <= j <= i }"


def test_a_symbol_without_a_value_takes_the_default_and_says_so():
    space = space_of("triangle")
    (parameter,) = space.parameters
    assert parameter.assumed and parameter.value == DEFAULT_VALUE
    assert space.total == DEFAULT_VALUE * (DEFAULT_VALUE + 1) // 2


def test_values_may_be_written_with_percent_and_unknown_names_are_reported():
    space = space_of("triangle", {"%n": 3, "m": 5})
    assert space.total == 6
    assert space.unused_values == ["m"]


def test_reduction_has_every_kind_to_the_next_iteration():
    space = space_of("reduction")
    assert space.total == 6
    assert arrow_counts(space) == {("RAW", (1,)): 5, ("WAR", (1,)): 5, ("WAW", (1,)): 5}
    assert space.nearest_only  # iteration 0's write reaches every later read


def test_no_arrows_without_loop_carried_dependences():
    for function, points in (("elementwise", 35), ("parallel", 20), ("band", 34)):
        space = space_of(function)
        assert space.total == len(space.points) == points, function
        assert space.arrows == [] and space.dependences_unavailable is None, function


def test_steps():
    space = space_of("steps")
    assert space.points == [(i, j) for i in (0, 3, 6, 9) for j in (0, 2)]
    assert arrow_counts(space) == {("RAW", (3, 0)): 6}


def test_affine_if_regions_are_marked():
    space = space_of("guarded")
    assert space.total == 64
    assert space.then_points == {(i, i) for i in range(8)}
    assert space.else_points == {(i, j) for i in range(8) for j in range(8) if i != j}
    assert len(space.guards) == 1
    # The transposed copy: (i, j) is written before (j, i) reads it, and read before
    # (j, i) overwrites it, for i < j.
    pairs = {(a.source, a.target) for a in space.arrows}
    expected = {((i, j), (j, i)) for i in range(8) for j in range(8) if i < j}
    assert pairs == expected
    assert {a.kind for a in space.arrows} == {"RAW", "WAR"}


def test_three_dimensions():
    space = space_of("cube")
    assert space.ivs == ["%i", "%j", "%k"]
    assert space.total == len(space.points) == 120
    assert arrow_counts(space) == {("RAW", (1, 0, 0)): 90}


def test_imperfect_nest_places_statements_between_the_loops():
    space = space_of("imperfect")
    assert space.total == 20
    # The store before the inner loop is not carried by %i: only the inner loop's.
    assert arrow_counts(space) == {("RAW", (0, 1)): 16, ("WAR", (0, 1)): 16, ("WAW", (0, 1)): 16}


def test_several_inner_loops_fold_onto_the_outer_points():
    space = space_of("folded")
    assert space.ivs == ["%i"] and space.total == 4
    assert [op.name for op in space.folded] == ["affine.for", "affine.for"]
    assert arrow_counts(space) == {("RAW", (1,)): 3}


def test_an_inner_loop_draws_the_loops_around_it():
    model = model_of(nests_text())
    inner = next(
        o
        for o in outer_loop(model, "stencil").walk()
        if o.name == "affine.for" and o is not outer_loop(model, "stencil")
    )
    space = iteration_space(inner, model)
    assert not isinstance(space, Unknown)
    assert space.ivs == ["%i", "%j"] and space.total == 81
    assert space.loop is inner


def test_large_spaces_are_sampled_never_cut():
    space = space_of("large")
    assert space.total == 10_000
    assert space.strides == (2, 2)
    assert len(space.points) == 2_500
    assert all(i % 2 == 0 and j % 2 == 0 for i, j in space.points)
    assert space.box == [(0, 99), (0, 99)]


def test_panels_limit_the_outer_values_of_deep_nests():
    text = """
func.func @deep(%A: memref<100x4x4xf32>) {
  affine.for %i = 0 to 100 {
    affine.for %j = 0 to 4 {
      affine.for %k = 0 to 4 {
        %v = affine.load %A[%i, %j, %k] : memref<100x4x4xf32>
      }
    }
  }
  return
}
"""
    space = space_of("deep", text=text, limits=PictureLimits(points=4096, panels=10, arrows=100))
    assert space.total == 1600
    assert len({p[0] for p in space.points}) <= 10
    assert space.strides[1:] == (1, 1) and space.strides[0] == 10


def test_a_symbol_in_a_subscript_decides_the_dependence():
    assert arrow_counts(space_of("shifted", {"d": 0})) == {}
    assert arrow_counts(space_of("shifted", {"d": 2})) == {("RAW", (2,)): 8}
    assert arrow_counts(space_of("shifted", {"d": -1})) == {("WAR", (1,)): 9}


def test_unmodelled_ops_leave_the_points_and_say_why():
    space = space_of("opaque")
    assert space.total == 5 and space.arrows == []
    assert "func.call" in (space.dependences_unavailable or "")


def test_thinning_keeps_arrows_from_a_coarser_lattice_of_points():
    space = space_of("stencil", limits=PictureLimits(points=4096, panels=64, arrows=40))
    # From every 2nd point along each axis: 5 x 4 sources for each distance.
    assert space.arrow_total == 144 and space.arrow_stride == 2
    assert len(space.arrows) == 40
    assert all((a.source[0] - 1) % 2 == 0 and (a.source[1] - 1) % 2 == 0 for a in space.arrows)
    assert space.distances == {("RAW", "%A"): {(0, 1): 72, (1, 0): 72}}


def test_the_operation_budget_gives_unknown():
    model = model_of(nests_text())
    answer = iteration_space(
        outer_loop(model, "triangle"),
        model,
        {"n": 10**9},
        budget=Budget(max_operations=20_000, time_limit=None),
    )
    assert isinstance(answer, Unknown) and "budget" in answer.reason


def test_a_loop_without_induction_variables_is_not_drawn_and_says_why():
    model = model_of(NO_IVS)
    answer = iteration_space(outer_loop(model, "alone"), model)
    assert isinstance(answer, Unknown)
    assert answer.reason == "the loop has no induction variables: its body runs once"
    around = space_of("around", text=NO_IVS)
    assert around.ivs == ["%i"] and around.total == 4


def test_mlir_opt_accepts_loops_without_induction_variables():
    result = run_tool([mlir_opt_path()], stdin=NO_IVS, check=False)
    assert result.returncode == 0, result.stderr


def test_not_a_loop():
    model = model_of(nests_text())
    store = next(op for op in model.walk() if op.name == "affine.store")
    assert isinstance(iteration_space(store, model), Unknown)


@pytest.mark.parametrize(
    "function, values",
    [
        ("stencil", {}),
        ("triangle", {"n": 6}),
        ("reduction", {}),
        ("steps", {}),
        ("guarded", {}),
        ("cube", {}),
        ("imperfect", {}),
        ("folded", {}),
        ("shifted", {"d": 3}),
        ("shifted", {"d": -2}),
    ],
)
def test_arrows_equal_the_brute_force_oracle(function, values):
    model = model_of(nests_text())
    loop = outer_loop(model, function)
    space = iteration_space(loop, model, values, limits=UNLIMITED)
    assert not isinstance(space, Unknown)
    drawn = {(a.source, a.target, a.kind, a.memref) for a in space.arrows}
    assert drawn == brute_force_arrows(loop, model, values, space.points)


def test_generated_programs_agree_with_the_oracle():
    checked = 0
    for seed in range(12):
        program = generate(seed)
        model = model_of(program.text)
        kernel = next(
            op for op in model.walk() if isinstance(op, FuncOp) and op.symbol == "@kernel"
        )
        assert kernel.body is not None
        values = {"n0": 5}
        for loop in [o for o in kernel.body.operations() if o.name == "affine.for"]:
            space = iteration_space(loop, model, values, limits=UNLIMITED)
            assert not isinstance(space, Unknown), (seed, space)
            if space.dependences_unavailable is not None:
                continue
            drawn = {(a.source, a.target, a.kind, a.memref) for a in space.arrows}
            assert drawn == brute_force_arrows(loop, model, values, space.points), seed
            checked += 1
    assert checked >= 30


def test_random_nests_agree_with_the_oracle():
    kinds: dict[str, int] = {}
    for seed in range(60):
        text = random_nest(seed)
        model = model_of(text)
        loop = outer_loop(model, "f")
        space = iteration_space(loop, model, limits=UNLIMITED)
        assert not isinstance(space, Unknown), (seed, space)
        assert space.dependences_unavailable is None, text
        drawn = {(a.source, a.target, a.kind, a.memref) for a in space.arrows}
        assert drawn == brute_force_arrows(loop, model, {}, space.points), text
        for arrow in space.arrows:
            kinds[arrow.kind] = kinds.get(arrow.kind, 0) + 1
    assert all(kinds.get(kind, 0) > 20 for kind in ("RAW", "WAR", "WAW")), kinds


ODD_ROWS = """
func.func @odd(%B: memref<128x128xf32>, %x: f32) {
  affine.for %i = 0 to 100 {
    affine.for %j = 0 to 100 {
      affine.if affine_set<(d0) : ((d0 mod 2) - 1 == 0)>(%i) {
        affine.store %x, %B[%i, %j] : memref<128x128xf32>
      }
      %v = affine.load %B[%i - 1, %j] : memref<128x128xf32>
    }
  }
  return
}
"""


def test_a_sampled_space_still_knows_its_dependences():
    # Every 2nd value is drawn (even rows); the writes are on odd rows only.
    space = space_of("odd", text=ODD_ROWS)
    assert space.strides == (2, 2) and space.total == 10_000
    assert space.arrows == []
    assert space.carried == {"RAW"}
    # Odd rows 1..97 have a next row.
    assert space.distances == {("RAW", "%B"): {(1, 0): 49 * 100}}


def test_isl_errors_stay_in_the_answer_at_every_operation_cap():
    """Whatever the operation cap, running out of it while drawing is an `Unknown` or
    a picture without its arrows or origins, never isl's own exception (the points
    of the dependence distances were scanned outside the budget's session: a
    preview of the VS Code panel failed with it)."""
    model = model_of(nests_text())
    functions = ("stencil", "triangle", "reduction", "steps", "guarded", "cube", "imperfect")
    answers = {"space": 0, "unknown": 0}
    for cap in (int(50 * 1.25**k) for k in range(40)):  # (50 to 300 000 operations)
        budget = Budget(max_operations=cap, time_limit=None)
        for function in functions:
            loop = outer_loop(model, function)
            origins = [iv.display_name for iv in getattr(loop, "induction_variables", [])]
            for origin_names in ((), origins):
                try:
                    answer = iteration_space(
                        loop,
                        model,
                        {"n": 6},
                        limits=UNLIMITED,
                        budget=budget,
                        origin_names=origin_names,
                    )
                except isl.Error as error:  # pragma: no cover - the failure reported
                    raise AssertionError(f"cap {cap}, @{function}: {error}") from None
                answers["unknown" if isinstance(answer, Unknown) else "space"] += 1
    assert answers["space"] and answers["unknown"]  # (the sweep crosses the cap)
