"""Time tiling's pieces: the skew read from isl's band, the band in skewed
coordinates for the cost model, the sizes tried."""

from __future__ import annotations

from affine_lsp.poly import IslSession, budgets
from affine_lsp.transforms.optimize import schedule_of
from affine_lsp.transforms.optimize.nest import Nest
from affine_lsp.transforms.optimize.timetile import (
    INNER_TILES,
    SPACE_TILES,
    TIME_TILES,
    skew_rows,
    skewed_body,
    skewed_tile_sizes,
)
from affine_lsp.transforms.performance import Machine
from tests.optimize.helpers import loop_on_line
from tests.optimize.kernels import GEMM, JACOBI_2D, SEIDEL_2D


def _band(text: str, line: int):
    _, model, loop = loop_on_line(text, line)
    schedule, _ = schedule_of(model, loop)
    band = schedule.outermost()
    assert band is not None
    return model, loop, band


def test_the_skew_of_each_stencil_as_rows_of_factors():
    _, _, seidel = _band(SEIDEL_2D, 4)
    assert skew_rows(seidel, 3) == ((1,), (2, 1))  # (t, t + i, 2t + i + j)
    _, _, jacobi = _band(JACOBI_2D, 4)
    assert skew_rows(jacobi, 3) == ((2,), (2, 0))  # the shift of S1 aside
    _, _, gemm = _band(GEMM, 3)
    assert skew_rows(gemm, 3) is None  # a permutation, no skew


def test_the_skewed_band_for_the_model():
    model, loop, band = _band(SEIDEL_2D, 4)
    nest = Nest.of(IslSession(budgets.TRANSFORM), loop, model)
    body = skewed_body(nest, ((1,), (2, 1)), 3)
    # t: 4 steps; a run of i + t or j + i + 2t makes as many iterations as i or j
    assert [loop.trip for loop in body.band] == [4, 14, 14]
    # A[i, j] with i = y1 - y0, j = y2 - y1 - y0
    rows = {ref.coefficients for ref in body.refs if ref.array == "%A"}
    assert rows == {((-1, 1, 0), (-1, -1, 1))}
    sizes = skewed_tile_sizes(body, Machine(caches=(1024, 4096, 65536)))
    trips = [loop.trip for loop in body.band]
    assert sizes[0] in (*TIME_TILES, 4)
    assert sizes[1] in SPACE_TILES or sizes[1] == trips[1]
    assert sizes[2] in INNER_TILES or sizes[2] == trips[2]
