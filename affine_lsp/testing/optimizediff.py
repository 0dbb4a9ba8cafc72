"""Differential testing of Optimize: generated nests (`nestgen`) optimized, run
with mlir-runner against the original (parallel loops also backwards, as
`loopdiff.judge` does). Odd seeds take random legal choices (`Options.explore`:
orders, tile sizes that divide the trip counts or not, unroll-and-jam factors),
so that every kind of step and chain is run; even seeds take the model's choice
for a machine with tiny caches (so that it tiles even loops of a few
iterations), with the tile scale and unroll-and-jam of `VARIANTS`.

``check_optimized(seed)`` gives one program's verdict: changed or not, the steps
taken, same / different / failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from affine_lsp.ir import FuncOp, build_module
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing import nestgen, oracle
from affine_lsp.testing.loopdiff import judge
from affine_lsp.transforms.optimize import Options, optimize_nests, outermost_loops
from affine_lsp.transforms.performance import Machine

TINY = Machine(caches=(256, 2048, 16384), line_bytes=64, vector_bytes=16, registers=16)
"""Caches of a few lines: every generated nest is worth tiling to the model."""

VARIANTS = ((1.0, True, False), (0.5, True, False), (2.0, False, False), (1.0, True, True))
"""(tile scale, unroll-and-jam, a register tile wherever one fits) by seed, so that
every variant's steps are run."""


@dataclass
class OptimizedProgram:
    seed: int
    features: list[str]
    changed: bool = False
    steps: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    verdict: str = ""  # same | different | failed | unchanged | original-failed
    detail: str = ""


def kernel_nests(text: str) -> list[int]:
    """The starts of @kernel's outermost loops."""
    model = build_module(SourceDocument(text.encode()).tree.root_node)
    for op in model.walk():
        if isinstance(op, FuncOp) and op.symbol == "@kernel":
            return [loop.span.start_byte for loop in outermost_loops(op)]
    return []


def check_optimized(seed: int, timeout: float = oracle.DEFAULT_TIMEOUT) -> OptimizedProgram:
    nest = nestgen.generate(seed)
    report = OptimizedProgram(seed, sorted(nest.features))
    scale, jam, tile = VARIANTS[(seed // 2) % len(VARIANTS)]
    options = Options(
        machine=TINY, tile_scale=scale, jam=jam, min_tiled_trips=4, register_tile=tile
    )
    if seed % 2:
        options = Options(machine=TINY, explore=seed)
    new, reports = optimize_nests(nest.text.encode(), kernel_nests(nest.text), options)
    for found in reports:
        report.steps += found.outcome.steps
        report.refused += found.outcome.refused
    if new == nest.text.encode():
        report.verdict = "unchanged"
        return report
    report.changed = True
    original = oracle.lower_and_run(nest.text, timeout=timeout)
    if not original.ok:
        report.verdict = "original-failed"
        report.detail = original.describe()
        return report
    report.verdict, report.detail = judge(nest.text, new.decode(), original, timeout)
    return report
