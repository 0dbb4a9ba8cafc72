"""The semantic model: structure, values and uses, affine maps, name resolution."""

from __future__ import annotations

from affine_lsp.ir import build_module
from affine_lsp.ir.affine import AffineBinary, AffineDim, AffineSymbol, AffineUnknown, format_expr
from affine_lsp.ir.model import (
    AffineAccessOp,
    AffineApplyOp,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    FuncOp,
    MemRefAllocOp,
)
from affine_lsp.ir.types import INDEX, FloatType, MemRefType
from affine_lsp.syntax import SourceDocument
from tests.corpus_data import chunks, require_shared
from tests.cost import growth

SOURCE = """#map = affine_map<(d0)[s0] -> (d0 + s0, d0 floordiv 2)>
#set = affine_set<(d0)[s0] : (d0 >= 0, s0 - d0 - 1 >= 0)>
func.func @f(%A: memref<?x8xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloc(%n) : memref<?xf32>
  %r = affine.for %i = 0 to %n step 2 iter_args(%acc = %zero) -> (f32) {
    %j = affine.apply #map(%i)[%n]
    affine.if #set(%i)[%n] {
      %v = affine.load %A[%i + symbol(%n), %i floordiv 4] : memref<?x8xf32>
      affine.store %v, %buf[%i] : memref<?xf32>
    }
    affine.yield %acc : f32
  }
  affine.parallel (%x, %y) = (0, max(%c0, 1)) to (%n, 8) {
  }
  return %r : f32
}
"""


def _model(source: str = SOURCE):
    return build_module(SourceDocument(source).tree.root_node)


def _ops(model, cls):
    return [op for op in model.walk() if isinstance(op, cls)]


def test_aliases_become_maps_and_sets():
    model = _model()
    table = model.alias_table()
    assert table["#map"].kind == "map"
    assert str(table["#map"].map) == "(d0)[s0] -> (d0 + s0, d0 floordiv 2)"
    assert table["#set"].set is not None and len(table["#set"].set.constraints) == 2


def test_function_arguments_and_types():
    (func,) = _ops(_model(), FuncOp)
    assert func.symbol == "@f"
    entry = func.body.entry
    assert [a.name for a in entry.arguments] == ["%A", "%n"]
    assert entry.arguments[0].type == MemRefType((None, 8), FloatType("f32"))
    assert entry.arguments[1].type == INDEX
    assert func.declared_result_types == [FloatType("f32")]


def test_affine_for_structure():
    (loop,) = _ops(_model(), AffineForOp)
    assert loop.induction_variable.name == "%i"
    assert loop.lower.shorthand_constant == 0
    assert loop.upper.shorthand_value.name == "%n"
    assert loop.step == 2
    ((acc, init),) = loop.iter_args
    assert acc.name == "%acc" and init.value.name == "%zero"
    assert loop.results[0].name == "%r" and loop.results[0].type == FloatType("f32")
    assert loop.body.entry.arguments == [loop.induction_variable, acc]


def test_uses_resolve_to_definitions():
    model = _model()
    (loop,) = _ops(model, AffineForOp)
    iv = loop.induction_variable
    users = sorted({u.user.name for u in iv.uses})
    assert users == ["affine.apply", "affine.if", "affine.load", "affine.store"]
    assert not any(item.unresolved for item in model.items)


def test_subscripts_build_a_map_over_values():
    model = _model()
    load = next(op for op in _ops(model, AffineAccessOp) if not op.is_write)
    subscripts = load.subscripts
    assert [u.name for u in subscripts.dims] == ["%i"]
    assert [u.name for u in subscripts.symbols] == ["%n"]
    assert subscripts.map.results[0] == AffineBinary("+", AffineDim(0), AffineSymbol(0))
    assert load.result_types == [FloatType("f32")]
    store = next(op for op in _ops(model, AffineAccessOp) if op.is_write)
    assert store.stored_value.value.name == "%v"


