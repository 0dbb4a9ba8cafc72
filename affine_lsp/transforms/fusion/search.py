"""The order of fusions: a bounded search for the one that leaves the fewest nests.

Greedy fusion can fuse a pair first that blocks a better pair later (a nest
fused into one consumer can no longer go into another, a fused nest no longer
fits between its neighbours). After the first greedy run, the search re-runs the
greedy with one of the fusions it made forbidden, each in turn; a run that
leaves fewer nests (then fewer loops) becomes the new best and the search goes on
from there. It only looks for fewer top-level nests, and stops when no forbidden
fusion helps, when no order can leave fewer (nests that share no memref are never
fused together), or at the budget: at most `orders` runs and
`evaluations` fresh legality questions per function beyond the first run's
(`budgets.FUSE_ALL_ORDERS`, `budgets.FUSE_ALL_EVALUATIONS`; counts, so the result
does not depend on the machine), or when the isl operations of the whole fuse-all
are spent (`budgets.FUSE_ALL_OPERATIONS`). Every run's steps are proven; the
search only chooses among proven results.
"""

from __future__ import annotations

from affine_lsp.poly import budgets
from affine_lsp.transforms.fusion.nests import loops_in, memrefs_touched
from affine_lsp.transforms.fusion.run import Evaluator, GreedyRun, Move, State

SEARCH_FLOOR = 10
"""The search may always analyse this many pairs afresh, and otherwise as many as the
first run did (it at most about doubles the work), up to its `evaluations` budget."""


def _fewest_possible(run: GreedyRun) -> int:
    """A lower bound on the top-level nests any order can leave: nests that share no
    memref (directly or through other nests) are never fused together."""
    body = run.state.function.body
    nests = loops_in(body.entry) if body is not None and body.entry is not None else []
    group = list(range(len(nests)))

    def root(k: int) -> int:
        while group[k] != k:
            group[k] = group[group[k]]
            k = group[k]
        return k

    touched = [memrefs_touched(nest) for nest in nests]
    for j in range(len(nests)):
        for i in range(j):
            (reads_i, writes_i), (reads_j, writes_j) = touched[i], touched[j]
            if writes_i & (reads_j | writes_j) or reads_i & (reads_j | writes_j):
                group[root(i)] = root(j)
    return len({root(k) for k in range(len(nests))})


def best_order(
    evaluator: Evaluator,
    start: State,
    modes: tuple[str, ...],
    orders: int = budgets.FUSE_ALL_ORDERS,
    evaluations: int = budgets.FUSE_ALL_EVALUATIONS,
) -> GreedyRun:
    """The best of the greedy runs tried from `start` (the first run if no other is
    better)."""
    asked = evaluator.evaluations
    best = GreedyRun(evaluator, start, modes).run()
    runs = 1
    first_run = evaluator.evaluations - asked
    limit = evaluator.evaluations + min(evaluations, max(SEARCH_FLOOR, first_run))
    tried: set[frozenset[Move]] = {frozenset()}
    improved = True
    fewest = _fewest_possible(best)
    while improved and best.state.score()[0] > fewest:
        improved = False
        for step in best.steps:
            if step.move is None:
                continue
            banned = best.banned | {step.move}
            if banned in tried:
                continue
            if (
                runs >= orders
                or evaluator.evaluations >= limit
                or not evaluator.complete
                or evaluator.spent
            ):
                return best
            tried.add(banned)
            runs += 1
            run = GreedyRun(evaluator, start, modes, banned).run()
            if not evaluator.complete:
                return best
            if run.state.score() < best.state.score():
                best, improved = run, True
                break
    return best


__all__ = ["best_order"]
