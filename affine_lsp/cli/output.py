"""What the commands print besides their results: messages on one line with control
characters escaped, and one wording for input/output errors.

Messages quote the user's text (file names, tokens of a file that may be binary), so
nothing in them may reach the terminal raw: control characters, line separators,
bidirectional overrides and undecodable bytes are escaped as `\\xNN` / `\\uNNNN`.
"""

from __future__ import annotations

import sys
import unicodedata

_ESCAPED_CATEGORIES = {"Cc", "Cs", "Zl", "Zp"}
# Bidirectional marks, embeddings, overrides and isolates reorder what follows them.
_BIDI_CONTROLS = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def printable(text: str) -> str:
    """`text` with every character that could act on a terminal escaped."""
    if text.isprintable():
        return text
    return "".join(_escape(character) for character in text)


def _escape(character: str) -> str:
    code = ord(character)
    if code in _BIDI_CONTROLS or unicodedata.category(character) in _ESCAPED_CATEGORIES:
        if character in _SHORT:
            return _SHORT[character]
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a file name
            return f"\\x{code - 0xDC00:02x}"
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return character


def say(command: str, message: str) -> None:
    """A message of `affine-lsp COMMAND` on stderr."""
    print(f"affine-lsp {command}: {printable(message)}", file=sys.stderr)


def error_reason(error: OSError) -> str:
    """What the system says went wrong, e.g. `No such file or directory`."""
    return error.strerror or str(error) or type(error).__name__


def read_input(command: str, path: str) -> bytes | None:
    """The bytes of the file at `path`, or None after saying `cannot read PATH: reason`."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        say(command, f"cannot read {path}: {error_reason(error)}")
        return None
