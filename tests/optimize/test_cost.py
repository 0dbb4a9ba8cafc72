"""The cost model on bodies worked by hand (see docs/optimize.md)."""

from __future__ import annotations

import pytest

from affine_lsp.transforms.performance.cost import (
    APART_FACTOR,
    CACHE_STREAMS,
    MEMORY_STREAMS,
    Body,
    Choice,
    Loop,
    Ref,
    apart_factor,
    cache_streams,
    chained_share,
    estimate,
    footprint,
    jam_choice,
    jam_factor,
    jam_registers,
    lines_per_iteration,
    memory_order,
    memory_streams,
    partial_sizes,
    register_tile,
    tile_registers,
    tile_sizes,
)
from affine_lsp.transforms.performance.machine import Machine

MACHINE = Machine(caches=(32 * 1024, 1024 * 1024, 16 * 1024 * 1024), vector_bytes=32)


def _gemm(n: int = 256) -> Body:
    """C[i, j] += A[i, k] * B[k, j] in the order (i, k, j)."""
    shape = (n, n)
    return Body(
        (Loop("i", n, True), Loop("k", n), Loop("j", n, True)),
        (),
        (
            Ref("A", ((1, 0, 0), (0, 1, 0)), (0, 0), shape, 8, False),
            Ref("B", ((0, 1, 0), (0, 0, 1)), (0, 0), shape, 8, False),
            Ref("C", ((1, 0, 0), (0, 0, 1)), (0, 0), shape, 8, False),
            Ref("C", ((1, 0, 0), (0, 0, 1)), (0, 0), shape, 8, True),
        ),
        2,
    )


def test_strides_are_row_major_elements_per_iteration():
    a, b, c, _ = _gemm().refs
    assert (a.stride(0), a.stride(1), a.stride(2)) == (256, 1, 0)
    assert (b.stride(0), b.stride(1), b.stride(2)) == (0, 256, 1)
    assert (c.stride(0), c.stride(1), c.stride(2)) == (256, 0, 1)
    dynamic = Ref("D", ((1, 0, 0), (0, 0, 1)), (0, 0), (None, None), 8, False)
    assert dynamic.stride(2) == 1 and dynamic.stride(0) is None


def test_lines_per_iteration_put_j_innermost_for_gemm():
    body = _gemm()
    # j: B and the two C references are consecutive (8 bytes of a 64-byte line each)
    assert lines_per_iteration(body, 2, 64) == 3 * 8 / 64
    # k: A consecutive, B a new line each time; i: A, C, C a new line each time
    assert lines_per_iteration(body, 1, 64) == 8 / 64 + 1
    assert lines_per_iteration(body, 0, 64) == 3
    orders = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    assert memory_order(body, 64, orders) == (0, 1, 2)
    # With i innermost either way, the next cheapest (j) goes next to it.
    assert memory_order(body, 64, [(2, 1, 0), (1, 2, 0)]) == (1, 2, 0)


def test_footprint_is_the_box_of_each_reference_in_whole_lines():
    body = _gemm()
    # 4 x 8 x 16 iterations of (i, k, j): A 4x8, B 8x16, C 4x16 twice (lines of 8 doubles)
    assert footprint(body, [4, 8, 16], 64) == (4 * 8 + 8 * 16 + 2 * 4 * 16) * 8
    stencil = Body(
        (Loop("i", 64), Loop("j", 64)),
        (),
        (Ref("A", ((1, 0), (0, 1)), (2, 2), (64, 128), 8, False, 5),),
        1,
    )
    # one row of j (64 + 2 elements: 9 lines) times three rows of i
    assert footprint(stencil, [1, 64], 64) == 3 * 72 * 8
    # a box never spans more than the array: 1 + 2 + 63 rows of i, at most 64
    assert footprint(stencil, [64, 1], 64) == 64 * 8 * 8


