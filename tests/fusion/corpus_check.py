"""Our `fuse --all` on MLIR's own loop-fusion tests, compared with their CHECK lines.

For each RUN line of a `loop-fusion*.mlir` file that runs `affine-loop-fusion`
(with its mode, and `maximal` as an unlimited tolerance), every chunk that
verifies is fused by `fuse_all` and each function's loop structure is compared
with what the CHECK lines of that RUN's prefix describe: the sequence of
`affine.for` (with constant bounds), loads/stores (with memref types), closing
braces and `return`, respecting CHECK-NEXT adjacency.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from affine_lsp.checks import Severity, check_document
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.fusion import PRODUCER_CONSUMER, SIBLING, FusionOptions, fuse_all
from tests.corpus_data import CORPUS, Chunk, chunks

_RUN = re.compile(r"affine-loop-fusion(\{([^}]*)\})?")
_PREFIX = re.compile(r"--check-prefix=([\w-]+)")
_FOR = re.compile(r"affine\.for\b.*?=\s*(-?\d+)\s+to\s+(-?\d+)\s*(step\s+\d+)?\s*\{")
_ACCESS = re.compile(r"affine\.(load|store|vector_load|vector_store)\b.*:\s*(memref<[^>]*>)")
_LABEL = re.compile(r"func(?:\.func)?\s+(?:private\s+)?@([\w$.]+)")


@dataclass(frozen=True)
class Run:
    prefix: str
    modes: tuple[str, ...]
    tolerance: float


@dataclass
class FunctionResult:
    label: str
    function: str
    run: Run
    agrees: bool
    expected: list[str] = field(default_factory=list)
    ours: list[str] = field(default_factory=list)
    fused_text: str = ""  # the whole chunk after `fuse_all` (when something was fused)


def runs_of(file: str) -> list[Run]:
    runs = []
    lines = (CORPUS / file).read_text().splitlines()
    for line in lines:
        if not line.startswith("// RUN:") or "test-loop-fusion" in line or "spirv" in line:
            continue
        if "affine-loop-tile" in line:
            continue
        match = _RUN.search(line)
        if match is None:
            continue
        options = match.group(2) or ""
        prefix = _PREFIX.search(line)
        modes: tuple[str, ...] = (PRODUCER_CONSUMER, SIBLING)
        if "mode=producer" in options:
            modes = (PRODUCER_CONSUMER,)
        elif "mode=sibling" in options:
            modes = (SIBLING,)
        tolerance = float("inf") if "maximal" in options else 0.30
        runs.append(Run(prefix.group(1) if prefix else "CHECK", modes, tolerance))
    return runs


def tokens_of_line(text: str) -> list[str]:
    """Structure tokens of one line of MLIR (or of a CHECK pattern)."""
    stripped = text.strip()
    tokens = []
    match = _FOR.search(stripped)
    if "affine.for" in stripped:
        tokens.append(f"for {match.group(1)} {match.group(2)}" if match else "for")
    elif "affine.if" in stripped:
        tokens.append("if")
    else:
        access = _ACCESS.search(stripped)
        bare = re.search(r"affine\.(load|store|vector_load|vector_store)\b", stripped)
        if access:
            kind = access.group(1)
            memref = access.group(2)
            tokens.append(f"{kind} {memref}" if "{{" not in memref else kind)
        elif bare:  # a CHECK line that leaves the type out
            tokens.append(bare.group(1))
        elif re.fullmatch(r"\}(\s*else\s*\{)?", stripped):
            tokens.append("}" if "else" not in stripped else "else")
        elif re.match(r"(func\.)?return\b", stripped):
            tokens.append("return")
    return tokens


def _same(expected: str, ours: str) -> bool:
    if expected == ours:
        return True
    if expected in ("for", "load", "store", "vector_load", "vector_store", "if"):
        return ours.split(" ")[0] == expected
    return False


def matches(expected: list[tuple[str, bool]], ours: list[str]) -> bool:
    """Expected tokens appear in order in ours; NEXT tokens right after the previous one."""
    position = 0
    for index, (token, adjacent) in enumerate(expected):
        if adjacent and index > 0:
            if position >= len(ours) or not _same(token, ours[position]):
                return False
            position += 1
            continue
        while position < len(ours) and not _same(token, ours[position]):
            position += 1
        if position >= len(ours):
            return False
        position += 1
    return True


def expected_structures(text: str, prefix: str) -> dict[str, list[tuple[str, bool]]]:
    """Function name -> CHECK tokens (with 'must be adjacent' flags) for one prefix."""
    pattern = re.compile(rf"//\s*{re.escape(prefix)}(-NEXT|-LABEL|-DAG|-NOT|-SAME|-EMPTY)?:(.*)$")
    found: dict[str, list[tuple[str, bool]]] = {}
    current: str | None = None
    for line in text.splitlines():
        match = pattern.search(line)
        if match is None:
            continue
        kind, body = match.group(1) or "", match.group(2)
        if kind == "-LABEL":
            label = _LABEL.search(body)
            current = label.group(1) if label else None
            if current is not None:
                found[current] = []
            continue
        if current is None or kind in ("-DAG", "-NOT", "-SAME", "-EMPTY"):
            continue
        for token in tokens_of_line(body):
            found[current].append((token, kind == "-NEXT"))
    return found


def our_structures(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        line = line.split("//", 1)[0]
        label = _LABEL.search(line)
        if label and "func" in line.split("@")[0]:
            current = label.group(1)
            found[current] = []
            continue
        if current is not None:
            found[current] += tokens_of_line(line)
    return found


def check_chunk(chunk: Chunk, run: Run) -> tuple[list[FunctionResult], str | None]:
    """Our results for one chunk and one RUN line; the second item is an error, if any."""
    expected = expected_structures(chunk.text, run.prefix)
    if not any(expected.values()):
        return [], None
    options = FusionOptions(tolerance=run.tolerance)
    result = fuse_all(chunk.text.encode(), options, modes=run.modes)
    text = result.text.decode()
    errors = [
        d.message
        for d in check_document(SourceDocument(result.text))
        if d.severity == Severity.ERROR
    ]
    if errors and result.fusions:
        return [], f"fused text does not verify: {errors[0]}"
    ours = our_structures(text)
    results = []
    for function, tokens in expected.items():
        if not tokens or function not in ours:
            continue
        results.append(
            FunctionResult(
                chunk.label,
                function,
                run,
                matches(tokens, ours[function]),
                [t for t, _ in tokens],
                ours[function],
                text if result.fusions else "",
            )
        )
    return results, None


def fusion_chunks() -> list[Chunk]:
    return [c for c in chunks() if "loop-fusion" in c.file and c.verifies]


@cache
def compare_corpus() -> tuple[list[FunctionResult], list[tuple[str, str]]]:
    results: list[FunctionResult] = []
    errors: list[tuple[str, str]] = []
    for chunk in fusion_chunks():
        for run in runs_of(chunk.file):
            found, error = check_chunk(chunk, run)
            results += found
            if error is not None:
                errors.append((chunk.label, error))
    return results, errors
