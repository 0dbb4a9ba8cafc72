"""Access to the shared upstream corpus (../shared/corpus) and the seeds
(../shared/seeds): chunks, expected errors and code examples. These files are
read from the shared folder, never copied into the project."""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# ../shared next to the checkout, or where AFFINE_LSP_SHARED points (e.g. from a worktree).
SHARED = Path(os.environ.get("AFFINE_LSP_SHARED") or ROOT.parent / "shared")
CORPUS = SHARED / "corpus"
UPSTREAM = SHARED / "upstream"  # MLIR 22's test files with chunks.tsv
SEEDS = SHARED / "seeds"
TOOLS = SHARED / "tools"


def require_upstream() -> None:
    if not (UPSTREAM / "chunks.tsv").is_file():
        pytest.skip(f"MLIR's test suite not found at {UPSTREAM} (clone next to ../shared)")


def require_shared() -> None:
    if not CORPUS.is_dir() or not SEEDS.is_dir():
        pytest.skip(f"shared corpus not found at {SHARED} (clone next to ../shared)")


@dataclass(frozen=True)
class Chunk:
    file: str
    number: int
    first_line: int  # 1-based, inclusive
    last_line: int
    verifies: bool
    first_error: str

    @property
    def text(self) -> str:
        lines = _file_lines(self.file)
        return "\n".join(lines[self.first_line - 1 : self.last_line]) + "\n"

    @property
    def label(self) -> str:
        return f"{self.file}#{self.number}"


@cache
def _file_lines(name: str) -> list[str]:
    return (CORPUS / name).read_text().split("\n")


@cache
def chunks() -> list[Chunk]:
    with open(CORPUS / "chunks.tsv", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [
        Chunk(
            r["file"],
            int(r["chunk"]),
            int(r["first_line"]),
            int(r["last_line"]),
            r["verifies_with_mlir_opt_22"] == "yes",
            r["first_error"],
        )
        for r in rows
    ]


@dataclass(frozen=True)
class ExpectedError:
    file: str
    chunk: int
    line: int
    target_line: int
    category: str
    produced_by_mlir22: bool
    message: str


@cache
def expected_errors() -> list[ExpectedError]:
    with open(CORPUS / "expected_errors.tsv", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [
        ExpectedError(
            r["file"],
            int(r["chunk"]),
            int(r["line"]),
            int(r["target_line"]),
            r["category"],
            r["produced_by_mlir22"] == "yes",
            r["message"],
        )
        for r in rows
    ]


# -- code examples of the seeds ------------------------------------------------
#
# The .txt seeds are documentation pages with their markup stripped, so a code
# example is recognised by its lines: a run of lines that look like MLIR, plus
# the continuation lines of an unfinished statement or region. The Markdown
# seed's examples are its ```mlir fences. Lines that are only `...` mark elided
# code and are dropped.

_CODE_LINE = re.compile(
    r"^\s*(%[\w$.#:-]+(\s*,\s*%[\w$.#:-]+)*\s*=|#[\w$.]+\s*=|![\w$.]+\s*=|\^\w+|\}|//|"
    r'"[\w.]+"\(|func\.func\b|func @|(affine|memref|arith|scf|cf|func|test|vector|builtin)'
    r"\.[\w.]+\s|call @|return\b\s*($|%)|module\b|\.\.\.\s*$)"
)
_CONTINUATION = re.compile(r"\s*(:|to\b|into\b|->|offset:|sizes:|strides:|iter_args|else\b)")


@dataclass(frozen=True)
class SeedExample:
    seed: str
    line: int  # 1-based first line in the seed
    text: str

    @property
    def label(self) -> str:
        return f"{self.seed}:{self.line}"


def _open_brackets(line: str) -> int:
    line = re.sub(r"//.*", "", line)
    line = re.sub(r'"([^"\\]|\\.)*"', "", line).replace("->", "")
    return sum(line.count(c) for c in "({[<") - sum(line.count(c) for c in ")}]>")


def _text_examples(name: str, text: str) -> list[SeedExample]:
    blocks: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    depth = 0
    for number, line in enumerate(text.split("\n"), start=1):
        continues = bool(current) and (
            depth > 0
            or current[-1][1].rstrip().endswith((",", ":", "to", "="))
            or bool(_CONTINUATION.match(line))
        )
        looks_like_code = "::=" not in line and bool(_CODE_LINE.match(line))
        if looks_like_code or (continues and line.strip()):
            current.append((number, line))
            depth += _open_brackets(line)
        else:
            if current:
                blocks.append(current)
            current, depth = [], 0
    if current:
        blocks.append(current)
    examples = []
    for block in blocks:
        if all(line.strip().startswith("//") for _, line in block):
            continue
        body = "\n".join(line for _, line in block if line.strip() != "...")
        examples.append(SeedExample(name, block[0][0], body + "\n"))
    return examples


def _markdown_examples(name: str, text: str) -> list[SeedExample]:
    examples = []
    current: list[str] | None = None
    start = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith("```"):
            if current is None and "mlir" in line:
                current, start = [], number + 1
            elif current is not None:
                examples.append(SeedExample(name, start, "\n".join(current) + "\n"))
                current = None
        elif current is not None and line.strip() != "...":
            current.append(line)
    return examples


@cache
def seed_examples() -> list[SeedExample]:
    examples: list[SeedExample] = []
    for path in sorted(SEEDS.iterdir()):
        text = path.read_text()
        if path.suffix == ".md":
            examples += _markdown_examples(path.name, text)
        else:
            examples += _text_examples(path.name, text)
    return examples
