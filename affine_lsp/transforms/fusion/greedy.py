"""Fuse everything worth fusing in a document, one checked step at a time.

Per function: a greedy run (`run.py`: dead nests removed, producer-consumer
pairs, then siblings, each step proven, none that loads more cache lines),
followed by a bounded search over the order of the fusions (`search.py`),
keeping the result that leaves the fewest nests. The result also says which
pairs were left apart and why (`Considered`), and whether the isl operation
budget ran out (`spent`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from affine_lsp.ir import build_module
from affine_lsp.poly import answers_kept, budgets, deadline_after
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.fusion.engine import PRODUCER_CONSUMER, SIBLING, FusionOptions
from affine_lsp.transforms.fusion.nests import functions
from affine_lsp.transforms.fusion.run import Considered, Evaluator, Fusion, Removed, State
from affine_lsp.transforms.fusion.search import best_order

__all__ = ["Considered", "FuseAllResult", "Fusion", "Removed", "fuse_all"]


@dataclass
class FuseAllResult:
    text: bytes
    steps: list[Fusion | Removed] = field(default_factory=list)
    complete: bool = True  # False: the time limit stopped it (`text` has the steps done)
    left_alone: list[Considered] = field(default_factory=list)  # pairs not fused, and why
    spent: bool = False  # the isl operation budget ran out (later pairs were not asked)
    operations: int = 0  # isl operations spent (every function)

    @property
    def fusions(self) -> list[Fusion]:
        return [s for s in self.steps if isinstance(s, Fusion)]

    @property
    def removed(self) -> list[Removed]:
        return [s for s in self.steps if isinstance(s, Removed)]


def fuse_all(
    data: bytes,
    options: FusionOptions | None = None,
    only: set[str] | None = None,
    modes: tuple[str, ...] = (PRODUCER_CONSUMER, SIBLING),
    time_limit: float | None = None,
    orders: int = budgets.FUSE_ALL_ORDERS,
    evaluations: int = budgets.FUSE_ALL_EVALUATIONS,
    max_operations: int | None = budgets.FUSE_ALL_OPERATIONS,
) -> FuseAllResult:
    """Fuse in every function (or those named in `only`, without `@`), in the given
    modes (producer-consumer, then sibling, by default), removing dead nests, and
    searching up to `orders` orders of fusion per function (asking at most
    `evaluations` fresh legality questions beyond the first run's) for the one that
    leaves the fewest nests, spending at most `max_operations` isl operations per
    function (None: no cap). With a `time_limit` (seconds) it stops when that runs
    out, with `complete` False."""
    options = options or FusionOptions()
    model = build_module(SourceDocument(data).tree.root_node, options.dialects)
    steps: list[Fusion | Removed] = []
    left: list[Considered] = []
    spent = False
    complete = True
    operations = 0
    index = 0
    lines_before = 0  # lines the fusions in earlier functions removed (input = text + this)
    while True:
        found = list(functions(model))
        if index >= len(found):
            break
        function = found[index]
        index += 1
        if only is not None and function.symbol.lstrip("@") not in only:
            continue
        evaluator = Evaluator(options, deadline_after(time_limit), max_operations)
        start = State(data, model, function)
        start.lines = {offset: line + lines_before for offset, line in start.lines.items()}
        start.names = {line + lines_before: name for line, name in start.names.items()}
        start.parents = {
            line + lines_before: parent + lines_before if parent else 0
            for line, parent in start.parents.items()
        }
        with answers_kept():  # (the same original asked about by many pairs)
            run = best_order(evaluator, start, modes, orders, evaluations)
        left += run.left_alone()
        spent = spent or evaluator.spent
        operations += evaluator.operations
        complete = complete and evaluator.complete
        if run.steps:
            steps += [step.report for step in run.steps]
            lines_before += data.count(b"\n") - run.state.data.count(b"\n")
            data = run.state.data
            # Later functions moved: model the text again.
            model = build_module(SourceDocument(data).tree.root_node, options.dialects)
    return FuseAllResult(data, steps, complete, left, spent, operations)
