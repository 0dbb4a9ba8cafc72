"""What the editor's iteration-space panel shows, as plain data: the picture of
the loop at a position, and a refactoring's pictures before and after.

The loop at a position is the one whose header line holds it, else the innermost
loop around it (as the loop transformations designate). A preview draws the
nests a refactoring's edits touch: before, the designated loop and the loops of
its block the edits reach (two nests for a fusion); after, the loops at the same
depth the new text has there (the fused nest; the unrolled loop and its
remainder; the loops of a distribution). The pictures after show each point's
origin as the new code computes it: tile loops become outlines around their
points (`poly.transformed.group_tiles`), and points drawn elsewhere than their
original iteration are marked as moved, with rings where they were
(`mark_moved`). Everything is drawn by the one drawing core (`poly.space`,
`ide.picture`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

from affine_lsp.checks import TextEdit
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.describe import loop_header
from affine_lsp.ide.hover import too_deep
from affine_lsp.ide.picture import DEFAULT_KINDS, PANEL, render
from affine_lsp.ide.records import ItemRecord
from affine_lsp.ir import ModuleModel, Operation
from affine_lsp.poly import (
    LOOPS,
    IterationSpace,
    Level,
    PolyError,
    Unknown,
    budgets,
    chain_of,
    enclosing_levels,
    group_tiles,
    iteration_space,
    mark_moved,
)
from affine_lsp.poly.budgets import Budget
from affine_lsp.syntax import SourceDocument, encode
from affine_lsp.transforms import apply_edits, line_start, next_line_start, sorted_edits

MAX_NESTS = 4
"""Nests drawn on either side of a preview; more are named in a note."""

NO_LOOP = "No affine.for or affine.parallel at the cursor."


@dataclass(frozen=True)
class Picture:
    """One nest's picture and what it shows, in numbers."""

    svg: str
    caption: str  # the loop's header and line
    domain: str  # the iteration domain of the nest (symbols symbolic)
    line: int  # 0-based line of the loop in the document
    points: int  # points drawn (one circle each)
    total: int  # integer points of the domain
    arrows: int  # dependence arrows drawn
    tiles: int  # tiles outlined
    moved: int  # points drawn elsewhere than their origin
    dependences: dict[str, int]  # arrows by kind (RAW, WAR, WAW), each kind a group of the SVG
    shown: tuple[str, ...]  # the kinds whose arrows show; the others' groups are hidden

    def as_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Preview:
    """A refactoring's pictures; `reason` says why there are none after."""

    title: str
    before: tuple[Picture, ...]
    after: tuple[Picture, ...]
    reason: str | None = None
    notes: tuple[str, ...] = ()

    def as_json(self) -> dict:
        return {
            "title": self.title,
            "before": [p.as_json() for p in self.before],
            "after": [p.as_json() for p in self.after],
            "reason": self.reason,
            "notes": list(self.notes),
        }


def loop_at(model: ModuleModel, start: int, line_of: Callable[[int], int]) -> Operation | None:
    """The affine.for/affine.parallel whose header line holds `start`, else the innermost
    one around it."""
    around = [
        op
        for op in model.walk()
        if isinstance(op, LOOPS) and op.span.start_byte <= start <= op.span.end_byte
    ]
    if not around:
        return None
    line = line_of(start)
    on_line = [op for op in around if line_of(op.span.start_byte) == line]
    return on_line[0] if on_line else max(around, key=lambda op: op.span.start_byte)


def _picture(
    space: IterationSpace, document: SourceDocument, first_line: int, svg: str | None = None
) -> Picture:
    line = first_line + document.point(space.loop.span.start_byte)[0]
    return Picture(
        svg=svg if svg is not None else render(space, document, PANEL, first_line, DEFAULT_KINDS),
        caption=f"{loop_header(document, space.loop)} (line {line + 1})",
        domain=space.domain,
        line=line,
        points=len(space.points),
        total=space.total,
        arrows=len(space.arrows),
        tiles=len(set(space.tiles.values())),
        moved=len(space.moved),
        dependences={kind: sum(a.kind == kind for a in space.arrows) for kind in space.kinds},
        shown=DEFAULT_KINDS,
    )


