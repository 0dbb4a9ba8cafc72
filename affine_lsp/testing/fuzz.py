"""Run every analysis a document goes through, for fuzzing: parse, syntax
errors, the semantic model, the checks, position conversions, and the editor
features. Each stage is timed; exceptions propagate to the caller."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from affine_lsp.checks import check_document
from affine_lsp.ir import build_module
from affine_lsp.ir.model import ModuleModel
from affine_lsp.syntax import SourceDocument, syntax_problems


@dataclass
class FuzzContext:
    document: SourceDocument
    model: ModuleModel
    rng: random.Random
    offsets: list[int]


Stage = Callable[[FuzzContext], object]


def _positions(ctx: FuzzContext) -> None:
    for offset in ctx.offsets:
        line, character = ctx.document.position(offset)
        back = ctx.document.offset((line, character))
        if not 0 <= back <= len(ctx.document.data):
            raise AssertionError(f"offset {offset} -> {(line, character)} -> {back}")
    ctx.document.offset((10**9, 10**9))
    ctx.document.offset((-5, -5))


STAGES: dict[str, Stage] = {
    "syntax_errors": lambda ctx: syntax_problems(ctx.document.tree),
    "checks": lambda ctx: check_document(ctx.document),
    "positions": _positions,
}
"""Stages run after parsing and modelling; editor features register here too."""


@dataclass
class FuzzResult:
    seconds: float
    stage_seconds: dict[str, float] = field(default_factory=dict)


def analyze(data: bytes, rng: random.Random) -> FuzzResult:
    """Run every stage on `data`; raises whatever a stage raises."""
    start = time.perf_counter()
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    timings = {"parse+model": time.perf_counter() - start}
    length = len(document.data)
    offsets = [rng.randint(0, length) for _ in range(8)] + [0, length]
    ctx = FuzzContext(document, model, rng, offsets)
    for name, stage in STAGES.items():
        stage_start = time.perf_counter()
        stage(ctx)
        timings[name] = time.perf_counter() - stage_start
    return FuzzResult(time.perf_counter() - start, timings)
