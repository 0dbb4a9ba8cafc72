"""Diagnostics as plain data: what the checks produce and every front end
(CLI, language server) renders. Ranges are byte spans of the document; the
front ends convert them to line/column positions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from affine_lsp.syntax import Span


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

    def map_spans(self, move: Callable[[Span], Span]) -> Diagnostic:
        """The diagnostic with every span it holds (its range, related information, the
        edits of its fixes) replaced by `move(span)`; itself when `move` returns each
        span unchanged (the same object). (Edits shift every diagnostic after them.)"""
        span = move(self.span)
        related = self.related
        if related:
            moved_related = tuple(_moved_related(r, move) for r in related)
            if any(a is not b for a, b in zip(moved_related, related, strict=True)):
                related = moved_related
        fixes = self.fixes
        if fixes:
            moved_fixes = tuple(_moved_fix(f, move) for f in fixes)
            if any(a is not b for a, b in zip(moved_fixes, fixes, strict=True)):
                fixes = moved_fixes
        if span is self.span and related is self.related and fixes is self.fixes:
            return self
        return Diagnostic(span, self.severity, self.code, self.message, related, fixes, self.tags)


def _moved_related(related: Related, move: Callable[[Span], Span]) -> Related:
    span = move(related.span)
    return related if span is related.span else Related(span, related.message)


def _moved_fix(fix: Fix, move: Callable[[Span], Span]) -> Fix:
    edits = tuple(_moved_edit(e, move) for e in fix.edits)
    if all(a is b for a, b in zip(edits, fix.edits, strict=True)):
        return fix
    return Fix(fix.title, edits, fix.preferred)


def _moved_edit(edit: TextEdit, move: Callable[[Span], Span]) -> TextEdit:
    span = move(edit.span)
    return edit if span is edit.span else TextEdit(span, edit.new_text)
