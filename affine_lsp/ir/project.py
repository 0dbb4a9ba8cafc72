"""The project file, `.affine-lsp.toml`: a project's own dialects and the traits
of their ops, so that its MLIR is checked as the project's tool would.

    [dialects]
    registered = ["hls"]             # the dialects the project's tool registers
    [dialects.hls]
    memref_element_types = true      # its types may be memref elements

    [ops."hls.dataflow.node"]
    traits = ["AffineScope", "IsolatedFromAbove"]

The file of a document is the first `.affine-lsp.toml` found in the document's
folder or any folder above it. What the file says extends MLIR 22's registry
(`Dialects.with_project`). Reading it never fails: a key, trait or value the
file cannot mean is left out with a warning at its place in the file, and a file
that is not TOML at all counts as absent (with one warning).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from affine_lsp.ir.registry import TRAITS, UPSTREAM, Dialects
from affine_lsp.syntax import Span

if sys.version_info >= (3, 11):
    import tomllib
else:  # (tomllib is Python 3.11's; tomli is the same parser)
    import tomli as tomllib

PROJECT_FILE = ".affine-lsp.toml"

_REGISTERED = "registered"
_ELEMENTS = "memref_element_types"
_TRAITS_KEY = "traits"
_AT_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")


@dataclass(frozen=True)
class ProjectProblem:
    """Something the file says that is left out: where (bytes of the file) and why."""

    span: Span
    message: str


@dataclass(frozen=True)
class Project:
    """A project file as read: the dialects it gives (`UPSTREAM` extended) and its
    problems. `path` is None for no file."""

    path: Path | None = None
    dialects: Dialects = UPSTREAM
    problems: tuple[ProjectProblem, ...] = field(default=())
    source: bytes = b""  # the file's text, which the problems' spans are in


NO_PROJECT = Project()


def find_project_file(start: Path) -> Path | None:
    """The `.affine-lsp.toml` of a file or folder: in its folder or the nearest one
    above that has one (None if no folder does)."""
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        path = candidate / PROJECT_FILE
        if path.is_file():
            return path
    return None


def unreadable_project(path: Path, reason: str) -> Project:
    """A project file that could not be read: no more than MLIR's registry, and the
    reason as its problem. (This layer reads no files: its callers do.)"""
    return Project(path, UPSTREAM, (ProjectProblem(Span(0, 0), f"cannot read: {reason}"),))


def parse_project(data: bytes, path: Path | None = None) -> Project:
    """A project file's text read into the dialects it gives."""
    text = data.decode("utf-8", "replace")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        span = _error_span(text, str(error))
        message = f"not a valid TOML file, so it is not used: {error}"
        return Project(path, UPSTREAM, (ProjectProblem(span, message),), data)
    reader = _Reader(text)
    dialects = reader.read(table)
    return Project(path, dialects, tuple(reader.problems), data)


