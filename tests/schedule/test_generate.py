"""The code generator on its own: statements of a window, and code written back from
schedules (the original one gives the original loops back)."""

from __future__ import annotations

import pytest

from affine_lsp.ir import AffineForOp, build_module
from affine_lsp.poly import IslSession, Window, budgets
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.naming import FreshNames, names_in
from affine_lsp.transforms.schedule import (
    Dimension,
    Scheduled,
    Unschedulable,
    generate,
    schedule_map,
    statements_of,
)

NEST = """#upper = affine_map<(d0)[s0] -> (16, s0)>
func.func @k(%A: memref<16x16xf32>, %B: memref<16xi32>, %n: index) {
  affine.for %i = 0 to %n {
    affine.for %j = affine_map<(d0) -> (d0 + 1)>(%i) to min #upper(%i)[%n] step 2 {
      %v = affine.load %A[%i, %j] : memref<16x16xf32>
      %x = arith.index_cast %j : index to i32
      %k = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%j)
      affine.store %v, %A[%j, %k] : memref<16x16xf32>
      // the row's last column
      affine.store %x, %B[%i] : memref<16xi32>
    }
    affine.if affine_set<(d0) : (d0 - 3 >= 0)>(%i) {
      %c = arith.constant 7 : i32
      affine.store %c, %B[%i] : memref<16xi32>
    }
  }
  return
}
"""


def _window(text: str) -> tuple[bytes, IslSession, Window, AffineForOp]:
    data = text.encode()
    model = build_module(SourceDocument(data).tree.root_node)
    root = next(op for op in model.walk() if isinstance(op, AffineForOp))
    session = IslSession(budgets.TRANSFORM)
    block = root.parent_block
    assert block is not None
    position = block.operations.index(root)
    return data, session, Window(session, block, position, position, model.alias_table()), root


def _original(text: str, separate: bool = False) -> str:
    """The nest written back from its own schedule."""
    data, session, window, root = _window(text)
    statements = statements_of(window)
    times = {s.name: s.original_time() for s in statements}
    dims = []
    for k in range(max(len(t) for t in times.values())):
        loops = {
            s.name: loop
            for s in statements
            if k < len(s.path) and not isinstance(s.path[k], int)
            for loop in s.loops
            if loop.induction_variable is s.path[k]
        }
        dims.append(Dimension(loops=loops, separate=separate))
    scheduled = Scheduled(statements, times, dims)
    return generate(session, data, window, scheduled, "  ", 2, FreshNames(names_in(root))).text


def test_statements_are_runs_of_ops_cut_where_no_value_flows_across():
    _, _, window, _ = _window(NEST)
    statements = statements_of(window)
    assert [[op.name for op in s.ops] for s in statements] == [
        ["affine.load", "arith.index_cast", "affine.apply", "affine.store", "affine.store"],
        ["arith.constant", "affine.store"],
    ]
    assert [s.original_time() for s in statements] == [
        ["0", "_d0", "0", "_d1", "0"],
        ["0", "_d0", "1", "0", "0"],
    ]
    assert statements[0].dims == ["_d0", "_d1"]


def test_the_original_schedule_gives_the_original_loops_back():
    text = _original(NEST)
    # Headers whose bounds and steps are the original's keep their text; the maps of
    # statements are not rewritten when every iv keeps its name.
    assert "    affine.for %i = 0 to %n {\n" in text
    assert (
        "      affine.for %j = affine_map<(d0) -> (d0 + 1)>(%i) to min #upper(%i)[%n] step 2 {\n"
        in (text)
    )
    assert "%k = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%j)" in text
    assert "affine.store %v, %A[%j, %k] : memref<16x16xf32>" in text
    assert "        // the row's last column\n        affine.store %x, %B[%i]" in text
    assert "      affine.if affine_set<(d0) : (d0 - 3 >= 0)>(%i) {" in text


