"""Differential testing of the loop transformations against mlir-runner.

For a generated program (`nestgen`), every transformation is tried at every loop
of `@kernel`: an applied one is lowered and run, and must print exactly what the
original prints; a refused one is written anyway without the dependence check
and the proof (the naive rewrite) and run, to see whether the refusal was
needed (our conservatism). The program tiled by 3 (sizes that divide few of the
trip counts, so the point loops end at a `min`) is a second base: the
transformations of point loops (`TILED_SPECS`: unroll, unroll-and-jam, scalar
replacement) are tried at every loop of it, and scalar replacement at every loop
of each unroll-and-jam it allows (register tiling), all run against the original.
MLIR 22's own passes run on the same programs, and are judged the same way. A
program with `affine.parallel` loops is also run with every parallel loop
(without reductions, step 1) turned into sequential loops that run backwards
(`reversed_parallel`): lowered as it is, a parallel loop runs in order and would
hide a dependence it carries.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from affine_lsp.checks import TextEdit
from affine_lsp.ir import (
    AffineForOp,
    AffineParallelOp,
    FuncOp,
    ModuleModel,
    Subscripts,
    build_module,
    format_expr,
)
from affine_lsp.syntax import SourceDocument, Span
from affine_lsp.testing import oracle
from affine_lsp.transforms import apply_edits
from affine_lsp.transforms.loops import (
    DISTRIBUTE,
    HOIST,
    INTERCHANGE,
    PARALLELIZE,
    PERMUTE,
    SCALAR_REPLACE,
    SKEW,
    TILE,
    UNROLL,
    UNROLL_JAM,
    WAVEFRONT,
    Spec,
    transform,
)

SPECS: tuple[Spec, ...] = (
    Spec(INTERCHANGE),
    Spec(INTERCHANGE, skew=1),
    Spec(PERMUTE, permutation=(2, 0, 1)),
    Spec(PERMUTE, permutation=(0, 2, 1)),
    Spec(TILE, sizes=(3,)),
    Spec(TILE, sizes=(3, 3)),
    Spec(TILE, sizes=(2, 2), skew=1),
    Spec(UNROLL, factor=2),
    Spec(UNROLL, factor=3),
    Spec(UNROLL, factor=None),
    Spec(UNROLL_JAM, factor=2),
    Spec(UNROLL_JAM, factor=3),
    Spec(UNROLL_JAM, factor=2, interleave=True),
    Spec(PARALLELIZE),
    Spec(HOIST),
    Spec(DISTRIBUTE),
    Spec(SKEW, factor=1),
    Spec(SKEW, skews=((1,), (2, 0))),
    Spec(TILE, sizes=(2, 2, 2)),
    Spec(TILE, sizes=(2, 3), skew=2),
    Spec(TILE, sizes=(2, 3), skew=2, peel=False),
    Spec(WAVEFRONT),
    Spec(WAVEFRONT, factor=2),
    Spec(WAVEFRONT, sizes=(2, 2)),
    Spec(SCALAR_REPLACE),
)
"""What is tried at every loop (the skews, the tiles of skewed, non-rectangular or
imperfect bands and the wavefronts are written by the code generator; `peel=False`:
the tiles a proof too complex for peeled ones falls back to)."""

TILE_SIZES = (3, 3)
"""The tiling of the outermost loops that makes the second base program."""

TILED_SPECS: tuple[Spec, ...] = (
    Spec(UNROLL, factor=2),
    Spec(UNROLL, factor=3),
    Spec(UNROLL, factor=4),
    Spec(UNROLL_JAM, factor=2),
    Spec(UNROLL_JAM, factor=3),
    Spec(UNROLL_JAM, factor=3, interleave=True),
    Spec(SCALAR_REPLACE),
)
"""What is tried at every loop of the tiled program."""

MLIR_PASSES: dict[str, tuple[str, ...]] = {
    "affine-loop-tile": ("--affine-loop-tile=tile-size=3",),
    "affine-loop-unroll": (
        "--pass-pipeline=builtin.module(func.func(affine-loop-unroll{unroll-factor=2}))",
    ),
    "affine-loop-unroll-jam": (
        "--pass-pipeline=builtin.module(func.func(affine-loop-unroll-jam{unroll-jam-factor=2}))",
    ),
    "affine-parallelize": (
        "--pass-pipeline=builtin.module(func.func(affine-parallelize{parallel-reductions=true}))",
    ),
    "affine-loop-invariant-code-motion": (
        "--pass-pipeline=builtin.module(func.func(affine-loop-invariant-code-motion))",
    ),
    "affine-scalrep": ("--pass-pipeline=builtin.module(func.func(affine-scalrep))",),
}


def describe(spec: Spec) -> str:
    text = spec.kind
    if spec.permutation:
        text += " " + ",".join(map(str, spec.permutation))
    if spec.sizes:
        text += " " + "x".join(map(str, spec.sizes))
    if spec.kind in (UNROLL, UNROLL_JAM) or (spec.kind == SKEW and not spec.skews):
        text += f" {spec.factor if spec.factor is not None else 'full'}"
    if spec.kind == WAVEFRONT and spec.factor is not None:
        text += f" {spec.factor} rows"
    if spec.interleave:
        text += " interleaved"
    if spec.skew is not None:
        text += f" (skew {spec.skew})"
    if spec.skews:
        text += " (skew " + "/".join(",".join(map(str, row)) for row in spec.skews) + ")"
    return text


@dataclass
class Pair:
    """One (program, loop, transformation) attempt."""

    seed: int
    line: int  # 1-based line of the loop
    spec: Spec
    applied: bool
    reason: str | None = None
    verdict: str = ""  # applied: same | different | failed; refused: naive-same | ...
    detail: str = ""
    base: str = ""  # what was done first ("tiled 3x3", "tiled 3x3, unroll-jam 2 at 7")
    summary: str = ""  # applied: what was done, in words

    @property
    def kind(self) -> str:
        """The transformation's kind, with `triangular` for an unroll-and-jam around a
        loop whose bounds depend on the unrolled iv, `iter_args` for one around a loop
        that carries values."""
        triangular = " triangular" if "the triangle" in self.summary else ""
        interleaved = " interleaved" if self.spec.interleave else ""
        carried = " iter_args" if "iter_args" in self.summary else ""
        return self.spec.kind + interleaved + triangular + carried

    @property
    def label(self) -> str:
        """The transformation, and its base when it is not the original program."""
        return describe(self.spec) + (f" [{self.base}]" if self.base else "")


@dataclass
class ProgramReport:
    seed: int
    pairs: list[Pair] = field(default_factory=list)
    mlir: dict[str, str] = field(default_factory=dict)  # pass -> same | different | ...
    original_failed: str | None = None


def kernel_loops(text: str) -> Iterator[tuple[int, AffineForOp, bytes, ModuleModel]]:
    """(1-based line, loop, data, model) for every affine.for of @kernel."""
    data = text.encode()
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    for op in model.walk():
        if isinstance(op, FuncOp) and op.symbol == "@kernel":
            for loop in op.walk():
                if isinstance(loop, AffineForOp):
                    yield document.point(loop.span.start_byte)[0] + 1, loop, data, model


def _loops_by_line(text: str) -> dict[int, tuple[AffineForOp, bytes, ModuleModel]]:
    return {line: (loop, data, model) for line, loop, data, model in kernel_loops(text)}


def check_program(
    seed: int,
    text: str,
    specs: tuple[Spec, ...] = SPECS,
    naive: bool = True,
    mlir: bool = False,
    timeout: float = oracle.DEFAULT_TIMEOUT,
    tiled: bool = True,
) -> ProgramReport:
    """Every spec at every loop of the program's kernel (and MLIR's passes); with
    `tiled`, the transformations of point loops on the program tiled by `TILE_SIZES`."""
    report = ProgramReport(seed)
    original = oracle.lower_and_run(text, timeout=timeout)
    if not original.ok:
        report.original_failed = original.describe()
        return report
    report.pairs += _pairs(seed, text, text, specs, original, naive, timeout, "")
    if tiled:
        report.pairs += _tiled_pairs(seed, text, original, naive, timeout)
    if mlir:
        for name, flags in MLIR_PASSES.items():
            report.mlir[name] = run_mlir_pass(text, flags, original, timeout)
    return report


def _pairs(
    seed: int,
    original_text: str,
    text: str,
    specs: tuple[Spec, ...],
    original: oracle.RunResult,
    naive: bool,
    timeout: float,
    base: str,
) -> list[Pair]:
    """Every spec at every loop of `text`'s kernel, run against the original."""
    found = []
    for line in sorted(_loops_by_line(text)):
        for spec in specs:
            pair, _ = _try(seed, original_text, text, line, spec, original, naive, timeout)
            pair.base = base
            found.append(pair)
    return found


