"""Time tiling of stencils, timed: seidel-2d and jacobi-2d transformed by
`affine-lsp transform` steps (skews, an n-D tile, an in-tile wavefront), lowered
with mlir-opt, compiled with `clang-22 -O3 -march=native` beside a C driver,
run interleaved on one core (`taskset -c 1` when there is one) and compared with
the original: bit-identical outputs, median seconds and ratios.

    python benchmarks/time_tiling.py [--rounds 5] [--keep DIR]

jacobi-2d's two sweeps are fused with a shift by hand (the input of the time
tiling); its ratio is against the original, unfused kernel. Not a test: the
figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.testing import oracle  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

SEIDEL = """func.func @kernel(%A: memref<{n}x{n}xf64>) {{
  %c9 = arith.constant 9.0 : f64
  affine.for %t = 0 to {t} {{
    affine.for %i = 1 to {m} {{
      affine.for %j = 1 to {m} {{
{loads}
        %s1 = arith.addf %a0, %a1 : f64
        %s2 = arith.addf %s1, %a2 : f64
        %s3 = arith.addf %s2, %a3 : f64
        %s4 = arith.addf %s3, %a4 : f64
        %s5 = arith.addf %s4, %a5 : f64
        %s6 = arith.addf %s5, %a6 : f64
        %s7 = arith.addf %s6, %a7 : f64
        %s8 = arith.addf %s7, %a8 : f64
        %v = arith.divf %s8, %c9 : f64
        affine.store %v, %A[%i, %j] : memref<{n}x{n}xf64>
      }}
    }}
  }}
  return
}}
"""

_SWEEP = (
    "%{a}0 = affine.load %{X}[%i{di}, %j{dj}] : memref<{n}x{n}xf64>\n"
    "%{a}1 = affine.load %{X}[%i{di}, %j{dj} - 1] : memref<{n}x{n}xf64>\n"
    "%{a}2 = affine.load %{X}[%i{di}, %j{dj} + 1] : memref<{n}x{n}xf64>\n"
    "%{a}3 = affine.load %{X}[%i{di} + 1, %j{dj}] : memref<{n}x{n}xf64>\n"
    "%{a}4 = affine.load %{X}[%i{di} - 1, %j{dj}] : memref<{n}x{n}xf64>\n"
    "%{a}s0 = arith.addf %{a}0, %{a}1 : f64\n"
    "%{a}s1 = arith.addf %{a}s0, %{a}2 : f64\n"
    "%{a}s2 = arith.addf %{a}s1, %{a}3 : f64\n"
    "%{a}s3 = arith.addf %{a}s2, %{a}4 : f64\n"
    "%{a}v = arith.mulf %fifth, %{a}s3 : f64\n"
    "affine.store %{a}v, %{Y}[%i{di}, %j{dj}] : memref<{n}x{n}xf64>\n"
)


JACOBI = """func.func @kernel(%A: memref<{n}x{n}xf64>, %B: memref<{n}x{n}xf64>) {{
  %fifth = arith.constant 0.2 : f64
  affine.for %t = 0 to {t} {{
    affine.for %i = 1 to {m} {{
      affine.for %j = 1 to {m} {{
{first}      }}
    }}
    affine.for %i = 1 to {m} {{
      affine.for %j = 1 to {m} {{
{second}      }}
    }}
  }}
  return
}}
"""

JACOBI_FUSED = """func.func @kernel(%A: memref<{n}x{n}xf64>, %B: memref<{n}x{n}xf64>) {{
  %fifth = arith.constant 0.2 : f64
  affine.for %t = 0 to {t} {{
    affine.for %i = 1 to {n} {{
      affine.for %j = 1 to {n} {{
        affine.if affine_set<(d0, d1) : ({k} - d0 >= 0, {k} - d1 >= 0)>(%i, %j) {{
{first}        }}
        affine.if affine_set<(d0, d1) : (d0 - 2 >= 0, d1 - 2 >= 0)>(%i, %j) {{
{second}        }}
      }}
    }}
  }}
  return
}}
"""

DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define D double *, double *, int64_t, int64_t, int64_t, int64_t, int64_t
#if ARRAYS == 1
void kernel(D);
#else
void kernel(D, D);
#endif
#define ARG(p) p, p, 0, N, N, N, 1
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(void) {
  double *A = malloc(sizeof(double) * N * N), *B = malloc(sizeof(double) * N * N);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i * N + j] = ((double)i * (j + 2) + 2) / N;
      B[i * N + j] = ((double)i * (j + 3) + 3) / N;
    }
  double start = now();
#if ARRAYS == 1
  kernel(ARG(A));
#else
  kernel(ARG(A), ARG(B));
#endif
  double seconds = now() - start;
  uint64_t sum = 0;
  for (int k = 0; k < N * N; k++) { uint64_t b; memcpy(&b, &A[k], 8); sum = sum * 31 + b; }
  for (int k = 0; k < N * N * (ARRAYS - 1); k++) {
    uint64_t b;
    memcpy(&b, &B[k], 8);
    sum = sum * 31 + b;
  }
  printf("%.6f %016llx\n", seconds, (unsigned long long)sum);
  return 0;
}
"""


def seidel(n: int, t: int) -> str:
    loads = "\n".join(
        f"        %a{3 * a + b} = affine.load %A[%i{o[a]}, %j{o[b]}] : memref<{n}x{n}xf64>"
        for a in range(3)
        for b in range(3)
        for o in [[" - 1", "", " + 1"]]
    )
    return SEIDEL.format(n=n, t=t, m=n - 1, loads=loads)


