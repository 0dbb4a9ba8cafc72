"""False errors over MLIR 22's test suite (`../shared/upstream/`), in one process.

    python benchmarks/upstream_conformance.py [--depth 2] [--examples 3] [--every K]
        [--only SUBSTRING] [--list FILE]

Every chunk MLIR 22 accepts (`valid` in chunks.tsv) must get no syntax error and
no error diagnostic (warnings and hints only from the lint and legacy groups).
Prints the valid chunks with false diagnostics per directory, the diagnostics
by code with examples, how many invalid affine/memref chunks get an error on
MLIR's error line, crashes, chunk-splitting mismatches and the run time.
Exit status 1 when any valid chunk has a false diagnostic.
"""

from __future__ import annotations

import argparse
import sys

from _common import SHARED

from affine_lsp.testing.upstream import (
    Summary,
    directory_of,
    mlir_error_line,
    read_chunks,
    run,
)

UPSTREAM = SHARED / "upstream"


def _table(summary: Summary, depth: int, only_failing: bool) -> None:
    rows = summary.by_directory(depth)
    width = max((len(d) for d, _, _ in rows), default=10)
    for directory, valid, failing in rows:
        if only_failing and not failing:
            continue
        share = failing / valid if valid else 0.0
        print(f"  {directory:<{width}}  {failing:>5} / {valid:<5} {share:6.1%}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--depth", type=int, default=2, help="directory depth of the detail table")
    parser.add_argument("--examples", type=int, default=3, help="examples per code")
    parser.add_argument("--every", type=int, default=1, help="check every K-th file only")
    parser.add_argument("--only", default="", help="only files whose path contains this")
    parser.add_argument("--list", metavar="FILE", help="write every finding to FILE")
    args = parser.parse_args()
    if not (UPSTREAM / "chunks.tsv").is_file():
        print(f"upstream corpus not found at {UPSTREAM}", file=sys.stderr)
        return 2
    paths = [p for p in sorted(read_chunks(UPSTREAM)) if args.only in p][:: args.every]
    summary = run(UPSTREAM, paths)
    valid = summary.valid_chunks
    failing = summary.failing_chunks()
    print(
        f"{len(paths)} files, {sum(len(o.chunks) for o in summary.outcomes)} chunks, "
        f"{len(valid)} valid; valid chunks with false diagnostics: {len(failing)} "
        f"({len(failing) / max(len(valid), 1):.2%}); "
        f"run time {summary.seconds:.1f} s (CPU {summary.cpu_seconds:.1f} s)"
    )
    print("\nby directory (valid chunks with false diagnostics / valid chunks):")
    _table(summary, 1, only_failing=False)
    if args.depth > 1 and failing:
        print(f"\ndirectories at depth {args.depth} with false diagnostics:")
        _table(summary, args.depth, only_failing=True)
    findings = summary.findings
    if findings:
        print("\nfalse diagnostics by code (diagnostics, chunks), with examples:")
        for code, count in summary.by_code().most_common():
            of_code = [f for f in findings if f.code == code]
            chunks = {(f.chunk.path, f.chunk.number) for f in of_code}
            print(f"  {code}: {count} diagnostics in {len(chunks)} chunks")
            seen: set[tuple[str, int]] = set()
            for finding in of_code:
                key = (finding.chunk.path, finding.chunk.number)
                if key in seen:
                    continue
                seen.add(key)
                print(f"    {finding.where}: {finding.message}")
                if len(seen) >= args.examples:
                    break
    found, missed = summary.affine_memref_recall()
    print(
        f"\ninvalid affine/memref chunks (invalid*.mlir) with an error on MLIR's error line: "
        f"{len(found)}/{len(found) + len(missed)}"
    )
    for chunk in missed[: args.examples]:
        line, message = mlir_error_line(chunk) or (chunk.first_line, "")
        print(f"  missed {chunk.path}:{line}: {message[:100]}")
    for outcome in summary.crashes():
        print(f"crash: {outcome.path}: {outcome.crash}")
    for outcome in summary.split_mismatches():
        print(
            f"our splitting (mlir-opt's) differs from chunks.tsv: {outcome.path}: "
            f"{outcome.split_mismatch}"
        )
    slowest = sorted(summary.outcomes, key=lambda o: -o.seconds)[:3]
    print("\nslowest files: " + ", ".join(f"{o.path} {o.seconds:.2f} s" for o in slowest))
    if args.list:
        with open(args.list, "w") as handle:
            for finding in findings:
                directory = directory_of(finding.chunk.path, args.depth)
                handle.write(
                    f"{finding.where}\t{directory}\t{finding.code}\t{finding.severity.label}\t"
                    f"{finding.message}\n"
                )
    return 1 if failing or summary.crashes() else 0


if __name__ == "__main__":
    sys.exit(main())
