"""PolyBench 4.2 kernels written as affine MLIR, and their recipes.

Each kernel is a pair of files in `benchmarks/polybench/`: `NAME.mlir`, the kernel as a user
writes naive affine MLIR (one `func.func @kernel_NAME` taking scalars and static memrefs),
with its sizes as named placeholders (`memref<{N}x{M}xf64>`, `affine.for %i = 1 to {N-1}`),
and `NAME.c`, PolyBench's initialisation (`init`) and a plain C reference (`reference`) with
the same arguments, sizes as macros. The header comment of the `.mlir` file says what the
kernel computes and holds these fields:

    // sizes: N=2000 M=1800      the benchmark's sizes (original 0.2-2 s at -O3)
    // tiny: N=40 M=36           the suite's sizes (same recipe, a fraction of a second)
    // calls: 8                  the driver calls the kernel this often in the timed region
    // polly-best: -mllvm ...    clang flags added to Polly's for the polly-best variant
    // recipe:                   one affine-lsp step per line, run in order:
    //   transform %i --distribute
    //   transform %i#2 --tile 60,60,60
    //   fuse --all

A step is an `affine-lsp` subcommand that prints the whole file (`transform`, `fuse`,
`optimize`) and its flags; the loop it applies to is named by its iv (`%i`: the first loop
of that iv in the text as the previous steps left it, `%i#2`: the second), which the harness
turns into `--line N`. A step without a loop name (`fuse --all`) is passed as it is. So a new
transformation is one more line with its flag.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from affine_lsp.poly import budgets

KERNELS_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "polybench"
"""Where the kernels live in a checkout."""

STEP_COMMANDS = ("transform", "fuse", "optimize")
"""The affine-lsp subcommands a recipe step may run (each prints the whole file)."""

STEP_TIMEOUT = 600.0

_PLACEHOLDER = re.compile(r"\{([A-Z][A-Z0-9_]*)(?:([+-])(\d+))?\}")
_FIELD = re.compile(r"^//\s*(sizes|tiny|calls|polly-best|recipe):\s*(.*)$")
_DESIGNATOR = re.compile(r"^%([A-Za-z_][\w$.-]*?)(?:#(\d+))?$")


class KernelError(ValueError):
    """A kernel file that cannot be read as this module expects (the reason in words)."""


@dataclass(frozen=True)
class Step:
    """One recipe step: an affine-lsp subcommand, the loop it applies to, its flags."""

    command: str
    loop: str | None
    args: tuple[str, ...]

    def __str__(self) -> str:
        return " ".join([self.command, *([self.loop] if self.loop else []), *self.args])


@dataclass(frozen=True)
class Kernel:
    """A kernel template with its sizes, its recipe and its C companion."""

    name: str
    path: Path
    template: str
    summary: str
    sizes: Mapping[str, int]
    tiny: Mapping[str, int]
    calls: int = 1
    polly_best: tuple[str, ...] = ()
    recipe: tuple[Step, ...] = ()

    @property
    def c_path(self) -> Path:
        return self.path.with_suffix(".c")

    @property
    def function(self) -> str:
        return "kernel_" + self.name.replace("-", "_")

    def text(self, sizes: Mapping[str, int] | None = None) -> str:
        """The kernel's MLIR with `sizes` (default: the benchmark's) put in."""
        return instantiate(self.template, self.sizes if sizes is None else sizes)


def instantiate(template: str, sizes: Mapping[str, int]) -> str:
    """`{N}`, `{N-1}`, `{N+2}` replaced by their values; an unknown name is a KernelError."""

    def value(match: re.Match[str]) -> str:
        name, sign, offset = match.group(1), match.group(2), match.group(3)
        if name not in sizes:
            raise KernelError(f"size {name} has no value (sizes: {', '.join(sizes)})")
        shift = int(offset or 0) * (-1 if sign == "-" else 1)
        return str(sizes[name] + shift)

    return _PLACEHOLDER.sub(value, template)


def load_kernel(path: Path) -> Kernel:
    """Read a kernel template and its header fields."""
    template = path.read_text(encoding="utf-8")
    header = []
    for line in template.splitlines():
        if not line.startswith("//"):
            break
        header.append(line)
    summary: list[str] = []
    fields: dict[str, str] = {}
    recipe_lines: list[str] = []
    current: str | None = None
    for line in header:
        match = _FIELD.match(line)
        if match:
            current = match.group(1)
            fields[current] = match.group(2).strip()
            continue
        body = line[2:].strip()
        if current == "recipe" and line.startswith("//   ") and body:
            recipe_lines.append(body)
        elif current == "polly-best" and line.startswith("//   ") and body:
            continue  # notes on what was tried
        else:
            current = None
            if body and not fields:
                summary.append(body)
    where = f"{path.name}"
    sizes = parse_sizes(fields.get("sizes", ""), where + ": sizes")
    tiny = parse_sizes(fields.get("tiny", ""), where + ": tiny")
    for label, values in (("sizes", sizes), ("tiny", tiny)):
        missing = sorted(set(_placeholders(template)) - set(values))
        if missing:
            raise KernelError(f"{where}: {label} gives no value to {', '.join(missing)}")
    try:
        calls = int(fields.get("calls", "1"))
    except ValueError:
        raise KernelError(f"{where}: calls is not a number: {fields['calls']!r}") from None
    return Kernel(
        name=path.stem,
        path=path,
        template=template,
        summary=" ".join(summary),
        sizes=sizes,
        tiny=tiny,
        calls=calls,
        polly_best=tuple(fields.get("polly-best", "").split()),
        recipe=tuple(parse_step(line, where) for line in recipe_lines),
    )


def _placeholders(template: str) -> list[str]:
    return [m.group(1) for m in _PLACEHOLDER.finditer(template)]


def parse_sizes(text: str, where: str) -> dict[str, int]:
    """`N=2000 M=1800` as a dict."""
    sizes: dict[str, int] = {}
    for item in text.split():
        name, _, value = item.partition("=")
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name) or not value.isdigit():
            raise KernelError(f"{where}: expected NAME=VALUE, got {item!r}")
        sizes[name] = int(value)
    if not sizes:
        raise KernelError(f"{where}: no sizes")
    return sizes


def parse_step(line: str, where: str = "recipe") -> Step:
    """`transform %i#2 --tile 32,32` as a Step."""
    words = line.split()
    if not words or words[0] not in STEP_COMMANDS:
        raise KernelError(
            f"{where}: a recipe step starts with one of {', '.join(STEP_COMMANDS)}: {line!r}"
        )
    loop = words[1] if len(words) > 1 and words[1].startswith("%") else None
    if loop is not None and not _DESIGNATOR.match(loop):
        raise KernelError(f"{where}: {loop!r} is not a loop name like %i or %i#2")
    args = tuple(words[2:] if loop else words[1:])
    return Step(words[0], loop, args)


def kernels(directory: Path = KERNELS_DIR, names: Iterable[str] | None = None) -> list[Kernel]:
    """The kernels of `directory` (all, or those named, in that order)."""
    available = {p.stem: p for p in sorted(directory.glob("*.mlir"))}
    if names is None:
        return [load_kernel(path) for path in available.values()]
    chosen = []
    for name in names:
        if name not in available:
            raise KernelError(f"no kernel {name!r} (known: {', '.join(available)})")
        chosen.append(load_kernel(available[name]))
    return chosen


# --------------------------------------------------------------------------- loops by name


def loop_line(text: str, designator: str) -> int | None:
    """The 1-based line of the loop `%i` (first of that iv) or `%i#k` (k-th), or None."""
    match = _DESIGNATOR.match(designator)
    if match is None:
        return None
    name, index = match.group(1), int(match.group(2) or 1)
    header = re.compile(
        r"^\s*(?:%[\w$.-]+(?::\d+)?(?:\s*,\s*%[\w$.-]+)*\s*=\s*)?affine\.(?:for\s+%"
        + re.escape(name)
        + r"\s*=|parallel\s*\((?:[^)]*,\s*)?%"
        + re.escape(name)
        + r"\s*[,)])"
    )
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if header.match(line):
            seen += 1
            if seen == index:
                return number
    return None


# --------------------------------------------------------------------------- recipes


@dataclass(frozen=True)
class StepOutcome:
    """What one step did: `applied`, `unchanged` (ran, changed nothing), `refused`,
    `no-loop` (its loop name names no loop) or `failed` (usage error, crash, timeout)."""

    step: str
    status: str
    message: str


@dataclass
class RecipeResult:
    text: str
    outcomes: list[StepOutcome] = field(default_factory=list)

    @property
    def applied(self) -> int:
        return sum(o.status == "applied" for o in self.outcomes)


def run_steps(
    text: str, steps: Iterable[Step], timeout: float = STEP_TIMEOUT, python: str = sys.executable
) -> RecipeResult:
    """Run each step on the text the previous ones left; a step that fails is reported and
    skipped, and the recipe goes on. Steps run without wall-clock limits (isl's operation
    caps stay), so that a busy machine does not change what they do."""
    result = RecipeResult(text)
    with tempfile.TemporaryDirectory(prefix="affine-lsp-recipe-") as scratch:
        source = Path(scratch) / "kernel.mlir"
        for step in steps:
            source.write_text(result.text, encoding="utf-8")
            outcome, new_text = _run_step(step, result.text, source, timeout, python)
            result.outcomes.append(outcome)
            if new_text is not None:
                result.text = new_text
    return result


def _run_step(
    step: Step, text: str, source: Path, timeout: float, python: str
) -> tuple[StepOutcome, str | None]:
    where: list[str] = []
    if step.loop is not None:
        line = loop_line(text, step.loop)
        if line is None:
            return StepOutcome(str(step), "no-loop", f"no loop {step.loop} in the text"), None
        where = ["--line", str(line)]
    argv = [python, "-m", "affine_lsp", step.command, str(source), *where, *step.args]
    environment = {**os.environ, budgets.ENVIRONMENT_VARIABLE: "off"}
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False, env=environment
        )
    except subprocess.TimeoutExpired:
        return StepOutcome(str(step), "failed", f"timed out after {timeout:.0f} s"), None
    message = _last_words(done.stderr)
    if done.returncode == 0 and done.stdout.strip():
        new_text = done.stdout if done.stdout.endswith("\n") else done.stdout + "\n"
        status = "applied" if new_text.strip() != text.strip() else "unchanged"
        return StepOutcome(str(step), status, message), new_text if status == "applied" else None
    if done.returncode == 3:
        return StepOutcome(str(step), "refused", message), None
    if done.returncode < 0:
        name = signal_name(-done.returncode)
        if -done.returncode in STOPPING_SIGNALS:
            return StepOutcome(str(step), "failed", f"stopped by {name}"), None
        return StepOutcome(str(step), "failed", f"crashed ({name})"), None
    detail = message or f"exit status {done.returncode}"
    return StepOutcome(str(step), "failed", detail), None


STOPPING_SIGNALS = frozenset(
    int(s) for s in (signal.SIGTERM, signal.SIGKILL, signal.SIGINT, signal.SIGHUP)
)
"""Signals that stop a process from outside (a user, a CI runner): what they stopped
says nothing about its input, unlike a crash (SIGSEGV, SIGABRT)."""


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def transient(message: str) -> bool:
    """Whether a failure says nothing about its input (a timeout, a process stopped from
    outside): not to be cached."""
    stopped = message.startswith("stopped by ") or " was stopped (" in message
    return stopped or "timed out" in message


def _last_words(stderr: str) -> str:
    """stderr without the `affine-lsp CMD: ` prefixes, on one line per message."""
    lines = [re.sub(r"^affine-lsp [\w-]+: ", "", line).strip() for line in stderr.splitlines()]
    return " | ".join(line for line in lines if line)


@cache
def command_available(command: str, python: str = sys.executable) -> bool:
    """Whether this affine-lsp has the subcommand (`optimize` is newer than the others);
    asked once per process."""
    try:
        done = subprocess.run(
            [python, "-m", "affine_lsp", command, "--help"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0
