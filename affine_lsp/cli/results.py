"""What the commands that rewrite or draw a file share: the errors of their input,
printed as `PATH:LINE:COLUMN: error: MESSAGE`, and their result written to stdout or
to a file replaced atomically (kept apart from `output`, which every command loads,
as it loads the checker)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile

from affine_lsp.checks import Severity, check_document
from affine_lsp.cli.output import error_reason, printable, say
from affine_lsp.syntax import SourceDocument


def report_errors(path: str, document: SourceDocument, first_line: int = 0) -> bool:
    """Print the errors of `document` (a file's text from its 0-based line
    `first_line`) as `PATH:LINE:COLUMN: error: MESSAGE`; whether there were any."""
    found = False
    for diagnostic in check_document(document):
        if diagnostic.severity != Severity.ERROR:
            continue
        line, column = document.point(diagnostic.span.start_byte)
        message = f"{path}:{first_line + line + 1}:{column + 1}: error: {diagnostic.message}"
        print(printable(message), file=sys.stderr)
        found = True
    return found


def write_atomically(path: str, data: bytes) -> None:
    """Replace the file at `path` (through links) by `data`: written to a temporary
    file beside it, flushed to disk, given the file's permissions (a new file: those
    the umask leaves, as `open` gives), then renamed over it in one step. On any
    failure the file is untouched and the temporary file is removed; the error is
    raised (OSError for the system's)."""
    target = os.path.realpath(path)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=os.path.dirname(target)
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, _mode_for(target))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _mode_for(target: str) -> int:
    """The permissions the file at `target` has, or a new file would get (mkstemp's
    temporary file is private whatever the umask)."""
    try:
        return os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0o022)
        os.umask(umask)
        return 0o666 & ~umask


def write_result(command: str, args: argparse.Namespace, output: bytes) -> int:
    """Print `output`, or write it to `--output`/the input file (`--in-place`)
    atomically: exit status 0, or 2 when it cannot be written (the file is untouched)."""
    if not (args.output or args.in_place):
        sys.stdout.buffer.write(output)
        sys.stdout.flush()
        return 0
    path = args.output or args.file
    try:
        write_atomically(path, output)
    except OSError as error:
        say(command, f"cannot write {path}: {error_reason(error)}; it was left untouched")
        return 2
    return 0
