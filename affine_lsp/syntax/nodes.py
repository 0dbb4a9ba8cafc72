"""Small helpers over tree-sitter nodes. Every traversal here is iterative, so
that deeply nested input cannot exhaust Python's recursion limit."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter

Node = tree_sitter.Node


@dataclass(frozen=True, slots=True, init=False)
class Span:
    """A byte range [start_byte, end_byte) of a document.

    Line/column positions are computed on demand from the document
    (`SourceDocument.point` / `.position`), which keeps building spans cheap.
    """

    start_byte: int
    end_byte: int

    def __init__(self, start_byte: int, end_byte: int) -> None:
        # Spans are made by the hundred thousand: the slots are set directly
        # (a frozen dataclass's own __init__ goes through object.__setattr__).
        _set_start(self, start_byte)
        _set_end(self, end_byte)

    @classmethod
    def of(cls, node: Node) -> Span:
        return cls(node.start_byte, node.end_byte)

    @classmethod
    def between(cls, first: Node, last: Node) -> Span:
        return cls(first.start_byte, last.end_byte)

    def contains(self, offset: int) -> bool:
        return self.start_byte <= offset <= self.end_byte

    def overlaps(self, start: int, end: int) -> bool:
        return self.start_byte < end and start < self.end_byte


# The slot descriptors (mypy sees the dataclass fields instead).
_set_start = Span.start_byte.__set__  # type: ignore[attr-defined,misc]
_set_end = Span.end_byte.__set__  # type: ignore[attr-defined,misc]


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
    return node.child_by_field_name(name)


def fields(node: Node, name: str) -> list[Node]:
    return node.children_by_field_name(name)


def node_at(root: Node, offset: int) -> Node:
    """The smallest node spanning byte `offset`."""
    return root.descendant_for_byte_range(offset, offset) or root