def test_tiles_divide_the_trip_counts_or_are_whole_vectors_and_the_innermost_is_whole_vectors():
    body = _gemm(480)
    tiles = tile_sizes(body, (0, 1, 2), MACHINE)
    lanes = MACHINE.lanes(8)
    for size, loop in zip(tiles, body.band, strict=True):
        assert loop.trip % size == 0 or size in partial_sizes(loop.trip, lanes)
    assert tiles[2] == 480 or tiles[2] % lanes == 0
    assert tiles != (480, 480, 480)  # a nest of 5 MB is tiled for a 1 MB L2
    untiled = estimate(body, Choice((0, 1, 2), (480, 480, 480)), MACHINE)
    tiled = estimate(body, Choice((0, 1, 2), tiles), MACHINE)
    assert tiled.cycles < untiled.cycles
    assert sum(tiled.traffic) < sum(untiled.traffic)


def test_a_nest_that_fits_in_cache_is_not_tiled():
    assert tile_sizes(_gemm(16), (0, 1, 2), MACHINE) == (16, 16, 16)


def test_unroll_and_jam_shares_the_references_that_do_not_move_and_fits_the_registers():
    body = _gemm()
    # k, just outside j: C does not move along k (loaded and stored once per copy set);
    # in tiles of 8 k, the 8 rows of B (16 KB) stay in L1
    assert jam_choice(body, (0, 1, 2), (256, 8, 256), MACHINE) == (1, 4)
    few = Machine(registers=8)
    assert jam_choice(body, (0, 1, 2), (256, 8, 256), few) == (1, 2)
    assert jam_choice(body, (0, 1, 2), (256, 3, 256), MACHINE) is None  # 2, 4, 8 do not divide 3
    saved = estimate(body, Choice((0, 1, 2), (256, 256, 256), (1, 4)), MACHINE)
    plain = estimate(body, Choice((0, 1, 2), (256, 256, 256)), MACHINE)
    assert saved.compute < plain.compute


def test_the_worked_example_of_the_docs():
    """docs/optimize.md works this one through by hand."""
    body = _gemm()
    assert footprint(body, [1, 1, 256], 64) == 6208
    assert footprint(body, [1, 2, 256], 64) == 8256  # one more row of B, a line of A
    assert footprint(body, [1, 256, 256], 64) == 530432
    untiled = estimate(body, Choice((0, 1, 2), (256, 256, 256)), MACHINE)
    assert round(untiled.traffic[0] / 1e6, 2) == 2.12 == round(untiled.traffic[1] / 1e6, 2)
    assert round(untiled.compute / 1e6, 2) == 8.78 and round(untiled.cycles / 1e6, 2) == 9.34
    tiles = tile_sizes(body, (0, 1, 2), MACHINE)
    jam = jam_choice(body, (0, 1, 2), tiles, MACHINE)
    assert (tiles, jam) == ((64, 4, 256), (1, 4))
    tiled = estimate(body, Choice((0, 1, 2), tiles, jam), MACHINE)
    assert round(tiled.traffic[1] / 1e3, 1) == 57.3
    assert round(tiled.compute / 1e6, 2) == 5.64 and round(tiled.cycles / 1e6, 2) == 5.73


def test_a_reduction_along_the_innermost_loop_is_a_chain_jamming_makes_independent():
    """x[i] += A[i, j] * y[j] with j innermost: one chain of dependent updates per i;
    unroll-and-jam of i by 4 makes 4 independent chains, scalar replacement keeps
    them in registers."""
    n = 256
    body = Body(
        (Loop("i", n, True), Loop("j", n, False, False)),
        (),
        (
            Ref("x", ((1, 0),), (0,), (n,), 8, False),
            Ref("x", ((1, 0),), (0,), (n,), 8, True),
            Ref("A", ((1, 0), (0, 1)), (0, 0), (n, n), 8, False),
            Ref("y", ((0, 1),), (0,), (n,), 8, False),
        ),
        2,
    )
    chain = estimate(body, Choice((0, 1), (n, n)), MACHINE)
    assert not chain.vectorised and chain.compute == n * n * 6.0  # MEMORY_LATENCY
    jammed = estimate(body, Choice((0, 1), (n, n), (0, 4)), MACHINE)
    assert jammed.compute < chain.compute / 3
    kept = estimate(body, Choice((0, 1), (n, n), (0, 4), promote=True), MACHINE)
    assert kept.compute < jammed.compute


