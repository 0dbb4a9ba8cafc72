"""False errors on new MLIR that MLIR itself prints: mlir-opt runs passes and printing
options (`affine_lsp.testing.generated.PIPELINES`) over the valid chunks of MLIR's test
suite (`../shared/upstream/`), one chunk at a time, and the checker must give no syntax
error and no error diagnostic on any output mlir-opt accepts.

    python benchmarks/generated_mlir.py [--every K] [--per-chunk N] [--seed S] [--jobs J]
        [--pipeline='--p1 --p2' | --pipeline=default] [--examples 3]
        [--cache DIR | --no-cache] [--list FILE]

`--per-chunk N` runs N pipelines per chunk (drawn with the seed; `--per-chunk 0`: all of
them). Outputs are cached by mlir-opt binary, pipeline and chunk text (`--cache`, by
default in the temporary directory), so a second run only re-checks. Exit status 1
when any accepted output gets a false diagnostic or the checker crashes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _common import SHARED

from affine_lsp.testing.generated import (
    PIPELINES,
    assignments,
    pipeline_name,
    run,
    valid_sources,
)
from affine_lsp.testing.oracle import find_tool

UPSTREAM = SHARED / "upstream"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--every", type=int, default=1, help="every K-th valid chunk only")
    parser.add_argument("--offset", type=int, default=0, help="first chunk of the slice")
    parser.add_argument("--per-chunk", type=int, default=1, help="pipelines per chunk (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="mlir-opt processes at a time")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per mlir-opt run")
    parser.add_argument(
        "--pipeline",
        help="only this pipeline (arguments separated by spaces: --pipeline='--cse'; "
        "'default': no pass, the default printer)",
    )
    parser.add_argument("--examples", type=int, default=3, help="examples per code")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "affine-lsp-generated"
    )
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--list", metavar="FILE", help="write every finding to FILE")
    parser.add_argument("--save", metavar="DIR", help="write each failing output to DIR")
    args = parser.parse_args()
    if not (UPSTREAM / "chunks.tsv").is_file():
        print(f"upstream corpus not found at {UPSTREAM}", file=sys.stderr)
        return 2
    opt = find_tool("mlir-opt")
    if opt is None:
        print("mlir-opt not found", file=sys.stderr)
        return 2
    if args.pipeline == "default":
        pipelines: tuple[tuple[str, ...], ...] = ((),)  # no pass, the default printer
    else:
        pipelines = PIPELINES if not args.pipeline else (tuple(args.pipeline.split()),)
    sources = valid_sources(UPSTREAM, args.every, args.offset)
    per_chunk = args.per_chunk if args.per_chunk > 0 else len(pipelines)
    pairs = assignments(sources, pipelines, per_chunk, args.seed)

    def progress(count: int) -> None:
        if count % 500 == 0:
            print(f"  {count}/{len(pairs)}", file=sys.stderr, flush=True)

    cache = None if args.no_cache else args.cache
    summary = run(str(opt), pairs, args.jobs, args.timeout, cache, progress)
    accepted = summary.accepted
    failing = summary.failing_outputs()
    print(
        f"{len(sources)} valid chunks, {len(pairs)} mlir-opt runs, {len(accepted)} outputs "
        f"accepted; outputs with false diagnostics: {len(failing)} "
        f"({len(failing) / max(len(accepted), 1):.2%}); {summary.seconds:.1f} s"
    )
    print("\nby pipeline (outputs with false diagnostics / accepted outputs):")
    width = max((len(p) for p, _, _ in summary.by_pipeline()), default=10)
    for pipeline, total, wrong in summary.by_pipeline():
        print(f"  {pipeline:<{width}}  {wrong:>5} / {total}")
    if summary.findings:
        print("\nfalse diagnostics by code (diagnostics), with examples:")
        for code, count in summary.by_code().most_common():
            print(f"  {code}: {count}")
            shown: set[int] = set()
            for finding in summary.findings:
                if finding.code != code or id(finding.output) in shown:
                    continue
                shown.add(id(finding.output))
                print(f"    {finding.where}: {finding.message}")
                if len(shown) >= args.examples:
                    break
    for output, crash in summary.crashes:
        print(f"crash: {output.source.where} | {pipeline_name(output.pipeline)}: {crash}")
    if args.list:
        with open(args.list, "w") as handle:
            for finding in summary.findings:
                handle.write(f"{finding.where}\t{finding.code}\t{finding.message}\n")
    if args.save:
        directory = Path(args.save)
        directory.mkdir(parents=True, exist_ok=True)
        for number, output in enumerate(failing):
            note = f"\n// from {output.source.where} | {pipeline_name(output.pipeline)}\n"
            (directory / f"{number:05d}.mlir").write_bytes(output.text + note.encode())
    return 1 if failing or summary.crashes else 0


if __name__ == "__main__":
    sys.exit(main())