def test_apply_if_parallel_and_alloc():
    model = _model()
    (apply,) = _ops(model, AffineApplyOp)
    assert apply.map_ref.alias == "#map" and [u.name for u in apply.dims] == ["%i"]
    (branch,) = _ops(model, AffineIfOp)
    assert branch.condition.alias == "#set" and branch.else_region is None
    (parallel,) = _ops(model, AffineParallelOp)
    assert [v.name for v in parallel.induction_variables] == ["%x", "%y"]
    assert parallel.lower[1].kind == "max" and len(parallel.lower[1].exprs) == 2
    (alloc,) = _ops(model, MemRefAllocOp)
    assert [u.name for u in alloc.dynamic_sizes] == ["%n"]


def test_undeclared_map_identifiers_stay_in_the_tree():
    model = _model("#m = affine_map<(d0) -> (d0 + s7)>\n")
    (result,) = model.alias_table()["#m"].map.results
    assert isinstance(result.rhs, AffineUnknown) and result.rhs.name == "s7"


def test_format_expr_minimal_parentheses():
    model = _model("#m = affine_map<(d0, d1) -> ((d0 + d1) * 2, d0 - (d1 - 1), -(d0 + 1))>\n")
    results = model.alias_table()["#m"].map.results
    assert [format_expr(r, ("d0", "d1")) for r in results] == [
        "(d0 + d1) * 2",
        "d0 - (d1 - 1)",
        "-(d0 + 1)",
    ]


def test_unresolved_redefined_and_use_before_definition():
    model = _model(
        "func.func @g() {\n"
        "  %a = arith.addi %b, %b : index\n"
        "  %b = arith.constant 1 : index\n"
        "  %b = arith.constant 2 : index\n"
        "  %c = arith.addi %missing, %b : index\n"
        "  return\n"
        "}\n"
    )
    (item,) = model.items
    assert [u.name for u in item.unresolved] == ["%missing"]
    assert [(new.name, old.name) for new, old in item.redefinitions] == [("%b", "%b")]
    assert [u.name for u in item.dominance_violations] == ["%b", "%b"]


def test_values_of_unknown_ops_are_not_errors():
    model = _model(
        "func.func @h() {\n"
        "  test.polyfor %i, %j {\n"
        '    "foo"(%i, %j) : (index, index) -> ()\n'
        "  }\n"
        "  return\n"
        "}\n"
    )
    assert not model.items[0].unresolved


def test_every_verifying_corpus_chunk_resolves_all_names():
    require_shared()
    problems = []
    for chunk in chunks():
        if not chunk.verifies:
            continue
        model = build_module(SourceDocument(chunk.text).tree.root_node)
        for item in model.items:
            problems += [(chunk.label, u.name) for u in item.unresolved]
            problems += [(chunk.label, new.name) for new, _ in item.redefinitions]
            problems += [(chunk.label, u.name) for u in item.dominance_violations]
    assert problems == []


def test_deep_nesting_does_not_recurse():
    depth = 2000
    source = (
        "func.func @deep() {\n"
        + "affine.for %i = 0 to 1 {\n" * depth
        + "}\n" * depth
        + "return\n}\n"
    )
    model = _model(source)
    assert len(_ops(model, AffineForOp)) == depth


def _long_block(count: int) -> str:
    lines = ["func.func @long() {", "  %c0 = arith.constant 0 : index"]
    for i in range(1, count):
        lines.append(f"  %c{i} = arith.addi %c{i - 1}, %c0 : index")
    lines += ["  %late = arith.addi %c0, %after : index", "  %after = arith.constant 1 : index"]
    lines += ["  return", "}", ""]
    return "\n".join(lines)


def test_long_blocks_resolve_in_linear_time():
    """Dominance is decided from positions indexed once per block (it was a scan of
    the block per use: 16k ops in one block took seconds)."""
    model = _model(_long_block(16000))
    (item,) = model.items
    assert [u.name for u in item.dominance_violations] == ["%after"]
    assert not item.unresolved
    document = {n: SourceDocument(_long_block(n)) for n in (2000, 4000)}
    ratio = growth(lambda n: lambda: build_module(document[n].tree.root_node), 2000)
    assert ratio < 2.3, f"modelling twice the ops makes {ratio:.2f} times the calls"


