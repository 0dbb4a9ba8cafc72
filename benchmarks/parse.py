"""Parser benchmark: full-parse throughput and incremental reparse after a
one-character edit in the middle of a large file.

    python benchmarks/parse.py [--lines 20000] [--edits 200]

Goal (issue: foundation): incremental reparse p50 < 2 ms at 20k lines.
"""

from __future__ import annotations

import argparse
import time

from _common import generated_file, summary_ms

from affine_lsp.syntax import ContentChange, SourceDocument, new_parser


def full_parse(sizes: list[int]) -> None:
    parser = new_parser()
    for lines in sizes:
        data = generated_file(lines).read_bytes()
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            parser.parse(data)
            best = min(best, time.perf_counter() - start)
        mb = len(data) / 1e6
        print(
            f"full parse {lines:>7} lines ({mb:.2f} MB): "
            f"{best * 1000:8.1f} ms, {mb / best:6.1f} MB/s"
        )


def incremental(lines: int, edits: int) -> None:
    source = generated_file(lines).read_bytes()
    document = SourceDocument(source)
    middle = document.lines.line_count // 2
    whole: list[float] = []
    for i in range(edits):
        insert = i % 2 == 0
        change = ContentChange(" " if insert else "", ((middle, 0), (middle, 0 if insert else 1)))
        start = time.perf_counter()
        document.apply_changes([change])
        whole.append(time.perf_counter() - start)

    # The tree-sitter part alone: Tree.edit plus a parse with the old tree.
    parser = new_parser()
    offset = document.lines.line_start(middle)
    data = document.source
    tree = parser.parse(data)
    reparse: list[float] = []
    for i in range(edits):
        insert = i % 2 == 0
        data = (
            data[:offset] + b" " + data[offset:] if insert else data[:offset] + data[offset + 1 :]
        )
        point = (middle, 0)
        if insert:
            tree.edit(offset, offset, offset + 1, point, point, (middle, 1))
        else:
            tree.edit(offset, offset + 1, offset, point, (middle, 1), point)
        start = time.perf_counter()
        tree = parser.parse(data, tree)
        reparse.append(time.perf_counter() - start)
    print(f"one-character edit in the middle of {lines} lines:")
    print(f"  tree-sitter Tree.edit + reparse with the old tree:        {summary_ms(reparse)}")
    print(f"  SourceDocument.apply_changes (bytes, lines, tree, parse): {summary_ms(whole)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 20000, 200000])
    args = parser.parse_args()
    full_parse(args.sizes)
    incremental(args.lines, args.edits)


if __name__ == "__main__":
    main()
