"""What the commands print besides their results: messages on one line with control
characters escaped, one wording for input/output errors and diagnostics, and the one
rule of exit statuses (`EXIT_STATUSES`; docs/cli.md shows the same table).

Messages quote the user's text (file names, tokens of a file that may be binary), so
nothing in them may reach the terminal raw: control characters, line separators,
bidirectional overrides and undecodable bytes are escaped as `\\xNN` / `\\uNNNN`.
"""

from __future__ import annotations

import argparse
import sys
import unicodedata

# Exit statuses, the same for every subcommand.
DONE = 0
INPUT_ERRORS = 1
USAGE = 2
REFUSED = 3
INTERNAL_ERROR = 4

EXIT_STATUSES: tuple[tuple[int, str, str], ...] = (
    (
        DONE,
        "done",
        "the result is printed or written; `parse`/`check`: no error found (warnings and "
        "lints do not count); a request over a whole file (`fuse --all`) that finds "
        "nothing to change",
    ),
    (
        INPUT_ERRORS,
        "the input has errors",
        "syntax or verifier errors in the input, printed as `check` prints them; nothing "
        "is written",
    ),
    (
        USAGE,
        "usage error",
        "an unknown or malformed option, a value that is never possible (`--tile 0`, "
        "`--unroll 1`), a file that cannot be read or written, or a request for what the "
        "file does not have (no loop on line N, no function NAME, no depth D); the reason "
        "on stderr",
    ),
    (
        REFUSED,
        "refused",
        "the request names what exists but cannot be done: illegal (the dependence it would "
        "break), nothing to do for this loop, or beyond the analysis budget; the reason on "
        "stderr, nothing on stdout, no file written",
    ),
    (
        INTERNAL_ERROR,
        "internal error",
        "a bug of affine-lsp (an exception, or a result that does not verify): nothing is "
        "written; please report it with the input",
    ),
)
"""(status, short meaning, what it covers) for every exit status of every subcommand."""

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


def diagnostic_line(
    path: str, line: int, column: int, severity: str, message: str, code: str
) -> str:
    """A diagnostic as `check` prints it (1-based line and byte column), escaped."""
    return printable(f"{path}:{line + 1}:{column + 1}: {severity}: {message} [{code}]")


def exit_statuses_help() -> str:
    """The exit statuses in one line, for each subcommand's `--help`."""
    meanings = ", ".join(f"{status} {short}" for status, short, _ in EXIT_STATUSES)
    return f"Exit status: {meanings} (docs/cli.md says what each covers)."


def exit_statuses_table() -> str:
    """`EXIT_STATUSES` as the Markdown table of docs/cli.md (the suite checks that it
    holds exactly this table: `python -m affine_lsp.cli.output` prints it)."""
    rows = "".join(
        f"| {status} | {short} | {covers} |\n" for status, short, covers in EXIT_STATUSES
    )
    return "| status | meaning | what it covers |\n|---|---|---|\n" + rows


def add_command(
    subparsers: argparse._SubParsersAction, name: str, description: str
) -> argparse.ArgumentParser:
    """A subcommand's parser, its `--help` ending with the exit statuses."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, description=description, epilog=exit_statuses_help()
    )
    return parser


def fail(command: str, status: int, message: str) -> int:
    """Say `message` for `affine-lsp COMMAND` and give `status` back (`return fail(...)`)."""
    say(command, message)
    return status


def line_number(text: str) -> int:
    """An argparse type for `--line N`: a 1-based line number."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a line number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("line numbers start at 1")
    return value


if __name__ == "__main__":
    print(exit_statuses_table(), end="")
