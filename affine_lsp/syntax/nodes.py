"""Small helpers over tree-sitter nodes. Every traversal here is iterative, so
that deeply nested input cannot exhaust Python's recursion limit."""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter

from affine_lsp import _binding
from affine_lsp.syntax.language import mlir_language

Node = tree_sitter.Node


# A byte range [start_byte, end_byte) of a document, immutable, compared and hashed
# by value: `Span(start, end)`, `Span.of(node)`, `Span.between(first, last)`,
# `contains(offset)` (start <= offset <= end), `overlaps(start, end)`. Line/column
# positions are computed on demand from the document (`SourceDocument.point` /
# `.position`). Models hold spans by the hundred thousand: the type is written in C
# (`affine_lsp/_span.c`), where making one costs a fifth of a Python class's.
Span = _binding.Span


class _FieldIds(dict[str, int]):
    """Field ids of the grammar by name; an unknown name is id 0, which no child has."""

    def __missing__(self, name: str) -> int:
        return 0


def _field_ids() -> dict[str, int]:
    language = mlir_language()
    ids = _FieldIds()
    for field_id in range(1, language.field_count + 1):
        name = language.field_name_for_id(field_id)
        if name is not None:
            ids[name] = field_id
    return ids


# `node.child_by_field_id(FIELD["body"])` is `node.child_by_field_name("body")` at
# a third of the cost (tree-sitter finds a field's id by comparing its name with
# every field name of the grammar, on each call): the model builder and the checks
# ask for fields by the hundred thousand.
FIELD: dict[str, int] = _field_ids()


def text(node: Node | None) -> str:
    """The source text of a node ('' for None)."""
    if node is None:
        return ""
    raw = node.text
    return raw.decode("utf-8", errors="replace") if raw is not None else ""


def walk(node: Node) -> Iterator[Node]:
    """All nodes under `node` (inclusive) in document order."""
    cursor = node.walk()
    while True:
        current = cursor.node
        if current is not None:  # always, for a cursor on a node
            yield current
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent() or cursor.node == node:
                return


def walk_named(node: Node, *, into: frozenset[str] | None = None) -> Iterator[Node]:
    """Named nodes under `node` in document order (skipping anonymous tokens)."""
    for n in walk(node):
        if n.is_named:
            yield n


def first_leaf(node: Node) -> Node:
    """The first leaf under `node` that is not a comment."""
    for n in walk(node):
        if n.child_count == 0 and n.type not in ("comment", "split_marker"):
            return n
    return node


def previous_leaf(node: Node) -> Node | None:
    """The leaf just before `node` in the tree, or None."""
    current: Node | None = node
    while current is not None:
        sibling = current.prev_sibling
        if sibling is not None:
            while sibling.child_count:
                sibling = sibling.children[-1]
            return sibling
        current = current.parent
    return None


def ancestors(node: Node) -> Iterator[Node]:
    """Parents of `node`, innermost first."""
    current = node.parent
    while current is not None:
        yield current
        current = current.parent


def field(node: Node, name: str) -> Node | None:
    return node.child_by_field_id(FIELD[name])


def fields(node: Node, name: str) -> list[Node]:
    return node.children_by_field_id(FIELD[name])


def node_at(root: Node, offset: int) -> Node:
    """The smallest node spanning byte `offset`."""
    return root.descendant_for_byte_range(offset, offset) or root