def draw_nest(
    op: Operation,
    model: ModuleModel,
    document: SourceDocument,
    *,
    budget: Budget,
    first_line: int = 0,
    origin_names: Sequence[str] = (),
    origin_nest: tuple[Operation, ModuleModel] | None = None,
) -> Picture | Unknown:
    """The panel's picture of the nest headed by `op`: tiles outlined, and with
    `origin_names` (read from the writes of `origin_nest` where the new code no
    longer names them) the points moved from their origins marked."""
    if (deep := too_deep(op)) is not None:
        return deep
    limits = budgets.PANEL_PICTURE_LIMITS
    # Tile loops are not panels: the panels are counted once they are left out.
    wide = replace(limits, panels=limits.points)
    space = iteration_space(
        op, model, limits=wide, budget=budget, origin_names=origin_names, origin_nest=origin_nest
    )
    if isinstance(space, Unknown):
        return space
    grouped = group_tiles(space)
    if len({point[:-2] for point in grouped.points}) > limits.panels:
        space = iteration_space(
            op,
            model,
            limits=limits,
            budget=budget,
            origin_names=origin_names,
            origin_nest=origin_nest,
        )
        if isinstance(space, Unknown):
            return space
        grouped = group_tiles(space)
    return _picture(mark_moved(grouped), document, first_line)


def loop_picture(
    analysis: DocumentAnalysis, offset: int, budget: Budget = budgets.PANEL_PICTURE
) -> tuple[Picture | None, str]:
    """The picture of the loop at `offset` and a message: ('', the loop) or (None, why
    there is none)."""
    view = analysis.view_at(offset)
    if view is None or view.item.operation is None:
        return None, NO_LOOP
    document = analysis.document
    loop = loop_at(view.model, offset, lambda at: document.point(at)[0])
    if loop is None:
        return None, NO_LOOP
    drawn = draw_nest(loop, view.model, document, budget=budget)
    header = loop_header(document, loop)
    if isinstance(drawn, Unknown):
        line = document.point(loop.span.start_byte)[0] + 1
        return None, f"{header} (line {line}): no picture: {drawn.reason}"
    return drawn, drawn.caption


# -- previews ----------------------------------------------------------------------------

Range = tuple[int, int]


def _depth(op: Operation) -> int:
    return sum(1 for outer in op.ancestors() if isinstance(outer, LOOPS))


def _lines(data: bytes, op: Operation) -> Range:
    """The whole lines of an op."""
    return line_start(data, op.span.start_byte), next_line_start(data, op.span.end_byte)


def _touches(lines: Range, edited: Range) -> bool:
    start, end = edited
    if start == end:  # an insertion
        return lines[0] <= start < lines[1]
    return start < lines[1] and lines[0] < end


def _touched(data: bytes, first: Operation, ranges: list[Range]) -> list[Operation]:
    """`first` and the loops after it in its block whose lines the edits touch."""
    block = first.parent_block
    if block is None:
        return [first]
    index = block.operations.index(first)
    return [first] + [
        op
        for op in block.operations[index + 1 :]
        if isinstance(op, LOOPS) and any(_touches(_lines(data, op), r) for r in ranges)
    ]


def _new_ranges(edits: list[TextEdit]) -> list[Range]:
    """Where each edit's new text lies in the new text."""
    ranges, shift = [], 0
    for edit in edits:
        start = edit.span.start_byte + shift
        length = len(encode(edit.new_text))
        ranges.append((start, start + length))
        shift += length - (edit.span.end_byte - edit.span.start_byte)
    return ranges


