"""Checking items of a document in other processes, for the analysis of a large
document to use more than one core.

An item's diagnostics depend only on its text and the facts of its chunk it
refers to (`DocumentAnalysis.facts_key`), so items are checked on a text of
their own: the chunk's alias definitions and top-level values
(`extracts.extract_parts`), then the items, one after another. A `Batch` carries
that text and where each of its parts is in the document; `check_batch` (what
a worker runs) checks each item there and maps every span of the diagnostics
back into the document, so that each `Outcome` is what `DocumentAnalysis` would
have found itself. The server hands batches to worker processes
(`server.check_helpers`) and settles the records with
`DocumentAnalysis.settle_claimed`.

Items of one batch share the chunk's facts and never see each other (item
checks look at their own item and the chunk's facts only); an item that defines
top-level values is part of the other items' facts, so it goes in a batch of
its own, without its own definitions in the context.

A document just opened can be sent whole instead (`Prepare`): the worker parses
it while the server does, and the items of the server's first analysis are then
named by where they are (`Claimed`), checked in the worker's copy, which is the
same text analysed the same way; `Worker` is what a worker keeps between messages.

Check Workspace hands workers whole files (`WholeFile`, `check_whole_file`).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from affine_lsp.checks import CheckOptions, Diagnostic
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.extracts import extract_parts
from affine_lsp.ide.records import OPERATION, ItemRecord
from affine_lsp.syntax import SourceDocument, Span


@dataclass(frozen=True)
class Batch:
    """Items to check, as one text: the chunk facts they may refer to, then the
    items, each part followed by a line break. `parts` says, for each part, where
    it starts in the text and in the document, and its length; `items` gives each
    item's claim token and where it starts in the text."""

    text: bytes
    parts: tuple[tuple[int, int, int], ...]  # (start in the text, start in the document, length)
    items: tuple[tuple[int, int], ...]  # (token, start in the text)
    options: CheckOptions
    encoding: str = "utf-16"


@dataclass(frozen=True)
class Outcome:
    """What checking an item found, in document offsets; `diagnostics` None when
    the item could not be found in its batch (it is checked where it is instead)."""

    token: int
    diagnostics: tuple[Diagnostic, ...] | None
    used_aliases: frozenset[str] = frozenset()
    symbol: str | None = None


def batches_of(analysis: DocumentAnalysis, claims: list[tuple[ItemRecord, int]]) -> list[Batch]:
    """Batches checking the claimed (operation) records of the analysis as it is
    now: one per chunk, and one per item defining top-level values."""
    groups: dict[object, list[tuple[ItemRecord, int]]] = {}
    for record, token in claims:
        key = ("alone", token) if record.values else record.chunk
        groups.setdefault(key, []).append((record, token))
    return [_batch(analysis, group) for group in groups.values()]


def _batch(analysis: DocumentAnalysis, claims: list[tuple[ItemRecord, int]]) -> Batch:
    extract, sources = extract_parts(analysis, claims[0][0])
    data = analysis.document.data
    pieces = [extract.context]
    parts = []
    offset = 0
    for start, length in sources[:-1]:  # (the context's items)
        parts.append((offset, start, length))
        offset += length + 1
    items = []
    for record, token in sorted(claims, key=lambda claim: claim[0].start):
        length = record.end - record.start
        pieces.append(bytes(data[record.start : record.end]) + b"\n")
        parts.append((offset, record.start, length))
        items.append((token, offset))
        offset += length + 1
    return Batch(b"".join(pieces), tuple(parts), tuple(items), analysis.options, extract.encoding)


