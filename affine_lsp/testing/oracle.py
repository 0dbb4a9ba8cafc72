"""An execution oracle built on MLIR's own tools.

The oracle answers three questions about MLIR text: does it verify (``verify``), what does it
print when lowered to LLVM and run (``lower_and_run``), and what does MLIR's
``affine-loop-fusion`` make of it (``run_mlir_fusion``).  ``equivalent`` combines them into a
verdict on whether a transformed program still prints exactly what the original printed.

Every subprocess gets an argument list (never a shell) and a timeout.  Programs travel through
standard input and output, so no temporary files are left behind.
"""

from __future__ import annotations

import difflib
import enum
import functools
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ENV_BIN = "AFFINE_LSP_MLIR_BIN"
"""Environment variable naming the directory that holds ``mlir-opt`` and ``mlir-runner``."""

ENV_LIB = "AFFINE_LSP_MLIR_LIB"
"""Optional environment variable naming the directory that holds the runner's runtime libraries."""

FALLBACK_BIN_DIRS = (Path("/usr/lib/llvm-22/bin"),)
FALLBACK_LIB_DIRS = (Path("/usr/lib/llvm-22/lib"),)
RUNTIME_LIBS = ("libmlir_runner_utils", "libmlir_c_runner_utils")
INSTALL_HINT = "apt-get install -y mlir-22-tools"

LOWERING_PASSES: tuple[str, ...] = (
    "--lower-affine",
    "--convert-scf-to-cf",
    "--expand-strided-metadata",
    "--lower-affine",
    "--convert-arith-to-llvm",
    "--finalize-memref-to-llvm",
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
"""mlir-opt passes taking affine/scf/memref/arith/func programs to the LLVM dialect.

``expand-strided-metadata`` is needed once ``memref.subview``/``memref.copy`` style ops appear and
leaves ``affine.apply`` behind, hence the second ``lower-affine``.
"""

DEFAULT_TIMEOUT = 60.0
_ADDRESS = re.compile(r"base@ = 0x[0-9a-fA-F]+")
_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\n]*?):(?P<line>\d+):(?P<col>\d+): (?P<severity>error|warning|note|remark): "
    r"(?P<message>.*)$",
    re.MULTILINE,
)
_CRASH_MARKERS = ("PLEASE submit a bug report", "Stack dump:", "Assertion `", "LLVM ERROR:")


class ToolNotFound(RuntimeError):
    """Raised when mlir-opt, mlir-runner or the runtime libraries cannot be located."""


# --------------------------------------------------------------------------- locating tools


@dataclass(frozen=True)
class Toolchain:
    """Absolute paths of the MLIR executables and runtime libraries the oracle uses."""

    mlir_opt: Path
    mlir_runner: Path
    runtime_libs: tuple[Path, ...]


def _bin_dirs() -> list[Path]:
    override = os.environ.get(ENV_BIN)
    if override:
        return [Path(override)]
    return []


def find_tool(name: str) -> Path | None:
    """Locate an MLIR executable: ``$AFFINE_LSP_MLIR_BIN`` alone if set, else PATH, else LLVM 22."""
    override = _bin_dirs()
    if override:
        candidate = override[0] / name
        return candidate if _is_executable(candidate) else None
    on_path = shutil.which(name)
    if on_path:
        return Path(on_path)
    for directory in FALLBACK_BIN_DIRS:
        candidate = directory / name
        if _is_executable(candidate):
            return candidate
    return None


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _lib_dirs(tool: Path | None) -> list[Path]:
    dirs: list[Path] = []
    if os.environ.get(ENV_LIB):
        dirs.append(Path(os.environ[ENV_LIB]))
    if tool is not None:
        dirs.append(tool.resolve().parent.parent / "lib")
    dirs.extend(FALLBACK_LIB_DIRS)
    return dirs


def find_runtime_lib(stem: str, tool: Path | None = None) -> Path | None:
    """Find ``<stem>.so`` or a versioned ``<stem>.so.N`` next to the tools or in LLVM 22."""
    for directory in _lib_dirs(tool):
        exact = directory / f"{stem}.so"
        if exact.is_file():
            return exact
        versioned = sorted(directory.glob(f"{stem}.so.*")) if directory.is_dir() else []
        if versioned:
            return versioned[-1]
    return None


def missing_reason() -> str | None:
    """Say why the toolchain is unusable, or return ``None`` when everything is present."""
    opt = find_tool("mlir-opt")
    if opt is None:
        return f"mlir-opt not found: {INSTALL_HINT}"
    if find_tool("mlir-runner") is None:
        return f"mlir-runner not found: {INSTALL_HINT}"
    for stem in RUNTIME_LIBS:
        if find_runtime_lib(stem, opt) is None:
            return f"{stem}.so not found: {INSTALL_HINT}"
    return None