def test_a_column_walked_down_that_does_not_fit_brings_a_line_per_element():
    """c[j, i] = b[j, i] with j innermost: a run of j touches 2 x 4096 lines, more than
    half of L1, so each run brings them all again (and the next i, one element on,
    finds them gone); in L2 they stay for the next i. With i innermost the rows are
    read once."""
    n = 4096
    refs = (
        Ref("b", ((0, 1), (1, 0)), (0, 0), (n, n), 8, False),
        Ref("c", ((0, 1), (1, 0)), (0, 0), (n, n), 8, True),
    )
    body = Body((Loop("i", n, True), Loop("j", n, True)), (), refs, 2)
    columns = estimate(body, Choice((0, 1), (n, n)), MACHINE)
    rows = estimate(body, Choice((1, 0), (n, n)), MACHINE)
    assert columns.traffic[0] == 2 * n * n  # a line per element
    assert columns.traffic[1] == rows.traffic[1] == 2 * n * n / 8  # each line once
    assert rows.traffic[0] == 2 * n * n / 8
    assert columns.cycles > rows.cycles


def _two_rows(n: int) -> Body:
    """tmp[i] += A[i, j] * x[j]; y[i] += B[i, j] * x[j] (gesummv's), in (i, j)."""
    return Body(
        (Loop("i", n, True), Loop("j", n, False, False)),
        (),
        (
            Ref("A", ((1, 0), (0, 1)), (0, 0), (n, n), 8, False),
            Ref("B", ((1, 0), (0, 1)), (0, 0), (n, n), 8, False),
            Ref("x", ((0, 1),), (0,), (n,), 8, False),
            Ref("tmp", ((1, 0),), (0,), (n,), 8, False),
            Ref("tmp", ((1, 0),), (0,), (n,), 8, True),
        ),
        4,
    )


def _bicg(n: int) -> Body:
    """s[j] += r[i] * A[i, j]; q[i] += A[i, j] * p[j] (bicg's), in (i, j)."""
    return Body(
        (Loop("i", n, True), Loop("j", n, False, False)),
        (),
        (
            Ref("s", ((0, 1),), (0,), (n,), 8, False),
            Ref("s", ((0, 1),), (0,), (n,), 8, True),
            Ref("A", ((1, 0), (0, 1)), (0, 0), (n, n), 8, False),
            Ref("p", ((0, 1),), (0,), (n,), 8, False),
            Ref("q", ((1, 0),), (0,), (n,), 8, False),
            Ref("q", ((1, 0),), (0,), (n,), 8, True),
        ),
        4,
    )


WIDE = Machine(MACHINE.caches, vector_bytes=64, registers=32)


def test_rows_streamed_from_memory_are_jammed_only_where_a_store_is_saved():
    # 3000 x 3000 doubles (72 MB each) are beyond the last cache: each copy of %i
    # would stream a row of A and a row of B from memory, and save only loads of x.
    big = _two_rows(3000)
    assert memory_streams(big, 0, WIDE) == 2
    assert memory_streams(big, 1, WIDE) == 0  # (along j, the copies read the same lines)
    assert jam_factor(big, 0, 3000, WIDE) is None
    # 600 x 600 (2.9 MB each) fit: as many copies as the registers hold: 8 rows of A
    # and of B, x, and the 8 sums tmp[i..i+7] in one vector register (j, innermost,
    # is a reduction, not vectorised: the copies fill the lanes), 8 + 8 + 1 + 2.
    small = _two_rows(600)
    assert memory_streams(small, 0, WIDE) == 0
    assert jam_registers(small, 0, 8, WIDE, packed=True) == 19
    assert jam_factor(small, 0, 600, WIDE) == 8
    # Were j vectorised, each copy of tmp[i] would be a vector of its own (4 x 4 + 1).
    assert jam_registers(small, 0, 4, WIDE) == 17
    assert jam_registers(small, 0, 8, WIDE) == 33
    # bicg's copies share s[j], loaded and stored once for all of them: at most
    # MEMORY_STREAMS rows of A at once.
    assert memory_streams(_bicg(4000), 0, WIDE) == 1
    assert jam_factor(_bicg(4000), 0, 4000, WIDE) == MEMORY_STREAMS == 4
    assert jam_factor(_bicg(400), 0, 400, WIDE) == 8


