"""Tests for the differential-testing harness: generator, oracle and equivalence verdicts.

A seeded slice of generated programs is run once per session (in parallel) and the individual
tests assert on the cached results.  Tests that need mlir-opt / mlir-runner skip with a reason
when the tools are absent.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from affine_lsp.testing import oracle, progen

SLICE_SEEDS = range(40)
ROOT = Path(__file__).resolve().parent.parent


def _need_tools() -> None:
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)


# --------------------------------------------------------------------------- rewrites


def rename_ssa(text: str) -> str:
    """A semantically identical copy: every SSA value gets a new, consistently mapped name."""
    return re.sub(r"%([A-Za-z_][\w$.]*)", r"%renamed_\1", text)


def break_input_data(text: str) -> str:
    """A deliberately broken copy: the driver's data offset constant changes, shifting inputs."""
    old = "%half = arith.constant 6 : i32"
    assert old in text
    return text.replace(old, "%half = arith.constant 7 : i32")


# --------------------------------------------------------------------------- the slice


@dataclass
class SliceRun:
    program: progen.Program
    verified: oracle.VerifyResult
    original: oracle.RunResult
    fill_a: oracle.RunResult
    fill_b: oracle.RunResult
    self_verdict: oracle.Verdict
    renamed: oracle.Verdict
    broken: oracle.Verdict


def _run_one(seed: int) -> SliceRun:
    program = progen.generate(seed)
    verified = oracle.verify(program.text)
    original = oracle.lower_and_run(program.text)
    fill_a = oracle.lower_and_run(progen.generate(seed, progen.GenConfig(fill_temps=123)).text)
    fill_b = oracle.lower_and_run(progen.generate(seed, progen.GenConfig(fill_temps=-45)).text)
    return SliceRun(
        program,
        verified,
        original,
        fill_a,
        fill_b,
        oracle.equivalent(program.text, program.text, original_result=original),
        oracle.equivalent(program.text, rename_ssa(program.text), original_result=original),
        oracle.equivalent(program.text, break_input_data(program.text), original_result=original),
    )


@pytest.fixture(scope="module")
def slice_runs() -> list[SliceRun]:
    _need_tools()
    with ThreadPoolExecutor(max(2, os.cpu_count() or 1)) as pool:
        return list(pool.map(_run_one, SLICE_SEEDS))


# --------------------------------------------------------------------------- generator only


def test_generation_is_deterministic() -> None:
    for seed in (0, 7, 123):
        assert progen.generate(seed).text == progen.generate(seed).text


def test_seeds_give_different_programs() -> None:
    texts = {progen.generate(seed).text for seed in SLICE_SEEDS}
    assert len(texts) == len(SLICE_SEEDS)


def test_every_pattern_appears_in_the_slice() -> None:
    seen: set[str] = set()
    for seed in SLICE_SEEDS:
        program = progen.generate(seed)
        assert program.features <= set(progen.FEATURES)
        seen |= program.features
    assert seen == set(progen.FEATURES), sorted(set(progen.FEATURES) - seen)


def test_program_shape() -> None:
    for seed in SLICE_SEEDS:
        program = progen.generate(seed)
        assert program.kernel == "kernel"
        assert 2 <= program.nests <= 5
        assert oracle.count_top_level_loops(program.text, "kernel") == program.nests
        assert "func.func @main()" in program.text
        assert "live_out" in program.features
        prints = program.text.count("call @printMemref")
        per_output = 2 if program.elem == "f32" else 1
        assert prints == per_output * len(program.outputs)


@pytest.mark.parametrize("pattern", progen.FEATURES)
def test_each_pattern_can_be_required(pattern: str) -> None:
    program = progen.generate(5, progen.GenConfig(require=frozenset({pattern})))
    assert pattern in program.features


def test_only_restricts_deliberate_patterns() -> None:
    config = progen.GenConfig.only("reduction", "live_out")
    for seed in range(10):
        features = progen.generate(seed, config).features
        assert not features & {"shifted", "transposed", "affine_if", "affine_apply", "alloca"}


def test_bad_config_is_refused() -> None:
    with pytest.raises(ValueError):
        progen.generate(0, progen.GenConfig(require=frozenset({"no_such_pattern"})))
    with pytest.raises(ValueError):
        progen.GenConfig.only("no_such_pattern")
    with pytest.raises(ValueError):
        progen.generate(0, progen.GenConfig(min_nests=3, max_nests=2))
    with pytest.raises(ValueError):
        progen.generate(0, progen.GenConfig(sizes=(2,)))
    with pytest.raises(ValueError):
        progen.generate(0, progen.GenConfig(elem_types=("f64",)))


def test_command_line_prints_a_program() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "affine_lsp.testing.progen", "--seed", "3"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    assert done.stdout == progen.generate(3).text