@functools.lru_cache(maxsize=1)
def toolchain() -> Toolchain:
    """Return the located toolchain; raise ``ToolNotFound`` with an install hint otherwise."""
    reason = missing_reason()
    if reason is not None:
        raise ToolNotFound(reason)
    opt = find_tool("mlir-opt")
    runner = find_tool("mlir-runner")
    assert opt is not None and runner is not None
    libs = tuple(find_runtime_lib(stem, opt) for stem in RUNTIME_LIBS)
    return Toolchain(opt, runner, tuple(lib for lib in libs if lib is not None))


# --------------------------------------------------------------------------- subprocesses


@dataclass(frozen=True)
class Completed:
    """Outcome of one subprocess run."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def crashed(self) -> bool:
        """True when the process died on a signal or printed an LLVM crash banner."""
        if self.timed_out:
            return False
        return self.returncode < 0 or any(marker in self.stderr for marker in _CRASH_MARKERS)


def run_tool(argv: Sequence[str | Path], stdin: str, timeout: float) -> Completed:
    """Run a tool on `stdin` and capture its output; a timeout gives `timed_out`, not an error."""
    try:
        proc = subprocess.run(
            [str(arg) for arg in argv],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return Completed(-1, _decode(exc.stdout), _decode(exc.stderr), timed_out=True)
    return Completed(proc.returncode, proc.stdout, proc.stderr)


def _decode(data: str | bytes | None) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="replace")
    return data


# --------------------------------------------------------------------------- diagnostics

_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (?P<func>.+?) \(", re.MULTILINE)
_INFRA = (
    "llvm::sys::",
    "AsmPrinter",
    "OpAsmPrinter",
    "Operation::print",
    "Diagnostic",
    "emitError",
    "emitOpError",
    "emitRemark",
    "InFlightDiagnostic",
)


def crash_summary(stderr: str) -> str:
    """A short signature of an LLVM/MLIR crash: assertion text or the first telling frame."""
    for line in stderr.splitlines():
        if "Assertion `" in line or "LLVM ERROR:" in line:
            return line.strip()[:300]
    for m in _FRAME.finditer(stderr):
        func = m["func"]
        if "mlir::" in func and not any(marker in func for marker in _INFRA):
            return "crash in " + func[:250]
    return "crash (no symbolised frame)"


@dataclass(frozen=True)
class Diagnostic:
    """One mlir-opt diagnostic, positions 1-based as MLIR prints them."""

    line: int
    column: int
    severity: str
    message: str


def parse_diagnostics(stderr: str) -> list[Diagnostic]:
    """Extract ``file:line:col: severity: message`` diagnostics from mlir-opt's stderr."""
    return [
        Diagnostic(int(m["line"]), int(m["col"]), m["severity"], m["message"].strip())
        for m in _DIAGNOSTIC.finditer(stderr)
    ]


@dataclass(frozen=True)
class VerifyResult:
    """Whether mlir-opt parsed and verified a program, with what it said."""

    ok: bool
    diagnostics: list[Diagnostic]
    stderr: str
    timed_out: bool = False

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


def verify(text: str, timeout: float = DEFAULT_TIMEOUT) -> VerifyResult:
    """Parse and verify ``text`` with mlir-opt (no passes); report its diagnostics."""
    tools = toolchain()
    done = run_tool([tools.mlir_opt, "-", "-o", os.devnull], text, timeout)
    ok = done.returncode == 0 and not done.timed_out
    return VerifyResult(ok, parse_diagnostics(done.stderr), done.stderr, done.timed_out)


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class RunResult:
    """What lowering and running a program produced.

    ``stage`` names the step that ended the attempt: ``"lower"`` when mlir-opt rejected the
    program or crashed, ``"run"`` otherwise.
    """

    stdout: str
    stderr: str
    returncode: int
    timed_out: bool
    stage: str = "run"

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def describe(self) -> str:
        """A one-line summary of a failure, for verdicts and reports."""
        if self.timed_out:
            return f"timed out during {self.stage}"
        if self.ok:
            return "ok"
        first = next((ln for ln in self.stderr.splitlines() if ln.strip()), "")
        return f"{self.stage} failed (exit {self.returncode}): {first[:200]}"


def lower(text: str, timeout: float = DEFAULT_TIMEOUT) -> Completed:
    """Lower an affine/scf/memref/arith/func program to the LLVM dialect."""
    tools = toolchain()
    return run_tool([tools.mlir_opt, "-", *LOWERING_PASSES], text, timeout)


def lower_and_run(text: str, entry: str = "main", timeout: float = DEFAULT_TIMEOUT) -> RunResult:
    """Lower ``text`` and JIT-run its ``entry`` function (which must return nothing)."""
    lowered = lower(text, timeout)
    if not lowered.returncode == 0 or lowered.timed_out:
        return RunResult(
            lowered.stdout, lowered.stderr, lowered.returncode, lowered.timed_out, "lower"
        )
    tools = toolchain()
    libs = ",".join(str(lib) for lib in tools.runtime_libs)
    argv: list[str | Path] = [
        tools.mlir_runner,
        "-",
        "-e",
        entry,
        "-entry-point-result=void",
        f"-shared-libs={libs}",
    ]
    done = run_tool(argv, lowered.stdout, timeout)
    return RunResult(done.stdout, done.stderr, done.returncode, done.timed_out, "run")


