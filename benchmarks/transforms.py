"""Loop transformation latencies on the fusion tutorial's matmul chain (the seed
example): the code actions at one loop (every transformation's legality, target
p95 <= 50 ms), and each transformation applied and proven (target <= 300 ms),
beside MLIR 22's passes on the same input (one mlir-opt process each).

    python benchmarks/transforms.py [--repeat 20]

Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.ir import build_module  # noqa: E402
from affine_lsp.ir.model import AffineForOp  # noqa: E402
from affine_lsp.syntax import SourceDocument  # noqa: E402
from affine_lsp.testing import oracle  # noqa: E402
from affine_lsp.transforms.loops import (  # noqa: E402
    DISTRIBUTE,
    HOIST,
    INTERCHANGE,
    PARALLELIZE,
    PERMUTE,
    SKEW,
    TILE,
    UNROLL,
    UNROLL_JAM,
    Spec,
    actions,  # noqa: E402
    transform,
)
from tests.corpus_data import seed_examples  # noqa: E402

SEED_LABEL = "affine-loop-fusion-tutorial.txt:46"
ACTIONS_TARGET = 0.050
APPLY_TARGET = 0.300

# (transformation, iv of the loop it is applied to)
APPLIED = [
    (Spec(INTERCHANGE), "%arg6"),
    (Spec(PERMUTE, permutation=(0, 2, 1)), "%arg5"),
    (Spec(TILE, sizes=(32, 32, 32)), "%arg6"),
    (Spec(UNROLL, factor=4), "%arg8"),
    (Spec(UNROLL, factor=None), "%arg5"),
    (Spec(UNROLL_JAM, factor=2), "%arg7"),
    (Spec(PARALLELIZE), "%arg7"),
    (Spec(HOIST), "%arg8"),
    (Spec(DISTRIBUTE), "%arg8"),
    (Spec(SKEW, factor=1), "%arg7"),
]

MLIR_PASSES = {
    "affine-loop-tile": "--affine-loop-tile=tile-size=32",
    "affine-loop-unroll": "--pass-pipeline=builtin.module(func.func(affine-loop-unroll"
    "{unroll-factor=4}))",
    "affine-loop-unroll-jam": "--pass-pipeline=builtin.module(func.func("
    "affine-loop-unroll-jam{unroll-jam-factor=2}))",
    "affine-parallelize": "--pass-pipeline=builtin.module(func.func(affine-parallelize))",
    "affine-loop-invariant-code-motion": "--pass-pipeline=builtin.module(func.func("
    "affine-loop-invariant-code-motion))",
}


def _loops(data: bytes):
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    first = [op for op in model.walk() if isinstance(op, AffineForOp)][:4]
    return document, model, first


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    ns = parser.parse_args(argv)
    data = next(e for e in seed_examples() if e.label == SEED_LABEL).text.encode()
    ok = True
    document, model, loops = _loops(data)
    actions.loop_actions(document, model, loops[0].span.start_byte, loops[0].span.start_byte)
    print("code actions at one loop of the chain's first nest (legality of every transformation):")
    every: list[float] = []
    for loop in loops:
        samples = []
        for _ in range(ns.repeat):
            actions._CACHE.clear()
            document, model, fresh = _loops(data)
            target = fresh[loops.index(loop)]
            at = target.span.start_byte
            started = time.perf_counter()
            found = actions.loop_actions(document, model, at, at)
            samples.append(time.perf_counter() - started)
        every += samples
        enabled = sum(a.disabled_reason is None for a in found)
        name = target.induction_variable.name if target.induction_variable else "?"
        print(
            f"  at {name}: {len(found)} actions ({enabled} enabled), "
            f"p50 {statistics.median(samples) * 1000:.1f} ms, "
            f"p95 {_percentile(samples, 0.95) * 1000:.1f} ms"
        )
    p95 = _percentile(every, 0.95)
    good = p95 <= ACTIONS_TARGET
    ok &= good
    print(
        f"  all loops: p95 {p95 * 1000:.1f} ms (target {ACTIONS_TARGET * 1000:.0f} ms) "
        f"{'ok' if good else 'FAILED'}"
    )

    print("\neach transformation applied and proven (median of runs):")
    for spec, iv in APPLIED:
        samples = []
        result = None
        for _ in range(max(1, ns.repeat // 4)):
            document, model, _ = _loops(data)
            loop = next(
                op
                for op in model.walk()
                if isinstance(op, AffineForOp)
                and op.induction_variable is not None
                and op.induction_variable.name == iv
            )
            started = time.perf_counter()
            result = transform(data, model, loop, spec)
            samples.append(time.perf_counter() - started)
        seconds = statistics.median(samples)
        good = seconds <= APPLY_TARGET
        ok &= good
        outcome = "applied" if result and result.applied else f"refused ({result.reason})"
        print(
            f"  {_words(spec):28} at {iv:6} {seconds * 1000:6.1f} ms  {outcome}"
            f"{'' if good else '  FAILED'}"
        )

    reason = oracle.missing_reason()
    if reason:
        print(f"\nMLIR's passes not run: {reason}")
    else:
        tools = oracle.toolchain()
        print("\nMLIR 22's passes on the same input (mlir-opt process, median):")
        for name, flag in MLIR_PASSES.items():
            samples = []
            for _ in range(max(1, ns.repeat // 4)):
                started = time.perf_counter()
                subprocess.run(
                    [str(tools.mlir_opt), "-", flag],
                    input=data,
                    capture_output=True,
                    timeout=60,
                    check=False,
                )
                samples.append(time.perf_counter() - started)
            print(f"  {name:36} {statistics.median(samples) * 1000:6.1f} ms")
        samples = []
        for _ in range(max(1, ns.repeat // 4)):
            started = time.perf_counter()
            subprocess.run(
                [str(tools.mlir_opt), "-"], input=data, capture_output=True, timeout=60, check=False
            )
            samples.append(time.perf_counter() - started)
        print(f"  {'(parse and print only)':36} {statistics.median(samples) * 1000:6.1f} ms")
    return 0 if ok else 1


def _words(spec: Spec) -> str:
    text = spec.kind
    if spec.permutation:
        text += " " + ",".join(map(str, spec.permutation))
    if spec.sizes:
        text += " " + "x".join(map(str, spec.sizes))
    if spec.kind in (UNROLL, UNROLL_JAM, SKEW):
        text += f" {spec.factor if spec.factor is not None else 'full'}"
    return text


if __name__ == "__main__":
    raise SystemExit(main())