# --------------------------------------------------------------------------- oracle, no tools


def test_output_normalisation_masks_only_addresses() -> None:
    out = "Unranked Memref base@ = 0x55d0c0ffee rank = 1 offset = 0\n[1,  2]\n"
    assert (
        oracle.normalize_output(out) == "Unranked Memref base@ = <addr> rank = 1 offset = 0\n"
        "[1,  2]\n"
    )


def test_count_top_level_loops_on_printed_form() -> None:
    text = """module {
  func.func @kernel(%arg0: memref<4xf32>) {
    affine.for %i = 0 to 4 {
      affine.for %j = 0 to 4 {
      }
    }
    %0 = affine.for %i = 0 to 4 iter_args(%a = %c) -> (f32) {
      affine.yield %a : f32
    }
    return
  }
  func.func @other() {
    affine.for %i = 0 to 4 {
    }
    return
  }
}
"""
    assert oracle.count_top_level_loops(text, "kernel") == 2
    assert oracle.count_top_level_loops(text, "other") == 1
    assert oracle.count_top_level_loops(text, "missing") is None


def test_env_override_for_tool_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(oracle.ENV_BIN, str(tmp_path))
    oracle.toolchain.cache_clear()
    try:
        assert oracle.find_tool("mlir-opt") is None
        reason = oracle.missing_reason()
        assert reason is not None and reason.startswith("mlir-opt not found")
        with pytest.raises(oracle.ToolNotFound):
            oracle.toolchain()
    finally:
        oracle.toolchain.cache_clear()


def test_crash_summary_prefers_assertions_and_mlir_frames() -> None:
    trace = (
        " #4 0x00007f mlir::AsmPrinter::Impl::printTypeImpl(mlir::Type) (/lib/x.so+0x1)\n"
        " #9 0x00007f mlir::affine::AffineStoreOp::verify() (/lib/x.so+0x2)\n"
    )
    assert oracle.crash_summary(trace) == "crash in mlir::affine::AffineStoreOp::verify()"
    assert "Assertion" in oracle.crash_summary("x: Assertion `a' failed.\n" + trace)


# --------------------------------------------------------------------------- with the tools


@pytest.mark.slow
@pytest.mark.oracle
def test_slice_programs_verify(slice_runs: list[SliceRun]) -> None:
    bad = [(r.program.seed, r.verified.stderr[:300]) for r in slice_runs if not r.verified.ok]
    assert not bad


@pytest.mark.slow
@pytest.mark.oracle
def test_slice_programs_run(slice_runs: list[SliceRun]) -> None:
    bad = [(r.program.seed, r.original.describe()) for r in slice_runs if not r.original.ok]
    assert not bad
    for run in slice_runs:
        assert run.original.stdout.count("Unranked Memref") == run.program.text.count(
            "call @printMemref"
        )


@pytest.mark.slow
@pytest.mark.oracle
def test_slice_programs_never_read_uninitialised_memory(slice_runs: list[SliceRun]) -> None:
    for run in slice_runs:
        assert run.fill_a.ok and run.fill_b.ok
        a = oracle.normalize_output(run.fill_a.stdout)
        assert a == oracle.normalize_output(run.fill_b.stdout), run.program.seed
        assert a == oracle.normalize_output(run.original.stdout), run.program.seed


@pytest.mark.slow
@pytest.mark.oracle
def test_program_is_equivalent_to_itself(slice_runs: list[SliceRun]) -> None:
    assert all(r.self_verdict.outcome is oracle.Outcome.SAME for r in slice_runs)


@pytest.mark.slow
@pytest.mark.oracle
def test_renamed_copy_is_equivalent(slice_runs: list[SliceRun]) -> None:
    bad = [(r.program.seed, r.renamed.detail) for r in slice_runs if not r.renamed.same]
    assert not bad


@pytest.mark.slow
@pytest.mark.oracle
def test_broken_copy_is_different(slice_runs: list[SliceRun]) -> None:
    for run in slice_runs:
        assert run.broken.outcome is oracle.Outcome.DIFFERENT, run.program.seed
        assert run.broken.detail.startswith("--- original")


KERNEL_SOURCE = """
func.func private @printMemrefI32(memref<*xi32>)
func.func @kernel(%a: memref<4xi32>) {
  affine.for %i = 0 to 4 {
    %v = affine.load %a[%i] : memref<4xi32>
    %c = arith.constant 10 : i32
    %w = arith.addi %v, %c : i32
    affine.store %w, %a[%i] : memref<4xi32>
  }
  return
}
func.func @main() {
  %a = memref.alloc() : memref<4xi32>
  %z = arith.constant 1 : i32
  affine.for %i = 0 to 4 {
    affine.store %z, %a[%i] : memref<4xi32>
  }
  call @kernel(%a) : (memref<4xi32>) -> ()
  %u = memref.cast %a : memref<4xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
"""