def test_model_objects_have_slots():
    """Models are made by the hundred thousand: no per-object dict."""
    import dataclasses

    from affine_lsp.ir import model

    classes = [
        c
        for c in vars(model).values()
        if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == model.__name__
    ]
    assert len(classes) > 20
    for cls in classes:
        assert "__slots__" in cls.__dict__, cls.__name__
    (op,) = [o for o in _model().walk() if isinstance(o, AffineForOp)]
    assert not hasattr(op, "__dict__") and not hasattr(op.induction_variable, "__dict__")


def test_build_leaves_the_garbage_collector_as_it_found_it():
    import gc

    assert gc.isenabled()
    _model()
    assert gc.isenabled()
    gc.disable()
    try:
        _model()
        assert not gc.isenabled()
    finally:
        gc.enable()


GENERIC = """#lb = affine_map<() -> (0)>
#ub = affine_map<()[s0] -> (s0)>
#acc = affine_map<(d0)[s0] -> (d0 + s0)>
#set = affine_set<(d0)[s0] : (d0 - s0 >= 0)>
"func.func"() <{function_type = (memref<10xf32>, index) -> (), sym_name = "f"}> ({
^bb0(%A: memref<10xf32>, %n: index):
  %z = "arith.constant"() <{value = 0.0 : f32}> : () -> f32
  %r = "affine.for"(%n, %z) <{lowerBoundMap = #lb, upperBoundMap = #ub,
                              operandSegmentSizes = array<i32: 0, 1, 1>, step = 2 : index}> ({
  ^bb0(%i: index, %s: f32):
    %v = "affine.load"(%A, %i, %n) <{map = #acc}> : (memref<10xf32>, index, index) -> f32
    "affine.store"(%v, %A, %i) <{map = affine_map<(d0) -> (d0)>}>
        : (f32, memref<10xf32>, index) -> ()
    %j = "affine.apply"(%i, %n) <{map = #acc}> : (index, index) -> index
    "affine.if"(%i, %n) <{condition = #set}> ({
      "affine.yield"() : () -> ()
    }, {
    }) : (index, index) -> ()
    "affine.yield"(%s) : (f32) -> ()
  }) : (index, f32) -> f32
  "func.return"() : () -> ()
}) : () -> ()
"""


def test_generic_affine_ops_are_modelled_like_custom_ones():
    model = _model(GENERIC)
    (loop,) = _ops(model, AffineForOp)
    assert loop.induction_variable.name == "%i"
    assert loop.induction_variable.role == "induction_variable"
    assert loop.step == 2
    assert loop.lower.map_ref.alias == "#lb" and not loop.lower.operands
    assert [u.name for u in loop.upper.symbols] == ["%n"]
    assert [(v.name, u.name) for v, u in loop.iter_args] == [("%s", "%z")]
    load, store = _ops(model, AffineAccessOp)
    assert load.memref.name == "%A" and load.memref_type == MemRefType((10,), FloatType("f32"))
    assert [u.name for u in load.subscripts.dims] == ["%i"]
    assert [u.name for u in load.subscripts.symbols] == ["%n"]
    assert str(load.subscripts.map) == "(d0)[s0] -> (d0 + s0)"
    assert store.is_write and store.stored_value.name == "%v"
    assert store.map_ref.inline is not None
    (apply,) = _ops(model, AffineApplyOp)
    assert [u.role for u in apply.operands] == ["dim", "symbol"]
    (branch,) = _ops(model, AffineIfOp)
    assert branch.condition.alias == "#set" and len(branch.regions) == 2
    assert [u.name for u in branch.symbols] == ["%n"]
    assert apply.operand_types == [INDEX, INDEX]


def test_generic_ops_with_an_unknown_alias_leave_the_split_empty():
    source = '"affine.apply"(%n) <{map = #missing}> : (index) -> index\n'
    (apply,) = _ops(_model(source), AffineApplyOp)
    assert apply.dims == [] and apply.symbols == [] and [u.name for u in apply.operands] == ["%n"]


def test_redefined_top_level_values_are_recorded_on_the_module():
    model = _model("%a = arith.constant 1 : index\n%a = arith.constant 2 : index\n")
    ((new, earlier),) = model.redefinitions
    assert new.defining_op is model.items[1].operation
    assert earlier.defining_op is model.items[0].operation


