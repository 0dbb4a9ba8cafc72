"""Every loop transformation at every loop of the real-world corpus (`../shared/realworld`,
the chunks MLIR 22 accepts): what applies, what is refused and why, and the runs that
end in a way a user must never see — a crash, a refusal about our own output ("the
rewritten code does not verify", an internal error), an applied result our checker
(or, with `--mlir-opt`, MLIR's verifier) rejects.

    python benchmarks/transforms_realworld.py [--jobs 2] [--limit N] [--mlir-opt]

Exit status 1 if any such run is found.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.checks import Severity, check_document  # noqa: E402
from affine_lsp.ir import AffineForOp, build_module  # noqa: E402
from affine_lsp.syntax import SourceDocument  # noqa: E402
from affine_lsp.testing import loopdiff, oracle  # noqa: E402
from affine_lsp.transforms.loops import (  # noqa: E402
    SCALAR_REPLACE,
    UNROLL,
    UNROLL_JAM,
    Spec,
    transform,
)
from benchmarks._common import SHARED  # noqa: E402

SPECS = (
    *loopdiff.SPECS,
    Spec(UNROLL, factor=4),
    Spec(UNROLL_JAM, factor=4),
    Spec(SCALAR_REPLACE),
)
OWN_OUTPUT = ("the rewritten", "the fused code", "cannot transform this loop (internal error)")


def _chunks(corpus: Path) -> list[Path]:
    with open(corpus / "chunks.tsv", newline="") as table:
        rows = list(csv.DictReader(table, delimiter="\t"))
    found = []
    for row in rows:
        if row["verdict"] != "valid":
            continue
        path = corpus / row["file"]
        if path.exists() and b"affine.for" in path.read_bytes():
            found.append(path)
    return found


def _errors(data: bytes) -> list[str]:
    document = SourceDocument(data)
    return [d.message for d in check_document(document) if d.severity == Severity.ERROR]


def _chunk(args: tuple[str, bool, int]) -> list[tuple[str, int, str, str, str]]:
    """(file, line, spec, outcome, detail) for every loop (the first `most`) and spec of
    one chunk."""
    path, mlir_opt, most = args
    data = Path(path).read_bytes()
    if _errors(data):
        return [(path, 0, "", "input-errors", "")]
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    starts = [op.span.start_byte for op in model.walk() if isinstance(op, AffineForOp)]
    starts = starts[: most or None]
    found = []
    loops = {op.span.start_byte: op for op in model.walk() if isinstance(op, AffineForOp)}
    for start in starts:
        line = document.point(start)[0] + 1
        for spec in SPECS:  # (a transformation leaves the model as it found it)
            loop = loops[start]
            try:
                result = transform(data, model, loop, spec)
            except Exception as error:  # noqa: BLE001 - a crash is what we count
                found.append((path, line, loopdiff.describe(spec), "crash", repr(error)))
                continue
            if not result.applied or result.new_text is None:
                reason = result.reason or ""
                outcome = "own-output" if reason.startswith(OWN_OUTPUT) else "refused"
                found.append((path, line, loopdiff.describe(spec), outcome, reason))
                continue
            errors = _errors(result.new_text)
            if not errors and mlir_opt:
                verdict = oracle.verify(result.new_text.decode())
                errors = [] if verdict.ok else [verdict.describe()[:200]]
            outcome = "bad-output" if errors else "applied"
            found.append((path, line, loopdiff.describe(spec), outcome, "; ".join(errors)[:300]))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "realworld")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="at most this many chunks")
    parser.add_argument("--mlir-opt", action="store_true", help="verify results with mlir-opt")
    parser.add_argument("--loops", type=int, default=24, help="at most this many loops a chunk")
    parser.add_argument("--examples", type=int, default=5)
    ns = parser.parse_args(argv)
    if not (ns.corpus / "chunks.tsv").exists():
        print(f"cannot run: no corpus at {ns.corpus}")
        return 2
    chunks = _chunks(ns.corpus)[: ns.limit or None]
    started = time.perf_counter()
    with ProcessPoolExecutor(max(1, ns.jobs)) as pool:
        runs = [
            run
            for found in pool.map(_chunk, [(str(p), ns.mlir_opt, ns.loops) for p in chunks])
            for run in found
        ]
    seconds = time.perf_counter() - started
    outcomes = Counter(run[3] for run in runs)
    print(f"{len(chunks)} chunks with loops, {len(runs)} runs, {seconds:.0f} s")
    print("  " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    bad = [run for run in runs if run[3] in ("crash", "own-output", "bad-output")]
    for kind in ("crash", "own-output", "bad-output"):
        shown = [run for run in bad if run[3] == kind]
        if shown:
            print(f"\n{kind}: {len(shown)}")
        for path, line, spec, _, detail in shown[: ns.examples]:
            print(f"  {Path(path).name}:{line} {spec}: {detail[:200]}")
    reasons = Counter(run[4].split(":")[0][:90] for run in runs if run[3] == "refused")
    print("\nmost frequent refusals:")
    for reason, count in reasons.most_common(12):
        print(f"  {count:5}  {reason}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
