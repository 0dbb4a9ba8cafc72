"""A source document: UTF-8 bytes, its line index and its syntax tree, edited in place.

Edits arrive as LSP content changes (a range in line/character positions plus
replacement text). Each edit is applied to the bytes, the line index and the
tree (`Tree.edit`), and the tree is re-parsed once per batch with the old tree,
so tree-sitter re-uses everything the edit did not touch.

The tree must be the one a fresh parse of the text gives. Where the text has
syntax errors, tree-sitter's error recovery can depend on which old nodes it
re-used (a re-used node is skipped whole where a fresh parse would skip some of
its tokens and recover inside it). So where the re-parsed tree has errors, the
top-level items with errors and one item on either side are parsed once more
with nothing re-used in them (`_reparse_errors`): the parse reaches that window
in the state a fresh parse has there (what precedes is error-free), parses it
as a fresh parse does, and if the items at its edges come out unchanged and
error-free the recovery ended inside it, so what follows parses as before. If
they do not, the window grows, up to a fresh parse of the whole text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import tree_sitter

from affine_lsp.syntax.language import new_parser, parser_input
from affine_lsp.syntax.lines import LineIndex

_LONE_CR = re.compile(rb"\r(?!\n)")

Position = tuple[int, int]
"""(line, character) as in LSP; the character unit is the document's encoding."""


def encode(text: str) -> bytes:
    """UTF-8 bytes of text from a client; lone surrogates survive the round trip."""
    return text.encode("utf-8", errors="surrogatepass")


def decode(data: bytes | bytearray) -> str:
    """The inverse of `encode`; invalid bytes become U+FFFD."""
    try:
        return bytes(data).decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        return bytes(data).decode("utf-8", errors="replace")


@dataclass(frozen=True)
class ContentChange:
    """One LSP content change: replace `range` (or everything) with `text`."""

    text: str
    range: tuple[Position, Position] | None = None


@dataclass(frozen=True)
class ByteEdit:
    """An applied edit in byte offsets: old [start, old_end) is now [start, new_end)."""

    start: int
    old_end: int
    new_end: int

    @property
    def delta(self) -> int:
        return self.new_end - self.old_end


