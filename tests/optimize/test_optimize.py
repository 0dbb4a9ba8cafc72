"""Optimize on small kernels: the steps it takes (in words), the result proven, and
run with mlir-runner against the original (bit for bit); what it refuses."""

from __future__ import annotations

import re

import pytest

from affine_lsp.testing import oracle
from affine_lsp.transforms.optimize import Options, Outcome, optimize_nest, optimize_nests
from affine_lsp.transforms.performance import Machine
from tests.loops.stencils import JACOBI_2D as FUSED_JACOBI_2D
from tests.optimize.helpers import loop_on_line
from tests.optimize.kernels import (
    GEMM,
    GESUMMV,
    JACOBI_1D,
    JACOBI_2D,
    MVT,
    SEIDEL_2D,
    SMALL_MACHINE,
    SYMM,
    SYR2K,
    SYRK,
    runnable,
)

OPTIONS = Options(machine=SMALL_MACHINE)


def _optimize(text: str, line: int) -> Outcome:
    data, model, loop = loop_on_line(text, line)
    return optimize_nest(data, model, loop, OPTIONS)


def _same_when_run(before: str, after: str) -> None:
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    verdict = oracle.equivalent(runnable(before), runnable(after))
    assert verdict.outcome == oracle.Outcome.SAME, verdict.detail


def test_gemm_is_distributed_unrolled_and_jammed_and_parallel():
    outcome = _optimize(GEMM, 3)
    assert outcome.steps[0] == "distributed %i into 2 nests"
    assert any(step.startswith("unroll-and-jam %k by ") for step in outcome.steps)
    assert outcome.steps[-1] in ("%i parallel", "%i_tile parallel")
    assert outcome.refused == []
    assert outcome.gain is not None and outcome.gain > 1.1
    assert outcome.new_text is not None
    text = outcome.new_text.decode()
    assert "affine.parallel (%i" in text
    # tile sizes divide the trip counts: no min in any bound
    assert "min" not in text


def test_a_large_gemm_is_tiled_with_sizes_that_divide_its_trip_counts():
    big = (
        GEMM.replace("32x48", "480x512")
        .replace("32x40", "480x560")
        .replace("40x48", "560x512")
        .replace("0 to 32 ", "0 to 480 ")
        .replace("0 to 48 ", "0 to 512 ")
        .replace("0 to 40 ", "0 to 560 ")
    )
    data, model, loop = loop_on_line(big, 3)
    outcome = optimize_nest(data, model, loop, Options(machine=SMALL_MACHINE))
    tiled = [step for step in outcome.steps if step.startswith("tiled (")]
    assert tiled, outcome.steps
    sizes = [int(size) for size in tiled[0].rsplit(" ", 1)[1].split("x")]
    assert all(trip % size == 0 for trip, size in zip((480, 560, 512), sizes, strict=False))
    assert outcome.new_text is not None and "min" not in outcome.new_text.decode()


@pytest.mark.oracle
def test_optimized_gemm_computes_what_the_original_computes():
    outcome = _optimize(GEMM, 3)
    assert outcome.new_text is not None
    _same_when_run(GEMM, outcome.new_text.decode())


def test_mvt_second_nest_is_interchanged_for_unit_stride():
    data, reports = optimize_nests(
        MVT.encode(),
        [MVT.encode().index(b"affine.for %i"), MVT.encode().rindex(b"affine.for %i")],
        OPTIONS,
    )
    assert [r.line for r in reports] == [3, 13]
    assert reports[1].outcome.steps[0] == "permuted (i, j) to (j, i)"
    # (%j outermost, possibly unrolled and jammed; %i innermost: A[%j, %i] unit stride)
    assert re.search(
        r"affine\.for %j = 0 to 64( step \d+)? \{\n(.*\n)*? +affine\.for %i = 0 to 64 \{",
        data.decode(),
    )


@pytest.mark.oracle
def test_optimized_mvt_computes_what_the_original_computes():
    data = MVT.encode()
    starts = [data.index(b"affine.for %i"), data.rindex(b"affine.for %i")]
    new, _ = optimize_nests(data, starts, OPTIONS)
    assert new != data
    _same_when_run(MVT, new.decode())


def test_a_stencil_says_what_its_schedule_needs_and_why_it_keeps_the_time_loop_whole():
    outcome = _optimize(JACOBI_2D, 4)
    assert "S0: (t, 2t + i, 2t + j); S1: (t, 2t + i + 1, 2t + j + 1)" in outcome.schedule[0]
    assert any(
        note.startswith("%t is kept whole: its pieces would not share") for note in outcome.notes
    )
    seidel = _optimize(SEIDEL_2D, 4)
    assert "(t, t + i, 2t + i + j)" in seidel.schedule[0]


