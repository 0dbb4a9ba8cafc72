"""The scheduler on a nest of a document: `schedule_of(data, model, loop)`."""

from __future__ import annotations

from affine_lsp.ir import AffineForOp, ModuleModel
from affine_lsp.poly import Budget, IslSession, time_limits_enabled
from affine_lsp.transforms.optimize.nest import Nest
from affine_lsp.transforms.optimize.scheduler import Schedule, compute

SCHEDULE_BUDGET = Budget(max_operations=5_000_000, time_limit=2.0)
"""The model's dependence questions, per nest."""
SCHEDULER_SECONDS = 4.0
"""isl's scheduler itself (which counts no operations): stopped after this long."""


def schedule_of(
    model: ModuleModel, loop: AffineForOp, budget: Budget = SCHEDULE_BUDGET
) -> tuple[Schedule, list[str]]:
    """isl's schedule of the nest of `loop` and its bands in words; a PolyError
    (NotAffine, BudgetExceeded) when there is none."""
    nest, found = scheduled(model, loop, budget)
    return found, found.describe(nest)


def scheduled(
    model: ModuleModel, loop: AffineForOp, budget: Budget = SCHEDULE_BUDGET
) -> tuple[Nest, Schedule]:
    """The nest of `loop` and isl's schedule of it (a PolyError when there is none)."""
    session = IslSession(budget)
    seconds = SCHEDULER_SECONDS if time_limits_enabled() else None
    with session.errors("the schedule"):
        nest = Nest.of(session, loop, model)
        return nest, compute(nest, seconds)
