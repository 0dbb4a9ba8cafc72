"""Refactorings planned ahead: what every refactoring of `code_actions.REFACTORINGS`
offers at every loop of a top-level item, as plain data to keep and send.

A plan is made per item (a function, usually) and per *anchor*: a refactoring
and the start of a loop it designates. Its actions depend only on the item's
text, the module facts the item refers to (the aliases it mentions, the
chunk's top-level values) and the settings, so a plan is kept under that key
(`item_key`) with its offsets relative to the item: an edit elsewhere keeps it,
even one that moves the item. Only a plan whose words mention a line number
("the affine.store on line 12") is tied to the line the item starts on.

Planning reads a small text of its own per item (`extract_of`: the item and the
module facts it depends on), so that its cost does not grow with the document;
the server plans in a worker process (`Planning`, `serve`), so that planning
never holds up the analysis of an edit.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Hashable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import TypeVar

from affine_lsp.checks import CheckOptions, TextEdit
from affine_lsp.ide import panel
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.code_actions import REFACTORINGS, Action, Refactoring
from affine_lsp.ide.extracts import Extract
from affine_lsp.ide.panel import Preview
from affine_lsp.ide.records import OPERATION, ItemRecord
from affine_lsp.ide.settings import Settings
from affine_lsp.ir import AffineForOp, AffineParallelOp, ModuleModel, Operation
from affine_lsp.poly import budgets
from affine_lsp.syntax import SourceDocument, Span

_LINE_MENTION = re.compile(r"\bline \d")

T = TypeVar("T")

NOT_OFFERED = "the loop does not offer it (planned again on the current text)"
"""Why an action chosen cannot be computed when planning it again does not find it."""

Anchor = tuple[str, int]
"""(refactoring name, the designated loop's start relative to its item)."""


@dataclass(frozen=True)
class PlannedEdit:
    """A text edit with byte offsets relative to the start of its item."""

    start: int
    end: int
    new_text: str


@dataclass(frozen=True)
class PlannedAction:
    """One planned action. `edits` None: computed when chosen (`resolve`)."""

    refactoring: str
    title: str
    kind: str
    edits: tuple[PlannedEdit, ...] | None
    disabled_reason: str | None = None
    preferred: bool = False

    @property
    def mentions_lines(self) -> bool:
        return any(_LINE_MENTION.search(t or "") for t in (self.title, self.disabled_reason))

    def text_edits(self, item_start: int) -> list[TextEdit]:
        """The edits for the item starting at `item_start`."""
        assert self.edits is not None
        return [
            TextEdit(Span(item_start + e.start, item_start + e.end), e.new_text) for e in self.edits
        ]


@dataclass(frozen=True)
class AnchorPlan:
    """The actions of one anchor, and the line (row: lines end at `\\n`) the item
    started on when planned."""

    actions: tuple[PlannedAction, ...]
    line: int

    def valid_at(self, line: int) -> bool:
        return self.line == line or not any(a.mentions_lines for a in self.actions)


@dataclass
class ItemPlan:
    """What is planned for one item key: its anchors (once known) and their plans."""

    anchors: tuple[Anchor, ...] | None = None
    outermost: int = 0  # the first `outermost` anchors are at outermost loops
    plans: dict[Anchor, AnchorPlan] | None = None

    def missing(self, line: int, outermost: bool = False) -> list[Anchor]:
        """The anchors not planned yet (or planned at another line, in words that
        mention lines), of outermost loops only if `outermost`."""
        anchors = self.anchors or ()
        if outermost:
            anchors = anchors[: self.outermost]
        return [a for a in anchors if self.valid_plan(a, line) is None]

    def valid_plan(self, anchor: Anchor, line: int) -> AnchorPlan | None:
        """The anchor's plan, if there is one that holds for the item starting on `line`."""
        plan = (self.plans or {}).get(anchor)
        return plan if plan is not None and plan.valid_at(line) else None


def item_key(analysis: DocumentAnalysis, record: ItemRecord, settings: Settings) -> Hashable | None:
    """What an item's plans depend on; None while its analysis is not current."""
    if record.dirty or record.removed or record.kind != OPERATION:
        return None
    digest = hashlib.blake2b(digest_size=16)
    digest.update(analysis.document.data[record.start : record.end])
    digest.update(repr(analysis.facts_key(record)).encode())  # (it holds dicts)
    return (digest.digest(), replace(settings, log_level=None))


def refactoring_named(name: str) -> Refactoring:
    return next(r for r in REFACTORINGS if r.name == name)


def _line_of(document: SourceDocument) -> Callable[[int], int]:
    return lambda offset: document.position(offset)[0]


def _model(analysis: DocumentAnalysis, record: ItemRecord) -> ModuleModel | None:
    view = analysis.view_of(record)
    return view.model if view is not None and record.kind == OPERATION else None


def designated(
    analysis: DocumentAnalysis, record: ItemRecord, refactoring: Refactoring, start: int, end: int
) -> tuple[Operation | None, Anchor | None]:
    """The loop `refactoring` designates at [start, end], and its anchor if planning at
    the loop's start gives the same answer (the loop designates itself there)."""
    model = _model(analysis, record)
    if model is None:
        return None, None
    line_of = _line_of(analysis.document)
    loop = refactoring.designate(model, start, end, line_of)
    if loop is None:
        return None, None
    at = loop.span.start_byte
    if (start, end) != (at, at) and refactoring.designate(model, at, at, line_of) is not loop:
        return loop, None
    return loop, (refactoring.name, at - record.start)


def anchors_of(analysis: DocumentAnalysis, record: ItemRecord) -> tuple[tuple[Anchor, ...], int]:
    """Every anchor of an item: each refactoring at each loop that designates itself;
    the outermost loops first, then the loops in them, and so on (at most
    `budgets.REFACTORING_ANCHORS` loops). With the number of anchors at outermost
    loops (the first ones)."""
    view = analysis.view_of(record)
    if view is None or record.kind != OPERATION:
        return (), 0
    if view.anchors is None:  # (once per version of the item)
        view.anchors = _anchors(analysis, record, view.model)
    return view.anchors


def _anchors(
    analysis: DocumentAnalysis, record: ItemRecord, model: ModuleModel
) -> tuple[tuple[Anchor, ...], int]:
    line_of = _line_of(analysis.document)
    depth: dict[int, int] = {}
    for op in model.walk():  # (outer ops first: a loop's outer loops have their depth)
        if isinstance(op, AffineForOp | AffineParallelOp):
            outer = op.parent_op
            while outer is not None and id(outer) not in depth:
                outer = outer.parent_op
            depth[id(op)] = depth[id(outer)] + 1 if outer is not None else 0
    loops = [op for op in model.walk() if id(op) in depth]
    loops = [op for op in loops if record.start <= op.span.start_byte < record.end]
    loops.sort(key=lambda op: (depth[id(op)], op.span.start_byte))
    anchors: list[Anchor] = []
    outermost = 0
    for loop in loops[: budgets.REFACTORING_ANCHORS]:
        at = loop.span.start_byte
        for refactoring in REFACTORINGS:
            if refactoring.designate(model, at, at, line_of) is loop:
                anchors.append((refactoring.name, at - record.start))
                outermost += depth[id(loop)] == 0
    return tuple(anchors), outermost


def _planned(name: str, action: Action, record: ItemRecord) -> PlannedAction:
    edits = None
    if action.edits is not None and all(
        record.start <= e.span.start_byte <= e.span.end_byte <= record.end for e in action.edits
    ):
        edits = tuple(
            PlannedEdit(
                e.span.start_byte - record.start, e.span.end_byte - record.start, e.new_text
            )
            for e in action.edits
        )
    return PlannedAction(
        name, action.title, action.kind, edits, action.disabled_reason, action.preferred
    )


def plan_at(
    analysis: DocumentAnalysis,
    record: ItemRecord,
    refactoring: Refactoring,
    start: int,
    end: int,
    settings: Settings,
) -> tuple[PlannedAction, ...]:
    """The actions of `refactoring` at [start, end], planned now (within the
    refactoring's own budgets)."""
    found = refactoring.prepare(analysis, start, end, settings)()
    return tuple(_planned(refactoring.name, action, record) for action in found)


def resolve_at(
    analysis: DocumentAnalysis,
    refactoring: Refactoring,
    start: int,
    end: int,
    title: str,
    settings: Settings,
) -> tuple[list[TextEdit], str | None]:
    """The edits of the action titled `title` at [start, end] (planned again, then
    computed): (edits, None), or ([], why not). It is planned again within the
    operation caps only, as planned ahead: the same text gives the same actions,
    whatever the machine's load."""
    with budgets.time_limits(False):
        found = refactoring.prepare(analysis, start, end, settings)()
    stem = title.removesuffix(")")  # an action planned undecided: "... (depth 2"
    action = next((a for a in found if a.title == title), None)
    if action is None:
        action = next((a for a in found if a.title.startswith(stem)), None)
    if action is None:
        return [], NOT_OFFERED
    if action.disabled_reason is not None:
        return [], action.disabled_reason
    edits = action.resolve()
    return (edits, None) if edits else ([], action.disabled_reason or "nothing to change")


def _names_lines(found: object) -> bool:
    """Whether a result's words name a line."""
    if isinstance(found, dict):
        return any(_names_lines(plan) for plan in found.values())
    if isinstance(found, AnchorPlan):
        return any(a.mentions_lines for a in found.actions)
    if isinstance(found, tuple):
        return any(_names_lines(part) for part in found)
    if isinstance(found, PlannedAction):
        return found.mentions_lines
    return isinstance(found, str) and bool(_LINE_MENTION.search(found))


class Planning:
    """Planning on extracts (what a planning worker does); the analysis of the
    last extract is kept for the next call about the same item."""

    def __init__(self) -> None:
        self._last: tuple[tuple[Extract, bool], DocumentAnalysis, ItemRecord | None] | None = None

    def _open(self, extract: Extract, at_row: bool) -> tuple[DocumentAnalysis, ItemRecord | None]:
        if self._last is None or self._last[0] != (extract, at_row):
            text, item_start = extract.text(at_row)
            document = SourceDocument(text, encoding=extract.encoding)
            analysis = DocumentAnalysis(document, CheckOptions(dialects=extract.dialects))
            record = analysis.record_at(item_start)
            if record is not None and (record.start != item_start or record.kind != OPERATION):
                record = None
            self._last = ((extract, at_row), analysis, record)
        return self._last[1], self._last[2]

    def _on(
        self, extract: Extract, work: Callable[[DocumentAnalysis, ItemRecord], T]
    ) -> T | tuple[()]:
        """`work(analysis, record)` on the extract, again with the item on its own
        line when the words of the result name lines; () without the item."""
        analysis, record = self._open(extract, False)
        if record is None:
            return ()
        found = work(analysis, record)
        if _names_lines(found):
            analysis, record = self._open(extract, True)
            if record is not None:
                found = work(analysis, record)
        return found

    def anchors(self, extract: Extract) -> tuple[tuple[Anchor, ...], int]:
        """The item's anchors, and how many of the first are at outermost loops."""
        analysis, record = self._open(extract, False)
        return anchors_of(analysis, record) if record is not None else ((), 0)

    def plan(
        self,
        extract: Extract,
        anchors: Iterable[Anchor],
        settings: Settings,
        time_limits: bool = True,
    ) -> dict[Anchor, AnchorPlan]:
        """Plan the item's anchors; without `time_limits`, only the budgets' operation
        caps bound the work (planning ahead: nobody waits, and the plans do not
        depend on the machine's load)."""
        anchors = list(anchors)

        def work(analysis: DocumentAnalysis, record: ItemRecord) -> dict[Anchor, AnchorPlan]:
            plans = {}
            with nullcontext() if time_limits else budgets.time_limits(False):
                for name, relative in anchors:
                    at = record.start + relative
                    refactoring = refactoring_named(name)
                    actions = plan_at(analysis, record, refactoring, at, at, settings)
                    plans[(name, relative)] = AnchorPlan(actions, extract.row)
            return plans

        return self._on(extract, work) or {}

    def plan_range(
        self, extract: Extract, name: str, start: int, end: int, settings: Settings
    ) -> tuple[PlannedAction, ...]:
        """Plan one refactoring at [start, end] (relative to the item)."""

        def work(analysis: DocumentAnalysis, record: ItemRecord) -> tuple[PlannedAction, ...]:
            at = record.start
            refactoring = refactoring_named(name)
            return plan_at(analysis, record, refactoring, at + start, at + end, settings)

        return self._on(extract, work)

    def resolve(
        self, extract: Extract, name: str, start: int, end: int, title: str, settings: Settings
    ) -> tuple[tuple[PlannedEdit, ...], str | None]:
        """The edits (relative to the item) of the action titled `title` at [start,
        end] (relative), or why there are none."""

        def work(
            analysis: DocumentAnalysis, record: ItemRecord
        ) -> tuple[tuple[PlannedEdit, ...], str | None]:
            at = record.start
            refactoring = refactoring_named(name)
            edits, reason = resolve_at(analysis, refactoring, at + start, at + end, title, settings)
            relative = tuple(
                PlannedEdit(e.span.start_byte - at, e.span.end_byte - at, e.new_text) for e in edits
            )
            return relative, reason

        return self._on(extract, work) or ((), NOT_OFFERED)

    def preview(
        self, extract: Extract, name: str, start: int, end: int, title: str, settings: Settings
    ) -> Preview:
        """The pictures before and after the action titled `title` at [start, end]
        (relative to the item), its edits computed as `resolve` computes them (and
        kept for it: choosing the action afterwards finds them done)."""

        def work(analysis: DocumentAnalysis, record: ItemRecord, first_line: int) -> Preview:
            at = record.start
            refactoring = refactoring_named(name)
            edits, reason = resolve_at(analysis, refactoring, at + start, at + end, title, settings)
            model = _model(analysis, record)
            line_of = _line_of(analysis.document)
            loop = refactoring.designate(model, at + start, at + end, line_of) if model else None
            if loop is None:
                return Preview(title, (), (), NOT_OFFERED)
            return panel.preview(analysis, record, loop, title, edits, reason, first_line)

        analysis, record = self._open(extract, False)
        if record is None:
            return Preview(title, (), (), NOT_OFFERED)
        found = work(analysis, record, extract.row - extract.context.count(b"\n"))
        if _names_lines(found.reason or "") or any(map(_names_lines, found.notes)):
            analysis, record = self._open(extract, True)
            if record is not None:
                found = work(analysis, record, 0)
        return found


# --- The worker's side of the server's planner ------------------------------------------

Message = tuple[str, tuple]
"""(a `Planning` method, its arguments)."""


def handle(planning: Planning, message: Message) -> tuple[bool, object]:
    """Carry out one call: (True, its result), or (False, the error as text)."""
    method, arguments = message
    try:
        return True, getattr(planning, method)(*arguments)
    except Exception as error:  # reported to the server, which logs it
        return False, f"{type(error).__name__}: {error}"


def serve(connection: Connection) -> None:
    """The loop of a planning worker process: say it is loaded (None), then answer
    each message of `connection` until it closes. Its standard output is not the
    server's protocol stream (it never reads its standard input)."""
    import os
    import sys

    os.dup2(2, 1)  # stray output goes to the log, never into the LSP stream
    sys.stdout = sys.stderr
    planning = Planning()
    connection.send(None)  # loaded: the server sends calls from now on
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        connection.send(handle(planning, message))
