"""Conformance over MLIR's own test suite (`../shared/upstream/`): every chunk
MLIR 22 accepts must get no syntax error and no error diagnostic from the
checker. Shared by the suite test and `benchmarks/upstream_conformance.py`.

`chunks.tsv` gives each `// -----` chunk's line range and MLIR 22's verdict;
each chunk is checked on its own as chunks.tsv cuts it (the text MLIR verified),
all in one process, and each diagnostic is attributed to that chunk. Where our
own splitting (mlir-opt's: at every `// -----`, also inside decorative
`// -------` lines) cuts a file differently, that is reported apart.
"""

from __future__ import annotations

import csv
import re
import time
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from affine_lsp.checks import (
    RULES,
    CheckOptions,
    Chunk,
    Diagnostic,
    Severity,
    check_document,
    split_chunks,
)
from affine_lsp.syntax import SourceDocument

# Groups whose warnings and hints are advice, allowed on valid code.
ADVICE_GROUPS = frozenset({"lint", "legacy"})


@dataclass(frozen=True)
class UpstreamChunk:
    path: str  # as in chunks.tsv: mlir/test/...
    number: int
    first_line: int  # 1-based, inclusive
    last_line: int
    valid: bool
    first_error: str


@dataclass(frozen=True)
class Finding:
    """A diagnostic on a valid chunk that should not be there."""

    chunk: UpstreamChunk
    line: int  # 1-based
    code: str
    severity: Severity
    message: str

    @property
    def where(self) -> str:
        return f"{self.chunk.path}:{self.line}"


@dataclass
class FileOutcome:
    path: str
    chunks: list[UpstreamChunk]
    findings: list[Finding] = field(default_factory=list)
    # chunk number -> lines with an error diagnostic, for the invalid chunks
    error_lines: dict[int, set[int]] = field(default_factory=dict)
    # chunk number -> the text of the line of MLIR's first error, for the invalid chunks
    error_line_texts: dict[int, str] = field(default_factory=dict)
    split_mismatch: str = ""  # our chunk splitting differs from chunks.tsv
    crash: str = ""
    seconds: float = 0.0