def _try(
    seed: int,
    original_text: str,
    text: str,
    line: int,
    spec: Spec,
    original: oracle.RunResult,
    naive: bool,
    timeout: float,
) -> tuple[Pair, str | None]:
    """One spec at the loop on `line` of `text`: the pair, and the new text if applied."""
    loop, data, model = _loops_by_line(text)[line]
    result = transform(data, model, loop, spec)
    pair = Pair(seed, line, spec, result.applied, result.reason, summary=result.summary)
    if result.applied and result.new_text is not None:
        verdict = oracle.equivalent(
            original_text, result.new_text.decode(), timeout=timeout, original_result=original
        )
        pair.verdict = (
            "same"
            if verdict.same
            else ("different" if verdict.outcome == oracle.Outcome.DIFFERENT else "failed")
        )
        pair.detail = verdict.detail
        return pair, result.new_text.decode()
    if naive and not result.timed_out:
        loop, data, model = _loops_by_line(text)[line]
        unchecked = transform(data, model, loop, spec, prove=False, check=False)
        if unchecked.applied and unchecked.new_text is not None:
            verdict_text, pair.detail = judge(
                original_text, unchecked.new_text.decode(), original, timeout
            )
            pair.verdict = "naive-same" if verdict_text == "same" else "naive-different"
        else:
            pair.verdict = "not-applicable"
    return pair, None


