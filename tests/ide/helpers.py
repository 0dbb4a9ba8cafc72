"""Shared helpers for the ide tests: fixtures and cursor markers."""

from __future__ import annotations

from pathlib import Path

from affine_lsp.ide.analysis import DocumentAnalysis

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CURSOR = "$0"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def analysed(text: str) -> DocumentAnalysis:
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    return analysis


def with_cursor(text: str) -> tuple[DocumentAnalysis, int]:
    """An analysed document from `text` with one `$0` marker, and the marker's byte offset."""
    before, _, after = text.partition(CURSOR)
    analysis = analysed(before + after)
    return analysis, len(before.encode("utf-8"))


def offset_of(analysis: DocumentAnalysis, needle: str, occurrence: int = 0, shift: int = 0) -> int:
    """Byte offset of the `occurrence`-th `needle` in the document (plus `shift`)."""
    data = bytes(analysis.document.data)
    index = -1
    for _ in range(occurrence + 1):
        index = data.index(needle.encode("utf-8"), index + 1)
    return index + shift


def apply_text_edits(analysis: DocumentAnalysis, edits) -> str:
    """The document's text with non-overlapping byte-span edits applied."""
    data = bytes(analysis.document.data)
    for edit in sorted(edits, key=lambda e: e.span.start_byte, reverse=True):
        new = edit.new_text.encode("utf-8")
        data = data[: edit.span.start_byte] + new + data[edit.span.end_byte :]
    return data.decode("utf-8")
