"""documentSymbol results as JSON text, encoded once per top-level item.

An item's symbols depend only on its own text, so each is encoded once, with
positions relative to where the item starts, and kept while the analysis keeps
the item's record (an edit replaces the records of the items it touches). A
request re-bases the cached encodings on the items' current start positions;
it computes symbols only for items that are new since the last request.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterator

from lsprotocol import types

from affine_lsp.ide import symbols
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.records import ItemRecord
from affine_lsp.syntax import LocalLines, SourceDocument

SYMBOL_KINDS = {
    "alias": types.SymbolKind.Constant,
    "module": types.SymbolKind.Module,
    "function": types.SymbolKind.Function,
    "global": types.SymbolKind.Variable,
    "loop": types.SymbolKind.Array,
    "parallel": types.SymbolKind.Array,
    "if": types.SymbolKind.Boolean,
}

# JSON text, or a position (lines after the item's first line, character) to fill in.
Piece = str | tuple[int, int]


class _Encoded:
    """The JSON of one item's symbols as placed at `start` (an LSP position), and where
    its positions are in that text: (offset, end, lines after the first, character)
    for each, flat (compact: a large document's outline is ten megabytes of JSON)."""

    __slots__ = ("record", "text", "positions", "start")

    def __init__(self, record: ItemRecord, pieces: list[Piece], start: tuple[int, int]) -> None:
        self.record = record
        self._write(pieces, start)

    def at(self, start: tuple[int, int]) -> str:
        """The JSON with the item starting at LSP position `start`."""
        if start != self.start:
            pieces: list[Piece] = []
            text, positions = self.text, self.positions
            done = 0
            for index in range(0, len(positions), 4):
                offset, end, lines, character = positions[index : index + 4]
                pieces += [text[done:offset], (lines, character)]
                done = end
            pieces.append(text[done:])
            self._write(pieces, start)
        return self.text

    def _write(self, pieces: list[Piece], start: tuple[int, int]) -> None:
        line, character = start
        out: list[str] = []
        size = 0
        positions = array("i")
        for piece in pieces:
            if isinstance(piece, str):
                written = piece
            else:
                lines, column = piece
                shown = column + character if lines == 0 else column
                written = f'{{"line":{line + lines},"character":{shown}}}'
                positions.extend((size, size + len(written), lines, column))
            out.append(written)
            size += len(written)
        self.text = "".join(out)
        self.positions = positions
        self.start = start


class OutlineCache:
    """The encoded outline of each item of one document (see the module docstring)."""

    def __init__(self) -> None:
        self._encoded: dict[int, _Encoded] = {}

    def parts(self, analysis: DocumentAnalysis) -> Iterator[str]:
        """The JSON text of the symbols of each item in turn ('' for none), separated
        by commas where needed; entries of items no longer in the document are dropped."""
        analysis.sync()
        document = analysis.document
        kept: dict[int, _Encoded] = {}
        self._encoded, previous = kept, self._encoded
        written = False
        for record in list(analysis.records):
            start = document.position(record.start)
            entry = previous.get(id(record))
            if entry is None or entry.record is not record:
                outline = symbols.document_symbols(document, analysis.node_of(record))
                pieces = encode(document, outline, record.start, record.end)
                entry = _Encoded(record, pieces, start)
            kept[id(record)] = entry
            text = entry.at(start)
            if text and written:
                text = "," + text
            written = written or bool(text)
            yield text


def encode(
    document: SourceDocument, outline: list[symbols.OutlineSymbol], start: int, end: int
) -> list[Piece]:
    """LSP DocumentSymbols of `outline` as JSON pieces, positions relative to byte `start`
    (the symbols lie in [start, end]; iteratively: outlines can be deep)."""
    lines = LocalLines(document.data, start, end, document.encoding)
    pieces: list[Piece] = []
    text: list[str] = []  # JSON since the last position

    def place(offset: int) -> None:
        pieces.append("".join(text))
        pieces.append(lines.position(offset))
        text.clear()

    # Work items: a symbol (with whether a comma goes first), or closing text.
    stack: list[tuple[symbols.OutlineSymbol | None, bool | str]] = [
        (symbol, index > 0) for index, symbol in reversed(list(enumerate(outline)))
    ]
    while stack:
        symbol, extra = stack.pop()
        if symbol is None:
            text.append(str(extra))
            continue
        kind = int(SYMBOL_KINDS.get(symbol.kind, types.SymbolKind.Object))
        name = json.dumps(symbol.name or "?")
        text.append(f'{"," if extra else ""}{{"name":{name},"kind":{kind},"range":{{"start":')
        place(symbol.span.start_byte)
        text.append(',"end":')
        place(symbol.span.end_byte)
        text.append('},"selectionRange":{"start":')
        place(symbol.selection.start_byte)
        text.append(',"end":')
        place(symbol.selection.end_byte)
        text.append("}")
        if symbol.detail:
            text.append(f',"detail":{json.dumps(symbol.detail)}')
        if symbol.children:
            text.append(',"children":[')
            stack.append((None, "]}"))
            stack += [(c, i > 0) for i, c in reversed(list(enumerate(symbol.children)))]
        else:
            text.append("}")
    pieces.append("".join(text))
    return pieces
