"""Seidel's recurrence: inside its time tiles, a chain of dependent updates along the
innermost loop that a wavefront of R rows breaks into R independent chains."""

from __future__ import annotations

from functools import cache

import pytest

from affine_lsp.poly import IslSession, budgets
from affine_lsp.testing import oracle
from affine_lsp.transforms.optimize import Options, Outcome, optimize_nest
from affine_lsp.transforms.optimize.nest import Nest
from affine_lsp.transforms.optimize.timetile import recurrent, skewed_body
from affine_lsp.transforms.performance import (
    Choice,
    Machine,
    estimate,
    recurrence_latency,
    wavefront_rows,
)
from tests.optimize.helpers import loop_on_line
from tests.optimize.kernels import JACOBI_2D, SEIDEL_2D, runnable

SEIDEL = ((1,), (2, 1))  # (t, t + i, 2t + i + j)
AVX512_SMALL_CACHES = Machine(caches=(1024, 64 * 1024, 128 * 1024), vector_bytes=64, registers=32)
"""512-bit vectors (8 doubles), caches small enough that a 66x66 grid is time tiled."""


def _nest(text: str) -> Nest:
    _, model, loop = loop_on_line(text, 4)
    return Nest.of(IslSession(budgets.TRANSFORM), loop, model)


def _seidel(n: int, steps: int) -> str:
    return (
        SEIDEL_2D.replace("16x16", f"{n}x{n}")
        .replace("to 15", f"to {n - 1}")
        .replace("0 to 4 {", f"0 to {steps} {{")
    )


@cache
def _optimized_seidel() -> tuple[str, Outcome]:
    text = _seidel(66, 8)
    data, model, loop = loop_on_line(text, 4)
    return text, optimize_nest(data, model, loop, Options(machine=AVX512_SMALL_CACHES))


def test_seidel_reads_at_the_next_innermost_iteration_what_it_wrote_jacobi_does_not():
    assert recurrent(_nest(SEIDEL_2D), SEIDEL, 3)
    # jacobi's second sweep reads what the first wrote: a dependence, no recurrence
    assert not recurrent(_nest(JACOBI_2D), ((2,), (2, 0)), 3)


def test_the_rows_hide_the_chain_and_stay_under_the_vector_lanes():
    body = skewed_body(_nest(SEIDEL_2D), SEIDEL, 3)
    # the store forwarded to the next load (6), then 10 operations of 4 cycles
    assert recurrence_latency(body) == 6 + 4 * 10
    # 46 cycles of chain over 5 cycles of work per iteration: 10 rows would hide it,
    # fewer than the 8 lanes of a 512-bit vector keeps them scalar chains
    assert wavefront_rows(body, AVX512_SMALL_CACHES) == 7
    assert wavefront_rows(body, Machine(vector_bytes=32)) == 3
    order = (0, 1, 2)
    trips = tuple(loop.trip for loop in body.band)
    one = estimate(body, Choice(order, trips, rows=1), AVX512_SMALL_CACHES)
    seven = estimate(body, Choice(order, trips, rows=7), AVX512_SMALL_CACHES)
    assert one.cycles > 5 * seven.cycles
    assert any(note.startswith("a recurrence along the innermost loop") for note in one.notes)


def test_optimize_time_tiles_seidel_then_runs_seven_rows_of_each_tile_in_wavefront():
    _, outcome = _optimized_seidel()
    assert outcome.steps[0] == "skewed %i by %t, %j by 2×%t + %i"
    assert outcome.steps[1].startswith("tiled (t, i")
    rows = int(outcome.steps[1].split()[-1].split("x")[1])
    assert rows % 7 == 0  # (whole groups of 7 rows in a tile)
    assert outcome.steps[2] == "wavefront of 7 rows of %i in each tile"
    assert outcome.refused == []
    assert outcome.gain is not None and outcome.gain > 2


@pytest.mark.oracle
def test_seidel_in_wavefront_runs_to_the_same_bits():
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    text, outcome = _optimized_seidel()
    assert outcome.new_text is not None and "%front" in outcome.new_text.decode()
    verdict = oracle.equivalent(runnable(text), runnable(outcome.new_text.decode()))
    assert verdict.outcome == oracle.Outcome.SAME, verdict.detail
