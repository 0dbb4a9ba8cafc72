"""Project files (`.affine-lsp.toml`) in the server: the one of each document, read
again when it changes on disk, and the diagnostics of those the editor opens.

A document's project file is found as `affine-lsp check` finds it (its folder or
one above). Finding it costs a few `stat`s, so it is looked up again at every open
and edit of a document, and whenever the client says a watched project file
changed (`workspace/didChangeWatchedFiles`, registered for clients that take
dynamic registration): a file created, edited or deleted is seen at the next of
these. What is on disk counts; a project file open in the editor gets, as its
diagnostics, what in its text would be left out.
"""

from __future__ import annotations

import os
from pathlib import Path

from pygls.uris import to_fs_path

from affine_lsp.checks import Diagnostic, Severity
from affine_lsp.ide import workspace
from affine_lsp.ir import NO_PROJECT, PROJECT_FILE, Project, find_project_file, parse_project
from affine_lsp.syntax import SourceDocument

PROBLEM_CODE = "project-file"
WATCHED = f"**/{PROJECT_FILE}"


def is_project_file(uri: str) -> bool:
    """Whether a document is a project file (its name is `.affine-lsp.toml`)."""
    return uri.rsplit("/", 1)[-1] == PROJECT_FILE


def path_of(uri: str) -> Path | None:
    """The file of a `file:` URI (None for other schemes, such as `untitled:`)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def problems_of(data: bytes) -> list[Diagnostic]:
    """What a project file's text says that is left out, as warnings on it."""
    return [
        Diagnostic(problem.span, Severity.WARNING, PROBLEM_CODE, problem.message)
        for problem in parse_project(data).problems
    ]


class ProjectFiles:
    """The project files read so far, each with the stamp of the file it was read
    from (modification time and size), and the project files open in the editor."""

    def __init__(self) -> None:
        self._read: dict[Path, tuple[tuple[int, int], Project]] = {}
        self.open: dict[str, SourceDocument] = {}  # by URI

    def project_of(self, uri: str) -> Project:
        """The project of a document, as its project file now is on disk."""
        path = path_of(uri)
        found = find_project_file(path.parent) if path is not None else None
        if found is None:
            return NO_PROJECT
        try:
            status = os.stat(found)
        except OSError:
            return NO_PROJECT
        stamp = (status.st_mtime_ns, status.st_size)
        known = self._read.get(found)
        if known is not None and known[0] == stamp:
            return known[1]
        try:
            data = workspace.read_project_file(found)
        except (OSError, ValueError):
            return NO_PROJECT
        project = parse_project(data, found)
        self._read[found] = (stamp, project)
        return project
