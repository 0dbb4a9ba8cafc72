"""Chunks whose text the whole document's tree does not parse as the chunk alone.

`affine-lsp check` (as `mlir-opt --split-input-file`) parses each `// -----`
chunk of a file on its own; the editor parses the whole document as one tree.
Where a chunk's text is valid the two trees agree, but tree-sitter's error
recovery can differ: an item left open before a marker runs on into the next
chunk (a marker in a comment or a string splits there all the same), and how an
error is recovered may depend on what follows. So the diagnostics of a chunk
whose part of the tree has errors, or crosses its edges, are taken from the
chunk parsed alone whenever that parse differs from the whole tree's (every
chunk's, when the whole document does not parse: its root is then one ERROR, one
syntax error), checked as `check` checks it (`checks.check_document` on the chunk's text): the same
text gets the same diagnostics wherever it is checked.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from affine_lsp.checks import (
    SPLIT_MARKER,
    CheckOptions,
    Chunk,
    Diagnostic,
    check_document,
    syntax_diagnostics,
)
from affine_lsp.checks import split_chunks as split_text
from affine_lsp.syntax import Node, SourceDocument

_CACHE_SIZE = 64

Shape = tuple
"""The root's type, then the top-level nodes of a tree in a range: type, start and
end relative to the range, and for a node with errors every node under it (where
recovery may differ)."""


@dataclass(frozen=True)
class SeparateChunk:
    """A chunk checked on its own: where its zone starts and ends in the document
    (up to the next chunk: the marker after it included), and its diagnostics in
    document offsets, which replace those of the zone."""

    start: int
    end: int
    diagnostics: tuple[Diagnostic, ...]


@dataclass
class _Alone:
    shape: Shape
    document: SourceDocument
    diagnostics: dict[CheckOptions, tuple[Diagnostic, ...]]  # in the chunk's offsets
    syntax: tuple[tuple[int, int, str], ...] | None = None  # its syntax errors, the same

    def syntax_errors(self) -> tuple[tuple[int, int, str], ...]:
        if self.syntax is None:
            self.syntax = _errors(syntax_diagnostics(self.document), 0)
        return self.syntax


class SeparateChunks:
    """The chunks of a document that are checked on their own (see the module
    docstring), with a cache of chunks parsed alone, by their text."""

    def __init__(self) -> None:
        self._alone: OrderedDict[bytes, _Alone] = OrderedDict()

    def of(
        self, document: SourceDocument, options: CheckOptions, syntax: Sequence[Diagnostic]
    ) -> list[SeparateChunk]:
        """The separate chunks of `document`, whose syntax errors (as a whole) are
        `syntax`: some rules of syntax errors look at the whole input (input that
        stops being text, for one, has no error reported after it), so from the
        first one on each chunk's are compared with those of the chunk alone."""
        data = bytes(document.data)
        if SPLIT_MARKER not in data:
            return []
        root = document.tree.root_node
        chunks = split_text(data)
        found = []
        parsed = root.type != "ERROR"  # (else its one error stands for every chunk)
        first_error = min((d.span.start_byte for d in syntax), default=None)
        forced = False
        for index, chunk in enumerate(chunks):
            lo, hi = chunk.start_byte, chunk.start_byte + len(chunk.data)
            last = index + 1 == len(chunks)
            zone_end = len(data) + 1 if last else chunks[index + 1].start_byte
            nodes = _top_level(root, lo, hi)
            separate, forced = forced, False
            compare_syntax = first_error is not None and zone_end > first_error
            if not separate and parsed:
                if not compare_syntax and not any(
                    n.has_error or n.start_byte < lo or n.end_byte > hi for n in nodes
                ):
                    continue
                alone = self._parsed(chunk.data)
                separate = alone.shape != _shape(root, nodes, lo)
                if not separate and compare_syntax:
                    here = [d for d in syntax if lo <= d.span.start_byte < zone_end]
                    separate = alone.syntax_errors() != _errors(here, lo)
            if not separate and parsed:
                continue
            diagnostics = self._checked(self._parsed(chunk.data), chunk, options)
            found.append(SeparateChunk(lo, zone_end, diagnostics))
            # An item that runs up to the next chunk (an open region is reported where
            # it ends: there) takes it along.
            forced = any(n.end_byte >= zone_end for n in nodes)
        return found

    def _parsed(self, text: bytes) -> _Alone:
        alone = self._alone.get(text)
        if alone is None:
            document = SourceDocument(text)
            root = document.tree.root_node
            shape = _shape(root, root.children, 0)
            alone = self._alone[text] = _Alone(shape, document, {})
            while len(self._alone) > _CACHE_SIZE:
                self._alone.popitem(last=False)
        self._alone.move_to_end(text)
        return alone

    @staticmethod
    def _checked(alone: _Alone, chunk: Chunk, options: CheckOptions) -> tuple[Diagnostic, ...]:
        """The chunk's diagnostics in document offsets (kept in the chunk's own: the
        same text may come back elsewhere)."""
        if options not in alone.diagnostics:
            alone.diagnostics[options] = tuple(check_document(alone.document, options))
        return tuple(chunk.to_file(d) for d in alone.diagnostics[options])


def _errors(found: Sequence[Diagnostic], base: int) -> tuple[tuple[int, int, str], ...]:
    return tuple(
        sorted((d.span.start_byte - base, d.span.end_byte - base, d.message) for d in found)
    )


def _top_level(root: Node, lo: int, hi: int) -> list[Node]:
    """The top-level nodes (comments and tokens included) in [lo, hi) or across it."""
    index = root.walk().goto_first_child_for_byte(lo)
    count = root.child_count
    index = count if index is None else index
    while index > 0 and root.child(index - 1).end_byte > lo:
        index -= 1
    found = []
    while index < count:
        node = root.child(index)
        if node.start_byte >= hi:
            break
        if node.end_byte > lo or node.start_byte >= lo:
            found.append(node)
        index += 1
    return found


def _shape(root: Node, nodes: Sequence[Node], base: int) -> Shape:
    """The shape of `nodes` under `root` (whose type counts: an ERROR root is one
    syntax error for all it holds)."""
    return (root.type,) + tuple(
        (node.type, node.start_byte - base, node.end_byte - base, _inside(node, base))
        for node in nodes
    )


def _inside(node: Node, base: int) -> tuple:
    """Every node under a node with errors (tokens and missing ones included), as
    (type, start, end, missing); () for a node without errors."""
    if not node.has_error:
        return ()
    found = []
    stack = list(reversed(node.children))
    while stack:
        child = stack.pop()
        start, end = child.start_byte - base, child.end_byte - base
        found.append((child.type, start, end, child.is_missing))
        stack.extend(reversed(child.children))
    return tuple(found)


def within(diagnostic: Diagnostic, separate: Sequence[SeparateChunk]) -> bool:
    """Whether a diagnostic starts in the zone of a separate chunk."""
    at = diagnostic.span.start_byte
    return any(chunk.start <= at < chunk.end for chunk in separate)
