"""A stencil's time-step band from its dependence distances (no isl scheduler):
the rows it finds, what optimize makes of them (heat-3d, fdtd-2d's row of ey
lifted into the band), each statement in an innermost loop of its own in the
tiles, and the results run against the originals bit for bit."""

from __future__ import annotations

import pytest

from affine_lsp.poly import IslSession, budgets
from affine_lsp.testing import oracle
from affine_lsp.transforms.optimize import Options, optimize_nest, timetile
from affine_lsp.transforms.optimize.nest import Nest
from affine_lsp.transforms.optimize.stencil import time_step_schedule
from affine_lsp.transforms.performance import Machine
from tests.optimize.helpers import loop_on_line
from tests.optimize.kernels import (
    FDTD_2D,
    GEMM,
    HEAT_3D,
    JACOBI_1D,
    JACOBI_2D,
    SEIDEL_2D,
    runnable,
)

LARGER = Machine(caches=(32 * 1024, 1024 * 1024, 8 * 1024 * 1024), vector_bytes=32)
"""heat-3d's 66 x 66 x 66 arrays beyond its L2 (the footprint of a skewed tile is
a box, larger than what it touches: smaller caches hold none)."""
MID = Machine(caches=(16 * 1024, 256 * 1024, 4 * 1024 * 1024), vector_bytes=32)
"""fdtd-2d's three 200 x 240 arrays beyond its L2."""


def _line(text: str) -> int:
    return text[: text.index("affine.for %t")].count("\n") + 1


def _band(text: str, line: int | None = None) -> list[str] | None:
    _, model, loop = loop_on_line(text, line or _line(text))
    nest = Nest.of(IslSession(budgets.TRANSFORM), loop, model)
    found = time_step_schedule(nest)
    return None if found is None else found.describe(nest)


def test_the_band_of_each_time_step_from_its_dependences():
    """The rows isl's scheduler finds (docs/optimize.md), found without it."""
    assert _band(JACOBI_1D) == [
        "band at depth 0: S0: (t, 2t + i); S1: (t, 2t + i + 1); permutable; parallel members: none"
    ]
    assert _band(JACOBI_2D) == [
        "band at depth 0: S0: (t, 2t + i, 2t + j); S1: (t, 2t + i + 1, 2t + j + 1); "
        "permutable; parallel members: none"
    ]
    assert _band(HEAT_3D) == [
        "band at depth 0: S0: (t, 2t + i, 2t + j, 2t + k); "
        "S1: (t, 2t + i + 1, 2t + j + 1, 2t + k + 1); permutable; parallel members: none"
    ]
    # the row of ey (no i loop) runs at i = 0 of the band
    assert _band(FDTD_2D) == [
        "band at depth 0: S0: (t, t, t + j); S1: (t, t + i, t + j); S2: (t, t + i, t + j); "
        "S3: (t, t + i + 1, t + j + 1); permutable; parallel members: none"
    ]


def test_a_sweep_in_place_needs_more_than_shifts_and_skews_by_time():
    """seidel-2d reads in place what its own sweep wrote (a cycle of positive
    weight among the shifts): isl's scheduler is asked instead."""
    assert _band(SEIDEL_2D) is None


def test_a_nest_without_dependences_across_its_outer_loop_is_no_time_step():
    """gemm: nothing crosses its i loop; no skew, isl's scheduler decides."""
    assert _band(GEMM, 3) is None


def _optimized(text: str, machine: Machine) -> str:
    data, model, loop = loop_on_line(text, _line(text))
    outcome = optimize_nest(data, model, loop, Options(machine=machine))
    assert outcome.new_text is not None, (outcome.refused, outcome.notes)
    return outcome.new_text.decode()


def _innermost_stores(text: str) -> list[int]:
    """Per innermost affine.for of `text`, the stores in its body."""
    counts: list[int] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if "affine.for" not in line:
            continue
        depth, stores = 0, 0
        for inner in lines[index + 1 :]:
            if "affine.for" in inner:
                stores = -1
                break
            depth += inner.count("{") - inner.count("}")
            stores += "affine.store" in inner
            if depth < 0:
                break
        if stores >= 0:
            counts.append(stores)
    return counts


def test_heat_3d_is_fused_skewed_and_tiled_one_innermost_loop_per_sweep():
    data, model, loop = loop_on_line(HEAT_3D, _line(HEAT_3D))
    outcome = optimize_nest(data, model, loop, Options(machine=LARGER))
    assert outcome.steps[:2] == [
        "fused the loops of %t (shifted by 1,1,1)",
        "skewed %i by 2×%t, %j by 2×%t, %k by 2×%t",
    ]
    assert outcome.steps[2].startswith("tiled (t, i")
    assert outcome.new_text is not None
    assert set(_innermost_stores(outcome.new_text.decode())) == {1}


def test_fdtd_2d_row_of_ey_is_lifted_into_the_band_then_time_tiled():
    data, model, loop = loop_on_line(FDTD_2D, _line(FDTD_2D))
    outcome = optimize_nest(data, model, loop, Options(machine=MID))
    assert outcome.steps[:2] == [
        "fused the loops of %t (shifted by 1,1)",
        "skewed %i by %t, %j by %t",
    ]
    assert outcome.steps[2].startswith("tiled (t, i")
    assert outcome.refused == []


def test_fdtd_2d_peeled_row_subscripts_are_added_up(monkeypatch: pytest.MonkeyPatch):
    """With j tiled, the row i = 0 of hz's sweep is peeled out of the tiles: its
    %i_skew is %t, and its subscripts say 0, not `%t - %t` (the tiles' j loop runs over
    j itself)."""
    monkeypatch.setattr(timetile, "skewed_tile_sizes", lambda body, target, skews=(): (8, 16, 32))
    data, model, loop = loop_on_line(FDTD_2D, _line(FDTD_2D))
    outcome = optimize_nest(data, model, loop, Options(machine=MID))
    assert outcome.steps[2] == "tiled (t, i, j) 8x16x32"
    assert outcome.new_text is not None
    text = outcome.new_text.decode()
    assert "%ex[0, %j]" in text
    assert "%t - %t" not in text


def _same_when_run(before: str, after: str) -> None:
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    verdict = oracle.equivalent(runnable(before), runnable(after))
    assert verdict.outcome == oracle.Outcome.SAME, verdict.detail


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("text", "machine"), [(HEAT_3D, LARGER), (FDTD_2D, MID)], ids=["heat-3d", "fdtd-2d"]
)
def test_time_tiled_stencils_compute_what_the_originals_compute(text: str, machine: Machine):
    _same_when_run(text, _optimized(text, machine))
