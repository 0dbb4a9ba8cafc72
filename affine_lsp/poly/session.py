"""An isl context with a bounded amount of work, and the `Unknown` answer.

Every polyhedral question runs inside an `IslSession`: one isl context whose
operation counter is capped (`isl_ctx_set_max_operations`) plus a wall-clock
deadline checked between steps (both from a `budgets.Budget`). When either runs
out, or the input is not affine, the analysis stops with a `PolyError`, which the
public entry points turn into `Unknown(reason)`; callers treat that conservatively.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

import islpy as isl

from affine_lsp.poly.budgets import DEFAULT, Budget, deadline_after, past

T = TypeVar("T")


@dataclass(frozen=True)
class Unknown:
    """The answer is not available: non-affine input, too complex, or over budget."""

    reason: str


class PolyError(Exception):
    """Internal: the analysis cannot go on; `reason` says why (becomes `Unknown`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NotAffine(PolyError):
    """Something on the way is not an affine expression of loop ivs and symbols."""


class BudgetExceeded(PolyError):
    """The isl operation budget or the deadline ran out."""


class IslSession:
    """One isl context with an operation budget and a deadline."""

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget or DEFAULT
        self.ctx = isl.Context()
        if self.budget.max_operations:
            self.ctx.set_max_operations(self.budget.max_operations)
        self.ctx.reset_operations()
        self.deadline = deadline_after(self.budget.time_limit)

    def operations(self) -> int:
        """The isl operations this session has spent. isl keeps the count but has no
        getter: it is found by lowering the cap until a trivial operation fails (about
        forty probes, which count too; the cap is restored)."""
        cap = self.budget.max_operations or 0
        low, high = 0, cap or 1 << 40
        while low < high:
            middle = (low + high + 1) // 2
            self.ctx.set_max_operations(middle)
            try:
                isl.Set.read_from_str(self.ctx, "{ [] }")
                high = middle - 1
            except isl.Error:
                low = middle
        self.ctx.set_max_operations(cap)
        return low

    def allow(self, operations: int) -> None:
        """Let this session spend `operations` more isl operations than it has so far
        (and no deadline): for work after the question it was capped for, such as
        explaining its answer."""
        used = self.operations()
        self.budget = Budget(used + operations, None)
        self.ctx.set_max_operations(used + operations)
        self.deadline = None

    def check_time(self) -> None:
        if past(self.deadline):
            raise BudgetExceeded("too complex to analyse within its time budget")

    def failure(self, error: Exception, what: str) -> PolyError:
        """Classify an isl error: budget exhausted, or a construct isl rejected."""
        try:
            isl.Set.read_from_str(self.ctx, "{ [] }")
        except isl.Error:
            return BudgetExceeded("too complex to analyse within its isl operation budget")
        return NotAffine(f"isl could not handle {what}")

    def set(self, text: str) -> isl.Set:
        self.check_time()
        try:
            return isl.Set.read_from_str(self.ctx, text)
        except isl.Error as error:
            raise self.failure(error, "a set") from None

    def map(self, text: str) -> isl.Map:
        self.check_time()
        try:
            return isl.Map.read_from_str(self.ctx, text)
        except isl.Error as error:
            raise self.failure(error, "a relation") from None

    def union_map(self, text: str) -> isl.UnionMap:
        self.check_time()
        try:
            return isl.UnionMap.read_from_str(self.ctx, text)
        except isl.Error as error:
            raise self.failure(error, "a relation") from None

    @contextmanager
    def errors(self, what: str = "a polyhedral operation") -> Iterator[None]:
        """isl errors raised in the block translated into `PolyError`s, as `run` does
        (for a stretch of isl calls made directly, e.g. scanning a set's points)."""
        try:
            yield
        except isl.Error as error:
            raise self.failure(error, what) from None

    def run(self, thunk: Callable[..., T], what: str = "a polyhedral operation") -> T:
        """Call `thunk()` translating isl errors into `PolyError`s."""
        self.check_time()
        with self.errors(what):
            return thunk()
