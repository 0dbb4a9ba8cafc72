"""Deterministic cost measures for tests: how many Python-level calls (functions
and C functions called from Python) a piece of work makes.

Tests must not decide on wall-clock time (the machine may be busy); a call count
is the same on every run of the same code, so "returns promptly" and "scales
linearly" are asserted on it instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def count_calls(work: Callable[[], T]) -> tuple[T, int]:
    """Run `work()` and return its result with the number of calls it made."""
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call" or event == "c_call":
            calls += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = work()
    finally:
        sys.setprofile(previous)
    return result, calls


def growth(make: Callable[[int], Callable[[], object]], size: int) -> float:
    """How many times more calls the work for `2 * size` makes than for `size`
    (about 2 for linear work, about 4 for quadratic)."""
    _, small = count_calls(make(size))
    _, large = count_calls(make(2 * size))
    return large / max(small, 1)
