"""Every budget of polyhedral work in one place, and the switch for time limits.

A `Budget` caps one question by isl operations (deterministic: the same input
always stops at the same point) and by wall-clock seconds (what an editor needs,
but machine-dependent). Time limits can be switched off as a whole — the test
suite does so, with `AFFINE_LSP_TIME_LIMITS=off` in the environment (inherited by
servers it starts) or `set_time_limits(False)` — and then only the operation caps
decide, so results do not depend on how busy the machine is.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

ENVIRONMENT_VARIABLE = "AFFINE_LSP_TIME_LIMITS"
"""Set to `off` to disable every time limit (operation caps stay)."""


@dataclass(frozen=True)
class Budget:
    """How much work one question may take: isl operations and wall-clock seconds
    (None or 0 operations: no cap; None seconds: no time limit)."""

    max_operations: int | None = 400_000
    time_limit: float | None = 0.05


_time_limits = os.environ.get(ENVIRONMENT_VARIABLE, "on").strip().lower() != "off"


def time_limits_enabled() -> bool:
    """Whether wall-clock limits apply (see the module docstring)."""
    return _time_limits


def set_time_limits(enabled: bool) -> None:
    """Switch every wall-clock limit on or off for this process."""
    global _time_limits
    _time_limits = enabled


@contextmanager
def time_limits(enabled: bool) -> Iterator[None]:
    """Time limits on or off within a `with` block."""
    before = _time_limits
    set_time_limits(enabled)
    try:
        yield
    finally:
        set_time_limits(before)


def deadline_after(seconds: float | None) -> float | None:
    """The `time.perf_counter()` time `seconds` from now, or None when there is no
    limit (none given, or time limits are off)."""
    if seconds is None or not _time_limits:
        return None
    return time.perf_counter() + seconds


def seconds_left(deadline: float | None) -> float | None:
    """Seconds until `deadline` (0 when past; None when there is none)."""
    if deadline is None:
        return None
    return max(0.0, deadline - time.perf_counter())


def past(deadline: float | None) -> bool:
    """Whether `deadline` has passed (never, when there is none)."""
    return deadline is not None and time.perf_counter() > deadline


# --- The budgets -----------------------------------------------------------------

DEFAULT = Budget()
"""A question nobody gave a budget to."""

HOVER = Budget(max_operations=200_000, time_limit=0.015)
"""isl work per hover (and per inlay-hint trip count): a typical nest needs about a
millisecond."""

INLAY_TRIP_COUNT_SECONDS = 0.05
"""Time for the trip counts of one inlay-hint request; loops past it get no hint."""

DEPENDENCE = Budget(max_operations=2_000_000, time_limit=1.0)
"""One dependence question between two ops or nests."""

FUSION = Budget(max_operations=30_000_000, time_limit=5.0)
"""Everything one pair of nests needs for fusion at every depth (CLI and chosen actions)."""

FUSION_PLANNING = Budget(max_operations=700_000, time_limit=0.25)
"""Planning every fusion action at one cursor position: depths not decided within
it are offered without their cost and analysed when chosen. The operation cap (about
a fifth of a second) keeps one long isl call from overrunning the time much (every
dataflow a proof compares is checked exactly, `dataflow.Dataflow`: about a tenth of
the work)."""

REFACTORING_ANCHORS = 200
"""Loops of one top-level item whose refactorings are planned ahead (outermost
first); others are planned when asked for."""

ACTION_RESOLVE_SECONDS = 10.0
"""Computing one chosen code action (in the server: in its worker thread)."""

FUSION_COST_COUNTED_POINTS = 4096
"""Where a loop's bounds cross (it runs 0 times for some iterations around it),
fusion's cost model averages its trip count exactly, by counting iterations, when
the loops around it have at most this many iterations (the box around them), and
from the smallest and largest trip count otherwise."""

FUSE_ALL_ORDERS = 8
"""Greedy runs `fuse --all` may make per function while searching the order of its
fusions (the first run included)."""

FUSE_ALL_EVALUATIONS = 200
"""Pair fusions the order search may analyse afresh per function, beyond the first
run's (cached answers are free; it also stops after as many as the first run
analysed, or 10); no new run starts past it."""

FUSE_ALL_OPERATIONS = 10_000_000
"""isl operations `fuse --all` may spend per function (every question it asks counted:
pair fusions, dead nests, locality); past them it asks nothing more and keeps the
fusions made. 1-4 s of processor time where it is spent (docs/fusion.md)."""

FUZZ_HOVER = Budget(max_operations=200_000, time_limit=0.2)
"""Hover data in the fuzz harness."""

FUZZ_PICTURE = Budget(max_operations=1_000_000, time_limit=0.3)
"""A picture of an iteration space in the fuzz harness."""

FUZZ_RESOLVE_SECONDS = 1.0
"""A chosen fusion in the fuzz harness."""

FUZZ_ANALYSIS_SECONDS = 1.0
"""What the long fuzz run (benchmarks/fuzz.py) allows the analysis of a document of
at most 100 KB; reported by the benchmark, never decided in a test."""

TRANSFORM = Budget(max_operations=30_000_000, time_limit=5.0)
"""One loop transformation applied and proven (CLI and chosen code actions)."""

TRANSFORM_PLANNING = Budget(max_operations=1_500_000, time_limit=0.1)
"""The legality of every loop transformation offered at one cursor position (the
dependences of the nest, checked once per transformation); what is not decided
within it is decided when the action is chosen."""

FUZZ_TRANSFORM_PLANNING = Budget(max_operations=300_000, time_limit=0.1)
"""Loop transformation actions at one position in the fuzz harness."""

FUZZ_TRANSFORM = Budget(max_operations=3_000_000, time_limit=FUZZ_RESOLVE_SECONDS)
"""A chosen loop transformation in the fuzz harness."""

DRAW = Budget(max_operations=20_000_000, time_limit=10.0)
"""One picture of an iteration space on the command line (`affine-lsp draw`)."""

HOVER_PICTURE = Budget(max_operations=1_000_000, time_limit=0.03)
"""The picture in a loop hover: points, `affine.if` marks and dependence arrows. When
the dependences do not fit, the points are drawn without them."""


@dataclass(frozen=True)
class PictureLimits:
    """How much a picture of an iteration space shows: above `points` integer points
    it is sampled on a coarser lattice (and says so); 3-D and deeper spaces get one
    panel per value of the outer loops, at most `panels`; at most `arrows` dependence
    arrows (more are thinned, and it says so)."""

    points: int
    panels: int
    arrows: int


DRAW_LIMITS = PictureLimits(points=4096, panels=64, arrows=8192)
"""`affine-lsp draw`."""

HOVER_PICTURE_LIMITS = PictureLimits(points=1024, panels=16, arrows=256)
"""The picture in a hover: a 32×32 nest has all its points drawn, and the arrows from
enough of them to show the directions while the image stays small."""

PANEL_PICTURE = Budget(max_operations=4_000_000, time_limit=0.1)
"""The picture of the loop at the cursor in the editor's iteration-space panel (drawn
in the server when the cursor rests; the text says so when it does not fit)."""

PREVIEW_PICTURE = Budget(max_operations=10_000_000, time_limit=1.0)
"""Each picture of a refactoring's preview in the panel, before and after (drawn in
the planning worker)."""

PANEL_PICTURE_LIMITS = PictureLimits(points=4096, panels=36, arrows=1024)
"""The pictures of the editor's panel: a 64×64 nest has all its points drawn."""
