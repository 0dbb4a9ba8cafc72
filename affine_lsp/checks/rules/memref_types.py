"""memref types wherever they are written (signatures, op types, alias definitions),
as MLIR 22 verifies them when it parses one: the element type, the rank of an
affine-map or strided layout, and the kind of the memory space."""

from __future__ import annotations

import re
from functools import cache

import tree_sitter

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import few_lookups, item_node, item_rule, item_source
from affine_lsp.checks.rules.memref import LAYOUT_RANK
from affine_lsp.ir import MLIR_DIALECTS, AliasType, OpaqueType, TopLevelItem, map_from_node
from affine_lsp.syntax import Node, Span, mlir_query, text

ELEMENT_TYPE = register(
    "memref-element-type",
    "a memref of tensors, tuples, functions or none (MLIR takes integers, index, floats, "
    "complex numbers, vectors, memrefs and dialect types that declare themselves elements)",
    "memref",
)
MEMORY_SPACE = register(
    "memref-memory-space",
    "a memref memory space that is neither an integer, a string, a dictionary nor a "
    "dialect attribute (a type, a float, an array, unit, a symbol, dense elements, ...)",
    "memref",
)
UNRANKED_LAYOUT = register(
    "memref-unranked-layout",
    "an unranked memref (`memref<*x...>`) with an affine-map layout",
    "memref",
)
STRIDE_COUNT = register(
    "memref-stride-count",
    "a strided layout whose number of strides differs from the memref's rank",
    "memref",
)

_NOT_ELEMENTS = frozenset({"tensor_type", "none_type", "tuple_type", "function_type"})
_LAYOUTS = frozenset({"affine_map", "legacy_affine_map", "strided_layout"})
# Builtin attributes MLIR 22 does not take as a memory space (`isSupportedMemorySpace`
# takes integers, strings, dictionaries and any other dialect's attributes).
_NOT_MEMORY_SPACES = frozenset(
    {
        "float",
        "array_attribute",
        "unit_attribute",
        "symbol_ref",
        "dense_attribute",
        "dense_array_attribute",
        "location",
        "distinct_attribute",
        "integer_set",
        "integer_type",
        "float_type",
        "index_type",
        "none_type",
        "memref_type",
        "tensor_type",
        "vector_type",
        "complex_type",
        "tuple_type",
        "function_type",
        "type_alias",
        "dialect_type",
    }
)


@cache
def _memref_query() -> tree_sitter.Query:
    return mlir_query("(memref_type) @memref")


def all_memref_types(node: Node) -> list[Node]:
    """Every memref type under `node`, in document order (a query over its nodes)."""
    return tree_sitter.QueryCursor(_memref_query()).captures(node).get("memref", [])


# Where a memref type this rule may have something to say about can start. The
# keyword of a memref type is a whole word (a longer word, such as `memref.load` or
# `memref_x`, is never the keyword); types spelled plainly, with a shape and a builtin
# integer, float or index element but no layout or memory space (`memref<4x?xf32>`),
# are left out. The word in names or comments matches too.
_UNPLAIN_KEYWORD = re.compile(
    rb"memref(?![\w$.]|<(?:(?:[0-9]+|\?)x)*(?:[su]?i[0-9]+|f[0-9]+|bf16|tf32|index)>)"
)


def _foreign_element(element: Node, ctx: CheckContext) -> str | None:
    """The dialect of a memref element type `!dialect.name...` whose types are not
    memref elements: where a project file lists the registered dialects, those of
    another dialect (an opaque type) or of a registered one not said to make memref
    elements (None: a valid element, or one not checked, such as MLIR's own
    dialects' types)."""
    allowed = ctx.options.dialects.element_dialects
    if allowed is None:
        return None
    name = element.child_by_field_name("name") if element.type == "dialect_type" else element
    if name is None or name.type != "type_alias":
        return None
    spelling = text(name)
    for _ in range(16):  # (an alias: the type it names)
        alias = ctx.module.aliases.get(spelling)
        if alias is None:
            break
        named = alias.type
        if isinstance(named, AliasType):
            spelling = named.name
        elif isinstance(named, OpaqueType) and named.spelling.startswith("!"):
            spelling = named.spelling
        else:
            return None
    if "." not in spelling or spelling in ctx.module.aliases:
        return None
    dialect = spelling[1:].split(".", 1)[0].split("<", 1)[0]
    if dialect in MLIR_DIALECTS or dialect in allowed:
        return None
    return dialect


