"""Which files hold MLIR: the one rule for `affine-lsp check DIR` and the editor's
Check Workspace.

A file named explicitly is taken whatever its name; a directory is searched for
`*.mlir` files in a stable (sorted) order, skipping hidden directories (`.git`,
`.venv`, ...) and build and dependency folders. With `roots`, nothing outside them
is taken, links included. Nothing here reads a file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

SKIPPED_DIRECTORIES = frozenset({"node_modules", "__pycache__", "build"})


def inside(path: Path, roots: list[Path]) -> bool:
    """Whether `path`, with every link resolved, is one of `roots` or under one."""
    try:
        real = path.resolve()
        return any(real.is_relative_to(root.resolve()) for root in roots)
    except (OSError, RuntimeError, ValueError):  # link loops, bad names
        return False


def skipped_directory(name: str) -> bool:
    """Whether a directory met while searching is left out (never a named one)."""
    return name.startswith(".") or name in SKIPPED_DIRECTORIES


def mlir_files(path: str | os.PathLike[str], roots: list[Path] | None = None) -> Iterator[Path]:
    """The files `path` names: itself unless it is a directory (a missing file too, so
    that its reader reports it), else the `*.mlir` files under it."""
    path = Path(path)
    if roots is not None and not inside(path, roots):
        return
    if not path.is_dir():
        yield path
        return
    for directory, subdirectories, names in os.walk(path):
        subdirectories[:] = sorted(d for d in subdirectories if not skipped_directory(d))
        for name in sorted(names):
            found = Path(directory) / name
            if name.endswith(".mlir") and (roots is None or inside(found, roots)):
                yield found
