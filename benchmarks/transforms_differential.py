"""Differential run of the loop transformations: every transformation at every loop
of generated nests, run with mlir-runner against the original; the transformations
of point loops (unroll, unroll-and-jam, scalar replacement: "(tiled)") at every
loop of the nests tiled by 3; MLIR 22's passes on the same programs; and our
conservatism (refusals where a naive rewrite happens to run equal). Fusion too,
shifted fusion included: on generated pairs of stencil sweeps (`sweepgen`),
`fuse --line` at its best depth and at each depth, and `fuse --all`, run against
the original (kinds `fuse` and `fuse-shift`).
`--mode optimize`: each generated nest optimized instead (`testing.optimizediff`:
the model's choice, or random legal ones), run against the original.

    python benchmarks/transforms_differential.py [--count 100] [--sweeps N] [--seed 0]
        [--jobs 2] [--mode transforms|optimize]

Exit status 1 if any applied transformation computes something else.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.testing import loopdiff, nestgen, optimizediff, oracle, sweepdiff, sweepgen  # noqa: E402


def _program(seed: int) -> dict:
    nest = nestgen.generate(seed)
    report = loopdiff.check_program(seed, nest.text, naive=True, mlir=True)
    return {
        "seed": seed,
        "features": sorted(nest.features),
        "failed": report.original_failed,
        "pairs": [
            (
                p.line,
                p.label,
                p.kind + (" (tiled)" if p.base else ""),
                p.applied,
                p.verdict,
                p.reason or "",
                p.detail[:300],
            )
            for p in report.pairs
        ],
        "mlir": report.mlir,
    }


def _sweeps(seed: int) -> dict:
    sweeps = sweepgen.generate(seed)
    report = sweepdiff.check_program(seed, sweeps.text)
    return {
        "seed": seed,
        "features": sorted(f"sweeps:{f}" for f in sweeps.features),
        "failed": report.original_failed,
        "pairs": report.rows,
        "mlir": {},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100, help="programs (default 100)")
    parser.add_argument(
        "--sweeps", type=int, default=None, help="programs of two sweeps to fuse (default: --count)"
    )
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--examples", type=int, default=3, help="examples shown per finding")
    parser.add_argument("--mode", choices=("transforms", "optimize"), default="transforms")
    ns = parser.parse_args(argv)
    reason = oracle.missing_reason()
    if reason:
        print(f"cannot run: {reason}")
        return 2
    if ns.mode == "optimize":
        return _optimize_mode(ns)
    started = time.perf_counter()
    seeds = range(ns.seed, ns.seed + ns.count)
    sweep_seeds = range(ns.seed, ns.seed + (ns.count if ns.sweeps is None else ns.sweeps))
    with ProcessPoolExecutor(max(1, ns.jobs)) as pool:
        programs = list(pool.map(_program, seeds))
        sweep_programs = list(pool.map(_sweeps, sweep_seeds))
    seconds = time.perf_counter() - started

    pairs = [(prog["seed"], *pair) for prog in programs + sweep_programs for pair in prog["pairs"]]
    applied = [p for p in pairs if p[4]]
    wrong = [p for p in applied if p[5] != "same"]
    by_kind: dict[str, Counter] = defaultdict(Counter)
    for p in pairs:
        kind = p[3]
        by_kind[kind]["tried"] += 1
        by_kind[kind]["applied" if p[4] else "refused"] += 1
        if not p[4] and p[5] == "naive-same":
            by_kind[kind]["naive-same"] += 1
        if not p[4] and p[5] == "naive-different":
            by_kind[kind]["naive-different"] += 1
    features = Counter(f for prog in programs + sweep_programs for f in prog["features"])
    failed = [prog["seed"] for prog in programs if prog["failed"]]
    failed += [f"sweeps {prog['seed']}" for prog in sweep_programs if prog["failed"]]
    internal = [p for p in pairs if p[6].startswith("cannot transform this loop (internal")]

    print(
        f"{len(programs)} programs (seeds {ns.seed}..{ns.seed + ns.count - 1}) and "
        f"{len(sweep_programs)} of two sweeps, {seconds:.0f} s"
    )
    print("features: " + ", ".join(f"{k} {v}" for k, v in sorted(features.items())))
    if failed:
        print(f"originals that did not run: {failed}")
    print(
        f"\n{len(pairs)} (program, loop, transformation) pairs: {len(applied)} applied and run, "
        f"{len(pairs) - len(applied)} refused; {len(wrong)} mismatches"
    )
    for p in wrong[: ns.examples * 3]:
        print(f"  MISMATCH seed {p[0]} line {p[1]} {p[2]}: {p[5]} {p[7]}")
    if internal:
        print(f"{len(internal)} internal errors, e.g.:")
        for p in internal[: ns.examples]:
            print(f"  seed {p[0]} line {p[1]} {p[2]}: {p[6]}")
    print("\nper transformation: tried / applied / refused (naive rewrite: equal, different)")
    for kind, counts in sorted(by_kind.items()):
        print(
            f"  {kind:12} {counts['tried']:5} / {counts['applied']:5} / {counts['refused']:5}"
            f"   (naive: {counts['naive-same']} equal, {counts['naive-different']} different)"
        )

    refused = [p for p in pairs if not p[4]]
    conservative = [p for p in refused if p[5] == "naive-same"]
    needed = [p for p in refused if p[5] == "naive-different"]
    print(
        f"\nconservatism: {len(conservative)} of {len(refused)} refusals had a naive rewrite "
        f"that ran equal on these inputs ({len(needed)} naive rewrites computed something else; "
        "the rest could not be written at all)"
    )
    reasons = Counter(_reason_class(p[6]) for p in conservative)
    for reason_class, count in reasons.most_common():
        print(f"  {count:5}  {reason_class}")
        shown = [p for p in conservative if _reason_class(p[6]) == reason_class]
        for p in shown[: ns.examples]:
            print(f"         e.g. seed {p[0]} line {p[1]} {p[2]}: {p[6][:160]}")

    print("\nMLIR 22's passes on the same programs: changed the code / wrong / crashed or failed")
    for name in loopdiff.MLIR_PASSES:
        verdicts = Counter(prog["mlir"].get(name, "not run") for prog in programs)
        changed = verdicts["same"] + verdicts["different"]
        bad = [prog["seed"] for prog in programs if prog["mlir"].get(name) == "different"]
        print(
            f"  {name:36} {changed:5} / {verdicts['different']:5} / "
            f"{verdicts['crashed'] + verdicts['failed']:5}"
            + (f"   wrong on seeds {bad[: ns.examples * 3]}" if bad else "")
        )
    return 1 if wrong or internal else 0


def _optimized(seed: int) -> optimizediff.OptimizedProgram:
    return optimizediff.check_optimized(seed)


def _optimize_mode(ns: argparse.Namespace) -> int:
    """Every program's nests optimized and run against the original."""
    started = time.perf_counter()
    seeds = range(ns.seed, ns.seed + ns.count)
    with ProcessPoolExecutor(max(1, ns.jobs)) as pool:
        programs = list(pool.map(_optimized, seeds))
    seconds = time.perf_counter() - started
    verdicts = Counter(p.verdict for p in programs)
    changed = [p for p in programs if p.changed]
    wrong = [p for p in changed if p.verdict != "same"]
    print(f"{len(programs)} programs (seeds {ns.seed}..{ns.seed + ns.count - 1}), {seconds:.0f} s")
    print(
        f"{len(changed)} optimized and run: {verdicts['same']} same, "
        f"{verdicts['different']} different, {verdicts['failed']} failed to run, "
        f"{verdicts['original-failed']} originals that did not run; "
        f"{verdicts['unchanged']} left unchanged"
    )
    for program in wrong[: ns.examples * 3]:
        print(f"  MISMATCH seed {program.seed}: {program.steps} {program.detail[:300]}")
    steps = Counter(_step_kind(step) for p in changed for step in p.steps)
    print("steps taken: " + ", ".join(f"{k} {v}" for k, v in steps.most_common()))
    refused = Counter(r.split(":")[0].split(" ")[0] for p in programs for r in p.refused)
    print("steps refused: " + ", ".join(f"{k} {v}" for k, v in refused.most_common()))
    return 1 if wrong else 0


def _step_kind(step: str) -> str:
    """'tiled (i, j) 4x4' -> 'tiled', '%i_tile parallel' -> 'parallel'."""
    return "parallel" if step.endswith(" parallel") else step.split(" ")[0]


def _reason_class(reason: str) -> str:
    """A refusal reason without its specifics."""
    if "would run first" in reason:
        return "a dependence would run backwards"
    if "a dependence carried by" in reason:
        return "a dependence carried by the loop (parallelize)"
    if "one cycle of dependences" in reason:
        return "one dependence cycle holds the body (distribute)"
    if "not equivalent" in reason or "does not hold" in reason:
        return "the proof failed"
    if "may run zero times" in reason:
        return "a load before a loop that may not run (hoist)"
    return reason.split(":")[0][:80]


if __name__ == "__main__":
    raise SystemExit(main())
