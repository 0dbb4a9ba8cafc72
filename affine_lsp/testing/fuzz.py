"""Run every analysis a document goes through, for fuzzing: parse, syntax
errors, the semantic model, the checks, position conversions, and the editor
features. Each stage is timed; exceptions propagate to the caller."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from affine_lsp.checks import check_document
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ir import (
    AffineAccessOp,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    ModuleModel,
    build_module,
)
from affine_lsp.poly import budgets, describe_access, describe_condition, describe_loop
from affine_lsp.syntax import SourceDocument, syntax_problems
from affine_lsp.transforms.fusion import FusionAction, fusion_actions
from affine_lsp.transforms.loops import LoopAction, loop_actions


@dataclass
class FuzzContext:
    document: SourceDocument
    model: ModuleModel
    rng: random.Random
    offsets: list[int]
    fusion_actions: list[FusionAction] = field(default_factory=list)
    loop_actions: list[LoopAction] = field(default_factory=list)
    # The editor stages' analysis of the document as opened (`editor_stages`).
    editor_analysis: DocumentAnalysis | None = None


Stage = Callable[[FuzzContext], object]


def _positions(ctx: FuzzContext) -> None:
    for offset in ctx.offsets:
        line, character = ctx.document.position(offset)
        back = ctx.document.offset((line, character))
        if not 0 <= back <= len(ctx.document.data):
            raise AssertionError(f"offset {offset} -> {(line, character)} -> {back}")
    ctx.document.offset((10**9, 10**9))
    ctx.document.offset((-5, -5))


def _hover_data(ctx: FuzzContext) -> None:
    """The polyhedral descriptions behind hovers, on up to a few ops of each kind."""
    budget = budgets.FUZZ_HOVER
    seen: dict[type, int] = {}
    for op in ctx.model.walk():
        describe = _DESCRIBERS.get(type(op))
        if describe is None or seen.get(type(op), 0) >= 3:
            continue
        seen[type(op)] = seen.get(type(op), 0) + 1
        describe(op, ctx.model, budget)


def _fusion_plans(ctx: FuzzContext) -> None:
    """Fusion code actions at two offsets (planned within the editor's time budget)."""
    ctx.fusion_actions = []
    for offset in ctx.offsets[:2]:
        ctx.fusion_actions += fusion_actions(ctx.document, ctx.model, offset, offset)


def _fusion_resolve(ctx: FuzzContext) -> None:
    """The first enabled fusion action planned, computed as when the user chooses it
    (with a shorter time limit than the editor's)."""
    for action in ctx.fusion_actions:
        if action.disabled_reason is None:
            action.resolve(budgets.FUZZ_RESOLVE_SECONDS)
            break


def _transform_plans(ctx: FuzzContext) -> None:
    """Loop transformation code actions at two offsets."""
    ctx.loop_actions = []
    for offset in ctx.offsets[:2]:
        ctx.loop_actions += loop_actions(
            ctx.document,
            ctx.model,
            offset,
            offset,
            budget=budgets.FUZZ_TRANSFORM_PLANNING,
            resolve=budgets.FUZZ_TRANSFORM,
        )


def _transform_resolve(ctx: FuzzContext) -> None:
    """The first enabled loop transformation, written and proven as when chosen."""
    for action in ctx.loop_actions:
        if action.disabled_reason is None:
            action.resolve(budgets.FUZZ_RESOLVE_SECONDS)
            break


_DESCRIBERS = {
    AffineForOp: describe_loop,
    AffineParallelOp: describe_loop,
    AffineAccessOp: describe_access,
    AffineIfOp: describe_condition,
}

STAGES: dict[str, Stage] = {
    "syntax_errors": lambda ctx: syntax_problems(ctx.document.tree),
    "checks": lambda ctx: check_document(ctx.document),
    "positions": _positions,
    "hover_data": _hover_data,
    "fusion": _fusion_plans,
    "fusion_resolve": _fusion_resolve,
    "loop_transforms": _transform_plans,
    "loop_transforms_resolve": _transform_resolve,
}
"""Stages run after parsing and modelling; editor features register here too."""

COMMANDS = {"fusion_resolve", "loop_transforms_resolve"}
"""Stages that carry out what a user chose (with time limits of their own); the
rest is the analysis that must fit in `budgets.FUZZ_ANALYSIS_SECONDS` per document."""


@dataclass
class FuzzResult:
    seconds: float
    stage_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def analysis_seconds(self) -> float:
        """The time of every stage but the user's commands."""
        return self.seconds - sum(self.stage_seconds.get(name, 0.0) for name in COMMANDS)


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


def _register_editor_stages() -> None:
    from affine_lsp.testing.editor_stages import STAGES as EDITOR_STAGES

    STAGES.update(EDITOR_STAGES)


_register_editor_stages()
