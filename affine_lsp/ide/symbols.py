"""Document outline: aliases, modules, functions and their affine loop nests.

Built from the syntax tree with one query (no IR), so that it stays fast on
large files. Kinds are plain words; the server maps them to LSP SymbolKinds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

import tree_sitter

from affine_lsp.syntax import Node, SourceDocument, Span, mlir_query, text

_QUERY = """
(attribute_alias_def) @alias
(type_alias_def) @alias
(builtin_module) @module
(func_func) @function
(memref_global) @global
(affine_for) @loop
(affine_parallel) @parallel
(affine_if) @if
(operation body: [
  (builtin_module) (func_func) (memref_global) (affine_for) (affine_parallel) (affine_if)
]) @operation
"""
_REGION_FIELDS = ("body", "then")
_MAX_NAME = 80
MAX_DEPTH = 64
"""Deeper symbols are listed among the children of their ancestor at this depth
(clients and JSON encoders do not take unbounded nesting)."""


@dataclass
class OutlineSymbol:
    name: str
    detail: str
    kind: str  # alias | module | function | global | loop | parallel | if
    span: Span
    selection: Span
    children: list[OutlineSymbol] = field(default_factory=list)


@cache
def _query() -> tree_sitter.Query:
    return mlir_query(_QUERY)


def _header(document: SourceDocument, body: Node) -> str:
    """The text of an op from its name to its first region, on one line."""
    end = body.end_byte
    for name in _REGION_FIELDS:
        region = body.child_by_field_name(name)
        if region is not None:
            end = region.start_byte
            break
    header = " ".join(document.slice(body.start_byte, end).split())
    return header if len(header) <= _MAX_NAME else header[: _MAX_NAME - 3] + "..."


def _symbol(
    document: SourceDocument, node: Node, kind: str, wrappers: dict[int, Node]
) -> OutlineSymbol:
    if kind == "alias":
        name_node = node.child_by_field_name("name") or node
        value = node.child_by_field_name("value")
        detail = " ".join(text(value).split()) if value is not None else ""
        if len(detail) > _MAX_NAME:
            detail = detail[: _MAX_NAME - 3] + "..."
        return OutlineSymbol(text(name_node), detail, kind, Span.of(node), Span.of(name_node))
    # The `operation` around the op (with its results): found by the query, since
    # asking a node for its parent costs its depth.
    outer = wrappers.get(node.id, node)
    name_node = node.child_by_field_name("name") or node
    if kind in ("function", "module", "global"):
        symbol = node.child_by_field_name("symbol")
        name = text(symbol) if symbol is not None else text(name_node)
        selection = Span.of(symbol) if symbol is not None else Span.of(name_node)
        detail = _header(document, node) if kind == "function" else text(name_node)
        return OutlineSymbol(name, detail, kind, Span.of(outer), selection)
    return OutlineSymbol(_header(document, node), "", kind, Span.of(outer), Span.of(name_node))


def top_level_nodes(document: SourceDocument) -> Iterator[Node]:
    """The document's top-level nodes, one at a time (to split whole-document work)."""
    cursor = document.tree.root_node.walk()
    more = cursor.goto_first_child()
    while more:
        node = cursor.node
        if node is not None:  # always, for a cursor on a node
            yield node
        more = cursor.goto_next_sibling()


def document_symbols(document: SourceDocument, root: Node | None = None) -> list[OutlineSymbol]:
    """The outline of the document (or of one subtree), nested by containment."""
    captures = tree_sitter.QueryCursor(_query()).captures(root or document.tree.root_node)
    wrappers = {}
    for operation in captures.pop("operation", []):
        body = operation.child_by_field_name("body")
        if body is not None:
            wrappers[body.id] = operation
    found = [(node, kind) for kind, nodes in captures.items() for node in nodes]
    found.sort(key=lambda pair: (pair[0].start_byte, -pair[0].end_byte))
    top: list[OutlineSymbol] = []
    stack: list[OutlineSymbol] = []
    for node, kind in found:
        symbol = _symbol(document, node, kind, wrappers)
        while stack and stack[-1].span.end_byte < symbol.span.end_byte:
            stack.pop()
        parent = stack[min(len(stack), MAX_DEPTH) - 1] if stack else None
        (parent.children if parent is not None else top).append(symbol)
        stack.append(symbol)
    return top
