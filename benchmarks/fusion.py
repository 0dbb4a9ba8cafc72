"""Fusion timings: the tutorial's example (target <= 150 ms) and a chain of 64 nests
(target <= 2 s), both through `fuse_all` (analysis, slices, text, dataflow check).

    python benchmarks/fusion.py [--repeat N]

Exit status 1 if a target is missed or a result is not what it should be.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.transforms.fusion import fuse_all  # noqa: E402
from tests.corpus_data import seed_examples  # noqa: E402

SEED_TARGET = 0.150
CHAIN_TARGET = 2.0
SEED_LABEL = "affine-loop-fusion-tutorial.txt:46"


def chain(nests: int, size: int = 64) -> str:
    """`nests` element-wise nests, each reading the previous one's buffer."""
    lines = [
        f"func.func @chain(%in: memref<{size}xf32>, %out: memref<{size}xf32>) {{",
        "  %c = arith.constant 2.0 : f32",
    ]
    lines += [f"  %t{k} = memref.alloc() : memref<{size}xf32>" for k in range(1, nests)]
    for k in range(nests):
        source = "%in" if k == 0 else f"%t{k}"
        target = "%out" if k == nests - 1 else f"%t{k + 1}"
        lines += [
            f"  affine.for %i{k} = 0 to {size} {{",
            f"    %v{k} = affine.load {source}[%i{k}] : memref<{size}xf32>",
            f"    %w{k} = arith.mulf %v{k}, %c : f32",
            f"    affine.store %w{k}, {target}[%i{k}] : memref<{size}xf32>",
            "  }",
        ]
    lines += [f"  memref.dealloc %t{k} : memref<{size}xf32>" for k in range(1, nests)]
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


def timed(data: bytes, repeat: int):
    samples = []
    result = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fuse_all(data)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    ns = parser.parse_args(argv)
    ok = True
    seed = next(e for e in seed_examples() if e.label == SEED_LABEL).text.encode()
    fuse_all(seed)  # warm up imports and isl
    seconds, result = timed(seed, ns.repeat)
    depths = [f.depth for f in result.fusions] if result else []
    # The matmul chain fuses at depth 2, then the consumer's loops slide under the
    # producer's (a sibling fusion one level down): one perfect nest of three loops.
    good = depths == [2, 1] and seconds <= SEED_TARGET
    ok &= good
    print(
        f"seed example: {seconds * 1000:.1f} ms (target {SEED_TARGET * 1000:.0f} ms), "
        f"fused at depths {depths} {'ok' if good else 'FAILED'}"
    )
    data = chain(64).encode()
    seconds, result = timed(data, max(1, ns.repeat // 2))
    count = len(result.fusions) if result else 0
    good = count == 63 and seconds <= CHAIN_TARGET
    ok &= good
    print(
        f"chain of 64 nests: {seconds:.2f} s (target {CHAIN_TARGET:.0f} s), "
        f"{count} fusions {'ok' if good else 'FAILED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
