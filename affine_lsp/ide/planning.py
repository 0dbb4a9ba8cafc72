"""Refactorings planned ahead: what every refactoring of `code_actions.REFACTORINGS`
offers at every loop of a top-level item, as plain data to keep and send.

A plan is made per item (a function, usually) and per *anchor*: a refactoring
and the start of a loop it designates. Its actions depend only on the item's
text, the module facts the item refers to (the aliases it mentions, the
chunk's top-level values) and the settings, so a plan is kept under that key
(`item_key`) with its offsets relative to the item: an edit elsewhere keeps it,
even one that moves the item. Only a plan whose words mention a line number
("the affine.store on line 12") is tied to the line the item starts on.

`PlanningWorkspace` keeps copies of the open documents, edited as the originals
are, and plans and resolves actions on them: the server runs one in a worker
process, so that planning never holds up the analysis of an edit.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Hashable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, replace

from affine_lsp.checks import TextEdit
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.code_actions import REFACTORINGS, Action, Refactoring
from affine_lsp.ide.records import OPERATION, ItemRecord
from affine_lsp.ide.settings import Settings
from affine_lsp.ir.model import AffineForOp, AffineParallelOp, ModuleModel, Operation
from affine_lsp.poly import budgets
from affine_lsp.syntax import ContentChange, SourceDocument, Span

_LINE_MENTION = re.compile(r"\bline \d")

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
    """The actions of one anchor, and the line the item started on when planned."""

    actions: tuple[PlannedAction, ...]
    line: int

    def valid_at(self, line: int) -> bool:
        return self.line == line or not any(a.mentions_lines for a in self.actions)


@dataclass
class ItemPlan:
    """What is planned for one item key: its anchors (once known) and their plans."""

    anchors: tuple[Anchor, ...] | None = None
    plans: dict[Anchor, AnchorPlan] | None = None

    def missing(self, line: int) -> list[Anchor]:
        """The anchors not planned yet (or planned at another line, in words that
        mention lines); all of them while the anchors are not known."""
        plans = self.plans or {}
        return [a for a in self.anchors or () if a not in plans or not plans[a].valid_at(line)]


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


def _line_of(document: SourceDocument):
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


def anchors_of(analysis: DocumentAnalysis, record: ItemRecord) -> tuple[Anchor, ...]:
    """Every anchor of an item: each refactoring at each loop that designates itself
    (at most `budgets.REFACTORING_ANCHORS` loops, the outermost first)."""
    model = _model(analysis, record)
    if model is None:
        return ()
    line_of = _line_of(analysis.document)
    loops = [op for op in model.walk() if isinstance(op, AffineForOp | AffineParallelOp)]
    loops = [op for op in loops if record.start <= op.span.start_byte < record.end]
    anchors: list[Anchor] = []
    for loop in loops[: budgets.REFACTORING_ANCHORS]:
        at = loop.span.start_byte
        for refactoring in REFACTORINGS:
            if refactoring.designate(model, at, at, line_of) is loop:
                anchors.append((refactoring.name, at - record.start))
    return tuple(anchors)


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
    computed): (edits, None), or ([], why not)."""
    found = refactoring.prepare(analysis, start, end, settings)()
    stem = title.removesuffix(")")  # an action planned undecided: "... (depth 2"
    action = next((a for a in found if a.title == title), None)
    if action is None:
        action = next((a for a in found if a.title.startswith(stem)), None)
    if action is None:
        return [], "this code action is out of date"
    if action.disabled_reason is not None:
        return [], action.disabled_reason
    edits = action.resolve()
    return (edits, None) if edits else ([], action.disabled_reason or "nothing to change")


@dataclass
class _Copy:
    version: int | None
    analysis: DocumentAnalysis