def _rank(memref: Node) -> int | None:
    """The number of dimensions (None for `*`, unranked)."""
    shape = memref.child_by_field_name("shape")
    if shape is None:
        return 0
    dims = [d.strip() for d in text(shape).split("x")[:-1]]
    return None if "*" in dims else len(dims)


def _stride_count(layout: Node) -> int:
    inside, count = False, 0
    for child in layout.children:
        if child.type == "[":
            inside = True
        elif child.type == "]":
            return count
        elif inside and child.type != ",":
            count += 1
    return count


def _map_dims(layout: Node, ctx: CheckContext) -> int | None:
    """The dimensions of an affine-map layout, written inline or through an alias."""
    if layout.type in ("affine_map", "legacy_affine_map"):
        return map_from_node(layout).num_dims
    if layout.type == "attribute_alias":
        alias = ctx.module.aliases.get(text(layout))
        if alias is not None and alias.map is not None:
            return alias.map.num_dims
    return None


def _is_layout(node: Node, ctx: CheckContext) -> bool:
    return node.type in _LAYOUTS or _map_dims(node, ctx) is not None


def _unsupported_memory_space(node: Node) -> bool:
    if node.type == "typed_literal":
        value = node.child_by_field_name("value")
        return value is not None and value.type in ("float", "dense_attribute")
    return node.type in _NOT_MEMORY_SPACES


@item_rule
def memref_types(item: TopLevelItem, ctx: CheckContext) -> None:
    node = item_node(item)
    if node is None:
        return
    for memref in _memref_types(node, item_source(item, ctx)):
        if not memref.has_error:
            _check_memref(memref, ctx)


def _memref_types(node: Node, source: bytes) -> list[Node]:
    """The memref types under `node` (whose text is `source`), in document order,
    but for those spelled plainly (`memref<4x?xf32>`), where there is nothing to check.

    Each is found from its keyword in the text (`_UNPLAIN_KEYWORD`): the smallest named
    node around the keyword is its memref type. A tree with errors may not nest that
    way, and many lookups in a deep item cost more (`few_lookups`): there a query looks
    at every node."""
    keywords = list(_UNPLAIN_KEYWORD.finditer(source))
    if node.has_error or not few_lookups(source, len(keywords)):
        return all_memref_types(node)
    base = node.start_byte
    found = []
    for keyword in keywords:
        start = base + keyword.start()
        memref = node.named_descendant_for_byte_range(start, start + len(b"memref"))
        if memref is not None and memref.type == "memref_type" and memref.start_byte == start:
            found.append(memref)
    return found


def _check_memref(memref: Node, ctx: CheckContext) -> None:
    element = memref.child_by_field_name("element_type")
    if element is not None and (
        element.type in _NOT_ELEMENTS or _foreign_element(element, ctx) is not None
    ):
        ctx.report(ELEMENT_TYPE, Span.of(element), "invalid memref element type")
    rank = _rank(memref)
    first = memref.child_by_field_name("layout")
    second = memref.child_by_field_name("memory_space")
    if first is None:
        return
    space = second if _is_layout(first, ctx) else first
    if first is not space:
        _check_layout(first, rank, ctx)
    if space is not None and _unsupported_memory_space(space):
        ctx.report(MEMORY_SPACE, Span.of(space), "unsupported memory space Attribute")


def _check_layout(layout: Node, rank: int | None, ctx: CheckContext) -> None:
    if layout.type == "strided_layout":
        strides = _stride_count(layout)
        if rank is not None and strides != rank:
            ctx.report(
                STRIDE_COUNT,
                Span.of(layout),
                f"expected the number of strides to match the rank: {strides} strides, rank {rank}",
            )
        return
    dims = _map_dims(layout, ctx)
    if dims is None:
        return
    if rank is None:
        ctx.report(
            UNRANKED_LAYOUT, Span.of(layout), "cannot have affine map for unranked memref type"
        )
    elif dims != rank:
        ctx.report(
            LAYOUT_RANK,
            Span.of(layout),
            f"memref layout mismatch between rank and affine map: {rank} != {dims}",
        )