def check_batch(batch: Batch) -> list[Outcome]:
    """Check the items of a batch (what a worker process does)."""
    document = SourceDocument(batch.text, encoding=batch.encoding)
    # (the chunk's alias definitions are facts here: their own diagnostics are the
    # server's)
    analysis = DocumentAnalysis(document, batch.options, check_definitions=False)
    starts = [part[0] for part in batch.parts]

    def move(span: Span) -> Span:
        start = _moved(span.start_byte, batch.parts, starts)
        return Span(start, _moved(span.end_byte, batch.parts, starts))

    outcomes = []
    for token, start in batch.items:
        record = analysis.record_at(start)
        if record is None or record.start != start or record.kind != OPERATION:
            outcomes.append(Outcome(token, None))
            continue
        analysis.check_record(record)
        found = tuple(d.map_spans(move) for d in record.diagnostics)
        outcomes.append(Outcome(token, found, record.used_aliases, record.symbol))
    return outcomes


def _moved(offset: int, parts: tuple[tuple[int, int, int], ...], starts: list[int]) -> int:
    """Where an offset of a batch's text is in the document: in the part it falls
    in (the line break after a part counts as its end)."""
    index = max(0, bisect_right(starts, offset) - 1)
    text_start, document_start, length = parts[index]
    return document_start + min(max(offset - text_start, 0), length)


def check_batches(batches: list[Batch]) -> list[Outcome]:
    """Check several batches (a worker's message)."""
    return [outcome for batch in batches for outcome in check_batch(batch)]


@dataclass(frozen=True)
class WholeFile:
    """A file to check as a whole (a worker's message): its bytes, and how."""

    data: bytes
    options: CheckOptions
    encoding: str = "utf-16"


def check_whole_file(job: WholeFile) -> list[Diagnostic]:
    """Every diagnostic of a file, in document order, as its analysis finds them."""
    analysis = DocumentAnalysis.from_text(job.data, encoding=job.encoding, options=job.options)
    analysis.analyse_all()
    return analysis.diagnostics()


@dataclass(frozen=True)
class Prepare:
    """A document just opened, for a worker to parse while the server does (a
    worker's message): items of the server's first analysis of it are then sent
    by where they are (`Claimed`), not as texts. `key` names it in those messages."""

    key: int
    data: bytes
    options: CheckOptions
    encoding: str = "utf-16"


@dataclass(frozen=True)
class Claimed:
    """Items of the prepared document `key` to check (a worker's message): the
    claim token, start and end of each, as the server's analysis has them."""

    key: int
    items: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class Forget:
    """The prepared document `key` is no longer needed (a worker's message)."""

    key: int


class Worker:
    """What a worker process answers its messages with, and keeps between them:
    the analysis of the document prepared last (one at a time)."""

    def __init__(self) -> None:
        self._prepared: tuple[int, DocumentAnalysis] | None = None

    def answer(self, message: object) -> object:
        """The outcomes of a list of batches or of claimed items of the prepared
        document, the diagnostics of a whole file, or [] for `Prepare` and `Forget`."""
        if isinstance(message, Claimed):
            return self._check_claimed(message)
        if isinstance(message, list):
            return check_batches(message)
        if isinstance(message, Prepare):
            self._prepared = None  # (the previous one is freed before the next is parsed)
            analysis = DocumentAnalysis.from_text(
                message.data, encoding=message.encoding, options=message.options
            )
            self._prepared = (message.key, analysis)
            return []
        if isinstance(message, Forget):
            if self._prepared is not None and self._prepared[0] == message.key:
                self._prepared = None
            return []
        if isinstance(message, WholeFile):
            return check_whole_file(message)
        raise TypeError(f"a check worker cannot take a {type(message).__name__}")

    def _check_claimed(self, message: Claimed) -> list[Outcome]:
        """Check claimed items where they are in the prepared document: the same
        text, parsed and analysed as the server's, finds what the server would.
        An item not found as claimed (or another document) is given back."""
        if self._prepared is None or self._prepared[0] != message.key:
            return [Outcome(token, None) for token, _, _ in message.items]
        analysis = self._prepared[1]
        outcomes = []
        for token, start, end in message.items:
            record = analysis.record_at(start)
            if record is None or (record.start, record.end, record.kind) != (start, end, OPERATION):
                outcomes.append(Outcome(token, None))
                continue
            analysis.check_record(record)
            outcomes.append(
                Outcome(token, tuple(record.diagnostics), record.used_aliases, record.symbol)
            )
        return outcomes
