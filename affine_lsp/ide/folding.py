"""Folding ranges: regions, multi-line maps, sets, argument lists and dictionaries,
runs of comment lines, and `// -----` chunks. Lines are 0-based.

`FoldingCache` keeps what each top-level item contributes (in rows relative to
the item's first row: it depends only on the item's text) while the analysis
keeps the item's record, so that a request after an edit looks at the items the
edit touched only.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cache

import tree_sitter

from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.records import ItemRecord
from affine_lsp.syntax import Node, SourceDocument, mlir_query

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


def _order(fold: Fold) -> tuple[int, int, str]:
    """Outer folds first; for the same lines, plain ones before comment and chunk folds."""
    return fold.start_line, -fold.end_line, fold.kind or ""


@dataclass(frozen=True)
class _Found:
    """What a subtree contributes: its multi-line folds (in order, once each), the rows of
    its comments that are alone on their line, and of its `// -----` markers."""

    folds: tuple[Fold, ...]
    comment_rows: tuple[int, ...]
    marker_rows: tuple[int, ...]

    def shifted(self, rows: int) -> _Found:
        return _Found(
            tuple(Fold(f.start_line + rows, f.end_line + rows) for f in self.folds),
            tuple(row + rows for row in self.comment_rows),
            tuple(row + rows for row in self.marker_rows),
        )


@cache
def _query() -> tree_sitter.Query:
    return mlir_query(_QUERY)


def _find(document: SourceDocument, node: Node, base: int = 0) -> _Found:
    """What the subtree of `node` contributes, in rows relative to row `base`."""
    captures = tree_sitter.QueryCursor(_query()).captures(node)
    folds = set()
    for fold in captures.get("fold", []):
        first, last = fold.start_point[0], fold.end_point[0]
        # Keep the closing bracket visible: fold up to the line before it.
        if last - 1 > first:
            folds.add(Fold(first - base, last - 1 - base))
    comments = [
        n.start_point[0] - base for n in captures.get("comment", []) if _starts_line(document, n)
    ]
    markers = [n.start_point[0] - base for n in captures.get("split", [])]
    return _Found(tuple(sorted(folds, key=_order)), tuple(comments), tuple(markers))


def folding_ranges(document: SourceDocument) -> list[Fold]:
    """The folding ranges of the whole document."""
    return _assemble(document, [_find(document, document.tree.root_node)])


class _ItemFolds:
    """What one item contributes, relative to its first row, and placed at `row`."""

    __slots__ = ("record", "relative", "row", "placed")

    def __init__(self, record: ItemRecord, relative: _Found) -> None:
        self.record = record
        self.relative = relative
        self.row = 0
        self.placed = relative

    def at(self, row: int) -> _Found:
        if row != self.row:
            self.row, self.placed = row, self.relative.shifted(row)
        return self.placed


class FoldingCache:
    """Folding ranges of one analysed document, computed item by item (see above)."""

    def __init__(self) -> None:
        self._items: dict[int, _ItemFolds] = {}

    def ranges(self, analysis: DocumentAnalysis) -> list[Fold]:
        analysis.sync()
        document = analysis.document
        if document.has_lone_cr:  # rows are not lines: what an item gives is not its own
            self._items = {}
            return folding_ranges(document)
        # Comments are folded as comments, also those that end a chunk (and are items).
        records = (r for r in analysis.records if r.kind != "comment")
        kept: dict[int, _ItemFolds] = {}
        self._items, previous = kept, self._items
        parts = []
        cursor = document.tree.root_node.walk()
        more = cursor.goto_first_child()
        while more:
            node = cursor.node
            if node is None:  # never, for a cursor on a node
                break
            row = node.start_point[0]
            if node.type == "comment":  # top-level comments are not items
                parts.append(_find(document, node))
            elif node.is_named:
                record = next(records, None)
                if record is None or record.start != node.start_byte:  # (cannot happen)
                    return folding_ranges(document)
                entry = previous.get(id(record))
                if entry is None or entry.record is not record:
                    entry = _ItemFolds(record, _find(document, node, row))
                kept[id(record)] = entry
                parts.append(entry.at(row))
            more = cursor.goto_next_sibling()
        return _assemble(document, parts)


def _assemble(document: SourceDocument, parts: list[_Found]) -> list[Fold]:
    """Folds, comment runs and chunks from what the parts of a document (in order)
    contribute. The parts' folds are in order one after the other: an item's folds
    start before the last row of the item, where the next one starts at the earliest."""
    folds = [fold for part in parts for fold in part.folds]
    extra: list[Fold] = []
    comment_lines = sorted({row for part in parts for row in part.comment_rows})
    run_start = previous = None
    for line in [*comment_lines, None]:
        if line is not None and previous is not None and line == previous + 1:
            previous = line
            continue
        if run_start is not None and previous is not None and previous > run_start:
            extra.append(Fold(run_start, previous, "comment"))
        run_start = previous = line
    markers = sorted(row for part in parts for row in part.marker_rows)
    if markers:  # each chunk folds under its marker line (the first from the top)
        starts = [0, *markers]
        last_line = document.lines.line_count - 1
        if document.data.endswith((b"\n", b"\r")):
            last_line -= 1  # the empty line after the final line break
        ends = [m - 1 for m in markers] + [max(last_line, 0)]
        for first, last in zip(starts, ends, strict=True):
            if last > first:
                extra.append(Fold(first, last, "region"))
    return _merged(folds, sorted(set(extra), key=_order))


def _merged(ordered: list[Fold], extra: list[Fold]) -> list[Fold]:
    """Two lists in `_order` as one (the second one short: inserted by bisection)."""
    result: list[Fold] = []
    done = 0
    for fold in extra:
        at = bisect_right(ordered, _order(fold), lo=done, key=_order)
        result += ordered[done:at]
        result.append(fold)
        done = at
    result += ordered[done:]
    return result


def _starts_line(document: SourceDocument, node: Node) -> bool:
    """Whether a comment is alone on its line (not after code)."""
    line_start = document.lines.line_start(node.start_point[0])
    return not document.data[line_start : node.start_byte].strip()
