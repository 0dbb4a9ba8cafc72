"""Line bookkeeping for a UTF-8 document: byte offsets <-> line/column positions.

Lines break at `\\n`, `\\r\\n` and a lone `\\r`, as the Language Server Protocol
says. Line starts are kept in chunks, so that a small edit in a 200k-line
document touches one chunk and shifts the others, instead of re-scanning the
whole text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_CHUNK_LINES = 512

ENCODINGS = ("utf-16", "utf-8", "utf-32")


def _line_starts(data: bytes | bytearray, start: int, end: int) -> list[int]:
    """Offsets just after each line break in data[start:end]."""
    if data.find(b"\r", start, end) < 0:  # (only `\n`: most text, found without a regex)
        lengths = map(len, data[start:end].split(b"\n")[:-1])
        return list(accumulate(map((1).__add__, lengths), initial=start))[1:]
    return [m.end() for m in _LINE_BREAK.finditer(data, start, end)]


def _characters(text: bytes) -> Iterator[tuple[int, int]]:
    """(byte length, UTF-16 units) of each character of possibly invalid UTF-8.

    An invalid byte counts as one character of one unit, as a decoder that
    replaces it with U+FFFD would see it.
    """
    i = 0
    n = len(text)
    while i < n:
        lead = text[i]
        if lead < 0x80:
            width = 1
        elif 0xC2 <= lead <= 0xDF:
            width = 2
        elif 0xE0 <= lead <= 0xEF:
            width = 3
        elif 0xF0 <= lead <= 0xF4:
            width = 4
        else:
            width = 1
        continuation = text[i + 1 : i + width]
        if width > 1 and (len(continuation) < width - 1 or any(b >> 6 != 2 for b in continuation)):
            width = 1
        yield width, 2 if width == 4 else 1
        i += width


def column_units(text: bytes, encoding: str) -> int:
    """Length of a piece of a line in the code units of `encoding`."""
    if encoding == "utf-8" or text.isascii():
        return len(text)
    if encoding == "utf-32":
        return sum(1 for _ in _characters(text))
    return sum(units for _, units in _characters(text))


def units_to_bytes(line: bytes, units: int, encoding: str) -> int:
    """Byte length of the first `units` code units of a line (clamped to the line)."""
    if units <= 0:
        return 0
    if encoding == "utf-8" or line.isascii():
        return min(units, len(line))
    count = 0
    offset = 0
    for width, char_units in _characters(line):
        if encoding == "utf-32":
            char_units = 1
        if count + char_units > units:
            return offset
        count += char_units
        offset += width
    return len(line)


class LocalLines:
    """Positions inside one stretch of a document, relative to where it starts: (lines
    after its first line, character), the character counted from the stretch's start
    on its first line. Adding the stretch's own position gives the document position;
    relative positions stay true while the stretch's text, and the byte after it (which
    may pair with a final `\r`), do."""

    def __init__(self, data: bytes | bytearray, start: int, end: int, encoding: str) -> None:
        self._data = data
        self._encoding = encoding
        # (one byte further: a `\r\n` pair across `end` is one line break)
        self._starts = [start, *_line_starts(data, start, min(end + 1, len(data)))]

    def position(self, offset: int) -> tuple[int, int]:
        lines = bisect_right(self._starts, offset) - 1
        start = self._starts[max(lines, 0)]
        return lines, column_units(bytes(self._data[start:offset]), self._encoding)


class LineIndex:
    """Byte offsets of line starts, chunked for cheap incremental updates."""

    def __init__(self, data: bytes | bytearray) -> None:
        starts = [0, *_line_starts(data, 0, len(data))]
        self._length = len(data)
        self._bases: list[int] = []
        self._first_lines: list[int] = []
        self._chunks: list[list[int]] = []
        self._store(0, starts, 0)

    def copy(self) -> LineIndex:
        """An independent copy (chunks are replaced by edits, never changed in place,
        so the copy shares them)."""
        copy = object.__new__(LineIndex)
        copy._length = self._length
        copy._bases = list(self._bases)
        copy._first_lines = list(self._first_lines)
        copy._chunks = list(self._chunks)
        return copy

    # -- construction -------------------------------------------------------

    def _store(self, at: int, starts: Sequence[int], first_line: int) -> None:
        """Insert chunks for absolute line `starts` before chunk index `at`."""
        for i in range(0, len(starts), _CHUNK_LINES):
            part = starts[i : i + _CHUNK_LINES]
            base = part[0]
            self._bases.insert(at, base)
            self._first_lines.insert(at, first_line + i)
            self._chunks.insert(at, list(map(base.__rsub__, part)))
            at += 1

    # -- queries ------------------------------------------------------------

    @property
    def line_count(self) -> int:
        return self._first_lines[-1] + len(self._chunks[-1])

    @property
    def length(self) -> int:
        return self._length

    def line_start(self, line: int) -> int:
        """Byte offset where `line` starts (clamped to the document)."""
        if line <= 0:
            return 0
        if line >= self.line_count:
            return self._length
        c = bisect_right(self._first_lines, line) - 1
        return self._bases[c] + self._chunks[c][line - self._first_lines[c]]

    def line_of(self, offset: int) -> int:
        """The line containing byte `offset`."""
        offset = max(0, min(offset, self._length))
        c = bisect_right(self._bases, offset) - 1
        return self._first_lines[c] + bisect_right(self._chunks[c], offset - self._bases[c]) - 1

    def line_end(self, data: bytes | bytearray, line: int) -> int:
        """Byte offset of the end of `line`'s content (before its line break)."""
        end = self.line_start(line + 1) if line + 1 < self.line_count else self._length
        while end > self.line_start(line) and data[end - 1] in (0x0A, 0x0D):
            end -= 1
        return end

    def position(
        self, data: bytes | bytearray, offset: int, encoding: str = "utf-16"
    ) -> tuple[int, int]:
        """(line, character) of a byte offset, characters in `encoding` units."""
        offset = max(0, min(offset, self._length))
        line = self.line_of(offset)
        start = self.line_start(line)
        return line, column_units(bytes(data[start:offset]), encoding)

    def offset(
        self, data: bytes | bytearray, line: int, character: int, encoding: str = "utf-16"
    ) -> int:
        """Byte offset of an LSP position; out-of-range values are clamped."""
        if line < 0:
            return 0
        if line >= self.line_count:
            return self._length
        start = self.line_start(line)
        end = self.line_end(data, line)
        return start + units_to_bytes(bytes(data[start:end]), character, encoding)

    # -- updates ------------------------------------------------------------

    def replace(self, new_data: bytes | bytearray, start: int, old_end: int, new_end: int) -> None:
        """Account for old bytes [start, old_end) having become [start, new_end)."""
        delta = new_end - old_end
        # A `\r` before `start` may pair with a `\n` the edit inserts or removes.
        first = self.line_of(max(0, start - 1))
        last = self.line_of(old_end)
        c0 = bisect_right(self._first_lines, first) - 1
        c1 = bisect_right(self._first_lines, last) - 1
        region_start = self._bases[c0]
        old_region_end = self._bases[c1 + 1] if c1 + 1 < len(self._bases) else self._length + 1
        new_length = self._length + delta
        region_end = min(old_region_end + delta, new_length + 1)
        old_lines = sum(len(self._chunks[c]) for c in range(c0, c1 + 1))
        first_line = self._first_lines[c0]
        starts = [region_start, *_line_starts(new_data, region_start, min(region_end, new_length))]
        starts = [s for s in starts if s < region_end]
        del self._bases[c0 : c1 + 1], self._first_lines[c0 : c1 + 1], self._chunks[c0 : c1 + 1]
        self._store(c0, starts, first_line)
        line_delta = len(starts) - old_lines
        for c in range(c0 + (len(starts) + _CHUNK_LINES - 1) // _CHUNK_LINES, len(self._bases)):
            self._bases[c] += delta
            self._first_lines[c] += line_delta
        self._length = new_length
