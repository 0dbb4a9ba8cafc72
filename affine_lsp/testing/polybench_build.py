"""Building, running and timing the PolyBench kernels of `polybench`, in variants.

Every variant starts from the same kernel text. It may rewrite the MLIR (our recipe, MLIR's
affine passes, `affine-lsp optimize`); the result is lowered by mlir-opt, translated to LLVM
IR by mlir-translate, compiled by clang with the variant's flags (Polly's among them) and
linked with the driver of `polybench_driver`. `c-reference` compiles the driver calling the
C reference instead. Every artifact is cached under a hash of everything it is made from
(tools included; a recipe's result under a hash of affine-lsp's own sources), written
atomically, so that concurrent builds are safe and a second run rebuilds nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

from affine_lsp.testing import oracle
from affine_lsp.testing.polybench import (
    STOPPING_SIGNALS,
    Kernel,
    Step,
    StepOutcome,
    command_available,
    run_steps,
    transient,
)
from affine_lsp.testing.polybench_driver import SignatureError, driver_source, signature

LOWERING: tuple[str, ...] = (
    "--lower-affine",
    "--convert-scf-to-cf",
    "--convert-math-to-llvm",
    "--convert-arith-to-llvm",
    "--finalize-memref-to-llvm",
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
"""mlir-opt's lowering of every variant's kernel to the LLVM dialect."""

VECTOR_LOWERING: tuple[str, ...] = (
    "--lower-affine",
    "--convert-vector-to-scf",
    "--lower-affine",
    "--convert-scf-to-cf",
    "--convert-vector-to-llvm",
    "--convert-math-to-llvm",
    "--convert-ub-to-llvm",
    "--convert-arith-to-llvm",
    "--finalize-memref-to-llvm",
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--convert-ub-to-llvm",
    "--reconcile-unrealized-casts",
)
"""The lowering after MLIR's super-vectorizer (vector transfers, whose lowering leaves
`affine.apply` behind, hence a second `--lower-affine`; `ub.poison`)."""

MLIR_PASSES = (
    "--pass-pipeline=builtin.module(func.func("
    "affine-loop-fusion,affine-loop-tile{tile-size=32},affine-loop-unroll-jam,"
    "affine-scalrep,affine-super-vectorize{virtual-vector-size=8}))",
)
"""MLIR 22's affine passes, as the mlir-passes variant runs them before lowering."""

O3 = ("-O3", "-march=native")
POLLY = ("-mllvm", "-polly")
POLLY_BEST = (
    *POLLY,
    *("-mllvm", "-polly-process-unprofitable"),
    *("-mllvm", "-polly-invariant-load-hoisting"),
)
"""Polly's flags of the polly-best variant; each kernel may add its own (`polly-best:`)."""

DRIVER_FLAGS = ("-O2", "-ffp-contract=off", "-std=c11", "-w")
"""The driver and the C reference compiled plainly: no FMA contraction, no fast math."""

VARIANTS = (
    "original",
    "polly",
    "polly-best",
    "mlir-passes",
    "recipe",
    "optimize",
    "optimize-tune",
    "c-reference",
)
DEFAULT_VARIANTS = VARIANTS[:-1]
"""All but `c-reference` (the C reference at -O2), which is built on request."""

CACHE_DIR = Path(tempfile.gettempdir()) / "affine-lsp-polybench"
CACHE_VERSION = "2"
"""Part of every key: bumped when what this module writes (or its messages) changes."""
TOOL_TIMEOUT = 600.0
RUN_TIMEOUT = 600.0
_CHECKSUM = re.compile(r"^checksum (\S+) ([0-9a-f]{16})$", re.MULTILINE)
_TIME = re.compile(r"^time ([0-9.eE+-]+)$", re.MULTILINE)


class BuildError(RuntimeError):
    """A tool failed; the message says which, with its first lines of output."""


class Unavailable(RuntimeError):
    """A variant this checkout cannot build (`affine-lsp optimize` before it exists)."""


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True)
class Tools:
    mlir_opt: Path
    mlir_translate: Path
    clang: Path
    taskset: Path | None


