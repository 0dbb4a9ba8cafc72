"""Byte spans and plain diagnostics <-> LSP positions and JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types

from affine_lsp.syntax import SourceDocument, Span

if TYPE_CHECKING:
    from affine_lsp.checks import Diagnostic

SOURCE = "affine-lsp"
_TAGS = {"unnecessary": 1, "deprecated": 2}


class Positions(Protocol):
    """What turns byte offsets into LSP positions: a document, or the lines of a text
    (`LocalLines` from its start)."""

    def position(self, offset: int) -> tuple[int, int]: ...


def offset(document: SourceDocument, position: types.Position) -> int:
    """Byte offset of a client position, clamped into the document."""
    return document.offset((position.line, position.character))


def position(document: SourceDocument, at: int) -> types.Position:
    line, character = document.position(at)
    return types.Position(line=line, character=character)


def lsp_range(document: SourceDocument, span: Span) -> types.Range:
    return types.Range(
        start=position(document, span.start_byte), end=position(document, span.end_byte)
    )


def span_of(document: SourceDocument, range_: types.Range) -> Span:
    start, end = offset(document, range_.start), offset(document, range_.end)
    return Span(min(start, end), max(start, end))


def range_data(document: Positions, span: Span) -> dict[str, Any]:
    start_line, start_character = document.position(span.start_byte)
    end_line, end_character = document.position(span.end_byte)
    return {
        "start": {"line": start_line, "character": start_character},
        "end": {"line": end_line, "character": end_character},
    }


def diagnostic_data(document: Positions, uri: str, diagnostic: Diagnostic) -> dict[str, Any]:
    """An LSP Diagnostic as JSON data."""
    data: dict[str, Any] = {
        "range": range_data(document, diagnostic.span),
        "severity": int(diagnostic.severity),
        "code": diagnostic.code,
        "source": SOURCE,
        "message": diagnostic.message,
    }
    if diagnostic.related:
        data["relatedInformation"] = [
            {"location": {"uri": uri, "range": range_data(document, r.span)}, "message": r.message}
            for r in diagnostic.related
        ]
    tags = [_TAGS[t] for t in diagnostic.tags if t in _TAGS]
    if tags:
        data["tags"] = tags
    return data


def lsp_diagnostic(document: SourceDocument, uri: str, diagnostic: Diagnostic) -> types.Diagnostic:
    """The same, as an lsprotocol object (for code action contexts)."""
    return types.Diagnostic(
        range=lsp_range(document, diagnostic.span),
        severity=types.DiagnosticSeverity(int(diagnostic.severity)),
        code=diagnostic.code,
        source=SOURCE,
        message=diagnostic.message,
        related_information=[
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=lsp_range(document, r.span)),
                message=r.message,
            )
            for r in diagnostic.related
        ]
        or None,
        tags=[types.DiagnosticTag(_TAGS[t]) for t in diagnostic.tags if t in _TAGS] or None,
    )
