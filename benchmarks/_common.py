"""Shared helpers for the benchmarks: locating shared tools and generating input."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# ../shared next to the checkout, or where AFFINE_LSP_SHARED points (e.g. from a worktree).
SHARED = Path(os.environ.get("AFFINE_LSP_SHARED") or ROOT.parent / "shared")
GEN_AFFINE = SHARED / "tools" / "gen_affine.py"
LSPBENCH = SHARED / "tools" / "lspbench.py"


def generated_file(lines: int, seed: int = 1, directory: Path | None = None) -> Path:
    """A gen_affine.py file of about `lines` lines (cached per size and seed)."""
    directory = directory or Path(tempfile.gettempdir()) / "affine-lsp-bench"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"gen_{lines}_{seed}.mlir"
    if not path.exists():
        subprocess.run(
            [sys.executable, str(GEN_AFFINE), str(lines), "-o", str(path), "--seed", str(seed)],
            check=True,
            timeout=600,
        )
    return path


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    return (
        f"p50 {statistics.median(ms):.3f} ms, p95 {percentile(ms, 0.95):.3f} ms, "
        f"max {max(ms):.3f} ms (n={len(ms)})"
    )


def timed_child(
    argv: list[str], env: dict[str, str], timeout: float, cwd: Path | None = None
) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run `argv` (text output captured, no check): its wall seconds, the CPU seconds
    of the child (user and system), and its completed process."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, env=env, check=False, cwd=cwd
    )
    wall = time.perf_counter() - started
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu, done
