"""Reading MLIR's `expected-*` annotations from our fixtures and comparing them
with the checker's diagnostics, chunk by chunk as `--split-input-file` does."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from affine_lsp.checks import CheckOptions, Diagnostic, Severity, check_document
from affine_lsp.checks.chunks import split_chunks
from affine_lsp.syntax import SourceDocument

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MLIR_CHECKED = FIXTURES / "mlir"  # rules MLIR 22 checks too: the oracle runs these
OURS = FIXTURES / "ours"  # rules MLIR 22 does not check (step 0, lints, legacy, ...)

# expected-remark is MLIR's name for information; expected-hint is ours.
SEVERITIES = {
    "error": Severity.ERROR,
    "warning": Severity.WARNING,
    "remark": Severity.INFORMATION,
    "hint": Severity.HINT,
}
_ANNOTATION = re.compile(
    r"//\s*expected-(error|warning|remark|hint)(?:\s*@\s*([+-]\d+|above|below))?\s*\{\{(.*?)\}\}"
)


@dataclass(frozen=True)
class Expected:
    line: int  # 0-based line of the file
    severity: Severity
    text: str


def expected_annotations(text: str) -> list[Expected]:
    lines = text.split("\n")
    found = []
    for number, line in enumerate(lines):
        for match in _ANNOTATION.finditer(line):
            offset = match.group(2)
            target = number
            if offset and offset not in ("above", "below"):
                target = number + int(offset)
            elif offset == "below":
                target = _next_code_line(lines, number, 1)
            elif offset == "above":
                target = _next_code_line(lines, number, -1)
            found.append(Expected(target, SEVERITIES[match.group(1)], match.group(3)))
    return found


def _next_code_line(lines: list[str], number: int, step: int) -> int:
    current = number + step
    while 0 <= current < len(lines) and "expected-" in lines[current]:
        current += step
    return current


def file_diagnostics(data: bytes) -> list[tuple[int, Diagnostic]]:
    """(0-based file line, diagnostic) for every diagnostic of every chunk."""
    found = []
    for chunk in split_chunks(data):
        document = SourceDocument(chunk.data)
        first_line = data.count(b"\n", 0, chunk.start_byte)
        for diagnostic in check_document(document, CheckOptions()):
            found.append((first_line + document.point(diagnostic.span.start_byte)[0], diagnostic))
    return found


def compare(path: Path) -> list[str]:
    """Problems: annotations nothing matches, and errors/warnings nothing expects."""
    data = path.read_bytes()
    expected = expected_annotations(data.decode())
    produced = file_diagnostics(data)
    problems = []
    matched: set[int] = set()
    for annotation in expected:
        hit = next(
            (
                index
                for index, (line, d) in enumerate(produced)
                if index not in matched
                and line == annotation.line
                and d.severity == annotation.severity
                and annotation.text in d.message
            ),
            None,
        )
        if hit is None:
            problems.append(
                f"{path.name}:{annotation.line + 1}: expected {annotation.severity.label} "
                f"{{{{{annotation.text}}}}} was not produced"
            )
        else:
            matched.add(hit)
    for index, (line, diagnostic) in enumerate(produced):
        if index in matched or diagnostic.severity > Severity.WARNING:
            continue
        problems.append(
            f"{path.name}:{line + 1}: unexpected {diagnostic.severity.label}: "
            f"{diagnostic.message} [{diagnostic.code}]"
        )
    return problems


def fixture_files() -> list[Path]:
    return sorted(MLIR_CHECKED.glob("*.mlir")) + sorted(OURS.glob("*.mlir"))
