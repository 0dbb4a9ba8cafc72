"""Strides and offsets of memref layouts. The expected values are what mlir-opt 22
reports for these layouts (through the result type a subview would need)."""

from __future__ import annotations

import pytest

from affine_lsp.checks.layouts import (
    Strided,
    canonical_strides,
    layout_of,
    linear_form,
    strides_of_map,
)
from affine_lsp.ir import FuncOp, build_module
from affine_lsp.ir.affine_syntax import map_from_node
from affine_lsp.ir.types import FloatType, MemRefType
from affine_lsp.syntax import SourceDocument

F32 = FloatType("f32")


def _map(spelling: str):
    root = SourceDocument(f"#m = {spelling}\n").tree.root_node
    value = root.named_children[0].child_by_field_name("value")
    assert value is not None
    return map_from_node(value)


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("affine_map<(d0, d1)[s0, s1] -> (d0 * s0 + d1 * 3 + s1 * 2 + 7)>", ((None, 3), None)),
        ("affine_map<(d0, d1) -> (d0 * 5 + (d1 + 2) * 3 - d1 * 2)>", ((5, 1), 6)),
        ("affine_map<(d0, d1) -> (d0 * 5 + d1 * 2 - d1 * 2)>", ((5, 0), 0)),
        ("affine_map<(d0, d1) -> (d0)>", ((1, 0), 0)),
        ("affine_map<(d0, d1) -> ((d0 * 4) floordiv 4 + d1)>", ((1, 1), 0)),
        ("affine_map<(d0, d1) -> ((d0 * 6 + 4) floordiv 3 + d1)>", ((2, 1), 1)),
        ("affine_map<(d0, d1) -> ((d0 * 6) mod 3 + d1)>", ((0, 1), 0)),
        ("affine_map<(d0, d1)[s0] -> (d0 * 5 + d1 + 4 floordiv 2)>", ((5, 1), 2)),
        ("affine_map<(d0, d1)[s0] -> (d0 * s0 * 2 + d1 * (s0 + 1))>", ((None, None), 0)),
    ],
)
def test_strides_of_linear_maps(spelling, expected):
    assert strides_of_map(_map(spelling)) == Strided(*expected)


@pytest.mark.parametrize(
    "spelling",
    [
        "affine_map<(d0, d1)[s0] -> (d0 * 5 + d1 + s0 floordiv 2)>",  # not exact
        "affine_map<(d0, d1) -> (d0 + d1, d1)>",  # two results
        "affine_map<(d0) -> (d0 floordiv 8)>",
    ],
)
def test_maps_without_strides(spelling):
    assert strides_of_map(_map(spelling)) is None


def test_products_of_dimensions_are_not_linear():
    assert linear_form(_map("affine_map<(d0, d1) -> (d0 * d1)>").results[0]) is None


def test_contiguous_strides_turn_dynamic_after_a_dynamic_or_empty_size():
    assert canonical_strides((4, None, 8)) == (None, 8, 1)
    assert canonical_strides((4, 0, 8)) == (None, 8, 1)
    assert canonical_strides(()) == ()


def _types(source: str):
    """The argument types of the function in `source`, and the alias table."""
    model = build_module(SourceDocument(source).tree.root_node)
    (func,) = [op for op in model.operations() if isinstance(op, FuncOp)]
    return func.argument_types, model.alias_table()


def test_layout_kinds():
    types, aliases = _types(
        "#id = affine_map<(d0, d1) -> (d0, d1)>\n"
        "#strided = strided<[8, 1], offset: ?>\n"
        "func.func @f(%a: memref<4x8xf32>, %b: memref<8xf32, strided<[1]>>,\n"
        "  %c: memref<4x8xf32, #id>, %d: memref<4x8xf32, #strided>,\n"
        "  %e: memref<4x8xf32, affine_map<(d0, d1) -> (d1, d0)>>, %f: memref<4x8xf32, #unknown>,\n"
        "  %g: memref<*xf32>)\n"
    )
    a, b, c, d, e, f, g = (layout_of(t, aliases) for t in types)
    assert a.is_identity and a.strided == Strided((8, 1), 0)
    assert b.is_identity  # rank-1 strided<[1]> is the identity map (d0) -> (d0)
    assert c.is_identity
    assert d.kind == "strided" and d.strided == Strided((8, 1), None)
    assert e.kind == "map" and e.strided is None
    assert not f.known and not g.known


def test_types_are_spelled_as_mlir_prints_them():
    types, _ = _types(
        "func.func @f(%a: memref<2x5xf32, 0>, %b: memref<4x4xf32, affine_map<(i, j) -> (i, j)>>,\n"
        "  %c: memref<4xf32, strided<[1],offset:0>>, %d: memref<8xf32, strided<[?], offset: ?>>)\n"
    )
    assert [str(t) for t in types] == [
        "memref<2x5xf32>",
        "memref<4x4xf32>",
        "memref<4xf32, strided<[1]>>",
        "memref<8xf32, strided<[?], offset: ?>>",
    ]
    assert types[0] == MemRefType((2, 5), F32)