def _doitgen(np_: int = 240) -> Body:
    """sum[p] += A[r, q, s] * C4[s, p] in the order (s, p), for one (r, q)."""
    return Body(
        (Loop("s", np_), Loop("p", np_, True)),
        (),
        (
            Ref("A", ((0, 0), (0, 0), (1, 0)), (0, 0, 0), (200, 200, np_), 8, False),
            Ref("C4", ((1, 0), (0, 1)), (0, 0), (np_, np_), 8, False),
            Ref("sum", ((0, 1),), (0,), (np_,), 8, False),
            Ref("sum", ((0, 1),), (0,), (np_,), 8, True),
        ),
        2,
    )


def test_the_copies_read_few_rows_beyond_l1_at_once_in_a_vector_loop():
    # doitgen: each copy of s reads another row of C4 (460 KB, from L2) a vector at
    # a time: CACHE_STREAMS rows at once, though 8 copies fit the registers.
    body = _doitgen()
    assert cache_streams(body, [(0, 8)], 1, None, WIDE) == 8
    assert jam_registers(body, 0, 8, WIDE) == 2 + 8 + 8
    assert jam_factor(body, 0, 240, WIDE) == CACHE_STREAMS == 2
    # Along p the copies read the same rows; A moves along s by one element.
    assert cache_streams(body, [(1, 8)], 1, None, WIDE) == 0
    # A C4 of 32 x 32 (8 KB) stays in L1 from one (r, q) to the next: 8 copies.
    assert cache_streams(_doitgen(32), [(0, 8)], 1, None, WIDE) == 0
    assert jam_factor(_doitgen(32), 0, 32, WIDE) == 8
    # In a tile of 8 rows of s (15 KB of C4), the rows stay in L1 too.
    assert cache_streams(body, [(0, 8)], 1, [8, 240], WIDE) == 0
    assert jam_choice(body, (0, 1), (8, 240), WIDE) == (0, 8)
    # The cap holds in untiled bands only: whole, 2 copies; in tiles of 120 rows of s
    # (230 KB of C4, beyond L1 too) the tile sizes bound the rows, 8 copies.
    assert jam_choice(body, (0, 1), (240, 240), WIDE) == (0, 2)
    assert jam_choice(body, (0, 1), (120, 240), WIDE) == (0, 8)


def test_rows_from_memory_that_save_no_store_are_jammed_half_the_loop_apart():
    # gesummv's rows of A and B from memory: consecutive copies are refused; copies 1500
    # rows apart are not, and their chains of dependent adds are independent.
    big = _two_rows(3000)
    assert jam_factor(big, 0, 3000, WIDE) is None
    assert apart_factor(big, 0, 3000, WIDE) == APART_FACTOR == 2
    kept = estimate(big, Choice((0, 1), (3000, 3000), None, True), WIDE)
    apart = estimate(big, Choice((0, 1), (3000, 3000), (0, 2), True, apart=True), WIDE)
    assert apart.cycles < kept.cycles
    # Where a store is saved (bicg's s[j]) or the rows fit in the caches, the copies
    # are consecutive (`jam_factor`).
    assert apart_factor(_bicg(4000), 0, 4000, WIDE) is None
    assert apart_factor(_two_rows(600), 0, 600, WIDE) is None
    assert apart_factor(big, 0, 3000, WIDE, most=1) is None


