"""Measure MLIR's own ``affine-loop-fusion`` against the differential-testing harness.

For each generated program, run ``mlir-opt --affine-loop-fusion`` (default greedy mode, and
optionally ``mode=producer`` / ``mode=sibling``), then lower and run both the original and the
fused program and compare their printed outputs bit for bit.  Reports crashes, miscompiles and
correct results, top-level nests in ``@kernel`` before/after, and a breakdown by feature.

    python benchmarks/mlir_fusion_baseline.py --count 300 --seed 0 [--profile hazards]
        --json results.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.testing import oracle, progen  # noqa: E402
from affine_lsp.testing.fusion_compare import PROFILES  # noqa: E402

MODES: dict[str, str] = {"greedy": "", "producer": "mode=producer", "sibling": "mode=sibling"}
STATUSES = ("correct", "miscompile", "run-failure", "crash", "invalid-ir", "timeout")
"""Per-mode outcomes: ``miscompile`` = different output; ``run-failure`` = the fused program
failed to lower or crashed at run time; ``crash`` = mlir-opt crashed; ``invalid-ir`` = mlir-opt
exited with a diagnostic (the input verifies, so the pass produced invalid IR); ``timeout`` =
some step timed out."""


@dataclass
class ModeResult:
    """What one fusion mode did to one program (``fused_text`` is not written to JSON)."""

    status: str
    nests_after: int | None = None
    detail: str = ""
    fused_text: str | None = field(default=None, repr=False)


@dataclass
class ProgramResult:
    """All modes' results for one generated program."""

    seed: int
    features: list[str]
    nests_before: int
    elem: str
    original: str = "ok"
    modes: dict[str, ModeResult] = field(default_factory=dict)


def evaluate_mode(
    program: progen.Program, original: oracle.RunResult, options: str, timeout: float
) -> ModeResult:
    """Fuse ``program`` with MLIR in one mode and judge the result against ``original``."""
    fused = oracle.run_mlir_fusion(program.text, options, timeout=timeout)
    if fused.timed_out:
        return ModeResult("timeout", detail="mlir-opt timed out")
    if fused.crashed:
        return ModeResult("crash", detail=oracle.crash_summary(fused.stderr))
    if fused.text is None:
        return ModeResult("invalid-ir", detail=_first_line(fused.stderr))
    after = oracle.count_top_level_loops(fused.text, program.kernel)
    verdict = oracle.equivalent(program.text, fused.text, timeout=timeout, original_result=original)
    status = {
        oracle.Outcome.SAME: "correct",
        oracle.Outcome.DIFFERENT: "miscompile",
        oracle.Outcome.TRANSFORMED_FAILED: "run-failure",
        oracle.Outcome.TIMEOUT: "timeout",
    }.get(verdict.outcome, "run-failure")
    return ModeResult(status, after, verdict.detail[:2000], fused.text)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if "error" in line or "Assertion" in line or "LLVM ERROR" in line:
            return line.strip()[:300]
    return next((ln.strip()[:300] for ln in text.splitlines() if ln.strip()), "")


def evaluate(
    seed: int, modes: Sequence[str], timeout: float, profile: str = "default"
) -> ProgramResult:
    """Generate the program for ``seed`` and evaluate every requested mode on it."""
    program = progen.generate(seed, PROFILES[profile])
    result = ProgramResult(seed, sorted(program.features), program.nests, program.elem)
    original = oracle.lower_and_run(program.text, timeout=timeout)
    if not original.ok:
        result.original = original.describe()
        return result
    for mode in modes:
        result.modes[mode] = evaluate_mode(program, original, MODES[mode], timeout)
    return result


# --------------------------------------------------------------------------- reporting


def summarize(results: Sequence[ProgramResult], mode: str) -> dict[str, object]:
    """Totals for one mode: outcome counts, nests before/after, nests fused where correct."""
    counts = Counter(r.modes[mode].status for r in results if mode in r.modes)
    correct = [r for r in results if mode in r.modes and r.modes[mode].status == "correct"]
    before = sum(r.nests_before for r in correct)
    after = sum(r.modes[mode].nests_after or 0 for r in correct)
    changed = sum(1 for r in correct if (r.modes[mode].nests_after or 0) < r.nests_before)
    return {
        "counts": {s: counts.get(s, 0) for s in STATUSES},
        "correct_nests_before": before,
        "correct_nests_after": after,
        "correct_programs_with_fewer_nests": changed,
        "nests_before_all": sum(r.nests_before for r in results),
    }