def find_clang() -> Path | None:
    """clang-22 on PATH, else LLVM 22's clang."""
    found = shutil.which("clang-22")
    if found:
        return Path(found)
    candidate = Path("/usr/lib/llvm-22/bin/clang")
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def find_tools() -> Tools | str:
    """The tools, or why they cannot be used (with how to install them)."""
    opt = oracle.find_tool("mlir-opt")
    if opt is None:
        return f"mlir-opt not found: {oracle.INSTALL_HINT}"
    translate = oracle.find_tool("mlir-translate")
    if translate is None:
        return f"mlir-translate not found: {oracle.INSTALL_HINT}"
    clang = find_clang()
    if clang is None:
        return "clang-22 not found: apt-get install -y clang-22 (it brings Polly)"
    taskset = shutil.which("taskset")
    return Tools(opt, translate, clang, Path(taskset) if taskset else None)


def _identity(path: Path) -> str:
    stat = path.stat()
    return f"{path}:{stat.st_size}:{stat.st_mtime_ns}"


@cache
def package_fingerprint() -> str:
    """A hash of affine-lsp's own sources: a recipe's result depends on them."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.c")]):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _run(
    argv: Sequence[str | Path], what: str, stdin: str | None = None, timeout: float = TOOL_TIMEOUT
) -> str:
    try:
        done = subprocess.run(
            [str(a) for a in argv],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BuildError(f"{what} timed out after {timeout:.0f} s") from None
    if -done.returncode in STOPPING_SIGNALS:
        raise BuildError(f"{what} was stopped ({_signal_name(done.returncode)})")
    if done.returncode < 0 or "Stack dump:" in done.stderr:
        raise BuildError(f"{what} crashed ({_signal_name(done.returncode)})")
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()][:6]
        raise BuildError(f"{what} failed (exit {done.returncode}): " + " | ".join(lines))
    return done.stdout


def _signal_name(returncode: int) -> str:
    if returncode >= 0:
        return f"exit {returncode}, a stack dump"
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


# --------------------------------------------------------------------------- the cache


class Cache:
    """Files named by the hash of what they are made from. A tool's failure is kept too
    (the same input fails the same way), but not a timeout or a tool stopped from
    outside (`transient`)."""

    def __init__(self, root: Path = CACHE_DIR) -> None:
        self.root = root

    @staticmethod
    def key(*parts: str | bytes) -> str:
        digest = hashlib.sha256(CACHE_VERSION.encode())
        for part in parts:
            data = part.encode() if isinstance(part, str) else part
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        return digest.hexdigest()[:32]

    def path(self, key: str, suffix: str) -> Path:
        return self.root / key[:2] / (key + suffix)

    def file(self, key: str, suffix: str, make: Callable[[Path], object]) -> Path:
        """The cached file, made by `make(path)` if missing."""
        path = self.path(key, suffix)
        failure = path.with_name(path.name + ".error")
        if path.exists():
            return path
        if failure.exists():
            raise BuildError(failure.read_text(encoding="utf-8"))
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = _scratch(path)
        try:
            make(scratch)
            os.replace(scratch, path)
        except BuildError as error:
            if not transient(str(error)):
                self.write(failure, str(error))
            raise
        finally:
            scratch.unlink(missing_ok=True)
        return path

    def text(self, key: str, suffix: str, make: Callable[[], str]) -> Path:
        return self.file(key, suffix, lambda out: out.write_text(make(), encoding="utf-8"))

    @staticmethod
    def write(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = _scratch(path)
        scratch.write_text(text, encoding="utf-8")
        os.replace(scratch, path)


def _scratch(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")


# --------------------------------------------------------------------------- builds


@dataclass
class Build:
    """One variant of one kernel: `ok` (an executable), `failed` or `unavailable`."""

    kernel: str
    variant: str
    status: str = "ok"
    message: str = ""
    exe: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    outcomes: list[StepOutcome] = field(default_factory=list)


class Builder:
    """Builds variants of kernels through the cache (safe to call from several threads)."""

    def __init__(
        self, tools: Tools, cache: Cache | None = None, python: str = sys.executable
    ) -> None:
        self.tools = tools
        self.cache = cache or Cache()
        self.python = python

    def build(self, kernel: Kernel, variant: str, sizes: dict[str, int] | None = None) -> Build:
        """Build one variant; a failure is a Build with the reason, never an exception."""
        sizes = dict(kernel.sizes if sizes is None else sizes)
        build = Build(kernel.name, variant)
        try:
            text = kernel.text(sizes)
            driver = self.driver(kernel, sizes, text)
            build.files["driver.c"] = driver
            if variant == "c-reference":
                obj = self.compiled(driver, (*DRIVER_FLAGS, "-DREFERENCE"), "clang (reference)")
                build.exe = self.linked([obj])
            else:
                driver_obj = self.compiled(driver, DRIVER_FLAGS, "clang (driver)")
                mlir = self.mlir_text(kernel, variant, text, build)
                build.files["kernel.mlir"] = self.cache.text(
                    self.cache.key("text", mlir), ".mlir", lambda: mlir
                )
                ll = self.lowered(mlir, vector=variant == "mlir-passes")
                build.files["kernel.ll"] = ll
                obj = self.compiled(ll, self.flags(kernel, variant), "clang (kernel)")
                build.exe = self.linked([obj, driver_obj])
            build.files["exe"] = build.exe
        except Unavailable as missing:
            build.status, build.message = "unavailable", str(missing)
        except (BuildError, SignatureError, OSError, ValueError) as error:
            build.status, build.message = "failed", str(error)
        return build

    def flags(self, kernel: Kernel, variant: str) -> tuple[str, ...]:
        """clang's flags for the kernel's LLVM IR."""
        if variant == "polly":
            return (*O3, *POLLY)
        if variant == "polly-best":
            return (*O3, *POLLY_BEST, *kernel.polly_best)
        return O3

    def mlir_text(self, kernel: Kernel, variant: str, text: str, build: Build) -> str:
        """The kernel's MLIR as the variant has it before lowering."""
        if variant == "mlir-passes":
            argv: list[str | Path] = [self.tools.mlir_opt, *MLIR_PASSES]
            key = self.cache.key("mlir-passes", _identity(self.tools.mlir_opt), *MLIR_PASSES, text)
            made = self.cache.text(
                key, ".mlir", lambda: _run(argv, "mlir-opt (MLIR's passes)", text)
            )
            return made.read_text(encoding="utf-8")
        if variant == "recipe":
            return self.steps_text(text, kernel.recipe, build)
        if variant in ("optimize", "optimize-tune"):
            if not command_available("optimize", self.python):
                raise Unavailable("affine-lsp optimize is not available in this checkout")
            tune = ("--tune",) if variant == "optimize-tune" else ()
            return self.steps_text(text, (Step("optimize", None, ("--all", *tune)),), build)
        return text

    def steps_text(self, text: str, steps: Sequence[Step], build: Build) -> str:
        """The text after the steps (their outcomes into `build`); a result is cached unless
        a step timed out or was stopped from outside (`transient`)."""
        key = self.cache.key("steps", package_fingerprint(), text, *map(str, steps))
        path = self.cache.path(key, ".json")
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            build.outcomes = [StepOutcome(**o) for o in data["outcomes"]]
            return str(data["text"])
        result = run_steps(text, steps, python=self.python)
        build.outcomes = result.outcomes
        if not any(transient(o.message) for o in result.outcomes):
            outcomes = [asdict(o) for o in result.outcomes]
            self.cache.write(path, json.dumps({"text": result.text, "outcomes": outcomes}))
        return result.text

    def driver(self, kernel: Kernel, sizes: dict[str, int], text: str) -> Path:
        source = driver_source(
            kernel.function, signature(text, kernel.function), sizes, kernel.c_path, kernel.calls
        )
        key = self.cache.key("driver.c", source, kernel.c_path.read_bytes())
        return self.cache.text(key, ".c", lambda: source)

    def lowered(self, mlir: str, vector: bool) -> Path:
        passes = VECTOR_LOWERING if vector else LOWERING
        tools = self.tools
        key = self.cache.key(
            "ll", _identity(tools.mlir_opt), _identity(tools.mlir_translate), *passes, mlir
        )

        def make() -> str:
            llvm_dialect = _run([tools.mlir_opt, *passes], "mlir-opt (lowering)", mlir)
            translate: list[str | Path] = [tools.mlir_translate, "--mlir-to-llvmir"]
            return _run(translate, "mlir-translate", llvm_dialect)

        return self.cache.text(key, ".ll", make)

    def compiled(self, source: Path, flags: Sequence[str], what: str) -> Path:
        key = self.cache.key("o", _identity(self.tools.clang), *flags, source.read_bytes())
        argv: list[str | Path] = [self.tools.clang, *flags, "-Wno-override-module", "-c", source]
        return self.cache.file(key, ".o", lambda out: _run([*argv, "-o", out], what))

    def linked(self, objects: Sequence[Path]) -> Path:
        # Objects are named by the hash of their contents, so their names are their identity.
        key = self.cache.key("exe", _identity(self.tools.clang), *map(str, objects))
        argv: list[str | Path] = [self.tools.clang, *objects, "-lm"]
        return self.cache.file(key, ".exe", lambda out: _run([*argv, "-o", out], "clang (link)"))


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class Run:
    seconds: float
    checksums: dict[str, str]


