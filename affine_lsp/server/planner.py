"""Refactorings planned ahead, in a worker process.

After the edits of a document settle (its analysis is done and nothing changed
for `SETTLE_SECONDS`), the planner goes through the top-level items of the
open documents, nearest to where the user last edited or asked first, and has
a worker process plan every refactoring at every loop (`ide.planning`). Plans
are kept per item by the item's text (`planning.item_key`), so an edit
elsewhere keeps them. A code-action request is answered from them at once;
what is not planned yet is planned for the request, ahead of the background
work.

Each call sends the worker the item to plan as a small text of its own
(`extracts.extract_of`), so the worker keeps no documents and its work does not
grow with the document. It runs at a lower priority than the server: typing
never waits for planning, which would hold Python's global lock for tens of
milliseconds at a time in a thread. The worker takes one call at a time,
requests before the background work; calls not sent yet are dropped when
their document changes, and the background work stops at any edit (to start
again once the edits settle).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Protocol

from affine_lsp.checks import TextEdit
from affine_lsp.ide import extracts, planning, planning_worker
from affine_lsp.ide.code_actions import REFACTORINGS
from affine_lsp.ide.panel import Preview
from affine_lsp.ide.planning import AnchorPlan, ItemPlan, PlannedAction
from affine_lsp.ide.records import OPERATION, ItemRecord
from affine_lsp.ide.settings import Settings
from affine_lsp.server.documents import OpenDocument
from affine_lsp.syntax import ContentChange, Span

logger = logging.getLogger("affine_lsp.server")

SETTLE_SECONDS = 0.2
"""Quiet time after an analysis before planning in the background starts."""

PLANNED_ITEMS = 4000
"""Items whose plans are kept (the least recently used are dropped)."""


class PlannerHost(Protocol):
    """What the planner reads of the server: its open documents and settings."""

    documents: dict[str, OpenDocument]
    settings: Settings


class PlanningUnavailable(Exception):
    """The worker failed or died while carrying out a call."""


@dataclass(frozen=True)
class PlannedRef:
    """What resolving a planned action needs: the refactoring, where it was planned
    (an anchor's loop start, or the request's range) and its title."""

    refactoring: str
    start: int
    end: int
    title: str


@dataclass(eq=False)
class _Call:
    document: OpenDocument
    version: int | None
    method: str
    arguments: tuple
    future: asyncio.Future
    urgent: bool
    keep: Callable[[Any], None] | None = None


class _Worker:
    """A worker process (or, where processes cannot start, a thread) answering
    `planning.handle` messages, one at a time. A process is `ready` once it has
    loaded the analysis and the refactorings (it says so); a thread at once."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        answer: Callable,
        died: Callable,
        process: bool,
        ready: Callable[[], None] = lambda: None,
        spawned: tuple[BaseProcess, Connection] | None = None,
    ) -> None:
        self._loop = loop
        self._answer = answer
        self._died = died
        self._on_ready = ready
        self.ready = False
        self._process: Any = None
        self._connection: Any = None
        self._inbox: queue.SimpleQueue | None = None
        self._stopped = False  # (answers coming after `stop` go nowhere)
        if process:
            spawned = spawned or planning_worker.spawn(planning_worker.NICENESS)
            if spawned is not None:  # (else no processes here: plan in a thread)
                self._process, self._connection = spawned
                threading.Thread(target=self._read, args=(self._connection,), daemon=True).start()
        if self._process is None:
            self._start_thread()
            self.ready = True

    def _read(self, connection: Connection) -> None:
        try:
            connection.recv()  # (None: loaded)
        except (EOFError, OSError):
            self._post(self._died, self)
            return
        self._post(self._loaded, None)
        while True:
            try:
                answer = connection.recv()
            except (EOFError, OSError):
                self._post(self._died, self)
                return
            self._post(self._answer, answer)

    def _loaded(self, _nothing: None) -> None:
        self.ready = True
        self._on_ready()

    def _start_thread(self) -> None:
        inbox: queue.SimpleQueue = queue.SimpleQueue()
        worker = planning.Planning()

        def run() -> None:
            while True:
                message = inbox.get()
                if message is None:
                    return
                self._post(self._answer, planning.handle(worker, message))

        self._inbox = inbox
        threading.Thread(target=run, name="affine-lsp-planner", daemon=True).start()

    def _post(self, function: Callable[[Any], None], argument: Any) -> None:
        if self._stopped and function is self._answer:
            return
        try:
            self._loop.call_soon_threadsafe(function, argument)
        except RuntimeError:  # the loop is closed: the server is gone
            pass

    def send(self, message: planning.Message) -> None:
        if self._inbox is not None:
            self._inbox.put(message)
        else:
            self._connection.send(message)

    def stop(self) -> None:
        self._stopped = True
        if self._inbox is not None:
            self._inbox.put(None)
        if self._connection is not None:
            self._connection.close()
        if self._process is not None and self._process.is_alive():
            self._process.terminate()


