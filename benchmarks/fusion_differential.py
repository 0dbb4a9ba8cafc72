"""Differential testing of our fusion against execution, and against MLIR's own pass.

For each generated program (`affine_lsp.testing.progen`, profile `default` or
`hazards`, see `affine_lsp.testing.fusion_compare`): fuse everything with
`fuse_all`, check the result with our verifier, lower and run both programs with
mlir-opt/mlir-runner and compare their printed outputs bit for bit. The same
program also goes through `mlir-opt --affine-loop-fusion`, whose result is run
too. Per program it reports the top-level nests of `@kernel` left by us and by
MLIR; where MLIR's output is correct and leaves fewer, the program is listed with
the reason (`fusion_compare.classify`).

    python benchmarks/fusion_differential.py --count 500 --seed 0 [--profile hazards]
        [--no-table] [--json out.json]

Exit status 1 if any of our fused programs computes something different (or does
not verify).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.testing import fusion_compare, oracle  # noqa: E402
from affine_lsp.testing.fusion_compare import Comparison  # noqa: E402


def evaluate(seed: int, profile: str, with_mlir: bool) -> Comparison:
    result = fusion_compare.compare_program(seed, profile, with_mlir)
    result.texts.clear()  # not sent back between processes
    return result


def summarize(results: list[Comparison]) -> dict[str, object]:
    ours = Counter(r.ours for r in results)
    mlir = Counter(r.mlir for r in results)
    correct = [r for r in results if r.mlir_correct]
    exceptions = Counter(r.exception for r in results if r.fewer_than_mlir)
    times = sorted(r.ours_seconds for r in results)
    return {
        "programs": len(results),
        "ours": dict(ours),
        "wrong": ours.get("different", 0) + ours.get("invalid", 0) + ours.get("crash", 0),
        "mlir": dict(mlir),
        "nests_before": sum(r.nests for r in results),
        "nests_left_by_us": sum(r.ours_after for r in results),
        "fusions_by_us": sum(r.ours_fusions for r in results),
        "dead_nests_removed_by_us": sum(r.ours_removed for r in results),
        "mlir_correct_programs": len(correct),
        "nests_left_on_mlir_correct": {
            "ours": sum(r.ours_after for r in correct),
            "mlir": sum(r.mlir_after or 0 for r in correct),
        },
        "mlir_correct_we_leave_as_few_or_fewer": sum(1 for r in correct if not r.fewer_than_mlir),
        "mlir_correct_we_leave_fewer": sum(
            1 for r in correct if r.ours_after < (r.mlir_after or 0)
        ),
        "mlir_correct_we_leave_more": dict(exceptions),
        "our_seconds_total": round(sum(times), 1),
        "our_seconds_p50": round(times[len(times) // 2], 3) if times else 0.0,
        "our_seconds_p95": round(times[int(len(times) * 0.95)], 3) if times else 0.0,
        "our_seconds_max": round(times[-1], 3) if times else 0.0,
    }


def table(results: list[Comparison]) -> list[str]:
    """Per program: top-level nests before, left by us, left by MLIR, and the verdicts
    (`<` we leave fewer than a correct MLIR, `>` more, with the reason)."""
    lines = [f"{'seed':>8} {'nests':>5} {'ours':>4} {'mlir':>4}    ours-run   mlir-run"]
    for r in results:
        mlir_after = "-" if r.mlir_after is None else str(r.mlir_after)
        mark = " "
        if r.mlir_correct:
            mark = ">" if r.fewer_than_mlir else "<" if r.ours_after < (r.mlir_after or 0) else "="
        note = f"  {r.exception}" if r.exception else ""
        lines.append(
            f"{r.seed:>8} {r.nests:>5} {r.ours_after:>4} {mlir_after:>4} {mark}  "
            f"{r.ours:<10} {r.mlir}{note}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", choices=sorted(fusion_compare.PROFILES), default="default")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-mlir", action="store_true", help="skip MLIR's own fusion")
    parser.add_argument(
        "--no-table", action="store_true", help="leave out the per-program table of nests"
    )
    parser.add_argument("--json", type=Path)
    ns = parser.parse_args(argv)
    reason = oracle.missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    seeds = list(range(ns.seed, ns.seed + ns.count))
    started = time.monotonic()
    with ProcessPoolExecutor(max(1, ns.jobs)) as pool:
        results = list(
            pool.map(evaluate, seeds, [ns.profile] * len(seeds), [not ns.no_mlir] * len(seeds))
        )
    summary = summarize(results)
    summary["profile"] = ns.profile
    summary["first_seed"] = ns.seed
    summary["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(summary, indent=1))
    if not ns.no_table:
        print("\n".join(table(results)))
    for r in results:
        if r.ours not in ("same", "unchanged"):
            print(f"seed {r.seed}: WRONG ({r.ours}): {r.detail[:300]}")
    for r in results:
        if r.fewer_than_mlir:
            detail = r.detail.splitlines()[0] if r.detail else ""
            print(
                f"seed {r.seed}: we leave {r.ours_after} nests, MLIR {r.mlir_after}: "
                f"{r.exception}: {detail[:200]}"
            )
    if ns.json:
        ns.json.write_text(
            json.dumps({"summary": summary, "programs": [asdict(r) for r in results]}, indent=1)
        )
    return 1 if summary["wrong"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