HOST_LIKE = Machine(
    caches=(48 * 1024, 1024 * 1024, 32 * 1024 * 1024), vector_bytes=64, registers=32
)
"""A machine like the one the issue measured on (AVX-512, L2 1 MB)."""


def _fused_jacobi(n: int = 400, steps: int = 20) -> str:
    """The two sweeps of a jacobi-2d step fused with a shift, as fusion writes them
    (its two arrays, 2.5 MB, beyond L2: 130 x 130 ones fit, and time tiling does not
    pay by the model)."""
    return (
        FUSED_JACOBI_2D.replace("14x14", f"{n}x{n}")
        .replace("to 14", f"to {n}")
        .replace("12 - d", f"{n - 2} - d")
        .replace("0 to 5", f"0 to {steps}")
    )


def test_a_stencil_time_step_is_skewed_and_time_tiled():
    text = _fused_jacobi()
    line = text[: text.index("affine.for %t")].count("\n") + 1
    data, model, loop = loop_on_line(text, line)
    outcome = optimize_nest(data, model, loop, Options(machine=HOST_LIKE))
    assert outcome.steps[0] == "skewed %i by 2×%t, %j by 2×%t"
    # The loops named are those the sizes cut (j may run whole: "tiled (t, i) 16x64").
    names, sizes = outcome.steps[1].removeprefix("tiled (").split(") ")
    assert names.startswith("t, i") and len(names.split(", ")) == len(sizes.split("x"))
    assert outcome.gain is not None and outcome.gain > 1.05


@pytest.mark.oracle
def test_time_tiled_jacobi_computes_what_the_original_computes():
    text = _fused_jacobi()
    line = text[: text.index("affine.for %t")].count("\n") + 1
    data, model, loop = loop_on_line(text, line)
    outcome = optimize_nest(data, model, loop, Options(machine=HOST_LIKE))
    assert outcome.new_text is not None
    _same_when_run(text, outcome.new_text.decode())


@pytest.mark.oracle
def test_whatever_a_stencil_gets_computes_what_the_original_computes():
    for text, line in ((JACOBI_2D, 4), (SEIDEL_2D, 4)):
        outcome = _optimize(text, line)
        if outcome.new_text is not None:
            _same_when_run(text, outcome.new_text.decode())


def test_the_sweeps_of_a_time_step_are_fused_as_isl_shifts_them_then_time_tiled():
    """jacobi-1d: isl's band is (t, 2t + i) and (t, 2t + i + 1); the two i loops become
    one (the second sweep shifted by one, each guarded by an affine.if), skewed and
    tiled."""
    outcome = _optimize(JACOBI_1D, 4)
    assert outcome.steps[0] == "fused the loops of %t (shifted by 1)"
    assert outcome.steps[1] == "skewed %i by 2"
    assert outcome.steps[2].startswith("tiled (t, i) ")
    assert outcome.gain is not None and outcome.gain > 1.05


@pytest.mark.oracle
def test_a_fused_and_time_tiled_time_step_computes_what_the_original_computes():
    outcome = _optimize(JACOBI_1D, 4)
    assert outcome.new_text is not None
    _same_when_run(JACOBI_1D, outcome.new_text.decode())


def _jacobi_2d(n: int = 130, steps: int = 20) -> str:
    """The two sweeps of JACOBI_2D at a size worth time tiling."""
    return (
        JACOBI_2D.replace("20x20", f"{n}x{n}")
        .replace("to 19", f"to {n - 1}")
        .replace("0 to 6", f"0 to {steps}")
    )


MID_MACHINE = Machine(caches=(8 * 1024, 64 * 1024, 256 * 1024), vector_bytes=32)


def test_the_two_sweeps_of_jacobi_2d_are_fused_with_guards_then_time_tiled():
    """isl's band: S0 (t, 2t + i, 2t + j), S1 (t, 2t + i + 1, 2t + j + 1). The fused
    loops run over the box of both (each statement guarded by an affine.if: one
    loop per level, a perfect band), then skewed by 2t and tiled."""
    data, model, loop = loop_on_line(_jacobi_2d(), 4)
    outcome = optimize_nest(data, model, loop, Options(machine=MID_MACHINE))
    assert outcome.steps[:2] == [
        "fused the loops of %t (shifted by 1,1)",
        "skewed %i by 2×%t, %j by 2×%t",
    ]
    assert outcome.steps[2].startswith("tiled (t, i, j) ")
    assert outcome.new_text is not None and b"affine.if" in outcome.new_text


