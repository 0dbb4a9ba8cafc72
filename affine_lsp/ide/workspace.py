"""Checking every `.mlir` file under some folders (the "Check Workspace" command).

Only files inside the workspace folders are read (`inside`): a folder or file named
by a client outside them, or a link leading out of them, is not.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from affine_lsp.checks import CheckOptions, Diagnostic, Severity
from affine_lsp.ide.analysis import DocumentAnalysis

_SKIPPED_DIRECTORIES = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "build"}


def inside(path: Path, roots: list[Path]) -> bool:
    """Whether `path`, with every link resolved, is one of `roots` or under one."""
    try:
        real = path.resolve()
        return any(real.is_relative_to(root.resolve()) for root in roots)
    except (OSError, RuntimeError, ValueError):  # link loops, bad names
        return False


def mlir_files(folder: Path, roots: list[Path] | None = None) -> Iterator[Path]:
    """`.mlir` files under a folder, in a stable order, skipping VCS and build folders
    (and, given `roots`, files that are not `inside` them)."""
    if roots is not None and not inside(folder, roots):
        return
    if folder.is_file():
        if folder.suffix == ".mlir":
            yield folder
        return
    for directory, subdirectories, files in os.walk(folder):
        subdirectories[:] = sorted(
            d for d in subdirectories if d not in _SKIPPED_DIRECTORIES and not d.startswith(".")
        )
        for name in sorted(files):
            path = Path(directory) / name
            if name.endswith(".mlir") and (roots is None or inside(path, roots)):
                yield path


def load_file(path: Path, options: CheckOptions, encoding: str) -> DocumentAnalysis:
    """A (not yet analysed) analysis of a file on disk; OSError if it cannot be read."""
    return DocumentAnalysis.from_text(path.read_bytes(), encoding=encoding, options=options)


def count_severities(diagnostics: list[Diagnostic]) -> tuple[int, int]:
    """(errors, warnings)."""
    errors = sum(1 for d in diagnostics if d.severity == Severity.ERROR)
    warnings = sum(1 for d in diagnostics if d.severity == Severity.WARNING)
    return errors, warnings