def _mapped(offset: int, edits: list[TextEdit]) -> int:
    """Where `offset` is in the new text; an edit at or around it maps it to the start
    of its new text."""
    shift = 0
    for edit in edits:
        start, end = edit.span.start_byte, edit.span.end_byte
        if start >= offset or end > offset:
            return min(offset, start) + shift
        shift += len(encode(edit.new_text)) - (end - start)
    return offset + shift


def _pictures(
    ops: list[Operation],
    model: ModuleModel,
    document: SourceDocument,
    first_line: int,
    origin_names: Sequence[str] = (),
    budget: Budget = budgets.PREVIEW_PICTURE,
    origin_nest: tuple[Operation, ModuleModel] | None = None,
) -> tuple[list[Picture], list[str]]:
    pictures, notes = [], []
    for op in ops[:MAX_NESTS]:
        drawn = draw_nest(
            op,
            model,
            document,
            budget=budget,
            first_line=first_line,
            origin_names=origin_names,
            origin_nest=origin_nest,
        )
        line = first_line + document.point(op.span.start_byte)[0] + 1
        if isinstance(drawn, Unknown):
            notes.append(f"{loop_header(document, op)} (line {line}): no picture: {drawn.reason}")
        else:
            pictures.append(drawn)
    if len(ops) > MAX_NESTS:
        lines = ", ".join(str(first_line + document.point(op.span.start_byte)[0] + 1) for op in ops)
        notes.append(f"{len(ops)} nests (lines {lines}): the first {MAX_NESTS} are drawn")
    return pictures, notes


def _ivs(op: Operation) -> list[str]:
    """The source names of the ivs of the nest headed by `op`, as it is drawn."""
    chain, _ = chain_of(op)
    outer, _ = enclosing_levels(chain[-1])
    try:
        return [iv.display_name for level in [*outer, Level(chain[-1])] for iv in level.ivs]
    except PolyError:
        return []


def preview(
    analysis: DocumentAnalysis,
    record: ItemRecord,
    loop: Operation,
    title: str,
    edits: list[TextEdit],
    reason: str | None,
    first_line: int = 0,
    budget: Budget = budgets.PREVIEW_PICTURE,
) -> Preview:
    """The pictures of the refactoring titled `title` at `loop` (of the item `record`),
    whose `edits` (empty: refused for `reason`) rewrite the document; lines counted
    from `first_line`."""
    document = analysis.document
    view = analysis.view_of(record)
    if view is None:
        return Preview(title, (), (), "the code changed")
    data = bytes(document.data)
    edits = sorted_edits(edits)
    touched = _touched(data, loop, [(e.span.start_byte, e.span.end_byte) for e in edits])
    before, notes = _pictures(touched, view.model, document, first_line, (), budget)
    if not edits:
        return Preview(title, tuple(before), (), reason or "nothing to change", tuple(notes))
    new_document = SourceDocument(apply_edits(data, edits), encoding=document.encoding)
    new_analysis = DocumentAnalysis(new_document, analysis.options)  # (its dialects)
    new_record = new_analysis.record_at(record.start)
    new_view = new_analysis.view_of(new_record) if new_record is not None else None
    if new_view is None:
        return Preview(title, tuple(before), (), "the new text has no such item", tuple(notes))
    new_data = bytes(new_document.data)
    at = _mapped(line_start(data, loop.span.start_byte), edits)
    depth = _depth(loop)
    candidates = [
        op
        for op in new_view.model.walk()
        if isinstance(op, LOOPS)
        and _depth(op) == depth
        and next_line_start(new_data, op.span.end_byte) > at
    ]
    if not candidates:
        return Preview(title, tuple(before), (), "no loop is left there", tuple(notes))
    first = min(candidates, key=lambda op: op.span.start_byte)
    after_ops = _touched(new_data, first, _new_ranges(edits))
    origins = _ivs(loop) if len(touched) == 1 else []
    nest = (loop, view.model) if origins else None
    after, after_notes = _pictures(
        after_ops, new_view.model, new_document, first_line, origins, budget, nest
    )
    return Preview(title, tuple(before), tuple(after), None, tuple(notes + after_notes))
