"""Time tiling's pieces: the skew read from isl's band, the band in skewed
coordinates for the cost model, the sizes tried."""

from __future__ import annotations

from affine_lsp.poly import IslSession, budgets
from affine_lsp.transforms.optimize import Options, optimize_nest, schedule_of
from affine_lsp.transforms.optimize.nest import Nest
from affine_lsp.transforms.optimize.timetile import (
    INNER_TILES,
    PLANE_ROWS,
    SPACE_TILES,
    TIME_TILES,
    pieces,
    plane_tiles,
    scaled_time_tiles,
    shared_lines,
    skew_rows,
    skewed_body,
    skewed_tile_sizes,
)
from affine_lsp.transforms.performance import Body, Loop, Machine, Ref
from tests.optimize.helpers import loop_on_line
from tests.optimize.kernels import FDTD_2D, GEMM, JACOBI_2D, SEIDEL_2D

MID = Machine(caches=(16 * 1024, 256 * 1024, 4 * 1024 * 1024), vector_bytes=32)
"""fdtd-2d's three 200 x 240 arrays beyond its L2."""


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


def test_tune_variants_scale_the_time_tiles_and_keep_whole_loops_whole():
    assert scaled_time_tiles((32, 16, 1296), (500, 1296, 1296), 1.0) == (32, 16, 1296)
    assert scaled_time_tiles((32, 16, 1296), (500, 1296, 1296), 0.5) == (16, 8, 1296)
    assert scaled_time_tiles((32, 16, 1296), (500, 1296, 1296), 2.0) == (64, 32, 1296)
    assert scaled_time_tiles((4, 8), (6, 100), 2.0) == (4, 16)  # (the time loop stays tiled)
    assert scaled_time_tiles((2, 8), (6, 100), 0.25) == (2, 2)  # (at least 2)


def test_tune_variants_of_a_stencil_are_other_time_tiles():
    """`--tune`'s candidates (tile sizes halved and doubled) reach the time tiles."""
    line = FDTD_2D[: FDTD_2D.index("affine.for %t")].count("\n") + 1
    data, model, loop = loop_on_line(FDTD_2D, line)
    tiled = {}
    for scale in (0.5, 1.0, 2.0):
        outcome = optimize_nest(data, model, loop, Options(machine=MID, tile_scale=scale))
        tiled[scale] = [step for step in outcome.steps if step.startswith("tiled")]
    assert all(len(steps) == 1 for steps in tiled.values()), tiled
    assert len({steps[0] for steps in tiled.values()}) == 3, tiled


HEAT_SKEWS = ((2,), (2, 0), (2, 0, 0))
"""heat-3d's band: i, j and k each skewed by 2t."""


def _heat_3d_body() -> Body:
    """heat-3d's band in skewed coordinates, as `skewed_body` sees it (160 steps,
    120 points along each space loop): 7 reads and a write of each array."""
    rows = ((-2, 1, 0, 0), (-2, 0, 1, 0), (-2, 0, 0, 1))
    shape = (122, 122, 122)
    refs = tuple(
        Ref(array, rows, (0, 0, 0) if writes else (2, 2, 2), shape, 8, writes, 1 if writes else 7)
        for array in ("%A", "%B")
        for writes in (False, True)
    )
    loops = (
        Loop("%t", 160, alone=False),
        Loop("%i", 120, alone=False),
        Loop("%j", 120, alone=False),
        Loop("%k", 120),
    )
    return Body(loops, (), refs, 16)


def test_a_tile_pays_for_its_pieces_and_the_partial_tiles_of_skewed_edges():
    trips = [160, 120, 120, 120]
    # 10 time tiles; along i, 120 + 2 * 15 values: 10 tiles of 16, 19 of 8 along j;
    # a piece per (t, i) point of each tile
    assert pieces(trips, (16, 16, 8, 120), HEAT_SKEWS) == 10 * 10 * 19 * 16 * 16
    assert pieces(trips, (16, 8, 120, 120), HEAT_SKEWS) == 10 * 19 * 16
    assert pieces(trips, tuple(trips), HEAT_SKEWS) == 0


def test_an_arrays_read_and_write_of_the_same_subscripts_are_counted_once():
    folded = shared_lines(_heat_3d_body())
    assert [(ref.array, ref.writes, ref.count) for ref in folded.refs] == [
        ("%A", False, 8),
        ("%B", False, 8),
    ]


def test_plane_tiles_only_with_three_space_loops():
    assert plane_tiles([160, 1296, 1296]) == []
    tiles = plane_tiles([160, 120, 120, 120])
    assert (16, 8, 120, 120) in tiles
    assert all(tile[2:] == (120, 120) and tile[1] in PLANE_ROWS for tile in tiles)


def test_heat_3d_is_tiled_in_planes():
    """Measured: 16x8 over (t, i) with j and k whole 2.19-2.27x the original, 16x16x8
    with k whole 1.93x (one loaded run)."""
    target = Machine(caches=(48 * 1024, 1024 * 1024, 32 * 1024 * 1024), vector_bytes=64)
    sizes = skewed_tile_sizes(_heat_3d_body(), target, HEAT_SKEWS)
    assert sizes[2:] == (120, 120)
    assert sizes[0] < 160 and sizes[1] in PLANE_ROWS