def _tiled_pairs(
    seed: int, text: str, original: oracle.RunResult, naive: bool, timeout: float
) -> list[Pair]:
    """The point-loop transformations on the program tiled by `TILE_SIZES` (and scalar
    replacement after each unroll-and-jam)."""
    lines = sorted(_loops_by_line(text))
    if not lines:
        return []
    loop, data, model = _loops_by_line(text)[lines[0]]
    tiled = transform(data, model, loop, Spec(TILE, sizes=TILE_SIZES))
    if not tiled.applied or tiled.new_text is None:
        tiled = transform(data, model, loop, Spec(TILE, sizes=TILE_SIZES[:1]))
    if not tiled.applied or tiled.new_text is None:
        return []
    tiled_text = tiled.new_text.decode()
    base = "tiled " + "x".join(map(str, tiled.spec.sizes))
    found = []
    for line in sorted(_loops_by_line(tiled_text)):
        for spec in TILED_SPECS:
            pair, new_text = _try(seed, text, tiled_text, line, spec, original, naive, timeout)
            pair.base = base
            found.append(pair)
            if spec.kind != UNROLL_JAM or new_text is None:
                continue
            jammed = f"{base}, {describe(spec)} at {line}"
            found += _pairs(
                seed, text, new_text, (Spec(SCALAR_REPLACE),), original, False, timeout, jammed
            )
    return found


def run_mlir_pass(
    text: str, flags: tuple[str, ...], original: oracle.RunResult, timeout: float
) -> str:
    """same | different | unchanged | crashed | failed: what MLIR's pass does here."""
    tools = oracle.toolchain()
    done = oracle.run_tool([tools.mlir_opt, "-", *flags], text, timeout)
    if done.timed_out or done.crashed or done.returncode != 0:
        return "crashed" if done.crashed else "failed"
    verdict, _ = judge(text, done.stdout, original, timeout)
    if verdict == "same":
        unchanged = oracle.run_tool([tools.mlir_opt, "-"], text, timeout)
        return "unchanged" if unchanged.stdout == done.stdout else "same"
    return verdict


def judge(text: str, new: str, original: oracle.RunResult, timeout: float) -> tuple[str, str]:
    """(same | different | failed, detail): `new` run as it is, and with its parallel
    loops run backwards, against the original's output."""
    verdict = oracle.equivalent(text, new, timeout=timeout, original_result=original)
    if verdict.same and "affine.parallel" in new:
        backwards = reversed_parallel(new)
        if backwards is not None and backwards != new:
            verdict = oracle.equivalent(text, backwards, timeout=timeout, original_result=original)
    if verdict.same:
        return "same", ""
    outcome = "different" if verdict.outcome == oracle.Outcome.DIFFERENT else "failed"
    return outcome, verdict.detail


def reversed_parallel(text: str) -> str | None:
    """`text` with every `affine.parallel` without reductions and with unit steps
    written as sequential loops running backwards (None if the text does not parse)."""
    data = text.encode()
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    edits = []
    counter = 0
    for op in model.walk():
        if not isinstance(op, AffineParallelOp) or op.reductions or op.body is None:
            continue
        if any(step != 1 for step in op.steps):
            continue
        if any(b.kind or len(b.exprs) != 1 for b in op.lower + op.upper):
            continue
        header = []
        applies = []
        for k, iv in enumerate(op.induction_variables):
            counter += 1
            reverse = f"%rev{counter}"
            low = _bound_map(op.lower[k].exprs[0])
            high = _bound_map(op.upper[k].exprs[0])
            header.append(f"affine.for {reverse} = {low} to {high} {{")
            applies += [
                f"%lo{counter} = affine.apply {low}",
                f"%hi{counter} = affine.apply {high}",
                f"{iv.name} = affine.apply affine_map<(d0, d1, d2) -> (d1 + d2 - d0 - 1)>"
                f"({reverse}, %lo{counter}, %hi{counter})",
            ]
        start = op.span.start_byte
        body_open = op.body.span.start_byte
        edits.append(
            TextEdit(Span(start, body_open + 1), " ".join(header) + "\n" + "\n".join(applies))
        )
        closing = op.span.end_byte - 1
        edits.append(TextEdit(Span(closing, closing + 1), "}" * len(op.induction_variables)))
    if not edits:
        return text
    try:
        return apply_edits(data, edits).decode()
    except ValueError:
        return None


def _bound_map(subscripts: Subscripts) -> str:
    affine_map = subscripts.map
    results = ", ".join(
        format_expr(r, dim_namer=lambda k: f"d{k}", symbol_namer=lambda k: f"s{k}")
        for r in affine_map.results
    )
    header = "(" + ", ".join(f"d{k}" for k in range(affine_map.num_dims)) + ")"
    if affine_map.num_symbols:
        header += "[" + ", ".join(f"s{k}" for k in range(affine_map.num_symbols)) + "]"
    dims = ", ".join(u.name for u in subscripts.dims)
    symbols = ", ".join(u.name for u in subscripts.symbols)
    text = f"affine_map<{header} -> ({results})>({dims})"
    return text + (f"[{symbols}]" if symbols else "")
