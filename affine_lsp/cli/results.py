"""What the commands that rewrite or draw a file share: their input read with its
project file and checked (the diagnostics of an input with errors printed as `check`
prints them), and their result written to stdout or to a file replaced atomically
(kept apart from `output`, which every command loads, as it loads the checker)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from affine_lsp.checks import CheckOptions, Severity, check_document
from affine_lsp.cli.output import (
    DONE,
    INPUT_ERRORS,
    USAGE,
    diagnostic_line,
    error_reason,
    fail,
    read_input,
    say,
)
from affine_lsp.cli.project import project_of
from affine_lsp.ir import UPSTREAM, Dialects, ModuleModel, Project, build_module
from affine_lsp.syntax import SourceDocument


@dataclass
class Input:
    """A command's input file, read and checked: its bytes, its project file, the
    document analysed (the whole file, or the part a command chose, from its 0-based
    line `first_line`) and, built when first asked for, its model."""

    data: bytes
    project: Project
    document: SourceDocument
    first_line: int = 0

    @cached_property
    def model(self) -> ModuleModel:
        return build_module(self.document.tree.root_node, self.project.dialects)


def read_checked(
    command: str,
    args: argparse.Namespace,
    nothing_done: str,
    part: Callable[[bytes], tuple[bytes, int]] | None = None,
) -> Input | int:
    """`args.file` read with its project file (`args.config`) and checked, or the
    exit status when it cannot be: unreadable (usage), a bad `--config` (usage), or
    with errors (input errors: its diagnostics printed, then "FILE has errors;
    nothing was <nothing_done>"). `part` chooses what to analyse of the file's bytes
    (the bytes and their first line), the whole file when None."""
    data = read_input(command, args.file)
    if data is None:
        return USAGE
    project = project_of(command, args.file, args.config)
    if isinstance(project, int):
        return project
    text, first_line = part(data) if part is not None else (data, 0)
    document = SourceDocument(text)
    if report_errors(args.file, document, first_line, project.dialects):
        return fail(command, INPUT_ERRORS, f"{args.file} has errors; nothing was {nothing_done}")
    return Input(data, project, document, first_line)


def report_errors(
    path: str, document: SourceDocument, first_line: int = 0, dialects: Dialects = UPSTREAM
) -> bool:
    """Whether `document` (a file's text from its 0-based line `first_line`) has
    errors with `dialects` (its project file's); if so, all its diagnostics (lints
    too) are printed to stderr as `check` prints them: `PATH:LINE:COLUMN: SEVERITY:
    MESSAGE [CODE]`."""
    found = check_document(document, CheckOptions(dialects=dialects))
    if not any(diagnostic.severity == Severity.ERROR for diagnostic in found):
        return False
    for diagnostic in found:
        line, column = document.point(diagnostic.span.start_byte)
        print(
            diagnostic_line(
                path,
                first_line + line,
                column,
                diagnostic.severity.label,
                diagnostic.message,
                diagnostic.code,
            ),
            file=sys.stderr,
        )
    return True


def write_atomically(path: str, data: bytes) -> None:
    """Replace the file at `path` (through links) by `data`: written to a temporary
    file beside it, flushed to disk, given the file's permissions (a new file: those
    the umask leaves, as `open` gives), then renamed over it in one step. On any
    failure the file is untouched and the temporary file is removed; the error is
    raised (OSError for the system's). What is not a regular file (`/dev/null`, a
    pipe, a terminal) is written into, never replaced."""
    target = os.path.realpath(path)
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "wb") as handle:
            handle.write(data)
        return
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
    if not (args.output or getattr(args, "in_place", False)):
        sys.stdout.buffer.write(output)
        sys.stdout.flush()
        return DONE
    path = args.output or args.file
    try:
        write_atomically(path, output)
    except OSError as error:
        say(command, f"cannot write {path}: {error_reason(error)}; it was left untouched")
        return USAGE
    return DONE