class _Reader:
    """Reads the tables of a parsed file, noting what it leaves out."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.problems: list[ProjectProblem] = []

    def warn(self, message: str, *needles: str, after: str = "") -> None:
        """A problem, placed at the first of `needles` found (after the first
        occurrence of `after`, if given and found)."""
        start = 0
        if after:
            found = next(_occurrences(self.text, after), -1)
            start = found + len(after) if found >= 0 else 0
        self.problems.append(ProjectProblem(_locate(self.text, needles, start), message))

    def read(self, table: dict[str, Any]) -> Dialects:
        for key in table:
            if key not in ("dialects", "ops"):
                self.warn(f"unknown key '{key}': the file takes [dialects] and [ops] tables", key)
        registered, elements = self._dialects(table.get("dialects"))
        ops = self._ops(table.get("ops"))
        return UPSTREAM.with_project(ops, registered, elements)

    def _dialects(self, value: object) -> tuple[list[str], list[str] | None]:
        """(the registered dialects, those whose types are memref elements; None: the
        file does not say which dialects exist)."""
        if value is None:
            return [], None
        if not isinstance(value, dict):
            self.warn("'dialects' must be a table ([dialects])", "dialects")
            return [], None
        listed = value.get(_REGISTERED)
        registered: list[str] = []
        said = listed is not None
        if _strings(listed):
            registered = list(listed)
        elif said:
            self.warn(
                '[dialects] registered must be a list of dialect names, such as ["hls", "air"]',
                _REGISTERED,
            )
        elements: list[str] = []
        for key, entry in value.items():
            if key == _REGISTERED:
                continue
            if not isinstance(entry, dict):
                self.warn(
                    f"unknown key '{key}' in [dialects]: it takes 'registered' and a table "
                    f"[dialects.NAME] per dialect",
                    key,
                )
                continue
            if said and key not in registered:
                self.warn(
                    f"[dialects.{key}]: '{key}' is not in [dialects] registered; it is taken "
                    "as registered",
                    f"dialects.{key}",
                    key,
                )
            registered.append(key)
            for option, setting in entry.items():
                if option != _ELEMENTS:
                    self.warn(
                        f"unknown key '{option}' in [dialects.{key}]: it takes '{_ELEMENTS}'",
                        option,
                        after=key,
                    )
                elif not isinstance(setting, bool):
                    self.warn(f"'{_ELEMENTS}' must be true or false", option, after=key)
                elif setting:
                    elements.append(key)
        return registered, (elements if said else None)

    def _ops(self, value: object) -> dict[str, list[str]]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.warn("'ops' must be tables, one per op ([ops.\"dialect.name\"])", "ops")
            return {}
        ops: dict[str, list[str]] = {}
        for name, entry in value.items():
            if "." not in name:
                self.warn(
                    f"[ops.{name}]: an op's name is its dialect and its own name, such as "
                    f'[ops."air.herd"] (quoted, since it holds a dot)',
                    name,
                    after="ops",
                )
                continue
            if not isinstance(entry, dict):
                self.warn(f'[ops."{name}"] must be a table with a traits list', name)
                continue
            for key in entry:
                if key != _TRAITS_KEY:
                    self.warn(
                        f"unknown key '{key}' in [ops.\"{name}\"]: it takes 'traits'",
                        key,
                        after=name,
                    )
            traits = entry.get(_TRAITS_KEY, [])
            if not _strings(traits):
                self.warn(
                    f'[ops."{name}"] traits must be a list of trait names, such as ["AffineScope"]',
                    _TRAITS_KEY,
                    after=name,
                )
                continue
            known = []
            for trait in traits:
                if trait in TRAITS:
                    known.append(trait)
                else:
                    self.warn(
                        f"unknown trait '{trait}' of {name}, left out (understood: "
                        f"{', '.join(TRAITS)})",
                        f'"{trait}"',
                        trait,
                        after=name,
                    )
            ops[name] = known
        return ops


def _strings(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _locate(text: str, needles: tuple[str, ...], start: int = 0) -> Span:
    """The first occurrence from `start` on of the first needle found, outside
    comments (the start of the file if none is)."""
    for needle in needles:
        for found in _occurrences(text, needle, start):
            return Span(_byte(text, found), _byte(text, found + len(needle)))
    return Span(0, 0)


def _occurrences(text: str, needle: str, start: int = 0) -> Iterator[int]:
    start = text.find(needle, start)
    while start >= 0:
        line_start = text.rfind("\n", 0, start) + 1
        if "#" not in text[line_start:start]:
            yield start
        start = text.find(needle, start + 1)


def _byte(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def _error_span(text: str, message: str) -> Span:
    """Where a TOML error is (tomllib says `(at line L, column C)`)."""
    match = _AT_LINE.search(message)
    if match is None:
        return Span(0, 0)
    line, column = int(match.group(1)) - 1, int(match.group(2)) - 1
    lines = text.split("\n")
    if line >= len(lines):
        end = len(text.encode("utf-8"))
        return Span(end, end)
    start = sum(len(part.encode("utf-8")) + 1 for part in lines[:line])
    offset = start + len(lines[line][:column].encode("utf-8"))
    return Span(offset, start + len(lines[line].encode("utf-8")))
