"""`--tune`'s decision (fake timings) and its harness (compiled apart, run with the
tools when they are installed)."""

from __future__ import annotations

import pytest

from affine_lsp.ir import FuncOp, build_module
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.optimize import Options, tuning
from affine_lsp.transforms.optimize.optimizer import optimize_nests
from affine_lsp.transforms.optimize.tune import Timing, TuneError, measure, toolchain
from affine_lsp.transforms.optimize.tuning import choose, program, tune_function

from .kernels import GESUMMV, SMALL_MACHINE


def _times(*milliseconds: float | None) -> list[Timing | None]:
    return [None if ms is None else Timing(ms / 1e3, "same") for ms in milliseconds]


def test_a_tie_with_the_original_keeps_the_models_schedule():
    # The original timed as fast as the model's schedule (or a little faster,
    # within the noise): the model's choice stands.
    assert choose(_times(5.27, 5.30), model=1) == 1
    assert choose(_times(5.10, 5.30), model=1) == 1


def test_only_a_clearly_faster_candidate_replaces_the_models_schedule():
    assert choose(_times(10.0, 5.0, 4.9, 4.0, 4.5), model=1) == 3
    assert choose(_times(10.0, 5.0, 4.9), model=1) == 1
    assert choose(_times(4.0, 5.0, 4.5), model=1) == 0  # (the original, clearly faster)


def test_a_model_schedule_that_could_not_be_timed_is_never_kept():
    assert choose(_times(5.0, None, 4.0), model=1) == 2
    assert choose(_times(5.0, None, 4.9), model=1) == 0
    assert choose(_times(5.0, 3.0, 2.0), model=0) == 2  # (the model changes nothing)


def _gesummv() -> tuple[bytes, int, list[int], Options]:
    data = GESUMMV.encode()
    model = build_module(SourceDocument(data).tree.root_node)
    function = next(op for op in model.walk() if isinstance(op, FuncOp))
    body = function.body
    assert body is not None and body.entry is not None
    starts = [op.span.start_byte for op in body.entry.operations if op.name == "affine.for"]
    return data, function.span.start_byte, starts, Options(machine=SMALL_MACHINE)


def test_equal_timings_keep_the_models_schedule_not_the_original(monkeypatch):
    data, function_start, starts, options = _gesummv()

    def equal(programs, progress=None):
        return [Timing(5e-3, "same") for _ in programs]

    monkeypatch.setattr(tuning, "measure", equal)
    tuned = tune_function(data, function_start, starts, options)
    expected, _ = optimize_nests(data, starts, options)
    assert expected != data
    assert tuned.data == expected
    assert "kept the model's schedule, none clearly faster" in tuned.words


def test_the_function_is_compiled_apart_from_its_harness():
    text = GESUMMV.replace("func.func @kernel_gesummv", "func.func private @kernel_gesummv")
    data, function_start, _, _ = _gesummv()
    data = text.encode()
    found = program(data, function_start)
    assert "func.func @kernel_gesummv(" in found.kernel
    assert "affine_lsp_run" not in found.kernel
    assert "func.func private @kernel_gesummv(f64, f64, memref<64x64xf64>" in found.harness
    assert "affine.for %j" not in found.harness


@pytest.mark.oracle
def test_the_harness_runs_the_function_compiled_apart():
    try:
        toolchain()
    except TuneError as error:
        pytest.skip(error.reason)
    data, function_start, starts, options = _gesummv()
    optimized, _ = optimize_nests(data, starts, options)
    timings = measure(
        [program(data, function_start), program(optimized, function_start)],
        rounds=1,
        repetitions=1,
    )
    assert all(timing is not None for timing in timings)
    assert timings[0] is not None and timings[1] is not None
    assert timings[0].checksum == timings[1].checksum