@pytest.mark.oracle
def test_known_output_and_changed_kernel_constant() -> None:
    _need_tools()
    run = oracle.lower_and_run(KERNEL_SOURCE)
    assert run.ok, run.stderr
    assert "[11,  11,  11,  11]" in run.stdout
    changed = KERNEL_SOURCE.replace("arith.constant 10 : i32", "arith.constant 12 : i32")
    verdict = oracle.equivalent(KERNEL_SOURCE, changed)
    assert verdict.outcome is oracle.Outcome.DIFFERENT
    assert "+[13,  13,  13,  13]" in verdict.detail


@pytest.mark.oracle
def test_failure_verdicts() -> None:
    _need_tools()
    invalid = KERNEL_SOURCE.replace("affine.store %w, %a[%i]", "affine.store %nope, %a[%i]")
    verdict = oracle.equivalent(KERNEL_SOURCE, invalid)
    assert verdict.outcome is oracle.Outcome.TRANSFORMED_FAILED
    assert verdict.transformed is not None and verdict.transformed.stage == "lower"
    assert oracle.equivalent(invalid, KERNEL_SOURCE).outcome is oracle.Outcome.ORIGINAL_FAILED
    assert (
        oracle.equivalent(KERNEL_SOURCE, KERNEL_SOURCE, timeout=0.001).outcome
        is oracle.Outcome.TIMEOUT
    )
    missing_entry = oracle.lower_and_run(KERNEL_SOURCE, entry="no_such_function")
    assert not missing_entry.ok and missing_entry.stage == "run"


@pytest.mark.oracle
def test_verify_reports_diagnostics() -> None:
    _need_tools()
    assert oracle.verify(KERNEL_SOURCE).ok
    bad = oracle.verify(KERNEL_SOURCE.replace("%w, %a[%i]", "%nope, %a[%i]"))
    assert not bad.ok
    assert bad.errors and bad.errors[0].line == 8
    assert "undeclared SSA value" in bad.errors[0].message


PRODUCER_CONSUMER = """
func.func private @printMemrefI32(memref<*xi32>)
func.func @kernel(%a: memref<8xi32>, %b: memref<8xi32>) {
  %t = memref.alloc() : memref<8xi32>
  affine.for %i = 0 to 8 {
    %v = affine.load %a[%i] : memref<8xi32>
    %c = arith.constant 3 : i32
    %w = arith.muli %v, %c : i32
    affine.store %w, %t[%i] : memref<8xi32>
  }
  affine.for %i = 0 to 8 {
    %v = affine.load %t[%i] : memref<8xi32>
    %c = arith.constant 1 : i32
    %w = arith.addi %v, %c : i32
    affine.store %w, %b[%i] : memref<8xi32>
  }
  memref.dealloc %t : memref<8xi32>
  return
}
func.func @main() {
  %a = memref.alloc() : memref<8xi32>
  %b = memref.alloc() : memref<8xi32>
  affine.for %i = 0 to 8 {
    %x = arith.index_cast %i : index to i32
    affine.store %x, %a[%i] : memref<8xi32>
    affine.store %x, %b[%i] : memref<8xi32>
  }
  call @kernel(%a, %b) : (memref<8xi32>, memref<8xi32>) -> ()
  %u = memref.cast %b : memref<8xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
"""


@pytest.mark.oracle
def test_mlir_fusion_fuses_a_simple_chain_correctly() -> None:
    _need_tools()
    assert oracle.count_top_level_loops(PRODUCER_CONSUMER) == 2
    fused = oracle.run_mlir_fusion(PRODUCER_CONSUMER, "mode=producer")
    assert fused.ok and fused.text is not None, fused.stderr
    assert oracle.count_top_level_loops(fused.text) == 1
    verdict = oracle.equivalent(PRODUCER_CONSUMER, fused.text)
    assert verdict.same, verdict.detail
    assert verdict.original is not None
    assert "[1,  4,  7,  10,  13,  16,  19,  22]" in verdict.original.stdout
    # Options reach the pass: sibling-only mode leaves a producer-consumer pair alone.
    sibling = oracle.run_mlir_fusion(PRODUCER_CONSUMER, "mode=sibling")
    assert sibling.ok and oracle.count_top_level_loops(sibling.text or "") == 2


@pytest.mark.oracle
def test_mlir_fusion_reports_invalid_input() -> None:
    _need_tools()
    result = oracle.run_mlir_fusion("func.func @kernel( {")
    assert not result.ok and not result.crashed
    assert result.diagnostics and result.diagnostics[0].severity == "error"