def run(exe: Path, tools: Tools, cpu: int | None = None, timeout: float = RUN_TIMEOUT) -> Run:
    """Run a driver (pinned to `cpu` with taskset when given) and read what it prints."""
    argv: list[str | Path] = [exe]
    if cpu is not None and tools.taskset is not None:
        argv = [tools.taskset, "-c", str(cpu), exe]
    output = _run(argv, exe.name, timeout=timeout)
    seconds = _TIME.search(output)
    if seconds is None:
        raise BuildError(f"{exe.name} printed no time: {output[:200]!r}")
    return Run(float(seconds.group(1)), dict(_CHECKSUM.findall(output)))


@dataclass
class Measurement:
    """The runs of one build: times, checksums, and how they differ from the reference's."""

    build: Build
    times: list[float] = field(default_factory=list)
    checksums: dict[str, str] = field(default_factory=dict)
    wrong: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def median(self) -> float | None:
        if not self.times:
            return None
        ordered = sorted(self.times)
        middle = len(ordered) // 2
        if len(ordered) % 2:
            return ordered[middle]
        return (ordered[middle - 1] + ordered[middle]) / 2

    @property
    def valid(self) -> bool:
        """Built, ran, and computed what the reference computed."""
        return bool(self.times) and not self.wrong and not self.error


