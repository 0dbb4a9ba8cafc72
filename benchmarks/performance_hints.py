"""How many performance hints fire on MLIR's test suite and on real-world MLIR
(`../shared/upstream`, `../shared/realworld`): per corpus, the files, the loops, the
hints by pattern, and the files with the most (a hint that floods a user shows here).

    python benchmarks/performance_hints.py [--show 10]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.ir import AffineForOp, build_module  # noqa: E402
from affine_lsp.syntax import SourceDocument  # noqa: E402
from affine_lsp.transforms.performance.hints import performance_hints  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPORA = ("upstream", "realworld")


def _pattern(message: str) -> str:
    if "reduction kept in memory" in message:
        return "reduction in memory"
    if "touches" in message:
        return "working set"
    return "strided"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=10, help="hints shown per corpus")
    ns = parser.parse_args(argv)
    for corpus in CORPORA:
        root = SHARED / corpus
        if not root.is_dir():
            print(f"{corpus}: not found at {root}")
            continue
        files = sorted(root.rglob("*.mlir"))
        started = time.perf_counter()
        loops = 0
        kinds: Counter[str] = Counter()
        per_file: Counter[str] = Counter()
        shown: list[str] = []
        for path in files:
            data = path.read_bytes()
            document = SourceDocument(data)
            model = build_module(document.tree.root_node)
            loops += sum(1 for op in model.walk() if isinstance(op, AffineForOp))
            for item in model.items:
                if item.operation is None:
                    continue
                for hint in performance_hints(item.operation, data):
                    kinds[_pattern(hint.message)] += 1
                    relative = str(path.relative_to(root))
                    per_file[relative] += 1
                    if len(shown) < ns.show:
                        line = document.point(hint.span.start_byte)[0] + 1
                        shown.append(f"  {relative}:{line}: {hint.message}")
        seconds = time.perf_counter() - started
        print(
            f"{corpus}: {len(files)} files, {loops} affine.for, {sum(kinds.values())} hints "
            f"in {len(per_file)} files ({seconds:.1f} s)"
        )
        for kind, count in kinds.most_common():
            print(f"  {kind}: {count}")
        for path, count in per_file.most_common(5):
            print(f"  most in {path}: {count}")
        print("\n".join(shown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
