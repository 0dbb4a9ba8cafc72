"""`// -----` splitting, as `mlir-opt --split-input-file` does: each chunk is
checked on its own and its diagnostics are moved back to file positions.

`SPLIT_MARKER` is the one rule for where a chunk ends, used by `affine-lsp check`
and the editor's analysis alike. MLIR 22 splits the text at every `// -----`, wherever
it is: what comes before it on its line ends one chunk, what follows it starts the
next (so `// ----- note` leaves `note` to be parsed; `//-----` does not split)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from affine_lsp.checks.diagnostics import Diagnostic
from affine_lsp.syntax import Span

SPLIT_MARKER = b"// -----"


def ends_chunk(token: bytes | bytearray) -> bool:
    """Whether a comment or split-marker token of the syntax tree ends a chunk."""
    return SPLIT_MARKER in token


@dataclass(frozen=True)
class Chunk:
    """The text of one chunk of a file."""

    start_byte: int  # where the chunk starts in the file
    data: bytes

    def to_file(self, diagnostic: Diagnostic) -> Diagnostic:
        """A diagnostic of the chunk's text with its spans moved to file offsets."""
        delta = self.start_byte
        if delta == 0:
            return diagnostic
        return diagnostic.map_spans(lambda s: Span(s.start_byte + delta, s.end_byte + delta))


def split_chunks(data: bytes) -> list[Chunk]:
    """The chunks of a file; the markers belong to no chunk."""
    chunks: list[Chunk] = []
    start = 0
    marker = data.find(SPLIT_MARKER)
    while marker >= 0:
        chunks.append(Chunk(start, data[start:marker]))
        start = marker + len(SPLIT_MARKER)
        marker = data.find(SPLIT_MARKER, start)
    chunks.append(Chunk(start, data[start:]))
    return chunks


def iter_chunks(data: bytes, split: bool) -> Iterator[Chunk]:
    if split:
        yield from split_chunks(data)
    else:
        yield Chunk(0, data)