def test_attribute_readers():
    from affine_lsp.ir.attributes import (
        attribute_entries,
        integer_array,
        integer_value,
        string_value,
    )

    source = (
        '"x.y"() <{a = 3 : i64, b = array<i32: 0, -1, 2>, c = "s"}> {d = -4, unit_entry, '
        "a = 5} : () -> ()\n"
    )
    root = SourceDocument(source).tree.root_node
    body = root.named_children[0].child_by_field_name("body")
    entries = attribute_entries(body)
    assert integer_value(entries["a"]) == 3  # properties win over the dictionary
    assert integer_array(entries["b"]) == [0, -1, 2]
    assert string_value(entries["c"]) == "s"
    assert integer_value(entries["d"]) == -4
    assert entries["unit_entry"].type == "dictionary_entry"
    assert integer_value(entries["c"]) is None and integer_array(entries["a"]) is None


GENERIC_MORE = """#src = affine_map<(d0) -> (d0, d0 + 1)>
#dst = affine_map<(d0)[s0] -> (d0, s0)>
#tag = affine_map<(d0) -> (d0)>
func.func @g(%A: memref<9x9xf32>, %B: memref<9x9xf32, 2>, %T: memref<1xi32>, %i: index, %n: index) {
  "affine.dma_start"(%A, %i, %B, %i, %n, %T, %i, %n) {dst_map = #dst, src_map = #src,
      tag_map = #tag} : (memref<9x9xf32>, index, memref<9x9xf32, 2>, index, index,
                         memref<1xi32>, index, index) -> ()
  %d:2 = "affine.delinearize_index"(%i, %n) <{static_basis = array<i64: -9223372036854775808, 3>}>
      : (index, index) -> (index, index)
  %l = "affine.linearize_index"(%i, %n, %n) <{disjoint, operandSegmentSizes = array<i32: 2, 1>,
      static_basis = array<i64: 2, -9223372036854775808>}> : (index, index, index) -> index
  "affine.parallel"(%i, %n) <{lowerBoundsGroups = dense<[1, 2]> : tensor<2xi32>,
      lowerBoundsMap = affine_map<(d0) -> (0, d0, 2)>, reductions = [], steps = [1, 2],
      upperBoundsGroups = dense<1> : tensor<2xi32>,
      upperBoundsMap = affine_map<(d0) -> (d0, 8)>}> ({
  ^bb0(%x: index, %y: index):
    "affine.yield"() : () -> ()
  }) : (index, index) -> ()
  return
}
"""


def test_generic_dma_basis_and_parallel_ops_are_modelled():
    from affine_lsp.ir.model import AffineDmaOp, IndexBasisOp

    model = _model(GENERIC_MORE)
    (dma,) = _ops(model, AffineDmaOp)
    assert [(m.name, role) for m, _, role in dma.accesses] == [
        ("%A", "source"),
        ("%B", "destination"),
        ("%T", "tag"),
    ]
    destination = dma.accesses[1][1]
    assert [u.name for u in destination.dims] == ["%i"]
    assert [u.name for u in destination.symbols] == ["%n"]
    assert dma.num_elements.name == "%n" and len(dma.memref_types) == 3
    delinearize, linearize = _ops(model, IndexBasisOp)
    assert [u.name for u in delinearize.indices] == ["%i"]
    assert [b if isinstance(b, int) else b.name for b in delinearize.basis] == ["%n", 3]
    assert [u.name for u in linearize.indices] == ["%i", "%n"] and linearize.disjoint
    assert [b if isinstance(b, int) else b.name for b in linearize.basis] == [2, "%n"]
    (parallel,) = _ops(model, AffineParallelOp)
    assert [v.name for v in parallel.induction_variables] == ["%x", "%y"]
    assert [b.kind for b in parallel.lower] == [None, "max"]
    assert [len(b.exprs) for b in parallel.lower] == [1, 2]
    assert [len(b.exprs) for b in parallel.upper] == [1, 1]
    assert parallel.steps == [1, 2] and parallel.reductions == []
