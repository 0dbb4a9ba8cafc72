"""Optimize: a schedule for locality and parallelism chosen for the user, realised
with proven transformations.

    optimize_nest(data, model, loop, options)   -> Outcome (new text, steps in words,
                                                   refusals, predicted gain, schedule)
    optimize_nests(data, starts, options)       -> (text, [NestReport]) several nests
    outermost_loops(op)                         the nests under a function (or any op)
    Options(machine, parallelize, budget, tile_scale, jam)

The machine and the cost model are `transforms.performance`'s.
The code action (`actions.py`): optimize_actions(document, model, start, end,
OptimizeOptions(tune)) -> [OptimizeAction] ("Optimize nest", resolved when
chosen), outermost_at(model, start, end, line_of) the nest it designates.
Measured tuning (`tuning.py`, `tune.py`): tune_function(data, function_start,
starts, options, progress) -> Tuned; toolchain() says whether mlir-opt,
mlir-translate and clang are there; TuneError says why not.
The scheduler alone (`scheduler.py`, on `nest.Nest`): schedule_of(model,
loop) -> (Schedule: Band, Row as plain data; its words).
"""

from affine_lsp.transforms.optimize.actions import (
    OptimizeAction,
    OptimizeOptions,
    optimize_actions,
    outermost_at,
)
from affine_lsp.transforms.optimize.optimizer import (
    NestReport,
    Options,
    Outcome,
    optimize_nest,
    optimize_nests,
    outermost_loops,
)
from affine_lsp.transforms.optimize.scheduler import Band, Row, Schedule
from affine_lsp.transforms.optimize.schedules import schedule_of
from affine_lsp.transforms.optimize.tune import TuneError, toolchain
from affine_lsp.transforms.optimize.tuning import Tuned, tune_function

__all__ = [
    "Band",
    "NestReport",
    "OptimizeAction",
    "OptimizeOptions",
    "Options",
    "Outcome",
    "Row",
    "Schedule",
    "TuneError",
    "Tuned",
    "optimize_actions",
    "optimize_nest",
    "optimize_nests",
    "outermost_at",
    "outermost_loops",
    "schedule_of",
    "toolchain",
    "tune_function",
]
