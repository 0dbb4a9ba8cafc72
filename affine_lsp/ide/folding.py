"""Folding ranges: regions, multi-line maps, sets, argument lists and dictionaries,
runs of comment lines, and `// -----` chunks. Lines are 0-based."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import tree_sitter

from affine_lsp.syntax import SourceDocument, mlir_language

_QUERY = """
[(region) (affine_map) (integer_set) (dictionary) (func_arguments) (resource_block)] @fold
(comment) @comment
(split_marker) @split
"""


@dataclass(frozen=True)
class Fold:
    start_line: int
    end_line: int
    kind: str | None = None  # "comment" | "region" | None


@cache
def _query() -> tree_sitter.Query:
    return tree_sitter.Query(mlir_language(), _QUERY)


def folding_ranges(document: SourceDocument) -> list[Fold]:
    captures = tree_sitter.QueryCursor(_query()).captures(document.tree.root_node)
    folds: list[Fold] = []
    for node in captures.get("fold", []):
        first, last = node.start_point[0], node.end_point[0]
        # Keep the closing bracket visible: fold up to the line before it.
        if last - 1 > first:
            folds.append(Fold(first, last - 1))
    comment_lines = sorted(
        {n.start_point[0] for n in captures.get("comment", []) if _starts_line(document, n)}
    )
    run_start = previous = None
    for line in [*comment_lines, None]:
        if line is not None and previous is not None and line == previous + 1:
            previous = line
            continue
        if run_start is not None and previous is not None and previous > run_start:
            folds.append(Fold(run_start, previous, "comment"))
        run_start = previous = line
    markers = sorted(n.start_point[0] for n in captures.get("split", []))
    if markers:  # each chunk folds under its marker line (the first from the top)
        starts = [0, *markers]
        last_line = document.lines.line_count - 1
        if document.data.endswith((b"\n", b"\r")):
            last_line -= 1  # the empty line after the final line break
        ends = [m - 1 for m in markers] + [max(last_line, 0)]
        for first, last in zip(starts, ends, strict=True):
            if last > first:
                folds.append(Fold(first, last, "region"))
    return sorted(set(folds), key=lambda f: (f.start_line, -f.end_line))


def _starts_line(document: SourceDocument, node) -> bool:
    """Whether a comment is alone on its line (not after code)."""
    line_start = document.lines.line_start(node.start_point[0])
    return not document.data[line_start : node.start_byte].strip()