# --------------------------------------------------------------------------- MLIR's fusion


@dataclass(frozen=True)
class FusionResult:
    """Output of ``mlir-opt --affine-loop-fusion``: the new text or why there is none."""

    text: str | None
    returncode: int
    stderr: str
    crashed: bool
    timed_out: bool
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.text is not None


def run_mlir_fusion(text: str, options: str = "", timeout: float = DEFAULT_TIMEOUT) -> FusionResult:
    """Run MLIR's ``affine-loop-fusion`` pass (e.g. ``options="mode=producer"``) over ``text``."""
    tools = toolchain()
    flag = "--affine-loop-fusion" + (f"={options.strip()}" if options.strip() else "")
    done = run_tool([tools.mlir_opt, "-", flag], text, timeout)
    ok = done.returncode == 0 and not done.timed_out and not done.crashed
    return FusionResult(
        done.stdout if ok else None,
        done.returncode,
        done.stderr,
        done.crashed,
        done.timed_out,
        parse_diagnostics(done.stderr),
    )


# --------------------------------------------------------------------------- equivalence


class Outcome(str, enum.Enum):
    """The kinds of verdict ``equivalent`` can reach."""

    SAME = "same"
    DIFFERENT = "different"
    ORIGINAL_FAILED = "original-failed"
    TRANSFORMED_FAILED = "transformed-failed"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class Verdict:
    """Result of comparing an original program's output with a transformed program's."""

    outcome: Outcome
    detail: str
    original: RunResult | None = None
    transformed: RunResult | None = None

    @property
    def same(self) -> bool:
        return self.outcome is Outcome.SAME


def normalize_output(stdout: str) -> str:
    """Mask the heap addresses that ``printMemref*`` prints; everything else is kept verbatim."""
    return _ADDRESS.sub("base@ = <addr>", stdout)


def short_diff(before: str, after: str, limit: int = 24) -> str:
    """A unified diff of two outputs, cut to ``limit`` lines."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), "original", "transformed", lineterm="", n=1
        )
    )
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines)


def compare_runs(original: RunResult, transformed: RunResult | None) -> Verdict:
    """Turn two run results into a verdict (outputs compared after address masking).

    ``transformed`` may be ``None`` only when the original failed (it was then not run).
    """
    if original.timed_out:
        return Verdict(Outcome.TIMEOUT, "original " + original.describe(), original, transformed)
    if not original.ok:
        return Verdict(Outcome.ORIGINAL_FAILED, original.describe(), original, transformed)
    if transformed is None:
        raise ValueError("a transformed run is needed when the original succeeded")
    if transformed.timed_out:
        return Verdict(
            Outcome.TIMEOUT, "transformed " + transformed.describe(), original, transformed
        )
    if not transformed.ok:
        return Verdict(Outcome.TRANSFORMED_FAILED, transformed.describe(), original, transformed)
    before, after = normalize_output(original.stdout), normalize_output(transformed.stdout)
    if before == after:
        return Verdict(Outcome.SAME, "", original, transformed)
    return Verdict(Outcome.DIFFERENT, short_diff(before, after), original, transformed)


def equivalent(
    original_text: str,
    transformed_text: str,
    entry: str = "main",
    timeout: float = DEFAULT_TIMEOUT,
    original_result: RunResult | None = None,
) -> Verdict:
    """Lower and run both programs and compare what they print, bit for bit.

    Pass ``original_result`` to reuse an earlier run of the original program.
    """
    original = original_result or lower_and_run(original_text, entry, timeout)
    if not original.ok:
        return compare_runs(original, None)
    transformed = lower_and_run(transformed_text, entry, timeout)
    return compare_runs(original, transformed)


# --------------------------------------------------------------------------- inspection

_FUNC_HEADER = re.compile(r"^\s*func\.func\s+(?:\w+\s+)*@(?P<name>[\w$.-]+)\s*\(")
_TOP_FOR = re.compile(r"^(?:%[\w$.-]+(?::\d+)?(?:\s*,\s*%[\w$.-]+)*\s*=\s*)?affine\.for\b")


def count_top_level_loops(text: str, func: str = "kernel") -> int | None:
    """Count the ``affine.for`` ops directly in the body of ``func`` (``None`` if absent).

    Works on mlir-opt's printed form and on hand-written text where each op starts its own line.
    """
    lines = text.splitlines()
    for n, line in enumerate(lines):
        header = _FUNC_HEADER.match(line)
        if not header or header["name"] != func or not line.rstrip().endswith("{"):
            continue
        body_indent: int | None = None
        count = 0
        for inner in lines[n + 1 :]:
            stripped = inner.strip()
            if not stripped:
                continue
            indent = len(inner) - len(inner.lstrip())
            if body_indent is None:
                body_indent = indent
            if indent < body_indent:
                break
            if indent == body_indent and _TOP_FOR.match(stripped):
                count += 1
        return count
    return None