class SourceDocument:
    """Bytes, line index and syntax tree of one document."""

    def __init__(self, text: str | bytes, *, encoding: str = "utf-16") -> None:
        self.encoding = encoding
        self._parser = new_parser()
        self._reset(encode(text) if isinstance(text, str) else bytes(text))

    def _reset(self, data: bytes) -> None:
        self.data = bytearray(data)
        self.lines = LineIndex(self.data)
        self._has_lone_cr = bool(_LONE_CR.search(self.data))
        self.tree: tree_sitter.Tree = self._parser.parse(parser_input(bytes(self.data)))

    def snapshot(self) -> SourceDocument:
        """An independent copy of the document as it is now, made without parsing.

        The tree is shared copy-on-write (`Tree.copy`); bytes and line index are
        copied. Editing either document leaves the other as it was, so a snapshot
        can be read in another thread while the original keeps being edited.
        """
        copy = object.__new__(SourceDocument)
        copy.encoding = self.encoding
        copy._parser = new_parser()
        copy.data = bytearray(self.data)
        copy.lines = self.lines.copy()
        copy._has_lone_cr = self._has_lone_cr
        copy.tree = self.tree.copy()
        return copy

    # -- text access --------------------------------------------------------

    @property
    def source(self) -> bytes:
        """The document as immutable bytes."""
        return bytes(self.data)

    @property
    def text(self) -> str:
        return decode(self.data)

    def slice(self, start: int, end: int) -> str:
        return decode(self.data[start:end])

    # -- positions ----------------------------------------------------------

    def position(self, offset: int) -> Position:
        """LSP position of a byte offset, in the document's encoding."""
        return self.lines.position(self.data, offset, self.encoding)

    def offset(self, position: Position) -> int:
        """Byte offset of an LSP position (clamped into the document)."""
        line, character = position
        return self.lines.offset(self.data, line, character, self.encoding)

    @property
    def has_lone_cr(self) -> bool:
        """Whether a lone `\\r` breaks a line (LSP lines and tree-sitter rows then differ)."""
        return self._has_lone_cr

    def point(self, offset: int) -> tuple[int, int]:
        """tree-sitter point (row, byte column) of an offset; rows count `\\n` only."""
        offset = max(0, min(offset, len(self.data)))
        if not self._has_lone_cr:
            line = self.lines.line_of(offset)
            return line, offset - self.lines.line_start(line)
        row = self.data.count(b"\n", 0, offset)
        return row, offset - (self.data.rfind(b"\n", 0, offset) + 1)

    # -- edits --------------------------------------------------------------

    def apply_changes(self, changes: Iterable[ContentChange]) -> list[ByteEdit]:
        """Apply LSP content changes in order and re-parse once; returns the edits."""
        edits: list[ByteEdit] = []
        full_text = False
        for change in changes:
            if change.range is None:
                self._reset(encode(change.text))
                edits = [ByteEdit(0, 0, len(self.data))]
                full_text = True
                continue
            start, end = sorted((self.offset(change.range[0]), self.offset(change.range[1])))
            edits.append(self._splice(start, end, encode(change.text)))
        if edits and not (full_text and len(edits) == 1):
            self._reparse()
        return edits

    def replace(self, start: int, end: int, text: str) -> ByteEdit:
        """Replace bytes [start, end) with text and re-parse."""
        edit = self._splice(start, end, encode(text))
        self._reparse()
        return edit

    def _reparse(self) -> None:
        """Parse the edited text reusing the old tree (see the module docstring for
        what happens where the result has errors)."""
        data = parser_input(bytes(self.data))
        tree = self._parser.parse(data, self.tree)
        if tree.root_node.has_error:
            tree = self._reparse_errors(data, tree)
        self.tree = tree

    def _reparse_errors(self, data: bytes, tree: tree_sitter.Tree) -> tree_sitter.Tree:
        """`tree` (which has errors) with its error items parsed as a fresh parse does."""
        children = tree.root_node.children
        wrong = [i for i, child in enumerate(children) if child.has_error]
        margin = 1
        while wrong:
            first, last = max(0, wrong[0] - margin), min(len(children) - 1, wrong[-1] + margin)
            if first == 0 and last == len(children) - 1:
                break  # the window is the whole text
            edges = [children[i] for i in {first, last} if 0 < i < len(children) - 1]
            expected = {(edge.type, edge.start_byte, edge.end_byte) for edge in edges}
            lo = children[first].start_byte if first > 0 else 0
            hi = children[last].end_byte if last < len(children) - 1 else len(data)
            window = tree.copy()
            window.edit(
                start_byte=lo,
                old_end_byte=hi,
                new_end_byte=hi,
                start_point=self.point(lo),
                old_end_point=self.point(hi),
                new_end_point=self.point(hi),
            )
            again = self._parser.parse(data, window)
            root = again.root_node
            found = set()
            for edge in edges:
                child = root.first_child_for_byte(edge.start_byte)
                if child is not None and not child.has_error:
                    found.add((child.type, child.start_byte, child.end_byte))
            if found == expected:
                return again
            margin *= 4
        return self._parser.parse(data)

    def _splice(self, start: int, end: int, new: bytes) -> ByteEdit:
        start_point = self.point(start)
        old_end_point = self.point(end)
        if b"\r" in new or (self._has_lone_cr and b"\n" in new) or self._touches_cr(start, end):
            update_cr = True
        else:
            update_cr = False
        self.data[start:end] = new
        new_end = start + len(new)
        self.lines.replace(self.data, start, end, new_end)
        if update_cr:
            self._has_lone_cr = bool(_LONE_CR.search(self.data))
        self.tree.edit(
            start_byte=start,
            old_end_byte=end,
            new_end_byte=new_end,
            start_point=start_point,
            old_end_point=old_end_point,
            new_end_point=self.point(new_end),
        )
        return ByteEdit(start, end, new_end)

    def _touches_cr(self, start: int, end: int) -> bool:
        """Whether removing [start, end) can change which `\\r` stand alone."""
        lo = max(0, start - 1)
        return b"\r" in self.data[lo : end + 1]