class PlanningWorkspace:
    """Copies of the open documents, and planning on them (by document version: a
    call for another version than the copy's answers None)."""

    def __init__(self) -> None:
        self._documents: dict[str, _Copy] = {}

    def sync(
        self,
        uri: str,
        version: int | None,
        changes: Iterable[ContentChange],
        length: int,
        text: str | None = None,
        encoding: str = "utf-16",
    ) -> bool:
        """Bring a copy to `version`: the whole `text`, or `changes` to the copy. False
        (and the copy dropped) if the result does not have `length` bytes."""
        copy = self._documents.get(uri)
        if text is not None:
            copy = _Copy(version, DocumentAnalysis.from_text(text, encoding=encoding))
            self._documents[uri] = copy
        elif copy is None:
            return False
        else:
            changes = list(changes)
            if changes:
                copy.analysis.apply_changes(changes)
            copy.version = version
        if len(copy.analysis.document.data) != length:
            del self._documents[uri]
            return False
        return True

    def close(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def _record(self, uri: str, version: int | None, item_start: int):
        copy = self._documents.get(uri)
        if copy is None or copy.version != version:
            return None, None
        record = copy.analysis.record_at(item_start)
        if record is None or record.start != item_start or record.kind != OPERATION:
            return copy.analysis, None
        return copy.analysis, record

    def anchors(self, uri: str, version: int | None, item_start: int) -> tuple[Anchor, ...] | None:
        analysis, record = self._record(uri, version, item_start)
        if analysis is None:
            return None
        return anchors_of(analysis, record) if record is not None else ()

    def plan(
        self,
        uri: str,
        version: int | None,
        item_start: int,
        anchors: Iterable[Anchor],
        settings: Settings,
        time_limits: bool = True,
    ) -> dict[Anchor, AnchorPlan] | None:
        """Plan the anchors of the item starting at `item_start`; without
        `time_limits`, only the budgets' operation caps bound the work (planning
        ahead: nobody waits, and the plans do not depend on the machine's load)."""
        analysis, record = self._record(uri, version, item_start)
        if analysis is None:
            return None
        if record is None:
            return {}
        line = analysis.document.position(record.start)[0]
        plans = {}
        with nullcontext() if time_limits else budgets.time_limits(False):
            for name, relative in anchors:
                at = record.start + relative
                actions = plan_at(analysis, record, refactoring_named(name), at, at, settings)
                plans[(name, relative)] = AnchorPlan(actions, line)
        return plans

    def plan_range(
        self, uri: str, version: int | None, name: str, start: int, end: int, settings: Settings
    ) -> tuple[int, tuple[PlannedAction, ...]] | None:
        """Plan one refactoring at [start, end] (the item's start, and the actions)."""
        copy = self._documents.get(uri)
        if copy is None or copy.version != version:
            return None
        record = copy.analysis.record_at(start)
        if record is None or record.kind != OPERATION:
            return 0, ()
        refactoring = refactoring_named(name)
        return record.start, plan_at(copy.analysis, record, refactoring, start, end, settings)

    def resolve(
        self,
        uri: str,
        version: int | None,
        name: str,
        start: int,
        end: int,
        title: str,
        settings: Settings,
    ) -> tuple[list[TextEdit], str | None] | None:
        copy = self._documents.get(uri)
        if copy is None or copy.version != version:
            return None
        return resolve_at(copy.analysis, refactoring_named(name), start, end, title, settings)


# --- The worker's side of the server's planner ------------------------------------------

OUT_OF_SYNC = "out of sync"
"""The answer to a call whose document copy could not be brought to its version."""

Message = tuple[str, tuple | None, str, tuple]
"""(uri, sync arguments or None, workspace method, its arguments after the uri)."""


def handle(workspace: PlanningWorkspace, message: Message) -> tuple[bool, object]:
    """Carry out one call: (True, its result), or (False, the error as text)."""
    uri, sync, method, arguments = message
    try:
        if sync is not None and not workspace.sync(uri, *sync):
            return True, OUT_OF_SYNC
        return True, getattr(workspace, method)(uri, *arguments)
    except Exception as error:  # reported to the server, which logs it
        return False, f"{type(error).__name__}: {error}"


def serve(connection, niceness: int) -> None:
    """The loop of a planning worker process: answer each message of `connection`
    until it closes. Its standard streams are not the server's protocol."""
    import os
    import sys

    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # stray output goes to the log, never into the LSP stream
    sys.stdout = sys.stderr
    if hasattr(os, "nice"):
        os.nice(niceness)
    workspace = PlanningWorkspace()
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        connection.send(handle(workspace, message))
