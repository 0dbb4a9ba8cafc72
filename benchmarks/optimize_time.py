"""How long `affine-lsp optimize --all` takes per kernel (without `--tune`): wall and
CPU seconds, and their p95, over the PolyBench kernels (`affine_lsp.testing.polybench`,
when this checkout has it) or the files given.

    python benchmarks/optimize_time.py [FILE ...] [--repeat 1]

The machine may be shared: CPU seconds are what the optimizer itself costs, wall
seconds what a user waits for on it now.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
import tempfile
from pathlib import Path

from _common import timed_child

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300.0


def _kernels(files: list[str]) -> list[tuple[str, str]]:
    if files:
        return [(Path(f).stem, Path(f).read_text(encoding="utf-8")) for f in files]
    try:
        polybench = importlib.import_module("affine_lsp.testing.polybench")
    except ImportError:
        sys.exit("no files given and no affine_lsp.testing.polybench in this checkout")
    return [(kernel.name, kernel.text()) for kernel in polybench.kernels()]


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--repeat", type=int, default=1)
    ns = parser.parse_args(argv)
    walls: list[float] = []
    cpus: list[float] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory(prefix="affine-lsp-optimize-time-") as scratch:
        for name, text in _kernels(ns.files):
            path = Path(scratch) / f"{name}.mlir"
            path.write_text(text, encoding="utf-8")
            for _ in range(ns.repeat):
                argv = [sys.executable, "-m", "affine_lsp", "optimize", str(path), "--all"]
                wall, cpu, done = timed_child(argv, env, TIMEOUT)
                walls.append(wall)
                cpus.append(cpu)
                status = {0: "changed", 3: "unchanged"}.get(done.returncode, "failed")
                print(f"{name:14} {wall:7.2f} s wall {cpu:7.2f} s CPU  {status}", flush=True)
    print(
        f"\n{len(walls)} runs: p95 {_p95(walls):.2f} s wall, {_p95(cpus):.2f} s CPU; "
        f"max {max(walls):.2f} s wall, {max(cpus):.2f} s CPU (load now: "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
