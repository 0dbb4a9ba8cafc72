"""New valid MLIR made by MLIR itself: `mlir-opt` runs passes and printing options over
the valid chunks of MLIR's test suite (`../shared/upstream/`), one chunk at a time, and
every output it prints (valid by construction: mlir-opt verifies before printing) must
get no syntax error and no error diagnostic from the checker.

The outputs are in none of the files: lowered loops, canonicalised and CSE'd code,
the generic form, debug locations, LLVM dialect, aliases and names as MLIR prints
them. Shared by the suite's seeded slice and `benchmarks/generated_mlir.py`.
"""

from __future__ import annotations

import hashlib
import random
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from affine_lsp.checks import CheckOptions, check_document
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing.upstream import UpstreamChunk, chunk_of, is_false, line_starts, read_chunks

# Pass pipelines and printing options (never the test-only `--test-*` passes). Each is a
# list of mlir-opt arguments after `--allow-unregistered-dialect`.
PIPELINES: tuple[tuple[str, ...], ...] = (
    (),  # the default printer: the custom forms, aliases, as MLIR prints them
    ("--canonicalize",),
    ("--cse",),
    ("--mlir-print-op-generic",),
    ("--mlir-print-debuginfo",),
    ("--mlir-print-local-scope",),
    ("--lower-affine",),
    ("--convert-scf-to-cf",),
    ("--lower-affine", "--convert-scf-to-cf"),
    ("--convert-linalg-to-loops",),
    ("--convert-linalg-to-affine-loops",),
    ("--linalg-generalize-named-ops",),
    ("--convert-vector-to-scf",),
    ("--convert-arith-to-llvm",),
    ("--convert-func-to-llvm",),
    ("--finalize-memref-to-llvm",),
    ("--convert-to-llvm",),
    ("--canonicalize", "--cse", "--mlir-print-op-generic"),
    ("--canonicalize", "--mlir-print-debuginfo", "--mlir-print-local-scope"),
    ("--lower-affine", "--mlir-print-debuginfo"),
    ("--sccp", "--symbol-dce"),
    ("--inline", "--canonicalize"),
    ("--loop-invariant-code-motion",),
    ("--affine-loop-normalize", "--affine-simplify-structures"),
    ("--affine-loop-invariant-code-motion", "--affine-scalrep"),
    ("--expand-strided-metadata",),
    ("--convert-scf-to-cf", "--convert-cf-to-llvm", "--convert-func-to-llvm"),
    ("--one-shot-bufferize",),
    ("--mlir-print-op-generic", "--mlir-print-debuginfo"),
    ("--mlir-print-op-generic", "--mlir-print-local-scope"),
    ("--mlir-print-unique-ssa-ids",),
    ("--mlir-print-elementsattrs-with-hex-if-larger=1",),
    ("--mlir-use-nameloc-as-prefix", "--mlir-print-debuginfo"),
    ("--strip-debuginfo", "--symbol-privatize"),
    ("--affine-loop-tile=tile-size=4",),
    ("--affine-loop-unroll=unroll-factor=2",),
    ("--affine-super-vectorize=virtual-vector-size=4",),
    ("--affine-data-copy-generate",),
    ("--affine-loop-fusion",),
    ("--affine-pipeline-data-transfer",),
    ("--affine-parallelize",),
    ("--affine-loop-coalescing",),
    ("--affine-expand-index-ops",),
    ("--scf-for-loop-canonicalization",),
    ("--scf-forall-to-for",),
    ("--scf-forall-to-parallel",),
    ("--scf-parallel-loop-fusion",),
    ("--scf-parallel-loop-tiling=parallel-loop-tile-sizes=2",),
    ("--convert-affine-for-to-gpu",),
    ("--convert-parallel-loops-to-gpu",),
    ("--gpu-kernel-outlining",),
    ("--async-parallel-for",),
    ("--convert-scf-to-openmp",),
    ("--convert-math-to-llvm", "--convert-index-to-llvm", "--convert-complex-to-llvm"),
    ("--convert-vector-to-llvm",),
    ("--convert-tensor-to-linalg",),
    ("--linalg-fuse-elementwise-ops",),
    ("--linalg-specialize-generic-ops",),
    ("--convert-linalg-to-parallel-loops",),
    ("--linalg-fold-unit-extent-dims",),
    ("--fold-memref-alias-ops",),
    ("--normalize-memrefs",),
    ("--expand-realloc",),
    ("--remove-dead-values",),
    ("--sroa", "--mem2reg"),
    ("--lift-cf-to-scf",),
    ("--control-flow-sink",),
    ("--arith-expand",),
    ("--convert-scf-to-emitc", "--convert-func-to-emitc", "--convert-arith-to-emitc"),
    ("--convert-math-to-funcs",),
    ("--convert-shape-to-std",),
    ("--convert-bufferization-to-memref",),
    ("--ownership-based-buffer-deallocation",),
    ("--promote-buffers-to-stack", "--buffer-hoisting", "--buffer-loop-hoisting"),
    ("--lower-vector-multi-reduction",),
    ("--convert-vector-to-gpu",),
    ("--convert-scf-to-spirv",),
    ("--convert-gpu-to-nvvm",),
    ("--sparsification",),
    ("--pass-pipeline=builtin.module(func.func(tosa-to-linalg))",),
    ("--convert-openmp-to-llvm",),
    ("--convert-async-to-llvm",),
)


def pipeline_name(pipeline: tuple[str, ...]) -> str:
    """The arguments of a pipeline as one line ('(default printer)' for none)."""
    return " ".join(pipeline) or "(default printer)"


