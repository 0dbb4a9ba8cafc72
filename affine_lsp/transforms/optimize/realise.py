"""Realising a plan: proven transformations applied one after another to one nest,
then the final text proven against the original.

A `Realiser` holds the current text of the document and the region its nest
spans (the lines of the original nest, as they grow or shrink: every step
rewrites only inside it). Each step is an ordinary transformation
(`transforms.loops.transform` with a `Spec`), proven against the text before
it; a step that is refused or not proven is not taken, and its reason is kept
in the user's terms. Loops are found again after each step by their
induction variables' names, which every transformation keeps (`%i`, the tile
loop `%i_tile`). `finish()` proves the composed chain against the original
(`prove_chain`); if that fails, the longest prefix that proves is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from affine_lsp.ir import AffineForOp, AffineParallelOp, ModuleModel, Operation, build_module
from affine_lsp.poly import Budget, IslSession, PolyError, budgets, seconds_left
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.loops import (
    ChainStep,
    Spec,
    iv_name,
    nest_region,
    prove_chain,
    run_planned,
    transform,
)

_LOOPS = (AffineForOp, AffineParallelOp)
CHAIN_LIMIT = 3
"""The proof of the whole chain composes every step (a register tile's copies, their
sums kept in registers): it gets this many times a step's time limit, so that a
loaded machine does not drop its last steps (syrk's: 1.7 s of CPU time)."""


@dataclass
class Taken:
    """A step that was applied: its words ('tiled (i, k, j) 20x40x20')."""

    words: str
    spec: Spec


@dataclass
class Realiser:
    data: bytes
    model: ModuleModel
    root: AffineForOp
    budget: Budget = budgets.TRANSFORM
    taken: list[Taken] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    deadline: float | None = None  # time.perf_counter() after which no step starts

    def __post_init__(self) -> None:
        self.original = (self.data, self.model, self.root)
        self.start, self.end = nest_region(self.data, self.root)
        self._steps: list[ChainStep] = []
        self._texts: list[bytes] = [self.data]
        self._models: list[ModuleModel] = []
        self._adopted: tuple[bytes, ModuleModel, int, tuple] | None = None  # before fusions
        self._adoptions = 0

    # -- the current nests -------------------------------------------------------------

    def tops(self) -> list[Operation]:
        """The ops the region holds at its top level, in order."""
        found = []
        for op in self.model.walk():
            offset = op.span.start_byte
            if not self.start <= offset < self.end:
                continue
            parent = op.parent_op
            if parent is None or parent.span.start_byte < self.start:
                found.append(op)
        return found

    def nests(self) -> list[AffineForOp | AffineParallelOp]:
        """The loops at the region's top level (a loop a step made parallel too: the
        places of the nests after it stay what they were)."""
        return [op for op in self.tops() if isinstance(op, AffineForOp | AffineParallelOp)]

    def op_at(self, place: tuple[int, ...]) -> AffineForOp | AffineParallelOp | None:
        """The loop at `place`: the index of its nest among `nests()`, then its index
        among the loops of each body on the way down (`affine.for` or, once made
        parallel, `affine.parallel`)."""
        nests = self.nests()
        if not place or place[0] >= len(nests):
            return None
        loop = nests[place[0]]
        for index in place[1:]:
            body = loop.body.entry if loop.body is not None else None
            inner = [op for op in body.operations if isinstance(op, _LOOPS)] if body else []
            if index >= len(inner):
                return None
            loop = inner[index]
        return loop

    def at(self, place: tuple[int, ...]) -> AffineForOp | None:
        """The `affine.for` at `place` (`op_at`; None where it is parallel now)."""
        loop = self.op_at(place)
        return loop if isinstance(loop, AffineForOp) else None

    def find(self, name: str, within: Operation | None = None) -> AffineForOp | None:
        """The first loop whose iv is `name` (in `within`, else in the region)."""
        roots = [within] if within is not None else self.tops()
        for root in roots:
            for op in root.walk():
                if isinstance(op, AffineForOp) and iv_name(op) == name:
                    return op
        return None

    # -- steps -------------------------------------------------------------------------

    def apply(
        self, loop: AffineForOp, spec: Spec, words: str, attempt: str, planner: Any = None
    ) -> bool:
        """Apply `spec` at `loop` (proven; `words` say what was done, the
        transformation's own summary if empty, `attempt` what was tried); False, with
        the reason kept, if not. `planner`: a rewrite planned here (`run_planned`)."""
        budget = self._budget()
        if budget is None:
            self.refused.append(f"{attempt}: out of time")
            return False
        if planner is not None:
            result = run_planned(self.data, self.model, loop, spec, planner, budget)
        else:
            result = transform(self.data, self.model, loop, spec, budget)
        if not result.applied or result.new_text is None or result.rewrite is None:
            self.refused.append(f"{attempt}: {result.reason or 'not applied'}")
            return False
        rewrite = result.rewrite
        if rewrite.extra or rewrite.stands_for or rewrite.operands:
            self.refused.append(
                f"{attempt}: it combines carried values in a new order (not composed with "
                "the other steps)"
            )
            return False
        new = result.new_text
        delta = len(new) - len(self.data)
        if (
            new[: self.start] != self.data[: self.start]
            or new[self.end + delta :] != (self.data[self.end :])
        ):
            self.refused.append(f"{attempt}: it changes code outside the nest")
            return False
        self._steps.append(ChainStep(self.model, result.rewrite))
        self._texts.append(new)
        self.data = new
        self.end += delta
        self._models.append(self.model)
        self.model = build_module(SourceDocument(new).tree.root_node, self.model.dialects)
        self.taken.append(Taken(words or result.summary or attempt, spec))
        return True

    def apply_each(
        self, find: Callable[[], list[AffineForOp]], spec: Spec, words: str, most: int
    ) -> None:
        """Apply `spec` to each loop `find()` lists (listed again after each step, in
        the order of the text), at most `most` tries; a loop it does not apply to, or
        whose proof with the steps before fails, is left as it is, unreported."""
        left = 0  # the loops tried and left
        for _ in range(most):
            loops = find()
            if left >= len(loops):
                return
            said = len(self.refused)
            if not self.apply(loops[left], spec, words, words or spec.kind):
                del self.refused[said:]  # (tried wherever it may apply: not news)
                left += 1

    def adopt(self, new: bytes, words: str, attempt: str) -> bool:
        """A first step proven by other means (a fusion, checked by its own exact
        dataflow comparison): its text becomes the base the next steps are proven
        against. False, with the reason kept, if it is not a first step or changes
        code outside the nest."""
        delta = len(new) - len(self.data)
        outside = new[: self.start] != self.data[: self.start] or (
            new[self.end + delta :] != self.data[self.end :]
        )
        if self._steps or outside:
            self.refused.append(f"{attempt}: it cannot be combined with the other steps")
            return False
        if self._adopted is None:
            self._adopted = (self.data, self.model, self.end, self.original)
        self._adoptions += 1
        model = build_module(SourceDocument(new).tree.root_node, self.model.dialects)
        self.data, self.model, self.end = new, model, self.end + delta
        root = self.at((0,))
        self.taken.append(Taken(words, Spec("fuse")))
        if root is None:
            self.undo()
            self.refused.append(f"{attempt}: the nest was not found again")
            return False
        self.original = (new, model, root)
        self._texts = [new]
        return True

    def undo(self) -> None:
        """Take back the last step (a first step that pays only with the next one)."""
        if not self._steps and self._adopted is not None:  # every fusion at once
            self.data, self.model, self.end, self.original = self._adopted
            self._adopted = None
            self._texts = [self.data]
            self.taken = self.taken[: len(self.taken) - self._adoptions]
            self._adoptions = 0
            return
        if not self._steps:
            return
        self._steps.pop()
        self._texts.pop()
        self.taken.pop()
        old = self._texts[-1]
        self.end -= len(self.data) - len(old)
        self.data = old
        self.model = self._models.pop()

    def _budget(self, scale: float = 1.0) -> Budget | None:
        """The step's budget (its time limit times `scale`), no later than the
        deadline (None: past)."""
        limit = self.budget.time_limit
        limit = None if limit is None else limit * scale
        left = seconds_left(self.deadline)
        if left is None:
            return Budget(self.budget.max_operations, limit)
        if left <= 0:
            return None
        return Budget(self.budget.max_operations, left if limit is None else min(limit, left))

    def finish(self) -> bytes:
        """The final text, proven against the original as one rewrite (against the
        adopted text, after a fusion, itself checked by fusion's own comparison);
        when that proof fails, the longest prefix of the steps that proves."""
        data, model, root = self.original
        count = len(self._steps)
        while count > 0:
            session = IslSession(self._budget(CHAIN_LIMIT) or self.budget)
            try:
                with session.errors("the chain of steps"):
                    return prove_chain(session, data, model, root, self._steps[:count])
            except PolyError as error:
                dropped = self.taken[count - 1 + self._adoptions]
                self.refused.append(
                    f"{dropped.words}: not proven with the steps before it ({error.reason})"
                )
                count -= 1
                self.taken = self.taken[: count + self._adoptions]
        return data