@pytest.mark.oracle
def test_jacobi_2d_fused_and_time_tiled_computes_what_the_original_computes():
    text = _jacobi_2d()
    data, model, loop = loop_on_line(text, 4)
    outcome = optimize_nest(data, model, loop, Options(machine=MID_MACHINE))
    assert outcome.new_text is not None
    _same_when_run(text, outcome.new_text.decode())


CALL = """func.func private @g(f32) -> f32
func.func @f(%A: memref<64x64xf32>) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 64 {
      %v = affine.load %A[%j, %i] : memref<64x64xf32>
      %w = func.call @g(%v) : (f32) -> f32
      affine.store %w, %A[%j, %i] : memref<64x64xf32>
    }
  }
  return
}
"""


def test_a_nest_it_cannot_analyse_is_left_alone_with_the_reason():
    outcome = _optimize(CALL, 3)
    assert outcome.new_text is None and outcome.steps == []
    assert any("func.call" in note for note in outcome.notes), outcome.notes


REDUCTION = """func.func @f(%A: memref<256x256xf32>, %out: memref<256xf32>) {
  %zero = arith.constant 0.0 : f32
  affine.for %j = 0 to 256 {
    %sum = affine.for %i = 0 to 256 iter_args(%s = %zero) -> (f32) {
      %v = affine.load %A[%i, %j] : memref<256x256xf32>
      %n = arith.addf %s, %v : f32
      affine.yield %n : f32
    }
    affine.store %sum, %out[%j] : memref<256xf32>
  }
  return
}
"""


def test_a_nest_carrying_values_is_not_scheduled_but_says_why():
    outcome = _optimize(REDUCTION, 3)
    assert any("carries values through iter_args" in note for note in outcome.notes)


def test_the_pieces_after_a_parallel_one_keep_their_places():
    # gesummv distributed into 4 nests: the second made parallel, then its two
    # reductions kept in registers (the loop found again in the parallel nest), and the
    # nests after it each looked at once.
    outcome = _optimize(GESUMMV, 6)
    assert outcome.steps[0] == "distributed %i into 4 nests"
    assert any(step.endswith(" parallel") for step in outcome.steps), outcome.steps
    last = outcome.steps[-1]  # (the copies of %i written op by op: each array's together)
    assert last.startswith("scalar replacement: %tmp[%i], %tmp[%i_1]"), outcome.steps
    assert "%y[%i], %y[%i_1]" in last and last.endswith("carried through %j in registers")
    assert outcome.notes.count("(i) is kept as it is: the model sees no gain") == 3


@pytest.mark.oracle
def test_optimized_gesummv_computes_what_the_original_computes():
    outcome = _optimize(GESUMMV, 6)
    assert outcome.new_text is not None
    _same_when_run(GESUMMV, outcome.new_text.decode())


FAR = Options(machine=Machine(caches=(1024, 4096, 16 * 1024), line_bytes=64, vector_bytes=32))
"""A machine whose last cache is smaller than gesummv's A and B (32 KB each)."""


def test_rows_from_memory_are_jammed_with_copies_half_the_loop_apart():
    # gesummv's rows of A and B streamed from memory: consecutive copies of i would slow
    # it down; copies 32 rows apart (tiled by 32, counted from 0, the tile loop inside)
    # run four chains of sums at once, kept in registers, all proven.
    data, model, loop = loop_on_line(GESUMMV, 6)
    outcome = optimize_nest(data, model, loop, FAR)
    assert outcome.steps[1:5] == [
        "tiled (i) 32",
        "skewed %i by -%i_tile",
        "interchanged %i_tile and %i_skew",
        "unroll-and-jam %i_tile by 2 (copies 32 iterations of %i apart)",
    ], outcome.steps
    assert "%i_skew parallel" in outcome.steps
    assert outcome.steps[-1].startswith("scalar replacement: %tmp[%i_tile + %i_skew]")
    assert outcome.new_text is not None
    assert b"affine.parallel (%i_skew) = (0) to (32) {" in outcome.new_text
    assert not any("not proven" in reason for reason in outcome.refused), outcome.refused


