"""Text that is not MLIR: binary data (an object file, an image, UTF-16 text) opened
or checked by mistake. Each of its bytes would start a syntax error of its own (a
cascade); the text gets one clear error instead.

A byte is *not text* when no MLIR text holds it outside comments and string literals:
a control character other than tab, line feed and carriage return (NUL included),
a byte of an invalid UTF-8 sequence, or U+FFFD, the replacement character an editor
puts for bytes that were not UTF-8 when it read the file (so that binary data gets
the same error from the server as from `check` on the file).

The input is binary from its first not-text byte on (one found in a syntax error,
or a NUL, which MLIR's lexer skips as it skips blanks but no text holds) when that
byte is a NUL or another follows within `RUN_BYTES` (a run of them: one stray byte
in a text stays an ordinary syntax error). The one error replaces the syntax errors
from the start of the syntax error that holds it on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import tree_sitter

_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_REPLACEMENT = "\ufffd".encode()
_NOT_TEXT = re.compile(_CONTROL.pattern + b"|" + re.escape(_REPLACEMENT))
_QUOTED = frozenset({"comment", "string", "split_marker"})
RUN_BYTES = 64
"""A second not-text byte this close to the first makes a run: the input is binary."""


def not_text_at(data: bytes | bytearray, start: int, end: int) -> int | None:
    """The first not-text byte of `data[start:end]`, or None."""
    piece = bytes(data[start:end])
    found = _NOT_TEXT.search(piece)
    first = found.start() if found else None
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError as error:
        if first is None or error.start < first:
            first = error.start
    return None if first is None else start + first


def _not_text_in(data: bytes | bytearray, start: int, end: int) -> Iterator[int]:
    """The not-text places of `data[start:end]`, one per byte or character."""
    while (at := not_text_at(data, start, end)) is not None:
        yield at
        start = at + (len(_REPLACEMENT) if data[at : at + 3] == _REPLACEMENT else 1)


def _quoted(root: tree_sitter.Node, at: int) -> tree_sitter.Node | None:
    """The comment or string literal holding byte `at`, if any."""
    node: tree_sitter.Node | None = root.descendant_for_byte_range(at, at + 1)
    while node is not None:
        if node.type in _QUOTED:
            return node
        node = node.parent
    return None


def first_nul(root: tree_sitter.Node, data: bytes | bytearray) -> int | None:
    """The first NUL byte outside comments and string literals, or None."""
    at = data.find(b"\0")
    while at >= 0:
        holder = _quoted(root, at)
        if holder is None:
            return at
        at = data.find(b"\0", max(holder.end_byte, at + 1))
    return None


def binary_start(
    root: tree_sitter.Node, data: bytes | bytearray, errors: Sequence[tuple[int, int]]
) -> tuple[int, int] | None:
    """For binary input (see the module's docstring), given the byte ranges of its
    syntax errors (outermost ERROR nodes): (its first not-text byte, where the syntax
    errors it replaces start); None for text."""
    places: list[tuple[int, int]] = []  # (not-text byte, start of its syntax error)
    for start, end in errors:
        for at in _not_text_in(data, start, end):
            places.append((at, start))
            if len(places) == 2:
                break
        if len(places) == 2:
            break
    nul = first_nul(root, data) if b"\0" in data else None
    if nul is not None:
        holder = [start for start, end in errors if start <= nul < end]
        places = sorted([*places, (nul, holder[0] if holder else nul)])[:2]
    if not places:
        return None
    (first, cut), *rest = places
    if data[first] != 0 and not (rest and rest[0][0] - first <= RUN_BYTES):
        return None
    return first, min(first, cut)


def binary_message(data: bytes | bytearray, at: int) -> tuple[str, int]:
    """The error at the first not-text byte `at`, and how many bytes it covers."""
    byte, length = data[at], 1
    if byte == 0:
        what = "a NUL byte"
    elif _CONTROL.fullmatch(bytes([byte])):
        what = f"the control character 0x{byte:02x}"
    elif data[at : at + 3] == _REPLACEMENT:
        what, length = "U+FFFD, the character put for bytes that are not UTF-8", 3
    else:
        try:
            bytes(data[at : at + 4]).decode("utf-8")
        except UnicodeDecodeError as error:
            length = max(1, error.end) if error.start == 0 else 1
        shown = " ".join(f"0x{b:02x}" for b in data[at : at + length])
        what = f"{shown}, not UTF-8"
    return f"not MLIR text: {what} (a binary file?); no syntax error after it is reported", length