class Planner:
    """Plans of refactorings for the server's open documents."""

    def __init__(self, server: PlannerHost) -> None:
        self._server = server
        self.plans: OrderedDict[Hashable, ItemPlan] = OrderedDict()
        self._worker: _Worker | None = None
        # Requests made while the worker process loads are planned in a thread here.
        self._thread: _Worker | None = None
        self._spawned: tuple[BaseProcess, Connection] | None = None
        self._queue: list[_Call] = []
        self._in_flight: _Call | None = None
        self._in_flight_on: _Worker | None = None  # the worker carrying it out
        self._timer: asyncio.TimerHandle | None = None
        self._background: asyncio.Task | None = None
        self._focus: tuple[str, int] | None = None
        self.in_process = False  # plan in a thread of this process (tests)
        self.planned_anchors = 0  # anchors the worker planned (for tests and logs)
        self.calls = 0  # calls sent to the worker

    # -- what happens to documents -------------------------------------------------

    def opened(self, document: OpenDocument) -> None:
        self._stop_background()

    def changed(self, document: OpenDocument, changes: list[ContentChange]) -> None:
        for change in changes[:1]:
            if change.range is not None:
                self.focus(document.uri, document.analysis.document.offset(change.range[0]))
        self._stop_background()
        self._drop_stale_calls()

    def closed(self, uri: str) -> None:
        self._drop_stale_calls()

    def analysed(self, document: OpenDocument) -> None:
        """A version's analysis is done: plan once nothing else happens for a while."""
        self._stop_background()
        if not self._server.settings.plan_in_background:
            return
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(SETTLE_SECONDS, self.start_background)

    def settings_changed(self) -> None:
        self._stop_background()
        if self._server.settings.plan_in_background:
            self._timer = asyncio.get_running_loop().call_later(
                SETTLE_SECONDS, self.start_background
            )

    def focus(self, uri: str, offset: int) -> None:
        """Where the user is (an edit, a request): planned first."""
        self._focus = (uri, offset)

    def shutdown(self) -> None:
        self._stop_background()
        for worker in (self._worker, self._thread):
            if worker is not None:
                worker.stop()
        self._worker = self._thread = None

    # -- requests ------------------------------------------------------------------------

    async def actions_at(
        self, document: OpenDocument, start: int, end: int
    ) -> list[tuple[PlannedAction, int, PlannedRef]]:
        """The planned actions at [start, end] of the current version, each with its
        item's start and what resolving it needs: from the plans when they are
        there, else planned now (ahead of the background work)."""
        analysis = document.analysis
        record = analysis.record_at(start)
        if record is None or record.kind != OPERATION or end > record.end:
            return []
        settings = self._server.settings
        key = planning.item_key(analysis, record, settings)
        line = analysis.document.point(record.start)[0]
        found: dict[str, list[tuple[PlannedAction, int, PlannedRef]]] = {}
        anchors: list[planning.Anchor] = []
        ranges: list[str] = []
        for refactoring in REFACTORINGS:
            loop, anchor = planning.designated(analysis, record, refactoring, start, end)
            if loop is None:
                continue
            if anchor is None:
                ranges.append(refactoring.name)
            else:
                anchors.append(anchor)
        anchors = self._from_plans(key, anchors, line, record.start, found)
        if key in self.plans:
            self.plans.move_to_end(key)
        extract = extracts.extract_of(analysis, record) if anchors or ranges else None
        while anchors and await self._planning_now(extract, anchors, settings):
            anchors = self._from_plans(key, anchors, line, record.start, found)
        if anchors:
            keep = self._keeper(key)
            try:
                plans = await self._call(document, "plan", extract, anchors, settings, keep=keep)
            except PlanningUnavailable:
                self._failed(key, anchors, line)
                raise
            for anchor, plan in (plans or {}).items():
                found[anchor[0]] = self._refs(plan.actions, record.start, anchor)
        for name in ranges:
            arguments = (extract, name, start - record.start, end - record.start, settings)
            actions = await self._call(document, "plan_range", *arguments)
            found[name] = [
                (action, record.start, PlannedRef(name, start, end, action.title))
                for action in actions or ()
            ]
        return [entry for r in REFACTORINGS for entry in found.get(r.name, [])]

    def _from_plans(
        self,
        key: Hashable | None,
        anchors: list[planning.Anchor],
        line: int,
        item_start: int,
        found: dict[str, list[tuple[PlannedAction, int, PlannedRef]]],
    ) -> list[planning.Anchor]:
        """Put the actions of the anchors planned (for the item starting on `line`)
        into `found`, by refactoring; the anchors not planned."""
        item = self.plans.get(key) if key is not None else None
        missing = []
        for anchor in anchors:
            plan = item.valid_plan(anchor, line) if item is not None else None
            if plan is not None:
                found[anchor[0]] = self._refs(plan.actions, item_start, anchor)
            else:
                missing.append(anchor)
        return missing

    async def _planning_now(
        self, extract: extracts.Extract | None, anchors: list[planning.Anchor], settings: Settings
    ) -> bool:
        """If the worker is planning one of `anchors` of the same text (in the
        background, or for another request), wait until it is done (its plans are
        kept as it answers), so that a request does not plan it a second time;
        whether it waited."""
        call = self._in_flight
        if call is None or call.future.done() or call.method != "plan":
            return False
        planned_extract, planned_anchors, planned_settings = call.arguments[:3]
        if planned_extract != extract or planned_settings != settings:
            return False
        if not set(planned_anchors) & set(anchors):
            return False
        await asyncio.wait([call.future])  # (an edit that stops the background ends it at once)
        return True

    @staticmethod
    def _refs(
        actions: tuple[PlannedAction, ...], item_start: int, anchor: planning.Anchor
    ) -> list[tuple[PlannedAction, int, PlannedRef]]:
        at = item_start + anchor[1]
        return [(a, item_start, PlannedRef(anchor[0], at, at, a.title)) for a in actions]

    async def resolve(
        self, document: OpenDocument, ref: PlannedRef
    ) -> tuple[list[TextEdit], str | None] | None:
        """The edits of a planned action of the current version: (edits, None) or
        ([], why not); None if the document changed meanwhile."""
        analysis = document.analysis
        record = analysis.record_at(ref.start)
        if record is None or record.kind != OPERATION:
            return [], planning.NOT_OFFERED
        extract = extracts.extract_of(analysis, record)
        start, end = ref.start - record.start, ref.end - record.start
        arguments = (extract, ref.refactoring, start, end, ref.title, self._server.settings)
        resolved = await self._call(document, "resolve", *arguments)
        if resolved is None:
            return None
        edits, reason = resolved
        base = record.start
        return [TextEdit(Span(base + e.start, base + e.end), e.new_text) for e in edits], reason

    async def preview(self, document: OpenDocument, ref: PlannedRef) -> Preview | None:
        """The pictures before and after a planned action of the current version (its
        edits computed as `resolve` computes them); None if the document changed
        meanwhile."""
        analysis = document.analysis
        record = analysis.record_at(ref.start)
        if record is None or record.kind != OPERATION:
            return Preview(ref.title, (), (), planning.NOT_OFFERED)
        extract = extracts.extract_of(analysis, record)
        start, end = ref.start - record.start, ref.end - record.start
        arguments = (extract, ref.refactoring, start, end, ref.title, self._server.settings)
        previewed: Preview | None = await self._call(document, "preview", *arguments)
        return previewed

    # -- the background ------------------------------------------------------------------

    def _stop_background(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._background is not None and not self._background.done():
            self._background.cancel()
        self._background = None

    def start_background(self) -> asyncio.Task | None:
        """Start planning everything not planned yet (the edits have settled)."""
        self._stop_background()
        if self._server.settings.plan_in_background:
            self._background = asyncio.get_running_loop().create_task(self._plan_everything())
        return self._background

    def _work(self) -> list[tuple[OpenDocument, ItemRecord]]:
        """The items to plan, nearest the focus first (its document before others)."""
        focus_uri, focus = self._focus or ("", 0)
        work = []
        for document in self._server.documents.values():
            records = [r for r in document.analysis.records if r.kind == OPERATION]
            here = document.uri == focus_uri
            records.sort(key=lambda r: abs(r.start - focus) if here else r.start)
            work.append((not here, [(document, r) for r in records]))
        work.sort(key=lambda entry: entry[0])
        return [pair for _, pairs in work for pair in pairs]

    async def _plan_everything(self) -> None:
        try:
            planned = 0
            work = self._work()
            for outermost in (True, False):  # the outermost loops of every item first
                for document, record in work:
                    if self._server.documents.get(document.uri) is not document:
                        continue
                    if record.removed:
                        return
                    planned += await self._plan_item(document, record, outermost)
            if planned:
                logger.info("planned refactorings at %d loops in the background", planned)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("planning in the background failed")

    async def _plan_item(
        self, document: OpenDocument, record: ItemRecord, outermost: bool = False
    ) -> int:
        """Plan what is missing of one item (at its outermost loops only, if
        `outermost`), one anchor per call; the number planned."""
        settings = self._server.settings
        key = planning.item_key(document.analysis, record, settings)
        if key is None:
            return 0
        item = self.plans.get(key)
        line = document.analysis.document.point(record.start)[0]
        if item is not None and item.anchors is not None and not item.missing(line, outermost):
            return 0
        extract = extracts.extract_of(document.analysis, record)
        if item is None or item.anchors is None:

            def keep_anchors(found: tuple[tuple[planning.Anchor, ...], int]) -> None:
                kept = self._store(key, {})
                kept.anchors, kept.outermost = found

            try:
                anchors = await self._call(
                    document, "anchors", extract, urgent=False, keep=keep_anchors
                )
            except PlanningUnavailable as error:
                logger.error(
                    "finding the loops of the item at byte %d failed: %s", record.start, error
                )
                keep_anchors(((), 0))
                return 0
            if anchors is None:
                return 0
            item = self._store(key, {})
        planned = 0
        for anchor in item.missing(line, outermost):
            if item.valid_plan(anchor, line) is not None:
                continue  # (planned meanwhile, for a request)
            arguments = (extract, [anchor], settings, False)  # planned ahead: no time limits
            try:
                plans = await self._call(
                    document, "plan", *arguments, urgent=False, keep=self._keeper(key)
                )
            except PlanningUnavailable as error:
                logger.error("planning %s at byte %d failed: %s", anchor[0], anchor[1], error)
                self._failed(key, [anchor], line)
                continue
            if plans is None:
                return planned
            planned += len(plans)
        return planned

    def _failed(self, key: Hashable | None, anchors: list[planning.Anchor], line: int) -> None:
        """Anchors whose planning failed (or stopped the worker) get an empty plan, so
        that they are not tried again and again (until their item changes)."""
        if key is not None:
            self._store(key, {anchor: AnchorPlan((), line) for anchor in anchors})

    def _keeper(self, key: Hashable | None) -> Callable[[dict], None] | None:
        """What keeps the plans a call makes (even when whoever asked no longer waits)."""
        if key is None:
            return None

        def keep(plans: dict[planning.Anchor, AnchorPlan]) -> None:
            self.planned_anchors += len(plans)
            self._store(key, plans)

        return keep

    def _store(self, key: Hashable, plans: dict[planning.Anchor, AnchorPlan]) -> ItemPlan:
        item = self.plans.get(key)
        if item is None:
            item = self.plans[key] = ItemPlan()
        self.plans.move_to_end(key)
        item.plans = {**(item.plans or {}), **plans}
        while len(self.plans) > PLANNED_ITEMS:
            self.plans.popitem(last=False)
        return item

    # -- the worker ------------------------------------------------------------------------

    def _new_future(self) -> asyncio.Future:
        return asyncio.get_running_loop().create_future()

    async def _call(
        self,
        document: OpenDocument,
        method: str,
        *arguments: Any,
        urgent: bool = True,
        keep: Callable[[Any], None] | None = None,
    ) -> Any:
        """A `planning.Planning` method, in the worker; None if `document` changes
        before the call is sent. `keep` gets the result once it is there."""
        future = self._new_future()
        call = _Call(document, document.version, method, arguments, future, urgent, keep)
        self._enqueue(call)
        try:
            return await call.future
        except asyncio.CancelledError:
            if call in self._queue:
                self._queue.remove(call)
            elif call is self._in_flight and method == "resolve":
                self._abandon()  # (a cancelled "Optimize nest" stops computing)
            raise

    @property
    def busy_with(self) -> str | None:
        """The `planning.Planning` method the worker computes now (None when idle)."""
        return self._in_flight.method if self._in_flight is not None else None

    def _abandon(self) -> None:
        """Stop the worker in the middle of a call nobody waits for any more (it may
        take long); a new worker starts with the next call."""
        worker, self._worker, self._in_flight = self._worker, None, None
        if worker is not None:
            worker.stop()
        self._pump()

    def _enqueue(self, call: _Call) -> None:
        if call.urgent:
            index = next((i for i, c in enumerate(self._queue) if not c.urgent), len(self._queue))
            self._queue.insert(index, call)
        else:
            self._queue.append(call)
        self._pump()

    def _current(self, call: _Call) -> bool:
        document = call.document
        uri = document.uri
        return self._server.documents.get(uri) is document and document.version == call.version

    def _drop_stale_calls(self) -> None:
        for call in [c for c in self._queue if not self._current(c)]:
            self._queue.remove(call)
            if not call.future.done():
                call.future.set_result(None)

    def _pump(self) -> None:
        """Send the next call if none is being carried out: to the worker process
        once it is loaded; a request (urgent) made while it loads is planned in a
        thread here instead (the first code action does not wait for the process to
        load), and the background waits."""
        while self._in_flight is None and self._queue:
            call = self._queue[0]
            if call.future.done():
                self._queue.pop(0)
                continue
            if not self._current(call):
                self._queue.pop(0)
                call.future.set_result(None)
                continue
            worker = self.start_worker()
            if not worker.ready:
                if not call.urgent:
                    return  # (`_worker_ready` pumps again)
                worker = self._thread_worker()
            self._queue.pop(0)
            self._in_flight, self._in_flight_on = call, worker
            self.calls += 1
            try:
                worker.send((call.method, call.arguments))
            except (OSError, ValueError) as error:  # the pipe is gone
                logger.warning("the planning worker cannot be reached: %s", error)
                self._worker_died(worker)

    def adopt(self, spawned: tuple[BaseProcess, Connection]) -> None:
        """Take a worker process started already (`planning_worker.spawn`)."""
        self._spawned = spawned

    def start_worker(self) -> _Worker:
        """Start the worker if it is not running (it takes a while to load: the
        warm-up that follows `initialize` starts it, before it is needed)."""
        if self._worker is None:
            loop = asyncio.get_running_loop()
            process = not self.in_process
            spawned, self._spawned = self._spawned, None
            self._worker = _Worker(
                loop, self._answered, self._worker_died, process, self._pump, spawned
            )
        return self._worker

    def _thread_worker(self) -> _Worker:
        if self._thread is None:
            loop = asyncio.get_running_loop()
            self._thread = _Worker(loop, self._answered, self._worker_died, process=False)
        return self._thread

    def _answered(self, answer: tuple[bool, object]) -> None:
        call, self._in_flight = self._in_flight, None
        ok, value = answer
        if call is not None and ok and call.keep is not None:
            call.keep(value)
        if call is not None and not call.future.done():
            if ok:
                call.future.set_result(value)
            else:
                call.future.set_exception(PlanningUnavailable(str(value)))
        self._pump()

    def _worker_died(self, worker: _Worker) -> None:
        if worker is self._thread:
            self._thread = None
        elif worker is self._worker:
            logger.warning("the planning worker stopped; a new one starts with the next call")
            self._worker = None
        else:
            return
        if self._in_flight_on is worker:
            call, self._in_flight = self._in_flight, None
            if call is not None and not call.future.done():
                call.future.set_exception(PlanningUnavailable("the planning worker stopped"))
        self._pump()