def test_a_register_tile_shares_b_between_the_rows_and_c_between_the_columns():
    body = _gemm()
    # i by 2 around k by 8: A[i, k] once per copy (16), B[k, j] once per k (8), C[i, j]
    # loaded and stored once per i (2 x 2): 28 registers of AVX-512's 32 (less 2).
    assert tile_registers(body, ((0, 2), (1, 8))) == 28
    alone = estimate(body, Choice((0, 1, 2), (64, 8, 256), (1, 8)), WIDE)
    tile = estimate(body, Choice((0, 1, 2), (64, 8, 256), (1, 8), outer_jam=(0, 2)), WIDE)
    assert tile.compute < alone.compute  # loads per iteration: 1 + 1/2 + 2/8, not 1 + 1 + 2/8
    # 4 x 4 (16 + 4 + 2 x 4 registers too) predicts as many cycles and lines, and its
    # copies update C[i, j] 4 times one after the other in an iteration, not 8.
    square = estimate(body, Choice((0, 1, 2), (64, 8, 256), (1, 4), outer_jam=(0, 4)), WIDE)
    assert square.cycles == pytest.approx(tile.cycles, rel=0.02)
    assert chained_share(body, ((0, 2), (1, 8))) == 8 / 16
    assert chained_share(body, ((0, 4), (1, 4))) == 4 / 16
    assert register_tile(body, (0, 1, 2), (64, 8, 256), (1, 8), WIDE) == ((0, 4), (1, 4))
    # With 16 registers, 2 x 2 loads as much per iteration as 4 alone: not taken.
    assert register_tile(body, (0, 1, 2), (64, 4, 256), (1, 4), MACHINE) == (None, (1, 4))


def _syrk() -> Body:
    """C[i, j] += alpha * A[i, k] * A[j, k] in the order (i, j, k), A 1200 x 1000."""
    a = (1200, 1000)
    c = (1200, 1200)
    return Body(
        (Loop("i", 1200, True), Loop("j", 1200, True), Loop("k", 1000, False, False)),
        (),
        (
            Ref("A", ((1, 0, 0), (0, 0, 1)), (0, 0), a, 8, False),
            Ref("A", ((0, 1, 0), (0, 0, 1)), (0, 0), a, 8, False),
            Ref("C", ((1, 0, 0), (0, 1, 0)), (0, 0), c, 8, False),
            Ref("C", ((1, 0, 0), (0, 1, 0)), (0, 0), c, 8, True),
        ),
        3,
    )


def test_a_register_tile_streams_the_rows_it_shares_once_for_its_copies():
    # j jammed by 8 streams every row of A[j, k] once per i; i by 4 around j by 2
    # once per 4 rows i: a quarter of the lines into L2.
    body = _syrk()
    wide = Machine((48 * 1024, 1024 * 1024, 32 * 1024 * 1024), vector_bytes=64, registers=32)
    order, tiles = (0, 1, 2), (1200, 1200, 1000)
    alone = estimate(body, Choice(order, tiles, (1, 8), True), wide)
    tile = estimate(body, Choice(order, tiles, (1, 2), True, outer_jam=(0, 4)), wide)
    assert tile.traffic[1] * 4 == pytest.approx(alone.traffic[1], rel=0.01)
    # Both bound by their operations in the model (as many cycles): the tile is
    # taken for the lines it saves (at most FEWER_LINES of them into L2).
    assert tile.cycles == pytest.approx(alone.cycles, rel=0.02)
    assert register_tile(body, order, tiles, (1, 8), wide, True) == ((0, 4), (1, 2))
    assert register_tile(body, order, tiles, (1, 8), wide, True, forced=True) == ((0, 4), (1, 2))


def test_a_register_tile_that_saves_neither_cycles_nor_lines_is_taken_only_when_asked():
    # gemm tiled 64 x 8 x 256 on 16 registers: 2 x 2 no better than k by 4 alone.
    body = _gemm()
    order, tiles = (0, 1, 2), (64, 4, 256)
    assert register_tile(body, order, tiles, (1, 4), MACHINE) == (None, (1, 4))
    assert register_tile(body, order, tiles, (1, 4), MACHINE, forced=True)[0] is not None


