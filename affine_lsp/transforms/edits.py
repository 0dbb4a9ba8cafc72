"""Byte-level text edits: applying them, mapping offsets through them, and the
line/indentation helpers that keep inserted code in the layout of its neighbours."""

from __future__ import annotations

from collections.abc import Iterable

from affine_lsp.checks import TextEdit
from affine_lsp.syntax import Span, decode, encode


class OverlappingEdits(ValueError):
    """Two edits touch the same bytes."""


def sorted_edits(edits: Iterable[TextEdit]) -> list[TextEdit]:
    """Edits in document order; raises OverlappingEdits if two overlap."""
    ordered = sorted(edits, key=lambda e: (e.span.start_byte, e.span.end_byte))
    for before, after in zip(ordered, ordered[1:], strict=False):
        if after.span.start_byte < before.span.end_byte or (
            after.span.start_byte == before.span.start_byte
            and before.span.end_byte == before.span.start_byte
            and after.span.end_byte == after.span.start_byte
        ):
            raise OverlappingEdits(f"edits overlap at byte {after.span.start_byte}")
    return ordered


def apply_edits(data: bytes, edits: Iterable[TextEdit]) -> bytes:
    out = bytearray()
    position = 0
    for edit in sorted_edits(edits):
        out += data[position : edit.span.start_byte]
        out += encode(edit.new_text)
        position = edit.span.end_byte
    out += data[position:]
    return bytes(out)


class EditMap:
    """Maps byte offsets between a text and the text after `edits`."""

    def __init__(self, edits: Iterable[TextEdit]) -> None:
        self._edits = sorted_edits(edits)
        self._new_spans: list[tuple[int, int, TextEdit]] = []
        delta = 0
        for edit in self._edits:
            start = edit.span.start_byte + delta
            length = len(encode(edit.new_text))
            self._new_spans.append((start, start + length, edit))
            delta += length - (edit.span.end_byte - edit.span.start_byte)

    def to_new(self, offset: int) -> int | None:
        """The new offset of an old offset outside every edited span (None inside one)."""
        delta = 0
        for edit in self._edits:
            if offset < edit.span.start_byte:
                break
            if offset < edit.span.end_byte:
                return None
            delta += len(encode(edit.new_text)) - (edit.span.end_byte - edit.span.start_byte)
        return offset + delta

    def to_old(self, offset: int) -> tuple[int | None, TextEdit | None]:
        """(old offset, None) outside inserted text; (None, edit) inside an edit's new text."""
        delta = 0
        for start, end, edit in self._new_spans:
            if offset < start:
                break
            if offset < end:
                return None, edit
            delta = end - edit.span.end_byte
        return offset - delta, None

    def new_start(self, target: TextEdit) -> int:
        """Where an edit's new text starts in the new text."""
        for start, _, edit in self._new_spans:
            if edit is target:
                return start
        raise KeyError("not one of the edits")


def line_start(data: bytes, offset: int) -> int:
    return data.rfind(b"\n", 0, offset) + 1


def next_line_start(data: bytes, offset: int) -> int:
    """Start of the line after the one holding `offset` (len(data) at the end)."""
    found = data.find(b"\n", offset)
    return len(data) if found < 0 else found + 1


def indentation(data: bytes, offset: int) -> str:
    """The leading whitespace of the line holding `offset`."""
    start = line_start(data, offset)
    end = start
    while end < len(data) and data[end : end + 1] in (b" ", b"\t"):
        end += 1
    return decode(data[start:end])


def only_whitespace(data: bytes, start: int, end: int) -> bool:
    return not data[start:end].strip()


def rest_of_line_is_blank(data: bytes, offset: int) -> bool:
    """Only whitespace or a `//` comment between `offset` and the end of its line."""
    rest = data[offset : next_line_start(data, offset)].strip()
    return not rest or rest.startswith(b"//")


def indent_edits(data: bytes, start: int, end: int, delta: int) -> list[TextEdit]:
    """Edits (relative to `start`) shifting every line of [start, end) by `delta` spaces."""
    if delta == 0:
        return []
    edits = []
    position = start
    while position < end:
        if delta > 0:
            if data[position : position + 1] not in (b"\n", b"\r", b""):
                edits.append(TextEdit(Span(position - start, position - start), " " * delta))
        else:
            strip = 0
            while strip < -delta and data[position + strip : position + strip + 1] == b" ":
                strip += 1
            if strip:
                edits.append(TextEdit(Span(position - start, position - start + strip), ""))
        position = next_line_start(data, position)
    return edits


def shifted_offset(edits: list[TextEdit], offset: int) -> int:
    """Where relative offset `offset` (an op's start) lands after `edits` (relative to
    the same start; text inserted right at `offset` comes after it)."""
    delta = 0
    for edit in edits:
        if edit.span.end_byte <= offset and not (
            edit.span.start_byte == edit.span.end_byte == offset and edit.new_text.strip()
        ):
            delta += len(encode(edit.new_text)) - (edit.span.end_byte - edit.span.start_byte)
    return offset + delta