def test_two_sweeps_with_different_guards_are_peeled_when_separated():
    sweeps = """func.func @k(%A: memref<10xf32>, %B: memref<10xf32>) {
  affine.for %i = 0 to 10 {
    affine.if affine_set<(d0) : (8 - d0 >= 0)>(%i) {
      %a = affine.load %A[%i + 1] : memref<10xf32>
      affine.store %a, %B[%i] : memref<10xf32>
    }
    affine.if affine_set<(d0) : (d0 - 1 >= 0)>(%i) {
      %b = affine.load %B[%i - 1] : memref<10xf32>
      affine.store %b, %A[%i] : memref<10xf32>
    }
  }
  return
}
"""
    kept = _original(sweeps)
    assert kept.count("affine.if") == 2
    peeled = _original(sweeps, separate=True)
    assert "affine.if" not in peeled
    # The copy in the loop keeps the source names; the peeled ones get fresh ones.
    assert "  affine.for %i = 1 to 9 {\n    %a = affine.load %A[%i + 1]" in peeled
    assert "%a_1 = affine.load %A[1] : memref<10xf32>" in peeled
    assert "%b_1 = affine.load %B[8] : memref<10xf32>" in peeled


def test_a_constant_of_the_outer_body_is_copied_into_the_inner_statement():
    text = """func.func @k(%A: memref<12x12xf64>) {
  affine.for %i = 1 to 12 {
    %c2 = arith.constant 2.0 : f64
    %x = affine.load %A[%i, 0] : memref<12x12xf64>
    %y = arith.mulf %x, %c2 : f64
    affine.store %y, %A[%i, 0] : memref<12x12xf64>
    affine.for %j = 1 to 12 {
      %v = affine.load %A[%i - 1, %j] : memref<12x12xf64>
      %w = arith.mulf %v, %c2 : f64
      affine.store %w, %A[%i, %j] : memref<12x12xf64>
    }
  }
  return
}
"""
    written = _original(text)
    assert "      %c2_1 = arith.constant 2.0 : f64\n      %v = affine.load" in written
    assert "%w = arith.mulf %v, %c2_1 : f64" in written


@pytest.mark.parametrize(
    "body, reason",
    [
        (
            """    %x = affine.load %A[%i] : memref<10xf32>
    affine.for %j = 0 to 10 {
      affine.store %x, %A[%j] : memref<10xf32>
    }""",
            "%x is computed in one loop body and used in another",
        ),
        (
            """    %x = affine.load %A[%i] : memref<10xf32>
    %y = arith.addf %x, %z : f32
    affine.for %j = 0 to 10 {
      affine.store %y, %A[%j] : memref<10xf32>
    }""",
            "%y is computed in one loop body and used in another",
        ),
        (
            """    %s = affine.for %j = 0 to 10 iter_args(%a = %z) -> (f32) {
      affine.yield %a : f32
    }
    affine.store %s, %A[%i] : memref<10xf32>""",
            "%j carries values through iter_args",
        ),
        (
            """    %r = affine.if affine_set<(d0) : (d0 - 5 >= 0)>(%i) -> f32 {
      affine.yield %z : f32
    } else {
      affine.yield %z : f32
    }
    affine.store %r, %A[%i] : memref<10xf32>""",
            "an affine.if yields values",
        ),
    ],
)
def test_what_cannot_be_cut_into_statements_is_refused_with_a_reason(body, reason):
    text = (
        "func.func @k(%A: memref<10xf32>, %z: f32) {\n  affine.for %i = 0 to 10 {\n"
        + body
        + "\n  }\n  return\n}\n"
    )
    _, _, window, _ = _window(text)
    with pytest.raises(Unschedulable) as refused:
        statements_of(window)
    assert reason in refused.value.reason


def test_a_schedule_given_as_an_isl_relation_writes_the_same_code():
    data, session, window, root = _window(NEST)
    statements = statements_of(window)
    times = {s.name: s.original_time() for s in statements}
    dims = [Dimension(name=name) for name in ("", "%i", "", "%j", "")]
    by_times = Scheduled(statements, times, dims)
    by_relation = Scheduled(statements, {}, dims, schedule_map(session, by_times))
    texts = [
        generate(session, data, window, s, "  ", 2, FreshNames(names_in(root))).text
        for s in (by_times, by_relation)
    ]
    assert texts[0] == texts[1]
    assert "affine.for %j = " in texts[0]
