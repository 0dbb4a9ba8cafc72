"""The item rules that look for something anywhere in an item's syntax (alias
references, memref types, long integer constants) search the item's text first and
look at the nodes only where a match is. Here each is compared with a query over
every node of the item, on every item of the corpus, of MLIR's test files (a slice;
all of them with the slow tests) and on texts written to fool the search."""

from __future__ import annotations

import pytest

from affine_lsp.checks import CheckOptions, ModuleContext
from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.rules import aliases, constants, memref_types
from affine_lsp.ir import TopLevelItem, build_module
from affine_lsp.syntax import FIELD, SourceDocument
from affine_lsp.testing.upstream import chunk_texts
from tests.corpus_data import CORPUS, UPSTREAM, require_shared, require_upstream

SLICE = 4  # every fourth chunk of MLIR's tests, in path order

TRICKY = b"""
#map = affine_map<(d0) -> (d0)>
!t = memref<4xf32, #map>
// a comment that names #nothing, !nothing and memref<4xf32, 1>, 0x8000000000000000
func.func @f(%memref: memref<4xf32>, %b: memref<4xf32, #map>, %c: memref <4xf32>) {
  %s = "test.op"() {note = "#undefined and memref<?xi8, 3> 99999999999999999999"} : () -> i32
  %t = "test.op"() {a = #gpu.object<#map, "#nope">, b = !llvm.ptr<#also>} : () -> i32
  test.custom foo#map, memref<2xf32, 7>, !t
  %x = affine.apply #map(%s)
  %y = affine.apply #missing(%s)
  affine.for %i = 0 to 0x7FFFFFFFFFFFFFFF step 0x10 {
    %v = affine.load %memref[%i + 123456789012345678] : memref<4xf32>
    %w = affine.load %b[%i + 0x8000000000000000] : memref<4xf32, #map>
  }
  %z = "test.op"() : () -> memref<4xf32, 2.5>
  return
}
"""


def _items(data: bytes) -> list[tuple[TopLevelItem, ModuleContext]]:
    model = build_module(SourceDocument(data).tree.root_node)
    context = ModuleContext.from_model(model)
    return [(item, context) for item in model.items]


def _node_and_name(item: TopLevelItem):  # the item's node, the alias name it defines
    if item.alias is not None and item.alias.node is not None:
        return item.alias.node, item.alias.node.child_by_field_id(FIELD["name"])
    return (item.operation.node if item.operation is not None else None), None


def _spans(nodes) -> list[tuple[int, int]]:
    return [(n.start_byte, n.end_byte) for n in nodes]


def _body_names(bodies) -> set[bytes]:
    return {m for b in bodies for m in aliases._NESTED_ALIAS.findall(b.text or b"")}


def _diagnostics(found) -> list[tuple]:
    return [(d.span.start_byte, d.span.end_byte, d.code, d.message) for d in found]


def _compare(data: bytes) -> int:
    """Compare the text searches with the queries on every item of `data`; returns
    how many items were compared."""
    compared = 0
    for item, context in _items(data):
        node, defined = _node_and_name(item)
        if node is None:
            continue
        compared += 1
        where = f"item at byte {node.start_byte}: {(node.text or b'')[:80]!r}"
        uses, bodies = aliases._alias_captures(item)
        queried_uses, queried_bodies = aliases.queried_references(node, defined)
        assert _spans(uses) == _spans(queried_uses), where
        assert _body_names(bodies) == _body_names(queried_bodies), where

        source = node.text or b""
        searched, queried = (CheckContext(context, CheckOptions()) for _ in range(2))
        for memref in memref_types._memref_types(node, source):
            if not memref.has_error:
                memref_types._check_memref(memref, searched)
        for memref in memref_types.all_memref_types(node):
            if not memref.has_error:
                memref_types._check_memref(memref, queried)
        assert _diagnostics(searched.found) == _diagnostics(queried.found), where

        everywhere = CheckContext(context, CheckOptions())
        constants.check_constants(node, everywhere)
        if not constants.may_hold_long_constant(source):
            assert not everywhere.found, where
    return compared


def test_texts_written_to_fool_the_search():
    assert _compare(TRICKY) == 3
    # What the rules report there (the names, types and constants in comments and
    # strings are not): one of each.
    item, context = _items(TRICKY)[2]
    ctx = CheckContext(context, CheckOptions())
    for rule in (aliases.undefined_aliases, memref_types.memref_types, constants.constant_range):
        rule(item, ctx)
    reported = sorted((d.code, TRICKY[d.span.start_byte : d.span.end_byte]) for d in ctx.found)
    assert reported == [
        ("affine-constant-range", b"0x8000000000000000"),
        ("alias-undefined", b"#missing"),
        ("memref-memory-space", b"2.5"),
    ]


def test_items_with_syntax_errors_are_queried():
    broken = TRICKY.replace(b"affine.apply #map(%s)", b"affine.apply #map(%s")
    assert _compare(broken) == 3


def test_deep_items_with_many_matches_are_queried():
    """Each lookup goes down through the item's nesting: in a deep item with a match at
    every level (`affine.if #s(...) {` opened 3000 times) the lookups would cost the
    square of the depth, so the rules query the item instead (and find the same)."""
    depth = 3000
    data = b"#s = affine_set<(d0) : (d0 >= 0)>\nfunc.func @f(%i: index) {\n"
    data += b"  affine.if #s(%i) {\n" * depth + b"  }\n" * depth + b"  return\n}\n"
    items = _items(data)
    node, defined = _node_and_name(items[1][0])
    assert not node.has_error
    assert aliases._references_in(node, node.text or b"", defined) is None
    assert len(aliases._alias_captures(items[1][0])[0]) == depth
    assert _compare(data) == 2


def test_the_corpus():
    require_shared()
    compared = sum(_compare(path.read_bytes()) for path in sorted(CORPUS.rglob("*.mlir")))
    assert compared > 500


def test_a_slice_of_mlir_test_files():
    require_upstream()
    assert sum(_compare(text) for text in chunk_texts(UPSTREAM)[::SLICE]) > 3000


@pytest.mark.slow
def test_every_mlir_test_file():
    require_upstream()
    assert sum(_compare(text) for text in chunk_texts(UPSTREAM)) > 12000
