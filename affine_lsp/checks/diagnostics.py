"""Diagnostics as plain data: what the checks produce and every front end
(CLI, language server) renders. Ranges are byte spans of the document; the
front ends convert them to line/column positions."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from affine_lsp.syntax.nodes import Span


class Severity(IntEnum):
    """Numbered as in the Language Server Protocol."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, name: str) -> Severity:
        return cls[name.strip().upper()]


@dataclass(frozen=True)
class TextEdit:
    """Replace the bytes of `span` with `new_text`."""

    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A quick fix a diagnostic carries: a titled set of edits."""

    title: str
    edits: tuple[TextEdit, ...]
    preferred: bool = False


@dataclass(frozen=True)
class Related:
    """Related information: another place that explains the diagnostic."""

    span: Span
    message: str


@dataclass(frozen=True)
class Diagnostic:
    span: Span
    severity: Severity
    code: str
    message: str
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = ()
    tags: tuple[str, ...] = field(default=())  # "unnecessary", "deprecated"

    def sort_key(self) -> tuple[int, int, str]:
        return (self.span.start_byte, self.span.end_byte, self.code)