def measure_interleaved(
    builds: Sequence[Build],
    tools: Tools,
    repeat: int,
    cpu: int | None,
    reference: str = "original",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Measurement]:
    """Run the builds of one kernel round-robin, `repeat` rounds (each round starting one
    variant further), and compare every run's checksums with the first run of `reference`
    (without one, with the first build that ran)."""
    results = {b.variant: Measurement(b) for b in builds}
    runnable = [b for b in builds if b.exe is not None]
    for round_ in range(repeat):
        shift = round_ % len(runnable) if runnable else 0
        for build in runnable[shift:] + runnable[:shift]:
            measurement = results[build.variant]
            if measurement.error or build.exe is None:
                continue
            if progress:
                progress(f"{build.kernel} {build.variant} run {round_ + 1}/{repeat}")
            try:
                done = run(build.exe, tools, cpu)
            except BuildError as error:
                measurement.error = str(error)
                continue
            measurement.times.append(done.seconds)
            if not measurement.checksums:
                measurement.checksums = done.checksums
            elif done.checksums != measurement.checksums:
                measurement.wrong.append("its checksums differ from one run to the next")
    expected = results.get(reference)
    if expected is None or not expected.checksums:
        expected = next((m for m in results.values() if m.checksums), None)
    if expected is not None:
        for measurement in results.values():
            if measurement is not expected and measurement.checksums:
                _compare(expected, measurement)
    return results


def _compare(expected: Measurement, measurement: Measurement) -> None:
    names = expected.checksums.keys() | measurement.checksums.keys()
    differ = sorted(n for n in names if expected.checksums.get(n) != measurement.checksums.get(n))
    if differ:
        arrays = ", ".join(differ)
        measurement.wrong.append(f"{arrays} differ from {expected.build.variant}'s")


def geometric_mean(values: Sequence[float]) -> float | None:
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))