def feature_table(results: Sequence[ProgramResult], mode: str) -> list[str]:
    """One line per feature: programs, crash, miscompile (+run failures), correct, fused."""
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        if mode not in r.modes:
            continue
        m = r.modes[mode]
        for feat in r.features:
            rows[feat]["programs"] += 1
            rows[feat][m.status] += 1
            if m.status == "correct" and (m.nests_after or 0) < r.nests_before:
                rows[feat]["fused"] += 1
    head = (
        f"  {'feature':24s} {'progs':>5s} {'crash':>5s} {'wrong':>5s} {'runfl':>5s} "
        f"{'ok':>5s} {'ok+fused':>8s}"
    )
    lines = [head]
    for feat in progen.FEATURES:
        c = rows.get(feat, Counter())
        lines.append(
            f"  {feat:24s} {c['programs']:5d} {c['crash']:5d} {c['miscompile']:5d} "
            f"{c['run-failure']:5d} {c['correct']:5d} {c['fused']:8d}"
        )
    return lines


def report(results: Sequence[ProgramResult], modes: Iterable[str], elapsed: float) -> str:
    """The human-readable report printed at the end of a run."""
    failed = [r for r in results if r.original != "ok"]
    lines = [
        f"programs: {len(results)}  (original failed to run: {len(failed)})  time: {elapsed:.1f}s",
    ]
    for mode in modes:
        s = summarize(results, mode)
        counts = s["counts"]
        assert isinstance(counts, dict)
        lines.append("")
        lines.append(f"== mode {mode} ({MODES[mode] or 'default options'})")
        lines.append(
            "  MLIR crashes: {crash}   miscompiles (different output): {miscompile}   "
            "fused program failed to run: {run-failure}   correct: {correct}   "
            "invalid IR: {invalid-ir}   timeouts: {timeout}".format(**counts)
        )
        lines.append(
            f"  top-level nests in @kernel, all programs before: {s['nests_before_all']}; "
            f"correct programs before/after: {s['correct_nests_before']}/"
            f"{s['correct_nests_after']} "
            f"({s['correct_programs_with_fewer_nests']} correct programs lost nests)"
        )
        lines += feature_table(results, mode)
    return "\n".join(lines)


def save_failures(
    results: Sequence[ProgramResult], directory: Path, profile: str = "default"
) -> int:
    """Write each program MLIR got wrong (and its fused form) to ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    saved = 0
    for r in results:
        bad = {m: res for m, res in r.modes.items() if res.status != "correct"}
        if not bad:
            continue
        (directory / f"seed{r.seed}.mlir").write_text(
            progen.generate(r.seed, PROFILES[profile]).text
        )
        for mode, res in bad.items():
            note = f"// {mode}: {res.status}\n// " + res.detail.replace("\n", "\n// ") + "\n"
            body = res.fused_text or ""
            (directory / f"seed{r.seed}.{mode}.{res.status}.mlir").write_text(note + body)
        saved += 1
    return saved


def _json_record(r: ProgramResult) -> dict[str, object]:
    record = asdict(r)
    for mode in record["modes"].values():
        mode.pop("fused_text", None)
    return record


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0, help="first seed (seeds are consecutive)")
    parser.add_argument(
        "--modes",
        default="greedy,producer,sibling",
        help="comma-separated subset of: " + ", ".join(MODES),
    )
    parser.add_argument("--profile", choices=sorted(PROFILES), default="default")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per subprocess")
    parser.add_argument("--json", type=Path, help="write per-program results here")
    parser.add_argument("--save", type=Path, help="write programs MLIR got wrong to this folder")
    ns = parser.parse_args(argv)
    modes = [m for m in ns.modes.split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"unknown modes: {sorted(unknown)}")
    reason = oracle.missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    start = time.monotonic()
    seeds = range(ns.seed, ns.seed + ns.count)
    with ThreadPoolExecutor(max(1, ns.jobs)) as pool:
        results = list(pool.map(lambda s: evaluate(s, modes, ns.timeout, ns.profile), seeds))
    elapsed = time.monotonic() - start
    print(report(results, modes, elapsed))
    if ns.json:
        payload = {
            "generator": "affine_lsp.testing.progen",
            "first_seed": ns.seed,
            "count": ns.count,
            "modes": {m: MODES[m] for m in modes},
            "summary": {m: summarize(results, m) for m in modes},
            "programs": [_json_record(r) for r in results],
        }
        ns.json.parent.mkdir(parents=True, exist_ok=True)
        ns.json.write_text(json.dumps(payload, indent=1) + "\n")
    if ns.save:
        saved = save_failures(results, ns.save, ns.profile)
        print(f"saved {saved} failing programs to {ns.save}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
