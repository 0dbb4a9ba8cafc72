"""Register tiling with our transformations, timed: a gemm whose sizes no tile size
divides, tiled, its point loops unrolled and jammed and its accumulators kept in
registers (scalar replacement); and atax after unroll-and-jam, with and without
scalar replacement. Each variant is lowered as the tests' oracle lowers programs
(mlir-opt, `mlir-translate --mlir-to-llvmir`), compiled with `clang-22 -O3
-march=native` beside a C driver that fills the arrays, calls the kernel and
prints its time and a checksum of the arrays' bits, then run interleaved with the
others on one core (`taskset -c 1`). Outputs must be bit-identical.

    python benchmarks/register_tiling.py [--rounds 7] [--n 601] [--keep DIR]

Exit status 1 if a variant computes something else.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.ir import AffineForOp, build_module  # noqa: E402
from affine_lsp.syntax import SourceDocument  # noqa: E402
from affine_lsp.testing import oracle  # noqa: E402
from affine_lsp.transforms.loops import (  # noqa: E402
    SCALAR_REPLACE,
    TILE,
    UNROLL_JAM,
    Spec,
    transform,
)

GEMM = """func.func @kernel(%A: memref<NxNxf32>, %B: memref<NxNxf32>, %C: memref<NxNxf32>) {
  affine.for %i = 0 to N {
    affine.for %j = 0 to N {
      affine.for %k = 0 to N {
        %a = affine.load %A[%i, %k] : memref<NxNxf32>
        %b = affine.load %B[%k, %j] : memref<NxNxf32>
        %c = affine.load %C[%i, %j] : memref<NxNxf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %C[%i, %j] : memref<NxNxf32>
      }
    }
  }
  return
}
"""

ATAX = """func.func @kernel(%A: memref<1900x2100xf32>, %x: memref<2100xf32>, %y: memref<2100xf32>,
                   %tmp: memref<1900xf32>) {
  %zero = arith.constant 0.0 : f32
  affine.for %i = 0 to 2100 {
    affine.store %zero, %y[%i] : memref<2100xf32>
  }
  affine.for %i = 0 to 1900 {
    affine.store %zero, %tmp[%i] : memref<1900xf32>
    affine.for %j = 0 to 2100 {
      %t = affine.load %tmp[%i] : memref<1900xf32>
      %a = affine.load %A[%i, %j] : memref<1900x2100xf32>
      %xj = affine.load %x[%j] : memref<2100xf32>
      %p = arith.mulf %a, %xj : f32
      %s = arith.addf %t, %p : f32
      affine.store %s, %tmp[%i] : memref<1900xf32>
    }
    affine.for %j = 0 to 2100 {
      %yj = affine.load %y[%j] : memref<2100xf32>
      %a = affine.load %A[%i, %j] : memref<1900x2100xf32>
      %t = affine.load %tmp[%i] : memref<1900xf32>
      %p = arith.mulf %a, %t : f32
      %s = arith.addf %yj, %p : f32
      affine.store %s, %y[%j] : memref<2100xf32>
    }
  }
  return
}
"""


def step(text: str, header: str, spec: Spec, nth: int = 0) -> str:
    """`spec` applied (and proven) at the `nth` loop whose header starts with `header`."""
    data = text.encode()
    model = build_module(SourceDocument(data).tree.root_node)
    loops = [
        op
        for op in model.walk()
        if isinstance(op, AffineForOp)
        and data[op.name_span.start_byte : op.body.span.start_byte].startswith(  # type: ignore[union-attr]
            header.encode()
        )
    ]
    result = transform(data, model, loops[nth], spec)
    if not result.applied or result.new_text is None:
        raise SystemExit(f"{spec.kind} at {header!r} refused: {result.reason}")
    print(f"  {result.summary}", file=sys.stderr)
    return result.new_text.decode()


def variants(n: int) -> dict[str, str]:
    gemm = GEMM.replace("N", str(n))
    tiled = step(gemm, "affine.for %i", Spec(TILE, sizes=(32, 32, 32)))
    jammed = step(tiled, "affine.for %i =", Spec(UNROLL_JAM, factor=2))
    jammed = step(jammed, "affine.for %j =", Spec(UNROLL_JAM, factor=4))
    registers = step(jammed, "affine.for %k =", Spec(SCALAR_REPLACE))
    atax_jammed = step(ATAX, "affine.for %i = 0 to 1900", Spec(UNROLL_JAM, factor=4))
    atax_registers = step(atax_jammed, "affine.for %j", Spec(SCALAR_REPLACE), 0)
    atax_registers = step(atax_registers, "affine.for %j", Spec(SCALAR_REPLACE), 1)
    return {
        "gemm": gemm,
        "gemm tiled 32x32x32": tiled,
        "gemm tiled, unroll-and-jam 2x4": jammed,
        "gemm tiled, unroll-and-jam 2x4, scalar replacement": registers,
        "atax": ATAX,
        "atax unroll-and-jam 4": atax_jammed,
        "atax unroll-and-jam 4, scalar replacement": atax_registers,
    }


_ARGUMENT = re.compile(r"%\w+: memref<([0-9x]+)x(f32)>")


def build(text: str, directory: Path, name: str) -> Path:
    """An executable timing `text`'s @kernel once per run (best of 3 calls)."""
    tools = oracle.toolchain()
    lowered = oracle.run_tool([tools.mlir_opt, "-", *oracle.LOWERING_PASSES], text, 600)
    translate = tools.mlir_opt.parent / "mlir-translate"
    llvm = oracle.run_tool([translate, "--mlir-to-llvmir"], lowered.stdout, 600)
    if lowered.returncode or llvm.returncode:
        raise SystemExit(f"{name}: {lowered.stderr or llvm.stderr}")
    (directory / f"{name}.ll").write_text(llvm.stdout)
    signature = text[text.index("@kernel(") : text.index(")", text.index("@kernel("))]
    declare, alloc, fill, call, check = [], [], [], [], []
    for k, (shape, _) in enumerate(_ARGUMENT.findall(signature)):
        dims = [int(d) for d in shape.split("x")]
        size = 1
        for d in dims:
            size *= d
        strides = [1] * len(dims)
        for d in range(len(dims) - 2, -1, -1):
            strides[d] = strides[d + 1] * dims[d + 1]
        declare.append("float*, float*, long" + ", long" * (2 * len(dims)))
        alloc.append(f"float* b{k} = aligned_alloc(64, ((4 * {size} + 63) / 64) * 64);")
        fill.append(f"for (long q = 0; q < {size}; q++) b{k}[q] = (float)((q * 7 + {k}) % 13) / 8;")
        call.append(f"b{k}, b{k}, 0, {', '.join(map(str, dims + strides))}")
        check.append(f"for (long q = 0; q < {size}; q++) h = h * 31 + *(unsigned*)&b{k}[q];")
    driver = f"""#include <stdio.h>
#include <stdlib.h>
#include <time.h>
void kernel({", ".join(declare)});
int main(void) {{
  {" ".join(alloc)}
  double best = 1e9;
  unsigned long h = 0;
  for (int r = 0; r < 3; r++) {{
    {" ".join(fill)}
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    kernel({", ".join(call)});
    clock_gettime(CLOCK_MONOTONIC, &b);
    double t = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
    if (t < best) best = t;
  }}
  {" ".join(check)}
  printf("%.6f %lx\\n", best, h);
  return 0;
}}
"""
    (directory / f"{name}.c").write_text(driver)
    executable = directory / name
    subprocess.run(
        [
            "clang-22",
            "-O3",
            "-march=native",
            "-Wno-override-module",
            "-o",
            str(executable),
            str(directory / f"{name}.c"),
            str(directory / f"{name}.ll"),
        ],
        check=True,
        timeout=600,
    )
    return executable


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=601, help="gemm's size (default 601)")
    parser.add_argument("--keep", type=Path, help="keep the variants and binaries here")
    ns = parser.parse_args(argv)
    reason = oracle.missing_reason()
    if reason or shutil.which("clang-22") is None or shutil.which("taskset") is None:
        print(f"cannot run: {reason or 'clang-22 or taskset not found'}")
        return 2
    directory = ns.keep or Path(tempfile.mkdtemp(prefix="register-tiling-"))
    directory.mkdir(parents=True, exist_ok=True)
    texts = variants(ns.n)
    programs = {}
    for index, (label, text) in enumerate(texts.items()):
        (directory / f"v{index}.mlir").write_text(text)
        programs[label] = build(text, directory, f"v{index}")
    times: dict[str, list[float]] = {label: [] for label in programs}
    sums: dict[str, set[str]] = {label: set() for label in programs}
    for _ in range(ns.rounds):
        for label, executable in programs.items():
            out = subprocess.run(
                ["taskset", "-c", "1", str(executable)],
                capture_output=True,
                text=True,
                check=True,
                timeout=600,
            ).stdout.split()
            times[label].append(float(out[0]))
            sums[label].add(out[1])
    wrong = []
    for label in programs:
        kernel = label.split()[0]
        base = min(times[kernel])
        best = min(times[label])
        median = sorted(times[label])[len(times[label]) // 2]
        print(
            f"{label:52} best {best * 1e3:8.2f} ms  median {median * 1e3:8.2f} ms  "
            f"x{base / best:5.2f}  checksum {','.join(sorted(sums[label]))}"
        )
        if sums[label] != sums[kernel]:
            wrong.append(label)
    if wrong:
        print(f"different results: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