def test_a_partial_last_tile_costs_its_own_steps_and_start():
    # j of 600 in tiles of 128 (4 lanes): per pass, 4 tiles of 32 steps and one of 88
    # (22 steps), 5 starts; the loads of C[i, j] saved by k jammed by 4 (a tile of 64 of
    # 600 k: the last tile of 24 is jammed whole; each copy a run of j, as the model counts).
    body = _gemm(600)
    order = (0, 1, 2)
    found = estimate(body, Choice(order, (600, 600, 128)), MACHINE)
    work = 4 / 2  # max(2 operations, 4 loads) / 2 per step
    passes = 600 * 600
    assert found.compute == pytest.approx(passes * ((4 * 32 + 22) * work + 5 * 6))
    whole = estimate(body, Choice(order, (600, 600, 600)), MACHINE)
    assert found.compute > whole.compute  # (4 more starts per pass)
    jammed = estimate(body, Choice(order, (600, 64, 600), (1, 4)), MACHINE)
    assert jammed.compute == pytest.approx(passes * (150 * 2.5 / 2 + 6))


def test_the_remainder_a_partial_tile_leaves_to_unroll_and_jam_loads_as_unjammed():
    # k of 100 in tiles of 32, jammed by 8: the last tile of 4 runs alone (4 of 100).
    body = _gemm(100)
    order = (0, 1, 2)
    jammed = estimate(body, Choice(order, (100, 32, 100), (1, 8)), MACHINE)
    plain = estimate(body, Choice(order, (100, 32, 100)), MACHINE)
    c_loads = 0.96 / 8 + 0.04  # C loaded and stored: 1 / 8 of the time, and in the remainder
    steps = 100 * 100 * (100 // 4)
    assert jammed.compute == pytest.approx(steps * max(2, 2 + 2 * c_loads) / 2 + 100 * 100 * 6)
    assert jammed.compute < plain.compute


def test_partial_tiles_are_whole_vectors_that_do_not_divide_the_trip_count():
    assert partial_sizes(600, 8) == [16, 32, 64, 128, 256, 512]
    assert partial_sizes(720, 8) == [32, 64, 128, 256, 512]
    assert partial_sizes(100, 4) == [8, 16, 32, 64]


def test_of_tiles_predicting_as_many_cycles_the_register_tile_with_shorter_chains():
    """3mm's third product, G[i, j] += E[i, k] * F[k, j], (i, k, j) 480 x 720 x 600: tiles
    whose register tile is 4 x 4 (4 updates of an element one after the other among 16
    copies), measured 12% faster than 2 x 8 in the same tiles."""
    ni, nk, nj = 480, 720, 600
    body = Body(
        (Loop("i", ni, True), Loop("k", nk), Loop("j", nj, True)),
        (),
        (
            Ref("E", ((1, 0, 0), (0, 1, 0)), (0, 0), (ni, nk), 8, False),
            Ref("F", ((0, 1, 0), (0, 0, 1)), (0, 0), (nk, nj), 8, False),
            Ref("G", ((1, 0, 0), (0, 0, 1)), (0, 0), (ni, nj), 8, False),
            Ref("G", ((1, 0, 0), (0, 0, 1)), (0, 0), (ni, nj), 8, True),
        ),
        2,
    )
    wide = Machine((48 * 1024, 1024 * 1024, 32 * 1024 * 1024), vector_bytes=64, registers=32)
    order = (0, 1, 2)
    tiles = tile_sizes(body, order, wide)
    jam = jam_choice(body, order, tiles, wide)
    assert tiles[0] % 4 == 0 and tiles[1] % 4 == 0 and tiles != (ni, nk, nj)
    assert register_tile(body, order, tiles, jam, wide) == ((0, 4), (1, 4))
