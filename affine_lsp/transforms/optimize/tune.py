"""Measured tuning: compile a function's candidate texts and time them.

A candidate is the whole function, as text. Each is timed as its user runs it:
the function is compiled on its own (a module of its own, one translation unit),
and a harness in another module calls it through its declaration, so that no
compiler sees where its memrefs come from (as from any caller: no inlining, no
knowledge that its arguments are distinct, which would let clang keep a sum in a
register in the original as well and hide what the schedule does). The
harness's memrefs are `memref.global`s (static shapes only), filled by
`@affine_lsp_init` with the same deterministic values every time; its float and
integer arguments get constants; `@affine_lsp_run` calls it;
`@affine_lsp_checksum` folds every global into one f64. Both modules are lowered
with mlir-opt (`LOWERING`), translated to LLVM IR, and compiled with clang
(`-O3 -march=native`, no link-time optimization) with a small C driver that
times `run` (after a fresh `init` each time) and prints the best time and the
checksum bit for bit. Candidates run interleaved, `rounds` times each, and a
candidate whose checksum differs from the first one's is dropped (it never
should: every candidate was proven).

Nothing here runs unless asked (`affine-lsp optimize --tune`, or the editor's
`optimize.tune` setting): it executes the user's code. Every program gets an
argument list and a timeout; everything is written to a temporary directory
that is removed afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from affine_lsp.ir import FloatType, FuncOp, IndexType, IntegerType, MemRefType

LLVM_BIN = Path("/usr/lib/llvm-22/bin")
LOWERING = (
    "--lower-affine",
    "--convert-scf-to-cf",
    "--expand-strided-metadata",
    "--lower-affine",
    "--convert-arith-to-llvm",
    "--convert-math-to-llvm",
    "--finalize-memref-to-llvm",
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
CLANG_FLAGS = ("-O3", "-march=native")
COMPILE_SECONDS = 120.0
RUN_SECONDS = 120.0

_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
extern void affine_lsp_init(void);
extern void affine_lsp_run(void);
extern double affine_lsp_checksum(void);
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 1;
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    affine_lsp_init();
    double start = now();
    affine_lsp_run();
    double took = now() - start;
    if (took < best) best = took;
  }
  double sum = affine_lsp_checksum();
  unsigned long long bits;
  memcpy(&bits, &sum, sizeof bits);
  printf("%.9f %016llx\n", best, bits);
  return 0;
}
"""


class TuneError(Exception):
    """Tuning cannot go on: `reason` says why, in the user's terms."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Toolchain:
    mlir_opt: Path
    mlir_translate: Path
    clang: Path


def _find(names: tuple[str, ...]) -> Path | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return Path(found)
        candidate = LLVM_BIN / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def toolchain() -> Toolchain:
    """mlir-opt, mlir-translate and clang, or TuneError saying which is missing."""
    opt = _find(("mlir-opt",))
    translate = _find(("mlir-translate",))
    clang = _find(("clang-22", "clang"))
    for tool, name in ((opt, "mlir-opt"), (translate, "mlir-translate"), (clang, "clang-22")):
        if tool is None:
            raise TuneError(f"{name} is not installed (apt-get install mlir-22-tools clang-22)")
    assert opt is not None and translate is not None and clang is not None
    return Toolchain(opt, translate, clang)


# -- the harness -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Program:
    """One candidate: the module of its function and the module of its harness
    (which declares the function), compiled apart."""

    kernel: str
    harness: str


def declaration(function: FuncOp) -> str:
    """`function`'s declaration, for the harness module to call it by."""
    name = (function.symbol or "@f").lstrip("@")
    body = function.body
    arguments = body.entry.arguments if body is not None and body.entry is not None else []
    types = ", ".join(str(argument.type) for argument in arguments)
    return f"func.func private @{name}({types})\n"