@dataclass(frozen=True)
class Source:
    """A valid chunk of MLIR's test suite."""

    chunk: UpstreamChunk
    text: bytes

    @property
    def where(self) -> str:
        return f"{self.chunk.path}:{self.chunk.first_line}"


@dataclass(frozen=True)
class Output:
    """What one mlir-opt run printed for one chunk."""

    source: Source
    pipeline: tuple[str, ...]
    accepted: bool  # exit 0 within the time limit
    text: bytes


@dataclass(frozen=True)
class FalseDiagnostic:
    output: Output
    line: int  # 1-based, in the output
    code: str
    message: str

    @property
    def where(self) -> str:
        return (
            f"{self.output.source.where} | {pipeline_name(self.output.pipeline)} | line {self.line}"
        )


@dataclass
class GeneratedSummary:
    outputs: list[Output] = field(default_factory=list)
    findings: list[FalseDiagnostic] = field(default_factory=list)
    crashes: list[tuple[Output, str]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def accepted(self) -> list[Output]:
        return [o for o in self.outputs if o.accepted]

    def failing_outputs(self) -> list[Output]:
        seen: dict[int, Output] = {}
        for finding in self.findings:
            seen.setdefault(id(finding.output), finding.output)
        return list(seen.values())

    def by_code(self) -> Counter:
        return Counter(f.code for f in self.findings)

    def by_pipeline(self) -> list[tuple[str, int, int]]:
        """(pipeline, accepted outputs, outputs with false diagnostics)."""
        accepted = Counter(pipeline_name(o.pipeline) for o in self.accepted)
        failing = Counter(pipeline_name(o.pipeline) for o in self.failing_outputs())
        return [(p, accepted[p], failing[p]) for p in sorted(accepted)]


def valid_sources(root: Path, every: int = 1, offset: int = 0) -> list[Source]:
    """Every `every`-th valid chunk of chunks.tsv (path order, starting at `offset`)."""
    table = read_chunks(root)
    sources: list[Source] = []
    for path in sorted(table):
        data: bytes | None = None
        starts: list[int] = []
        for chunk in table[path]:
            if not chunk.valid:
                continue
            if data is None:
                data = (root / path).read_bytes()
                starts = line_starts(data)
            text = chunk_of(data, starts, chunk).data
            if text.strip():
                sources.append(Source(chunk, text))
    return sources[offset::every]


def assignments(
    sources: Sequence[Source],
    pipelines: Sequence[tuple[str, ...]] = PIPELINES,
    per_source: int = 1,
    seed: int = 0,
) -> list[tuple[Source, tuple[str, ...]]]:
    """(source, pipeline) pairs: `per_source` distinct pipelines for each source, drawn
    with a seeded generator (all of them when `per_source` >= their number)."""
    rng = random.Random(seed)
    pairs: list[tuple[Source, tuple[str, ...]]] = []
    for source in sources:
        count = min(per_source, len(pipelines))
        for pipeline in rng.sample(list(pipelines), count):
            pairs.append((source, pipeline))
    return pairs


def _cache_key(opt: str, pipeline: tuple[str, ...], text: bytes) -> str:
    digest = hashlib.sha256()
    stat = Path(opt).stat()
    digest.update(f"{opt}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    digest.update("\0".join(pipeline).encode() + b"\0\0")
    digest.update(text)
    return digest.hexdigest()


def run_mlir_opt(
    opt: str,
    source: Source,
    pipeline: tuple[str, ...],
    timeout: float = 20.0,
    cache: Path | None = None,
) -> Output:
    """mlir-opt on one chunk (stdin to stdout, no files), or its cached output."""
    path = cache / _cache_key(opt, pipeline, source.text) if cache is not None else None
    if path is not None and path.exists():
        data = path.read_bytes()
        return Output(source, pipeline, data[:1] == b"1", data[1:])
    argv = [opt, "--allow-unregistered-dialect", *pipeline]
    try:
        result = subprocess.run(
            argv, input=source.text, capture_output=True, timeout=timeout, check=False
        )
        accepted = result.returncode == 0
        text = result.stdout if accepted else b""
    except subprocess.TimeoutExpired:
        accepted, text = False, b""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_bytes((b"1" if accepted else b"0") + text)
        temporary.replace(path)
    return Output(source, pipeline, accepted, text)


def false_diagnostics(output: Output, options: CheckOptions | None = None) -> list[FalseDiagnostic]:
    """The checker's false diagnostics on an output mlir-opt accepted."""
    if not output.accepted:
        return []
    document = SourceDocument(output.text)
    found = []
    for diagnostic in check_document(document, options):
        if is_false(diagnostic):
            line = document.point(diagnostic.span.start_byte)[0] + 1
            found.append(FalseDiagnostic(output, line, diagnostic.code, diagnostic.message))
    return found


def run(
    opt: str,
    pairs: Iterable[tuple[Source, tuple[str, ...]]],
    jobs: int = 2,
    timeout: float = 20.0,
    cache: Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> GeneratedSummary:
    """mlir-opt on every pair (`jobs` at a time), the checker on every accepted output."""
    summary = GeneratedSummary()
    start = time.perf_counter()
    pairs = list(pairs)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outputs = pool.map(lambda p: run_mlir_opt(opt, p[0], p[1], timeout, cache), pairs)
        for count, output in enumerate(outputs, 1):
            summary.outputs.append(output)
            try:
                summary.findings += false_diagnostics(output)
            except Exception as error:  # noqa: BLE001 - a crash is a result to report
                summary.crashes.append((output, f"{type(error).__name__}: {error}"))
            if progress is not None:
                progress(count)
    summary.seconds = time.perf_counter() - start
    return summary