@pytest.mark.oracle
def test_gesummv_jammed_half_the_loop_apart_computes_what_the_original_computes():
    data, model, loop = loop_on_line(GESUMMV, 6)
    outcome = optimize_nest(data, model, loop, FAR)
    assert outcome.new_text is not None
    _same_when_run(GESUMMV, outcome.new_text.decode())


def test_a_reduction_permuted_innermost_is_kept_in_registers():
    # syrk: (k, j) permuted so that k is innermost, j unrolled and jammed, then the
    # sums of C kept in registers through k: proven after the steps before it.
    outcome = _optimize(SYRK, 4)
    assert any(step.startswith("permuted ") for step in outcome.steps), outcome.steps
    assert outcome.steps[-1].startswith("scalar replacement: %C[%i, %j]"), outcome.steps
    assert outcome.steps[-1].endswith(" carried through %k in registers"), outcome.steps
    assert not any(note.startswith("not done: scalar") for note in outcome.notes), outcome.notes


@pytest.mark.oracle
def test_optimized_syrk_computes_what_the_original_computes():
    outcome = _optimize(SYRK, 4)
    assert outcome.new_text is not None
    _same_when_run(SYRK, outcome.new_text.decode())


def test_a_loop_around_a_reduction_carried_in_iter_args_is_unrolled_and_jammed():
    # symm: j jammed across the k loop that carries temp2 (each copy's sum in a
    # register of its own, B[i, j] and A[i, k] shared), proven in the whole chain.
    outcome = _optimize(SYMM, 5)
    assert outcome.steps and outcome.steps[0].startswith("unroll-and-jam %j by "), outcome
    assert not any("not proven" in reason for reason in outcome.refused), outcome.refused


@pytest.mark.oracle
def test_optimized_symm_computes_what_the_original_computes():
    outcome = _optimize(SYMM, 5)
    assert outcome.new_text is not None
    _same_when_run(SYMM, outcome.new_text.decode())


def _carried(step: str) -> set[str]:
    """The elements a scalar replacement step carries through its loop."""
    assert step.startswith("scalar replacement: ") and " carried through " in step, step
    listed = step.removeprefix("scalar replacement: ").split(" carried through ")[0]
    return set(re.findall(r"%\w+\[[^\]]*\]", listed))


def test_a_register_tile_around_a_triangular_loop_where_asked():
    # syrk with a register tile wherever one fits (a candidate of --tune): i jammed
    # around the triangular j, then j, and the sums of the tile kept in registers.
    data, model, loop = loop_on_line(SYRK, 4)
    outcome = optimize_nest(data, model, loop, Options(machine=SMALL_MACHINE, register_tile=True))
    jams = [step for step in outcome.steps if step.startswith("unroll-and-jam ")]
    assert [step.split(" by ")[0] for step in jams] == [
        "unroll-and-jam %i",
        "unroll-and-jam %j",
    ], outcome.steps
    assert _carried(outcome.steps[-1]) >= {"%C[%i, %j]", "%C[%i_1, %j]", "%C[%i, %j_1]"}
    assert outcome.refused == [], outcome.refused
    assert outcome.new_text is not None
    _same_when_run(SYRK, outcome.new_text.decode())


def _benchmark_sized(text: str) -> str:
    """syr2k at PolyBench's sizes (N = 1200, M = 1000): where the model sees the
    rows of A and B streamed through L3."""
    for small, large in (("48x40", "1200x1000"), ("48x48", "1200x1200")):
        text = text.replace(small, large)
    return text.replace("to 48 ", "to 1200 ").replace("to 40 ", "to 1000 ")


def test_a_triangle_gets_a_register_tile_rather_than_partial_tiles():
    # syr2k: tiles of (i, j) would be partial along the diagonal (min and max
    # bounds), with no register tile in them; untiled, i is jammed around the
    # triangular j, as few cycles predicted.
    wide = Machine((48 * 1024, 1024 * 1024, 32 * 1024 * 1024), vector_bytes=64, registers=32)
    data, model, loop = loop_on_line(_benchmark_sized(SYR2K), 4)
    outcome = optimize_nest(data, model, loop, Options(machine=wide))
    assert not any(step.startswith("tiled") for step in outcome.steps), outcome.steps
    jams = [step.split(" by ")[0] for step in outcome.steps if step.startswith("unroll-and-jam")]
    assert jams == ["unroll-and-jam %i", "unroll-and-jam %j"], outcome.steps
    assert _carried(outcome.steps[-1]) >= {"%C[%i, %j]", "%C[%i_1, %j]", "%C[%i, %j_1]"}
    assert outcome.refused == [], outcome.refused