def harness(function: FuncOp) -> str:
    """The harness functions for `function` (TuneError if its arguments cannot be
    made up: a dynamic shape, an index argument)."""
    name = (function.symbol or "@f").lstrip("@")
    globals_: list[str] = []
    init: list[str] = []
    checks: list[str] = []
    operands: list[str] = []
    types: list[str] = []
    setup: list[str] = []
    body = function.body
    arguments = body.entry.arguments if body is not None and body.entry is not None else []
    for position, argument in enumerate(arguments):
        type_ = argument.type
        types.append(str(type_))
        if isinstance(type_, MemRefType):
            if type_.shape is None or any(d is None for d in type_.shape) or type_.layout:
                raise TuneError(f"{argument.name} has no static shape to allocate")
            if not isinstance(type_.element, FloatType | IntegerType):
                raise TuneError(f"{argument.name} holds {type_.element}, not numbers")
            symbol = f"@affine_lsp_g{position}"
            globals_.append(f'memref.global "private" {symbol} : {type_} = uninitialized')
            init.append(_fill(symbol, type_, position))
            checks.append(_fold(symbol, type_, position))
            setup.append(f"%a{position} = memref.get_global {symbol} : {type_}")
            operands.append(f"%a{position}")
        elif isinstance(type_, FloatType):
            setup.append(f"%a{position} = arith.constant {1.5 + 0.25 * position} : {type_}")
            operands.append(f"%a{position}")
        elif isinstance(type_, IntegerType):
            setup.append(f"%a{position} = arith.constant {3 + position} : {type_}")
            operands.append(f"%a{position}")
        elif isinstance(type_, IndexType):
            raise TuneError(f"{argument.name} is an index: the sizes to time are unknown")
        else:
            raise TuneError(f"{argument.name} has a type the harness cannot make: {type_}")
    lines = [*globals_]
    lines.append("func.func @affine_lsp_init() {")
    lines += init
    lines.append("  return\n}")
    lines.append("func.func @affine_lsp_run() {")
    lines += [f"  {line}" for line in setup]
    lines.append(f"  func.call @{name}({', '.join(operands)}) : ({', '.join(types)}) -> ()")
    lines.append("  return\n}")
    lines.append("func.func @affine_lsp_checksum() -> f64 {")
    lines.append("  %sum0 = arith.constant 0.0 : f64")
    previous = "%sum0"
    for k, check in enumerate(checks):
        lines.append(check.replace("%IN", previous).replace("%OUT", f"%sum{k + 1}"))
        previous = f"%sum{k + 1}"
    lines.append(f"  return {previous} : f64\n}}")
    return "\n".join(lines) + "\n"


def _loops(shape: tuple[int | None, ...], prefix: str) -> tuple[list[str], list[str], str]:
    """(headers, closers, ivs) of loops over a shape."""
    headers = []
    ivs = []
    for dim, size in enumerate(shape):
        ivs.append(f"%{prefix}{dim}")
        headers.append(f"{'  ' * (dim + 1)}affine.for %{prefix}{dim} = 0 to {size} {{")
    closers = [f"{'  ' * (dim + 1)}}}" for dim in reversed(range(len(shape)))]
    return headers, closers, ", ".join(ivs)


def _fill(symbol: str, type_: MemRefType, position: int) -> str:
    """Deterministic values: ((position + 1) * i0 * 7 + i1 * 3 + ...) mod 17, scaled."""
    assert type_.shape is not None
    headers, closers, ivs = _loops(type_.shape, f"i{position}_")
    indent = "  " * (len(type_.shape) + 1)
    terms = " + ".join(f"d{k} * {7 + 2 * k + position}" for k in range(len(type_.shape))) or "0"
    dims = ", ".join(f"d{k}" for k in range(len(type_.shape)))
    body = [
        f"  %g{position} = memref.get_global {symbol} : {type_}",
        *headers,
        f"{indent}%x{position} = affine.apply affine_map<({dims}) -> (({terms}) mod 17)>({ivs})",
        f"{indent}%xi{position} = arith.index_cast %x{position} : index to i64",
    ]
    element = type_.element
    if isinstance(element, FloatType):
        body += [
            f"{indent}%xf{position} = arith.sitofp %xi{position} : i64 to {element}",
            f"{indent}%k{position} = arith.constant 0.0625 : {element}",
            f"{indent}%v{position} = arith.mulf %xf{position}, %k{position} : {element}",
        ]
    elif str(element) == "i64":
        body.append(f"{indent}%v{position} = arith.addi %xi{position}, %xi{position} : i64")
    else:
        body.append(f"{indent}%v{position} = arith.trunci %xi{position} : i64 to {element}")
    body.append(f"{indent}affine.store %v{position}, %g{position}[{ivs}] : {type_}")
    body += closers
    return "\n".join(body)


def _fold(symbol: str, type_: MemRefType, position: int) -> str:
    """%OUT = %IN + the sum of every element, in order (as f64)."""
    assert type_.shape is not None
    shape = type_.shape
    p = position
    ivs = ", ".join(f"%c{p}_{k}" for k in range(len(shape)))
    element = type_.element
    lines = [f"  %h{p} = memref.get_global {symbol} : {type_}"]
    current = "%IN"
    for dim, size in enumerate(shape):
        indent = "  " * (dim + 1)
        result = "%OUT" if dim == 0 else f"%s{p}_{dim}"
        lines.append(
            f"{indent}{result} = affine.for %c{p}_{dim} = 0 to {size} "
            f"iter_args(%r{p}_{dim} = {current}) -> (f64) {{"
        )
        current = f"%r{p}_{dim}"
    indent = "  " * (len(shape) + 1)
    lines.append(f"{indent}%e{p} = affine.load %h{p}[{ivs}] : {type_}")
    value = f"%e{p}"
    if isinstance(element, FloatType):
        if str(element) in ("f16", "bf16", "f32"):
            lines.append(f"{indent}%ef{p} = arith.extf %e{p} : {element} to f64")
            value = f"%ef{p}"
        elif str(element) != "f64":
            raise TuneError(f"cannot fold {element} into a checksum")
    else:
        lines.append(f"{indent}%ef{p} = arith.sitofp %e{p} : {element} to f64")
        value = f"%ef{p}"
    lines.append(f"{indent}%n{p} = arith.addf {current}, {value} : f64")
    lines.append(f"{indent}affine.yield %n{p} : f64")
    for dim in reversed(range(len(shape))):
        indent = "  " * (dim + 1)
        lines.append(f"{indent}}}")
        if dim:
            lines.append(f"{indent}affine.yield %s{p}_{dim} : f64")
    return "\n".join(lines)


