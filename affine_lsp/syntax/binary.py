"""Text that is not MLIR: binary data (an object file, an image, UTF-16 text) opened
or checked by mistake. Each of its bytes would start a syntax error of its own (a
cascade); the text gets one clear error instead.

A byte is *not text* when no MLIR text holds it outside comments and string literals:
a control character other than tab, line feed and carriage return, a byte of an
invalid UTF-8 sequence, or U+FFFD, the replacement character an editor puts for
bytes that were not UTF-8 when it read the file (so that binary data gets the same
error from the server as from `check` on the file). NULs are not-text bytes too, but
in a text without syntax errors MLIR's lexer skips them as it skips blanks (MLIR's
own tests hold one), and so does the grammar.

An input with syntax errors is binary from a not-text byte on (in a syntax error, or
a NUL outside comments and strings) that another follows within `RUN_BYTES` (a run
of them: one stray byte in a text stays an ordinary syntax error). The one error
replaces the syntax errors from the start of the syntax error that holds it on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from itertools import islice

import tree_sitter

_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_REPLACEMENT = "\ufffd".encode()
_NOT_TEXT = re.compile(_CONTROL.pattern + b"|" + re.escape(_REPLACEMENT))
_QUOTED = frozenset({"comment", "string", "split_marker"})
_LOOKED = 16  # not-text bytes looked at, from either source
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


def _nuls(root: tree_sitter.Node, data: bytes | bytearray) -> Iterator[int]:
    """The NUL bytes outside comments and string literals."""
    at = data.find(b"\0")
    while at >= 0:
        holder = _quoted(root, at)
        if holder is None:
            yield at
            at = data.find(b"\0", at + 1)
        else:
            at = data.find(b"\0", max(holder.end_byte, at + 1))


def binary_start(
    root: tree_sitter.Node, data: bytes | bytearray, errors: Sequence[tuple[int, int]]
) -> tuple[int, int] | None:
    """For binary input (see the module's docstring), given the byte ranges of its
    syntax errors (outermost ERROR nodes): (the not-text byte it starts at, where the
    syntax errors it replaces start); None for text."""
    places = []  # (not-text byte, where the syntax errors it replaces start)
    for start, end in errors:
        places += [(at, start) for at in islice(_not_text_in(data, start, end), _LOOKED)]
        if len(places) >= _LOOKED:
            break
    if errors and b"\0" in data:
        for at in islice(_nuls(root, data), _LOOKED):
            holder = next((start for start, end in errors if start <= at < end), at)
            places.append((at, holder))
    places.sort()
    for (at, cut), (after, _) in zip(places, places[1:], strict=False):
        if after - at <= RUN_BYTES:
            return at, min(at, cut)
    return None


def binary_message(data: bytes | bytearray, at: int) -> tuple[str, int]:
    """The error at the first not-text byte `at`, and how many bytes it covers. Bytes
    are written as `\\xNN` (never raw: the message goes to terminals and editors)."""
    byte, length = data[at], 1
    if byte == 0:
        what = "\\x00, a NUL byte"
    elif _CONTROL.fullmatch(bytes([byte])):
        what = f"\\x{byte:02x}, a control character"
    elif data[at : at + 3] == _REPLACEMENT:
        what, length = "U+FFFD, the character put for bytes that are not UTF-8", 3
    else:
        try:
            bytes(data[at : at + 4]).decode("utf-8")
        except UnicodeDecodeError as error:
            length = max(1, error.end) if error.start == 0 else 1
        shown = "".join(f"\\x{b:02x}" for b in data[at : at + length])
        what = f"{shown}, not UTF-8"
    return f"not MLIR text: {what} (a binary file?); no syntax error after it is reported", length