def _sweep(indent: str, **fields: object) -> str:
    return "".join(indent + line + "\n" for line in _SWEEP.format(**fields).splitlines())


def jacobi(n: int, t: int, fused: bool) -> str:
    if not fused:
        first = _sweep(" " * 8, a="a", X="A", Y="B", di="", dj="", n=n)
        second = _sweep(" " * 8, a="b", X="B", Y="A", di="", dj="", n=n)
        return JACOBI.format(n=n, t=t, m=n - 1, first=first, second=second)
    # The second sweep's iteration (i - 1, j - 1) with the first sweep's (i, j).
    first = _sweep(" " * 10, a="a", X="A", Y="B", di="", dj="", n=n)
    second = _sweep(" " * 10, a="b", X="B", Y="A", di=" - 1", dj=" - 1", n=n)
    return JACOBI_FUSED.format(n=n, t=t, k=n - 2, first=first, second=second)


# (name, kernel, arrays, recipe: the `transform` steps, each (line, arguments))
CASES = [
    ("seidel-2d", lambda: seidel(1000, 40), 1, []),
    (
        "seidel-2d time-tiled 16x32x32",
        lambda: seidel(1000, 40),
        1,
        [(3, ["--skew", "1,1"]), (4, ["--skew", "1"]), (3, ["--tile", "16,32,32"])],
    ),
    (
        "seidel-2d time-tiled, 7 rows in wavefront",
        lambda: seidel(1000, 40),
        1,
        [
            (3, ["--skew", "1,1"]),
            (4, ["--skew", "1"]),
            (3, ["--tile", "16,32,32"]),
            (7, ["--wavefront", "7"]),
        ],
    ),
    ("jacobi-2d", lambda: jacobi(1300, 100, False), 2, []),
    (
        "jacobi-2d time-tiled 8x32x128",
        lambda: jacobi(1300, 100, True),
        2,
        [(3, ["--skew", "2,2"]), (3, ["--tile", "8,32,128"])],
    ),
]


TIMEOUT = 900.0
"""Seconds any one tool or run may take."""


def _run(argv: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, input=stdin, check=True, capture_output=True, text=True, timeout=TIMEOUT
    )


def build(text: str, arrays: int, n: int, work: Path, name: str) -> Path:
    tools = oracle.toolchain()
    source = work / f"{name}.mlir"
    source.write_text(text)
    lowered = _run([str(tools.mlir_opt), str(source), *oracle.LOWERING_PASSES]).stdout
    translate = Path(tools.mlir_opt).with_name("mlir-translate")
    ir = _run([str(translate), "--mlir-to-llvmir"], lowered).stdout
    (work / f"{name}.ll").write_text(ir)
    driver = work / "driver.c"
    driver.write_text(DRIVER)
    exe = work / f"{name}.exe"
    _run(
        [
            "clang-22",
            "-O3",
            "-march=native",
            "-Wno-override-module",
            f"-DN={n}",
            f"-DARRAYS={arrays}",
            str(driver),
            str(work / f"{name}.ll"),
            "-o",
            str(exe),
        ]
    )
    return exe


def transformed(text: str, recipe: list[tuple[int, list[str]]], work: Path, name: str) -> str:
    environment = dict(os.environ, AFFINE_LSP_TIME_LIMITS="off")  # (the machine may be busy)
    for step, (line, arguments) in enumerate(recipe):
        path = work / f"{name}.step{step}.mlir"
        path.write_text(text)
        command = [sys.executable, "-m", "affine_lsp", "transform", str(path)]
        done = subprocess.run(
            [*command, "--line", str(line), *arguments],
            capture_output=True,
            text=True,
            env=environment,
            cwd=ROOT,
            timeout=TIMEOUT,
        )
        if done.returncode != 0:
            raise SystemExit(f"{name}: step {step} refused: {done.stderr.strip()}")
        print(f"  {name}: {' '.join(arguments)} on line {line}: {done.stderr.strip()}")
        text = done.stdout
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", metavar="DIR", help="keep the builds in DIR")
    ns = parser.parse_args(argv)
    reason = oracle.missing_reason()
    if reason or shutil.which("clang-22") is None:
        print(f"cannot run: {reason or 'clang-22 not found'}")
        return 2
    work = Path(ns.keep or tempfile.mkdtemp(prefix="time-tiling-"))
    work.mkdir(parents=True, exist_ok=True)
    pin = ["taskset", "-c", "1"] if shutil.which("taskset") and (os.cpu_count() or 1) > 1 else []
    exes = []
    for k, (name, kernel, arrays, recipe) in enumerate(CASES):
        text = transformed(kernel(), recipe, work, f"case{k}")
        n = 1000 if name.startswith("seidel") else 1300
        exes.append(build(text, arrays, n, work, f"case{k}"))
    times: dict[int, list[float]] = {k: [] for k in range(len(CASES))}
    sums: dict[int, set[str]] = {k: set() for k in range(len(CASES))}
    for _ in range(ns.rounds):
        for k, exe in enumerate(exes):
            seconds, checksum = _run([*pin, str(exe)]).stdout.split()
            times[k].append(float(seconds))
            sums[k].add(checksum)
    wrong = False
    for k, (name, _, _, _) in enumerate(CASES):
        base = next(b for b in range(k, -1, -1) if not CASES[b][3])
        median = statistics.median(times[k])
        same = sums[k] == sums[base]
        wrong |= not same
        ratio = statistics.median(times[base]) / median
        print(
            f"{name:45} {median:8.4f} s  {ratio:5.2f}x  "
            f"{'bit-identical' if same else 'DIFFERENT OUTPUT'}"
        )
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
