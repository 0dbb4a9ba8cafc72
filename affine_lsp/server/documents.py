"""The server's open documents: each one's analysis and what the server keeps
about it while it is open."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field

from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.folding import FoldingCache
from affine_lsp.server.check_helpers import Prepared
from affine_lsp.server.outline import OutlineCache
from affine_lsp.server.progress import Progress

_serials = itertools.count(1)


@dataclass(eq=False)
class OpenDocument:
    uri: str
    version: int | None
    analysis: DocumentAnalysis
    task: asyncio.Task | None = field(default=None, repr=False)
    # What the editor shows (bytes), analysed first; None: the first VISIBLE_LINES.
    visible: tuple[int, int] | None = None
    # Progress of an analysis that published a partial set: it lasts, across newer
    # versions, until a complete set is published.
    progress: Progress | None = field(default=None, repr=False)
    # The helpers' copy of the document as opened, while its first analysis runs.
    prepared: Prepared | None = field(default=None, repr=False)
    outline: OutlineCache = field(default_factory=OutlineCache, repr=False)
    folding: FoldingCache = field(default_factory=FoldingCache, repr=False)
    # Tells this opening of the document from another of the same uri (and version).
    serial: int = field(default_factory=lambda: next(_serials))
