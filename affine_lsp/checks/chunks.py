"""`// -----` splitting, as `mlir-opt --split-input-file` does: each chunk is
checked on its own and its diagnostics are moved back to file positions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from affine_lsp.checks.diagnostics import Diagnostic, Fix, Related, TextEdit
from affine_lsp.syntax.nodes import Span

# A line that is `// -----`, indented or not, with at most spaces or a `//` comment
# after it: the lines mlir-opt's --split-input-file splits at (`// ------` is not one).
_SPLIT = re.compile(rb"^[ \t]*// -----[ \t\r]*(?://[^\n]*)?$", re.MULTILINE)


@dataclass(frozen=True)
class Chunk:
    start_byte: int  # where the chunk starts in the file
    data: bytes


def split_chunks(data: bytes) -> list[Chunk]:
    """The chunks of a file; the marker lines belong to no chunk."""
    chunks: list[Chunk] = []
    start = 0
    for match in _SPLIT.finditer(data):
        chunks.append(Chunk(start, data[start : match.start()]))
        end_of_line = data.find(b"\n", match.end())
        start = len(data) if end_of_line < 0 else end_of_line + 1
    chunks.append(Chunk(start, data[start:]))
    return chunks


def _shift(span: Span, delta: int) -> Span:
    return Span(span.start_byte + delta, span.end_byte + delta)


def shift_diagnostic(diagnostic: Diagnostic, delta: int) -> Diagnostic:
    """The same diagnostic with every span moved by `delta` bytes."""
    if delta == 0:
        return diagnostic
    return replace(
        diagnostic,
        span=_shift(diagnostic.span, delta),
        related=tuple(Related(_shift(r.span, delta), r.message) for r in diagnostic.related),
        fixes=tuple(
            Fix(
                f.title,
                tuple(TextEdit(_shift(e.span, delta), e.new_text) for e in f.edits),
                f.preferred,
            )
            for f in diagnostic.fixes
        ),
    )


def iter_chunks(data: bytes, split: bool) -> Iterator[Chunk]:
    if split:
        yield from split_chunks(data)
    else:
        yield Chunk(0, data)