def read_chunks(root: Path) -> dict[str, list[UpstreamChunk]]:
    """chunks.tsv as lists of chunks per file, in file order."""
    by_file: dict[str, list[UpstreamChunk]] = defaultdict(list)
    with open(root / "chunks.tsv", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            by_file[row["path"]].append(
                UpstreamChunk(
                    row["path"],
                    int(row["chunk"]),
                    int(row["first_line"]),
                    int(row["last_line"]),
                    row["verdict"] == "valid",
                    row["first_error"],
                )
            )
    for chunks in by_file.values():
        chunks.sort(key=lambda c: c.number)
    return dict(by_file)


def line_starts(data: bytes) -> list[int]:
    """The byte offset of the start of each line."""
    starts = [0]
    position = data.find(b"\n")
    while position >= 0:
        starts.append(position + 1)
        position = data.find(b"\n", position + 1)
    return starts


def _split_mismatch(data: bytes, starts: list[int], chunks: list[UpstreamChunk]) -> str:
    """'' when our chunks (as `affine-lsp check` splits) start on the lines chunks.tsv
    gives."""
    ours = split_chunks(data)
    if len(ours) != len(chunks):
        return f"{len(ours)} chunks, chunks.tsv has {len(chunks)}"
    for mine, theirs in zip(ours, chunks, strict=True):
        first_line = bisect_right(starts, mine.start_byte)
        end_of_line = data.find(b"\n", mine.start_byte)
        if mine.start_byte and end_of_line >= 0 and not data[mine.start_byte : end_of_line].strip():
            first_line += 1  # the rest of the marker's line is blank
        if mine.start_byte < len(data) and first_line != theirs.first_line:
            return f"chunk {theirs.number} starts on line {first_line}, not {theirs.first_line}"
    return ""


def chunk_of(data: bytes, starts: list[int], chunk: UpstreamChunk) -> Chunk:
    """The text of a chunk as chunks.tsv cuts it (its lines, with their offsets)."""
    begin = starts[chunk.first_line - 1] if chunk.first_line - 1 < len(starts) else len(data)
    end = starts[chunk.last_line] if chunk.last_line < len(starts) else len(data)
    return Chunk(begin, data[begin:end])


def is_false(diagnostic: Diagnostic) -> bool:
    """Whether a diagnostic on a valid chunk is wrong: every error, and warnings or
    hints that are not advice from the lint and legacy groups."""
    if diagnostic.severity == Severity.ERROR:
        return True
    info = RULES.get(diagnostic.code)
    return info is None or info.group not in ADVICE_GROUPS


def check_file(
    root: Path, path: str, chunks: list[UpstreamChunk], options: CheckOptions
) -> FileOutcome:
    """Check one file chunk by chunk and keep the false diagnostics of valid chunks."""
    outcome = FileOutcome(path, chunks)
    start = time.perf_counter()
    data = (root / path).read_bytes()
    starts = line_starts(data)
    outcome.split_mismatch = _split_mismatch(data, starts, chunks)
    try:
        for chunk in chunks:
            error = mlir_error_line(chunk)
            if error is not None and 0 < error[0] <= len(starts):
                begin = starts[error[0] - 1]
                end = starts[error[0]] if error[0] < len(starts) else len(data)
                text = data[begin:end].decode("utf-8", "replace")
                outcome.error_line_texts[chunk.number] = text
            piece = chunk_of(data, starts, chunk)
            for diagnostic in check_document(SourceDocument(piece.data), options):
                diagnostic = piece.to_file(diagnostic)
                line = bisect_right(starts, diagnostic.span.start_byte)
                if not chunk.valid and diagnostic.severity == Severity.ERROR:
                    outcome.error_lines.setdefault(chunk.number, set()).add(line)
                elif chunk.valid and is_false(diagnostic):
                    outcome.findings.append(
                        Finding(
                            chunk, line, diagnostic.code, diagnostic.severity, diagnostic.message
                        )
                    )
    except Exception as error:  # noqa: BLE001 - a crash is a result to report
        outcome.crash = f"{type(error).__name__}: {error}"
    outcome.seconds = time.perf_counter() - start
    return outcome


_FIRST_ERROR = re.compile(r"CHUNK:(\d+):\d+: error: (.*)")
_NAMED_OP = re.compile(r"'([a-z_][a-z0-9_]*)\.[\w.]+' op\b")
_OP_NAME = re.compile(r"(?<![!#\w.])([a-z_][a-z0-9_]*)\.[a-z_][\w.]*")
_AFFINE_OR_MEMREF = re.compile(r"\b(affine[ _]map|integer set|memref|memory space)")
_AFFINE_OR_MEMREF_VALUES = re.compile(r"\b(affine_map|affine_set|memref)<")
_OURS = frozenset({"affine", "memref"})


def mlir_error_line(chunk: UpstreamChunk) -> tuple[int, str] | None:
    """(line, message) of MLIR's first error in an invalid chunk."""
    match = _FIRST_ERROR.match(chunk.first_error)
    return (int(match.group(1)), match.group(2)) if match else None


def about_affine_or_memref(chunk: UpstreamChunk, error_line: str = "") -> bool:
    """An invalid chunk of an `invalid*.mlir` file whose first MLIR error is about the
    affine or memref dialect: in the affine and memref test directories, naming an
    affine or memref op, or naming no op and about affine or memref syntax or types
    (its message, or `error_line`, the line MLIR reports it on, says so)."""
    if chunk.valid or not chunk.path.rsplit("/", 1)[-1].startswith("invalid"):
        return False
    error = mlir_error_line(chunk)
    if error is None:
        return False
    if "/Dialect/Affine/" in chunk.path or "/Dialect/MemRef/" in chunk.path:
        return True
    named = _NAMED_OP.search(error[1])
    if named is not None:
        return named.group(1) in _OURS
    code = error_line.split("//", 1)[0]
    dialects = {m.group(1) for m in _OP_NAME.finditer(code)}
    if dialects & _OURS:
        return not dialects - _OURS - {"func"}
    if dialects <= {"func"} and _AFFINE_OR_MEMREF.search(error[1]):
        return True
    return not dialects and bool(_AFFINE_OR_MEMREF_VALUES.search(code))  # an alias, say


def directory_of(path: str, depth: int) -> str:
    """`mlir/test/Dialect/SCF/x.mlir` -> `Dialect` (depth 1) or `Dialect/SCF` (depth 2)."""
    parts = path.split("/")[2:-1]
    return "/".join(parts[:depth]) or "."


@dataclass
class Summary:
    outcomes: list[FileOutcome]
    seconds: float
    cpu_seconds: float

    @property
    def valid_chunks(self) -> list[UpstreamChunk]:
        return [c for o in self.outcomes for c in o.chunks if c.valid]

    @property
    def findings(self) -> list[Finding]:
        return [f for o in self.outcomes for f in o.findings]

    def failing_chunks(self) -> set[tuple[str, int]]:
        return {(f.chunk.path, f.chunk.number) for f in self.findings}

    def by_directory(self, depth: int) -> list[tuple[str, int, int]]:
        """(directory, valid chunks, valid chunks with false diagnostics), sorted."""
        valid: Counter = Counter(directory_of(c.path, depth) for c in self.valid_chunks)
        failing: Counter = Counter(directory_of(path, depth) for path, _ in self.failing_chunks())
        return [(d, valid[d], failing[d]) for d in sorted(valid)]

    def by_code(self) -> Counter:
        return Counter(f.code for f in self.findings)

    def affine_memref_recall(self) -> tuple[list[UpstreamChunk], list[UpstreamChunk]]:
        """(found, missed): invalid affine/memref chunks where we report an error on the
        line of MLIR's first error, or do not."""
        found: list[UpstreamChunk] = []
        missed: list[UpstreamChunk] = []
        for outcome in self.outcomes:
            for chunk in outcome.chunks:
                if not about_affine_or_memref(
                    chunk, outcome.error_line_texts.get(chunk.number, "")
                ):
                    continue
                error = mlir_error_line(chunk)
                lines = outcome.error_lines.get(chunk.number, set())
                (found if error and error[0] in lines else missed).append(chunk)
        return found, missed

    def crashes(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.crash]

    def split_mismatches(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.split_mismatch]


def run(
    root: Path, paths: Iterable[str] | None = None, options: CheckOptions | None = None
) -> Summary:
    """Check the given files of chunks.tsv (all by default) in this process."""
    options = options or CheckOptions()
    table = read_chunks(root)
    selected = sorted(table) if paths is None else list(paths)
    start, cpu_start = time.perf_counter(), time.process_time()
    outcomes = [check_file(root, path, table[path], options) for path in selected]
    return Summary(outcomes, time.perf_counter() - start, time.process_time() - cpu_start)


def chunk_texts(root: Path, every: int = 1, valid_only: bool = False) -> list[bytes]:
    """The chunks of every `every`-th file of chunks.tsv (path order), as bytes, for
    seeding fuzzers and exercising the editor features."""
    table = read_chunks(root)
    texts: list[bytes] = []
    for path in sorted(table)[::every]:
        data = (root / path).read_bytes()
        starts = line_starts(data)
        for chunk in table[path]:
            text = chunk_of(data, starts, chunk).data
            if text.strip() and (chunk.valid or not valid_only):
                texts.append(text)
    return texts
