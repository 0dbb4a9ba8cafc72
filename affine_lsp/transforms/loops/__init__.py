"""Loop transformations proven legal: one core for the CLI and the code actions.

Each function takes a document's bytes, its model and one `affine.for`, and
returns a `Result`: the transformed document (and minimal edits) or the reason
it was refused. Every applied result has been parsed back and proven equivalent
to the original by exact dataflow (`proof.py`); legality is decided first from
the dependences (`legality.py`), whose violations name the dependence broken.

    interchange(data, model, loop)           the loop with the one directly inside
    permute(data, model, loop, P)            P[k] = new position of the band's k-th loop
    tile(data, model, loop, sizes)           a perfect band, sizes from the outside
    unroll(data, model, loop, factor)        factor None: fully
    unroll_jam(data, model, loop, factor)
    parallelize(data, model, loop)           affine.parallel, with reductions
    hoist(data, model, loop)                 loop-invariant code moved out
    distribute(data, model, loop)            fission along dependence cycles
    skew(data, model, loop, factor)          the inner loop of a pair by the outer iv
    wavefront(data, model, loop, rows=None, sizes=())
                                             the diagonals of a band (or of its tiles) in turn
    scalar_replace(data, model, loop)        invariant elements kept in registers
    transform(data, model, loop, spec)       any of them from a `Spec`
    module_of(kind)                          the module implementing a kind

The kinds (`KINDS`): INTERCHANGE, PERMUTE, TILE, SKEW, WAVEFRONT, UNROLL,
UNROLL_JAM, PARALLELIZE, HOIST, DISTRIBUTE, SCALAR_REPLACE. Skews, tiles of skewed
or imperfect bands and wavefronts are written by the code generator
(`transforms.schedule`).

The editor's code actions: loop_actions(...) -> list[LoopAction] (options in
`LoopOptions`), loop_at(model, start, end) the loop a range designates.

A chain of proven steps proven again as a whole: prove_chain(session, data, model,
root, steps) with one ChainStep(model, result.rewrite) per step, nest_region(data,
root) the lines a nest spans.

A rewrite planned elsewhere, proven like these: run_planned(data, model, loop, spec,
planner, budget) with `planner.plan(context, spec, check)` and `.rewrite(context,
plan)` (a Context, Refused to refuse); schedule_statements(context),
schedule_violation(context, scheduled, what) and schedule_rewrite(context,
scheduled) write a nest from per-statement time vectors (`transforms.schedule`).

About nests: perfect_band(loop, limit) the perfectly nested loops from `loop` down,
aligned_band(loop) the band through sibling nests (a shifted fusion's peeled pieces)
and their loops' levels,
iv_name(loop) its induction variable's name, NestAnalysis(context, loop) the
dependences of a loop's window and the schedules they allow.
"""

from __future__ import annotations

from collections.abc import Sequence

from affine_lsp.ir import AffineForOp, ModuleModel
from affine_lsp.poly import Budget
from affine_lsp.transforms.loops.actions import LoopAction, LoopOptions, loop_actions, loop_at
from affine_lsp.transforms.loops.chain import Step as ChainStep
from affine_lsp.transforms.loops.chain import nest_region, prove_chain
from affine_lsp.transforms.loops.core import (
    DISTRIBUTE,
    HOIST,
    INTERCHANGE,
    KINDS,
    PARALLELIZE,
    PERMUTE,
    SCALAR_REPLACE,
    SKEW,
    TILE,
    UNROLL,
    UNROLL_JAM,
    WAVEFRONT,
    Context,
    Refused,
    Result,
    Spec,
    module_of,
    transform,
)
from affine_lsp.transforms.loops.core import run as run_planned
from affine_lsp.transforms.loops.legality import NestAnalysis
from affine_lsp.transforms.loops.nest import iv_name, perfect_band
from affine_lsp.transforms.loops.scheduled import aligned_band
from affine_lsp.transforms.loops.scheduled import rewrite as schedule_rewrite
from affine_lsp.transforms.loops.scheduled import statements as schedule_statements
from affine_lsp.transforms.loops.scheduled import violation as schedule_violation


def interchange(
    data: bytes, model: ModuleModel, loop: AffineForOp, budget: Budget | None = None
) -> Result:
    return transform(data, model, loop, Spec(INTERCHANGE), budget)


def permute(
    data: bytes,
    model: ModuleModel,
    loop: AffineForOp,
    permutation: Sequence[int],
    budget: Budget | None = None,
) -> Result:
    return transform(data, model, loop, Spec(PERMUTE, permutation=tuple(permutation)), budget)


def tile(
    data: bytes,
    model: ModuleModel,
    loop: AffineForOp,
    sizes: Sequence[int],
    budget: Budget | None = None,
) -> Result:
    return transform(data, model, loop, Spec(TILE, sizes=tuple(sizes)), budget)


def unroll(
    data: bytes,
    model: ModuleModel,
    loop: AffineForOp,
    factor: int | None,
    budget: Budget | None = None,
) -> Result:
    return transform(data, model, loop, Spec(UNROLL, factor=factor), budget)


def unroll_jam(
    data: bytes, model: ModuleModel, loop: AffineForOp, factor: int, budget: Budget | None = None
) -> Result:
    return transform(data, model, loop, Spec(UNROLL_JAM, factor=factor), budget)


def parallelize(
    data: bytes, model: ModuleModel, loop: AffineForOp, budget: Budget | None = None
) -> Result:
    return transform(data, model, loop, Spec(PARALLELIZE), budget)


def hoist(
    data: bytes, model: ModuleModel, loop: AffineForOp, budget: Budget | None = None
) -> Result:
    return transform(data, model, loop, Spec(HOIST), budget)


def distribute(
    data: bytes, model: ModuleModel, loop: AffineForOp, budget: Budget | None = None
) -> Result:
    return transform(data, model, loop, Spec(DISTRIBUTE), budget)


def skew(
    data: bytes, model: ModuleModel, loop: AffineForOp, factor: int, budget: Budget | None = None
) -> Result:
    return transform(data, model, loop, Spec(SKEW, factor=factor), budget)


def wavefront(
    data: bytes,
    model: ModuleModel,
    loop: AffineForOp,
    rows: int | None = None,
    sizes: Sequence[int] = (),
    budget: Budget | None = None,
) -> Result:
    return transform(data, model, loop, Spec(WAVEFRONT, sizes=tuple(sizes), factor=rows), budget)


def scalar_replace(
    data: bytes, model: ModuleModel, loop: AffineForOp, budget: Budget | None = None
) -> Result:
    return transform(data, model, loop, Spec(SCALAR_REPLACE), budget)


__all__ = [
    "DISTRIBUTE",
    "HOIST",
    "INTERCHANGE",
    "KINDS",
    "PARALLELIZE",
    "PERMUTE",
    "SCALAR_REPLACE",
    "SKEW",
    "TILE",
    "UNROLL",
    "UNROLL_JAM",
    "WAVEFRONT",
    "ChainStep",
    "Context",
    "LoopAction",
    "LoopOptions",
    "NestAnalysis",
    "Refused",
    "Result",
    "Spec",
    "distribute",
    "hoist",
    "interchange",
    "iv_name",
    "loop_actions",
    "loop_at",
    "module_of",
    "nest_region",
    "parallelize",
    "perfect_band",
    "aligned_band",
    "permute",
    "prove_chain",
    "run_planned",
    "scalar_replace",
    "schedule_rewrite",
    "schedule_statements",
    "schedule_violation",
    "skew",
    "tile",
    "transform",
    "unroll",
    "unroll_jam",
    "wavefront",
]
