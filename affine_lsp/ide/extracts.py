"""An item of a document as a text of its own: the facts of its chunk it may
refer to (alias definitions, top-level values) followed by the item. What an
item's diagnostics and refactorings depend on is all there (a memref.global as a
declaration), so planning
(`ide.planning`) and checking in other processes (`ide.remote_checks`) work on
extracts, at a cost that does not grow with the document."""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.records import ItemRecord
from affine_lsp.ir import UPSTREAM, Dialects


@dataclass(frozen=True)
class Extract:
    """One item as a text of its own: the alias definitions and top-level values
    of its chunk (`context`), and the item. Offsets found in it are relative to
    the item's start. `row` and `column` are where the item starts in the
    document: a text that puts it there (`text(at_row=True)`) is used only when
    words name lines (a refactoring's title), as the blank lines cost time.
    `dialects`: the document's (its project file's), to model the extract with."""

    context: bytes
    item: bytes
    row: int
    column: int
    encoding: str = "utf-16"
    dialects: Dialects = UPSTREAM

    def text(self, at_row: bool = False) -> tuple[bytes, int]:
        """(the text, where the item starts in it)."""
        if not at_row:
            return self.context + self.item, len(self.context)
        lines = self.context.count(b"\n")
        if lines <= self.row:
            head = self.context + b"\n" * (self.row - lines) + b" " * self.column
            return head + self.item, len(head)
        head = b"\n" * self.row + b" " * self.column
        return head + self.item + self.context, len(head)


def extract_parts(
    analysis: DocumentAnalysis, record: ItemRecord
) -> tuple[Extract, list[tuple[int, int]]]:
    """The extract of an item of the analysis (as it is now), and where its parts
    come from: (start in the document, length in the extract) of each context item,
    then of the item. Each part is followed by a line break in the extract."""
    data = analysis.document.data
    chunk = analysis.chunks[record.chunk]
    context = [r for r in chunk.alias_records if not r.removed]
    holders = {id(r): r for r, _ in chunk.values if r is not record and not r.removed}
    holders.update((id(r), r) for r in chunk.global_records if r is not record and not r.removed)
    context += holders.values()
    context.sort(key=lambda r: r.start)
    texts = [_context_text(data, r) for r in context]
    block = b"".join(t + b"\n" for t in texts)
    row, column = analysis.document.point(record.start)
    item = bytes(data[record.start : record.end]) + b"\n"
    parts = [(r.start, len(t)) for r, t in zip(context, texts, strict=True)]
    parts.append((record.start, record.end - record.start))
    extract = Extract(
        block, item, row, column, analysis.document.encoding, analysis.options.dialects
    )
    return extract, parts


def _context_text(data: bytearray, record: ItemRecord) -> bytes:
    """An item as the context of another: a memref.global as a declaration (its
    initial value, which may be large, is no fact of the chunk), others whole."""
    if record.global_declaration and not record.values:
        return record.global_declaration
    return bytes(data[record.start : record.end])


def extract_of(analysis: DocumentAnalysis, record: ItemRecord) -> Extract:
    """The extract of an item of the analysis (as it is now)."""
    return extract_parts(analysis, record)[0]
