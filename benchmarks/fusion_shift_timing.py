"""Time jacobi-1d and jacobi-2d with their two sweeps fused with a shift, against the
original: both lowered with mlir-opt, translated to LLVM IR, compiled with
`clang-22 -O3 -march=native`, run interleaved on one core (`taskset -c CORE`),
checksums compared bit for bit. Shifted fusion alone is expected near 1x: it
makes the time loop's band fusable for time tiling, which is where the speed is.

    python benchmarks/fusion_shift_timing.py [--runs 5] [--core 1]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.testing import oracle  # noqa: E402
from affine_lsp.transforms.fusion import fuse_all, shift_text  # noqa: E402

JACOBI_1D = """func.func @kernel(%A: memref<{n}xf64>, %B: memref<{n}xf64>) {{
  %c3 = arith.constant 0.33333 : f64
  affine.for %t = 0 to {steps} {{
    affine.for %i = 1 to {last} {{
      %a = affine.load %A[%i - 1] : memref<{n}xf64>
      %b = affine.load %A[%i] : memref<{n}xf64>
      %c = affine.load %A[%i + 1] : memref<{n}xf64>
      %s = arith.addf %a, %b : f64
      %s2 = arith.addf %s, %c : f64
      %r = arith.mulf %s2, %c3 : f64
      affine.store %r, %B[%i] : memref<{n}xf64>
    }}
    affine.for %i = 1 to {last} {{
      %a = affine.load %B[%i - 1] : memref<{n}xf64>
      %b = affine.load %B[%i] : memref<{n}xf64>
      %c = affine.load %B[%i + 1] : memref<{n}xf64>
      %s = arith.addf %a, %b : f64
      %s2 = arith.addf %s, %c : f64
      %r = arith.mulf %s2, %c3 : f64
      affine.store %r, %A[%i] : memref<{n}xf64>
    }}
  }}
  return
}}
"""

JACOBI_2D = """func.func @kernel(%A: memref<{n}x{n}xf64>, %B: memref<{n}x{n}xf64>) {{
  %cf = arith.constant 0.2 : f64
  affine.for %t = 0 to {steps} {{
    affine.for %i = 1 to {last} {{
      affine.for %j = 1 to {last} {{
        %c = affine.load %A[%i, %j] : memref<{n}x{n}xf64>
        %w = affine.load %A[%i, %j - 1] : memref<{n}x{n}xf64>
        %e = affine.load %A[%i, %j + 1] : memref<{n}x{n}xf64>
        %s = affine.load %A[%i + 1, %j] : memref<{n}x{n}xf64>
        %o = affine.load %A[%i - 1, %j] : memref<{n}x{n}xf64>
        %0 = arith.addf %c, %w : f64
        %1 = arith.addf %0, %e : f64
        %2 = arith.addf %1, %s : f64
        %3 = arith.addf %2, %o : f64
        %4 = arith.mulf %3, %cf : f64
        affine.store %4, %B[%i, %j] : memref<{n}x{n}xf64>
      }}
    }}
    affine.for %i = 1 to {last} {{
      affine.for %j = 1 to {last} {{
        %c = affine.load %B[%i, %j] : memref<{n}x{n}xf64>
        %w = affine.load %B[%i, %j - 1] : memref<{n}x{n}xf64>
        %e = affine.load %B[%i, %j + 1] : memref<{n}x{n}xf64>
        %s = affine.load %B[%i + 1, %j] : memref<{n}x{n}xf64>
        %o = affine.load %B[%i - 1, %j] : memref<{n}x{n}xf64>
        %0 = arith.addf %c, %w : f64
        %1 = arith.addf %0, %e : f64
        %2 = arith.addf %1, %s : f64
        %3 = arith.addf %2, %o : f64
        %4 = arith.mulf %3, %cf : f64
        affine.store %4, %A[%i, %j] : memref<{n}x{n}xf64>
      }}
    }}
  }}
  return
}}
"""

TIMEOUT = 600.0
"""Seconds any one tool run (translate, compile, a timed binary) may take."""

MAIN = """func.func private @rtclock() -> f64
func.func private @printF64(f64)
func.func private @printNewline()
func.func @main() -> i32 {{
  %A = memref.alloc() : {type}
  %B = memref.alloc() : {type}
{fill}
  %start = func.call @rtclock() : () -> f64
  func.call @kernel(%A, %B) : ({type}, {type}) -> ()
  %end = func.call @rtclock() : () -> f64
  %seconds = arith.subf %end, %start : f64
  %zero = arith.constant 0.0 : f64
{sum}
  func.call @printF64(%seconds) : (f64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printF64(%total) : (f64) -> ()
  func.call @printNewline() : () -> ()
  %status = arith.constant 0 : i32
  return %status : i32
}}
"""


def driver(dims: int, n: int) -> str:
    kind = f"memref<{'x'.join([str(n)] * dims)}xf64>"
    ivs = [f"%x{d}" for d in range(dims)]
    fill = [f"  affine.for {iv} = 0 to {n} {{" for iv in ivs]
    fill.append(f"    %k = arith.index_cast {ivs[-1]} : index to i64")
    fill.append("    %m = arith.constant 13 : i64")
    fill.append("    %q = arith.remsi %k, %m : i64")
    fill.append("    %f = arith.sitofp %q : i64 to f64")
    fill.append(f"    affine.store %f, %A[{', '.join(ivs)}] : {kind}")
    fill.append(f"    affine.store %f, %B[{', '.join(ivs)}] : {kind}")
    fill += ["  }"] * dims
    sums = ["  %acc = memref.alloc() : memref<1xf64>"]
    sums.append("  affine.store %zero, %acc[0] : memref<1xf64>")
    sums += [f"  affine.for {iv} = 0 to {n} {{" for iv in ivs]
    sums.append(f"    %v = affine.load %A[{', '.join(ivs)}] : {kind}")
    sums.append("    %a = affine.load %acc[0] : memref<1xf64>")
    sums.append("    %s = arith.addf %a, %v : f64")
    sums.append("    affine.store %s, %acc[0] : memref<1xf64>")
    sums += ["  }"] * dims
    sums.append("  %total = affine.load %acc[0] : memref<1xf64>")
    return MAIN.format(type=kind, fill="\n".join(fill), sum="\n".join(sums))


def build(text: str, workdir: Path, name: str) -> Path:
    tools = oracle.toolchain()
    lowered = oracle.lower(text, timeout=600)
    if lowered.returncode != 0:
        raise SystemExit(f"{name}: mlir-opt failed: {lowered.stderr[:2000]}")
    translate = Path(tools.mlir_opt).with_name("mlir-translate")
    ir = subprocess.run(
        [str(translate), "--mlir-to-llvmir"],
        input=lowered.stdout,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    if ir.returncode != 0:
        raise SystemExit(f"{name}: mlir-translate failed: {ir.stderr[:2000]}")
    source = workdir / f"{name}.ll"
    source.write_text(ir.stdout)
    binary = workdir / name
    libraries = [str(lib) for lib in tools.runtime_libs]
    directories = sorted({str(Path(lib).parent) for lib in libraries})
    command = ["clang-22", "-O3", "-march=native", str(source), "-o", str(binary)]
    command += libraries + [f"-Wl,-rpath,{d}" for d in directories]
    subprocess.run(command, check=True, timeout=TIMEOUT)
    return binary


def run(binary: Path, core: int) -> tuple[float, str]:
    done = subprocess.run(
        ["taskset", "-c", str(core), str(binary)],
        capture_output=True,
        text=True,
        check=True,
        timeout=TIMEOUT,
    )
    seconds, checksum = done.stdout.split()[:2]
    return float(seconds), checksum


def _shifted(data: bytes, depth: int) -> tuple[tuple[int, ...], str] | None:
    """The two sweeps fused with a shift at `depth` (as `fuse --line N --depth D`)."""
    from affine_lsp.ir import build_module
    from affine_lsp.syntax import SourceDocument
    from affine_lsp.transforms.fusion import PairFusion, functions, loops_in

    model = build_module(SourceDocument(data).tree.root_node)
    function = next(functions(model))
    assert function.body is not None and function.body.entry is not None
    (time_loop,) = loops_in(function.body.entry)
    assert time_loop.body is not None and time_loop.body.entry is not None
    first, second = loops_in(time_loop.body.entry)
    candidate = PairFusion(data, model, function, first, second).shifted(depth)
    if candidate is None or candidate.new_text is None:
        return None
    return candidate.shift, candidate.new_text.decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--core", type=int, default=1)
    args = parser.parse_args()
    kernels = {
        "jacobi-1d": (JACOBI_1D.format(n=400_000, last=399_999, steps=1000), 1, 400_000),
        "jacobi-2d": (JACOBI_2D.format(n=1300, last=1299, steps=200), 2, 1300),
    }
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        for name, (kernel, dims, n) in kernels.items():
            fused = fuse_all(kernel.encode())
            variants = {
                f"fuse --all (depth {f.depth}, {shift_text(f.shift)})": fused.text.decode()
                for f in fused.fusions[:1]
            }
            for depth in range(1, dims + 1):  # fuse --line N --depth D
                found = _shifted(kernel.encode(), depth)
                if found is not None:
                    variants[f"fuse --line, depth {depth} ({shift_text(found[0])})"] = found[1]
            main_text = driver(dims, n)
            binaries = {"original": build(kernel + main_text, workdir, f"{name}-original")}
            for k, (label, text) in enumerate(variants.items()):
                binaries[label] = build(text + main_text, workdir, f"{name}-{k}")
            times: dict[str, list[float]] = {label: [] for label in binaries}
            sums = set()
            for _ in range(args.runs):
                for label, binary in binaries.items():
                    seconds, checksum = run(binary, args.core)
                    times[label].append(seconds)
                    sums.add(checksum)
            median = {label: statistics.median(values) for label, values in times.items()}
            same = "same checksum" if len(sums) == 1 else f"CHECKSUMS DIFFER {sorted(sums)}"
            print(f"{name}: original {median['original']:.3f} s ({same})")
            for label in variants:
                ratio = median["original"] / median[label]
                print(f"  {label}: {median[label]:.3f} s, {ratio:.2f}x the original's speed")
        print(f"(medians of {args.runs} runs, interleaved, on core {args.core})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
