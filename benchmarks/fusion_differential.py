"""Differential testing of our fusion against execution, and against MLIR's own pass.

For each generated program (affine_lsp.testing.progen): fuse everything with
`fuse_all`, check the result with our verifier, lower and run both programs with
mlir-opt/mlir-runner and compare their printed outputs bit for bit. The same
program also goes through `mlir-opt --affine-loop-fusion`, whose result is run
too, so that the number of nests each side fuses can be compared on the
programs where MLIR's result is correct.

    python benchmarks/fusion_differential.py --count 500 --seed 0 [--json out.json]

Exit status 1 if any of our fused programs computes something different.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.checks import Severity, check_document  # noqa: E402
from affine_lsp.syntax import SourceDocument  # noqa: E402
from affine_lsp.testing import oracle, progen  # noqa: E402
from affine_lsp.transforms.fusion import fuse_all  # noqa: E402


@dataclass
class Result:
    seed: int
    features: list[str]
    nests: int
    ours: str  # same | different | unchanged | invalid | run-failure | original-failed | crash
    ours_after: int
    ours_fusions: int
    ours_seconds: float
    mlir: str  # correct | miscompile | crash | invalid-ir | run-failure | timeout | skipped
    mlir_after: int | None
    detail: str = ""


def evaluate(seed: int, with_mlir: bool = True, timeout: float = 60.0) -> Result:
    program = progen.generate(seed)
    before = oracle.count_top_level_loops(program.text, program.kernel) or 0
    started = time.perf_counter()
    try:
        fused = fuse_all(program.text.encode())
    except Exception as error:  # noqa: BLE001 - a crash is a finding, report it
        return Result(
            seed,
            sorted(program.features),
            before,
            "crash",
            before,
            0,
            0.0,
            "skipped",
            None,
            f"{type(error).__name__}: {error}",
        )
    seconds = time.perf_counter() - started
    text = fused.text.decode()
    after = oracle.count_top_level_loops(text, program.kernel) or 0
    original = oracle.lower_and_run(program.text, timeout=timeout)
    result = Result(
        seed,
        sorted(program.features),
        before,
        "unchanged",
        after,
        len(fused.fusions),
        seconds,
        "skipped",
        None,
    )
    if not original.ok:
        result.ours = "original-failed"
        result.detail = original.describe()
        return result
    if fused.fusions:
        errors = [
            d.message for d in check_document(SourceDocument(text)) if d.severity == Severity.ERROR
        ]
        if errors:
            result.ours, result.detail = "invalid", errors[0]
        else:
            verdict = oracle.equivalent(
                program.text, text, timeout=timeout, original_result=original
            )
            result.ours = {
                oracle.Outcome.SAME: "same",
                oracle.Outcome.DIFFERENT: "different",
            }.get(verdict.outcome, "run-failure")
            result.detail = verdict.detail[:2000]
    if with_mlir:
        theirs = oracle.run_mlir_fusion(program.text, timeout=timeout)
        if theirs.timed_out:
            result.mlir = "timeout"
        elif theirs.crashed:
            result.mlir = "crash"
        elif theirs.text is None:
            result.mlir = "invalid-ir"
        else:
            result.mlir_after = oracle.count_top_level_loops(theirs.text, program.kernel)
            verdict = oracle.equivalent(
                program.text, theirs.text, timeout=timeout, original_result=original
            )
            result.mlir = {
                oracle.Outcome.SAME: "correct",
                oracle.Outcome.DIFFERENT: "miscompile",
            }.get(verdict.outcome, "run-failure")
    return result


def summarize(results: list[Result]) -> dict[str, object]:
    ours = Counter(r.ours for r in results)
    mlir = Counter(r.mlir for r in results)
    fused_by_us = sum(r.nests - r.ours_after for r in results)
    correct = [r for r in results if r.mlir == "correct"]
    ours_on_correct = sum(r.nests - r.ours_after for r in correct)
    mlir_on_correct = sum(r.nests - (r.mlir_after or r.nests) for r in correct)
    more = sum(1 for r in correct if r.ours_after < (r.mlir_after or r.nests))
    fewer = sum(1 for r in correct if r.ours_after > (r.mlir_after or r.nests))
    times = sorted(r.ours_seconds for r in results)
    return {
        "programs": len(results),
        "ours": dict(ours),
        "mlir": dict(mlir),
        "nests_before": sum(r.nests for r in results),
        "nests_fused_by_us": fused_by_us,
        "fusions_by_us": sum(r.ours_fusions for r in results),
        "mlir_correct_programs": len(correct),
        "nests_fused_on_mlir_correct": {"ours": ours_on_correct, "mlir": mlir_on_correct},
        "mlir_correct_programs_we_fuse_more": more,
        "mlir_correct_programs_we_fuse_less": fewer,
        "our_seconds_p50": times[len(times) // 2] if times else 0.0,
        "our_seconds_max": times[-1] if times else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-mlir", action="store_true", help="skip MLIR's own fusion")
    parser.add_argument("--json", type=Path)
    ns = parser.parse_args(argv)
    reason = oracle.missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    seeds = list(range(ns.seed, ns.seed + ns.count))
    started = time.monotonic()
    with ProcessPoolExecutor(max(1, ns.jobs)) as pool:
        results = list(pool.map(evaluate, seeds, [not ns.no_mlir] * len(seeds)))
    summary = summarize(results)
    summary["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(summary, indent=1))
    for r in results:
        if r.ours not in ("same", "unchanged"):
            print(f"seed {r.seed}: {r.ours}: {r.detail[:300]}")
    if ns.json:
        ns.json.write_text(
            json.dumps({"summary": summary, "programs": [asdict(r) for r in results]}, indent=1)
        )
    return 1 if summary["ours"].get("different", 0) or summary["ours"].get("invalid", 0) else 0  # type: ignore[union-attr]


if __name__ == "__main__":
    raise SystemExit(main())
