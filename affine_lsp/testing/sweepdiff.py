"""Differential testing of fusion, shifted fusion included, against mlir-runner.

For a program of two sweeps (`sweepgen`), what `fuse --line` does at the first
sweep (the best depth, and each depth as `--depth D` asks), and what `fuse --all`
does: each fused program is lowered and run, and must print exactly what the
original prints. An attempt is one row as `loopdiff` reports them: (line, what was
asked, kind — `fuse-shift` where the fusion applied shifts or aligns the second
sweep —, applied, verdict, reason, detail). Where a shifted fusion applied, the
kernel's outer loop (the time loop, if any) is then tiled through the pieces the
fusion peeled (kind `tile-peeled`: skewed first where the refusal names the skew
that makes it legal).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from affine_lsp.ir import AffineForOp, FuncOp, ModuleModel, build_module
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing import oracle
from affine_lsp.transforms.fusion import Candidate, PairFusion, fuse_all, next_nest
from affine_lsp.transforms.loops import TILE, Result, Spec, aligned_band, transform

Row = tuple[int, str, str, bool, str, str, str]


@dataclass
class SweepReport:
    seed: int
    rows: list[Row] = field(default_factory=list)
    original_failed: str | None = None


def _first_pair(
    text: str,
) -> tuple[bytes, ModuleModel, FuncOp, AffineForOp, AffineForOp, int] | None:
    """The kernel's first nest that has a next one (inside the time loop, if any)."""
    data = text.encode()
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    for op in model.walk():
        if isinstance(op, FuncOp) and op.symbol == "@kernel":
            for loop in op.walk():
                if isinstance(loop, AffineForOp):
                    second = next_nest(loop)
                    if second is not None:
                        line = document.point(loop.span.start_byte)[0] + 1
                        return data, model, op, loop, second, line
    return None


def _kind(candidate: Candidate | None) -> str:
    return "fuse-shift" if candidate is not None and candidate.shift else "fuse"


def check_program(seed: int, text: str, timeout: float = oracle.DEFAULT_TIMEOUT) -> SweepReport:
    """`fuse --line` at every depth and at the best one, and `fuse --all`, run."""
    report = SweepReport(seed)
    original = oracle.lower_and_run(text, timeout=timeout)
    if not original.ok:
        report.original_failed = original.describe()
        return report
    verdicts: dict[bytes, tuple[str, str]] = {}

    def judge(new_text: bytes) -> tuple[str, str]:
        if new_text not in verdicts:
            verdict = oracle.equivalent(
                text, new_text.decode(), timeout=timeout, original_result=original
            )
            outcome = (
                "same"
                if verdict.same
                else ("different" if verdict.outcome == oracle.Outcome.DIFFERENT else "failed")
            )
            verdicts[new_text] = (outcome, verdict.detail)
        return verdicts[new_text]

    def record(line: int, asked: str, chosen: Candidate | None, reason: str) -> None:
        if chosen is not None and chosen.legal and chosen.new_text is not None:
            outcome, detail = judge(chosen.new_text)
            report.rows.append((line, asked, _kind(chosen), True, outcome, "", detail[:300]))
        else:
            report.rows.append((line, asked, "fuse", False, "", reason, ""))

    found = _first_pair(text)
    if found is None:
        return report
    data, model, function, first, second, line = found
    fusion = PairFusion(data, model, function, first, second)
    best = fusion.best()
    record(line, "fuse --line", best, fusion.failure or "no legal depth within the tolerance")
    if best is not None and best.legal and best.shift and best.new_text is not None:
        tiled = time_tiled(best.new_text)
        if tiled is not None:
            sizes = "x".join(str(s) for s in tiled.spec.sizes)
            asked = f"fuse --line, tile the outer loop {sizes}"
            if tiled.applied and tiled.new_text is not None:
                outcome, detail = judge(tiled.new_text)
                report.rows.append((line, asked, "tile-peeled", True, outcome, "", detail[:300]))
            else:
                report.rows.append((line, asked, "tile-peeled", False, "", tiled.reason or "", ""))
    for depth in PairFusion(data, model, function, first, second).depths():
        candidate = PairFusion(data, model, function, first, second).choice(depth)
        record(line, f"fuse --line --depth {depth}", candidate, candidate.reason or "")
    result = fuse_all(data)
    if result.fusions:
        outcome, detail = judge(result.text)
        shifted = any(f.shift for f in result.fusions)
        kind = "fuse-shift" if shifted else "fuse"
        report.rows.append((line, "fuse --all", kind, True, outcome, "", detail[:300]))
    else:
        why = "; ".join(pair.reordering or pair.verdict.why() for pair in result.left_alone)
        report.rows.append(
            (line, "fuse --all", "fuse", False, "", why[:300] or "nothing fused", "")
        )
    return report


def time_tiled(data: bytes) -> Result | None:
    """The kernel's first loop holding loops (the time loop, if any) tiled 2 x 4 x ...
    through the band its sibling nests make (with the skew its refusal names, if
    any); None without one."""
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    for op in model.walk():
        if isinstance(op, FuncOp) and op.symbol == "@kernel":
            for loop in op.walk():
                depth = len(aligned_band(loop)[0]) if isinstance(loop, AffineForOp) else 0
                if isinstance(loop, AffineForOp) and depth >= 2:
                    spec = Spec(TILE, sizes=(2,) + (4,) * (depth - 1))
                    result = transform(data, model, loop, spec)
                    if not result.applied and result.hint is not None:
                        result = transform(data, model, loop, result.hint)
                    return result
            return None
    return None