# -- compiling and timing ------------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    seconds: float
    checksum: str


def _run(arguments: list[str], stdin: bytes | None, seconds: float, what: str) -> bytes:
    try:
        done = subprocess.run(
            arguments, input=stdin, capture_output=True, timeout=seconds, check=False
        )
    except subprocess.TimeoutExpired:
        raise TuneError(f"{what} took longer than {seconds:.0f} s") from None
    except OSError as error:
        raise TuneError(f"{what} could not start: {error}") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise TuneError(f"{what} failed: {message[0] if message else done.returncode}")
    return done.stdout


def _lower(tools: Toolchain, module: str, path: Path) -> Path:
    """One module lowered to LLVM IR in `path`."""
    lowered = _run([str(tools.mlir_opt), *LOWERING], module.encode(), COMPILE_SECONDS, "mlir-opt")
    llvm_ir = _run(
        [str(tools.mlir_translate), "--mlir-to-llvmir"], lowered, COMPILE_SECONDS, "mlir-translate"
    )
    path.write_bytes(llvm_ir)
    return path


def build(tools: Toolchain, program: Program, directory: Path, name: str) -> Path:
    """Compile one candidate (its function and its harness apart) with the driver
    into an executable."""
    kernel = _lower(tools, program.kernel, directory / f"{name}.ll")
    harness_ = _lower(tools, program.harness, directory / f"{name}-harness.ll")
    driver = directory / "driver.c"
    if not driver.exists():
        driver.write_text(_DRIVER, encoding="ascii")
    executable = directory / name
    _run(
        [
            str(tools.clang),
            *CLANG_FLAGS,
            "-Wno-override-module",
            str(driver),
            str(harness_),
            str(kernel),
            "-o",
            str(executable),
        ],
        None,
        COMPILE_SECONDS,
        "clang",
    )
    return executable


def time_once(executable: Path, repetitions: int) -> Timing:
    output = _run([str(executable), str(repetitions)], None, RUN_SECONDS, "the timed run")
    parts = output.decode(errors="replace").split()
    if len(parts) != 2:
        raise TuneError("the timed run printed no time")
    return Timing(float(parts[0]), parts[1])


Progress = Callable[[int, int, str], None]
"""(done, total, what is being done now)."""


def measure(
    programs: list[Program],
    rounds: int = 3,
    repetitions: int = 3,
    progress: Progress | None = None,
) -> list[Timing | None]:
    """The best time of each program's `run` (None where it failed or its checksum
    differs from the first program's), runs interleaved."""
    tools = toolchain()
    total = len(programs) * (1 + rounds)
    done = 0
    with tempfile.TemporaryDirectory(prefix="affine-lsp-tune-") as scratch:
        directory = Path(scratch)
        executables: list[Path | None] = []
        for index, program in enumerate(programs):
            if progress is not None:
                progress(done, total, f"compiling candidate {index + 1}")
            try:
                executables.append(build(tools, program, directory, f"candidate{index}"))
            except TuneError:
                if index == 0:
                    raise
                executables.append(None)
            done += 1
        best: list[Timing | None] = [None] * len(programs)
        for round_ in range(rounds):
            for index, executable in enumerate(executables):
                if progress is not None:
                    progress(done, total, f"timing candidate {index + 1} (round {round_ + 1})")
                done += 1
                if executable is None:
                    continue
                try:
                    timing = time_once(executable, repetitions)
                except TuneError:
                    if index == 0:
                        raise
                    executables[index] = None
                    best[index] = None
                    continue
                previous = best[index]
                if previous is None or timing.seconds < previous.seconds:
                    best[index] = timing
        if progress is not None:
            progress(total, total, "done")
    reference = best[0]
    if reference is None:
        raise TuneError("the original could not be timed")
    return [
        timing if timing is not None and timing.checksum == reference.checksum else None
        for timing in best
    ]
