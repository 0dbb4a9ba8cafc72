"""Our `fuse --all` on MLIR's loop-fusion tests, against their CHECK lines.

    python benchmarks/fusion_corpus.py [--verbose]

Prints, per file, how many function/RUN pairs have the loop structure the CHECK
lines describe, and (with --verbose) the expected and actual structure of the others.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fusion.corpus_check import compare_corpus  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true")
    ns = parser.parse_args(argv)
    results, errors = compare_corpus()
    per_file: Counter[str] = Counter()
    agreeing: Counter[str] = Counter()
    for result in results:
        file = result.label.split("#")[0]
        per_file[file] += 1
        agreeing[file] += result.agrees
    for file in sorted(per_file):
        print(f"{file:48s} {agreeing[file]:3d}/{per_file[file]:3d}")
    total = sum(agreeing.values())
    print(f"{'total':48s} {total:3d}/{len(results):3d}")
    for label, error in errors:
        print(f"ERROR {label}: {error}")
    if ns.verbose:
        for result in results:
            if not result.agrees:
                print(f"\n{result.label} @{result.function} ({result.run.prefix})")
                print("  expected:", " | ".join(result.expected))
                print("  ours:    ", " | ".join(result.ours))
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
