"""Checking a large document's items, and the files of Check Workspace, in helper
processes beside the server.

Opening a large document is the longest analysis there is, and Python checks on
one core. While the server checks the items the editor shows and those after
them, helper processes (`ide.check_worker`) check items taken from the end of
the queue (`DocumentAnalysis.claim`), each on an extract of its own
(`ide.remote_checks`): what they find is exactly what the server would find,
and settles the records as the server's own checks do. The complete set is
published once every item is back; an edit voids what is out (the records go
back into the queue, late outcomes are dropped); a helper that fails or dies
gives its items back, and the server checks them itself.

A document opened with more than `PREPARED_BYTES` (and at most
`PREPARED_MOST_BYTES`) is sent to the helpers ready at once (`prepare`): they
parse it while the server does, and until its first analysis ends (or an edit,
or new options), items go by where they are (`remote_checks.Claimed`), which
costs a helper no parse of its own and lets sharing pay from small documents on;
`forget` lets them drop their copy.

Check Workspace gives a helper with room a whole file (`take_file`) while the
server checks the next one itself.

The helpers are the check workers `serve` starts first thing
(`ide.check_worker.spawn`: one fewer than the machine's cores, at most three;
`AFFINE_LSP_CHECK_WORKERS` in the environment sets how many, 0 for none), so
that they are loaded by the time a first document comes; a server given none
starts them when initialised.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from multiprocessing.reduction import ForkingPickler
from typing import Any

from affine_lsp.checks import CheckOptions, Diagnostic
from affine_lsp.ide import check_worker, remote_checks
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.records import ItemRecord
from affine_lsp.ide.remote_checks import Claimed, Forget, Outcome, Prepare, WholeFile

logger = logging.getLogger("affine_lsp.server")

SHARED_BYTES = 96 * 1024
"""Analyses with less than this to do are done in the server alone: starting to
share costs more than it saves."""

BATCH_BYTES = 16 * 1024
"""The least sent to a helper in one message (about 15 ms of checking). More is sent
while much is left (`_batch_bytes`): each message costs a parse of the chunk's facts
and of the items, and its own analysis."""

MOST_BATCH_BYTES = 256 * 1024
"""The most sent in one message (about 0.2 s of checking): an edit voids what is out,
and a helper finishes a message before it takes the next."""

KEPT_BYTES = 24 * 1024
"""What is left to the server at the end of the queue: helpers stop taking
items when the server would be done before their answer is back."""

IN_FLIGHT = 2
"""Batches sent to one helper before its first answer (it never waits for work)."""

PREPARED_BYTES = 16 * 1024
"""Documents opened with more than this are sent to the helpers at once (`prepare`),
to be parsed there while the server parses them: items of their first analysis are
then sent by where they are, which costs the helper no parse and the server no
text, so that sharing pays from this size on."""

PREPARED_MOST_BYTES = 2 * 1024 * 1024
"""Larger documents go as texts: a helper's copy of a whole document costs it as
much memory as the server's (about 300 MiB at 200k lines), for a few percent."""

PREPARED_BATCH_BYTES = 4 * 1024
"""The least sent in one message naming items of a prepared document."""

PREPARED_MOST_BATCH_BYTES = 32 * 1024
"""The most sent in one message naming items of a prepared document (about 30 ms of
checking): such a message costs next to nothing, and small ones keep the helpers'
last answers close to the end of the server's own part."""

PREPARED_KEPT_BYTES = 4 * 1024
"""`KEPT_BYTES` for a prepared document: an answer comes back sooner."""

_KEYS = itertools.count(1)


@dataclass(frozen=True)
class Prepared:
    """A document the helpers were sent when it was opened: its key in their
    messages, and the options it is analysed with there."""

    key: int
    options: CheckOptions

    def matches(self, analysis: DocumentAnalysis) -> bool:
        """Whether the analysis is still of the document as sent (no edit, the same
        options): then the helpers' copy finds what it would."""
        return analysis.edit_count == 0 and analysis.options == self.options


class _Helper:
    """One helper process: messages in (batches of items, documents to prepare and
    their items, whole files), their answers out, in order."""

    def __init__(
        self,
        started: tuple[BaseProcess, Connection],
        loop: asyncio.AbstractEventLoop,
        changed: Callable[[], None],
        died: Callable[[_Helper], None],
    ) -> None:
        self._process, self._connection = started
        self._loop = loop
        self._changed = changed
        self._died = died
        self.ready = False
        self.prepared: int | None = None  # the key of the document it was sent last
        self.waiting: list[asyncio.Future[list[Any]]] = []
        self._outbox: queue.SimpleQueue[memoryview | None] = queue.SimpleQueue()
        threading.Thread(target=self._read, name="affine-lsp-checker-reader", daemon=True).start()
        threading.Thread(target=self._write, name="affine-lsp-checker-writer", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                answer = self._connection.recv()
            except (EOFError, OSError):
                self._post(self._gone, None)
                return
            self._post(self._answered, answer)

    def _write(self) -> None:
        """Send the messages queued by `run`, in order (None: stop). A helper reads a
        message only once it is done with the one before: a long one waits here for
        room in the pipe, not in the event loop, which goes on serving."""
        while True:
            payload = self._outbox.get()
            if payload is None:
                return
            try:
                self._connection.send_bytes(payload)
            except (OSError, ValueError, TypeError):  # it died (its reader says so), or
                return  # `stop` closed the connection under a long message
            del payload  # (a document sent is not kept while waiting for the next)

    def _post(self, function: Callable[[Any], None], argument: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(function, argument)
        except RuntimeError:  # the loop is closed: the server is gone
            pass

    def _answered(self, answer: object) -> None:
        if answer is None:
            self.ready = True
            logger.info("a check helper is ready")
            self._changed()
            return
        if not self.waiting:
            return
        future = self.waiting.pop(0)
        if future.done():
            return
        if isinstance(answer, list):
            future.set_result(answer)
        else:
            future.set_exception(RuntimeError(f"a check helper failed: {answer}"))

    def _gone(self, _: object) -> None:
        self.ready = False
        for future in self.waiting:
            if not future.done():
                future.set_exception(RuntimeError("a check helper stopped"))
        self.waiting = []
        self._died(self)
        self._changed()

    def run(self, message: object) -> asyncio.Future[list[Any]]:
        """Send a message (`remote_checks.Worker.answer` says what it may be); its answer.
        The message is pickled here (as `Connection.send` would) and written by the
        writer thread."""
        future: asyncio.Future[list[Any]] = self._loop.create_future()
        try:
            payload = ForkingPickler.dumps(message)  # (not copied: a document is large)
        except Exception as error:  # (nothing sent: the answers stay in step)
            future.set_exception(RuntimeError(f"cannot send to a check helper: {error}"))
            return future
        self.waiting.append(future)
        self._outbox.put(payload)
        return future

    def stop(self) -> None:
        self.ready = False
        self._outbox.put(None)
        self._connection.close()
        if self._process.is_alive():
            self._process.terminate()


class CheckHelpers:
    """The server's helper processes, and sharing an analysis with them."""

    def __init__(self) -> None:
        self._helpers: list[_Helper] = []
        self._changed: asyncio.Event | None = None  # set when a helper gets ready or dies
        self._spawned: list[tuple[BaseProcess, Connection]] | None = None
        self.items = 0  # items whose helper outcome settled a record (for tests and logs)
        self.files = 0  # whole files handed to a helper (for tests and logs)
        self.named = 0  # items of prepared documents sent by where they are (the same)

    def adopt(self, spawned: list[tuple[BaseProcess, Connection]]) -> None:
        """Take workers started already (`check_worker.spawn`), for `start`."""
        self._spawned = spawned

    def start(self) -> None:
        """Listen to the workers adopted, or start `check_worker.worker_count()` of
        them (once; from the event loop)."""
        if self._changed is not None:
            return
        loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        spawned = self._spawned
        if spawned is None:
            spawned = check_worker.spawn(check_worker.worker_count())
        self._spawned = []
        for started in spawned:
            self._helpers.append(_Helper(started, loop, self._changed.set, self._died))

    @property
    def ready(self) -> int:
        """How many helpers can take work now."""
        return sum(1 for helper in self._helpers if helper.ready)

    def _died(self, helper: _Helper) -> None:
        if helper in self._helpers:
            self._helpers.remove(helper)
            logger.warning("a check helper stopped; the server checks its items itself")

    def stop(self) -> None:
        for helper in self._helpers:
            helper.stop()
        self._helpers = []

    def _with_room(self) -> _Helper | None:
        """A ready helper with fewer than `IN_FLIGHT` messages out (None if none)."""
        return next((h for h in self._helpers if h.ready and len(h.waiting) < IN_FLIGHT), None)

    def take_file(
        self, data: bytes, options: CheckOptions, encoding: str
    ) -> asyncio.Future[list[Diagnostic]] | None:
        """Have a helper with room check a whole file (its diagnostics, in document
        order, as its analysis finds them); None if there is none: the caller checks
        it. The future fails if the helper does."""
        helper = self._with_room()
        if helper is None:
            return None
        self.files += 1
        return helper.run(WholeFile(data, options, encoding))

    def prepare(self, data: bytes, options: CheckOptions, encoding: str) -> Prepared | None:
        """Send a document just opened to the helpers that are ready, to parse it now
        (None when none is, or it is small or very large: its items go as texts). A
        helper still loading takes texts: it would parse the whole document before
        its first item; so does one that holds another document still in its first
        analysis (when several are opened at once, each would replace the last)."""
        ready = [helper for helper in self._helpers if helper.ready and helper.prepared is None]
        if not ready or not PREPARED_BYTES < len(data) <= PREPARED_MOST_BYTES:
            return None
        prepared = Prepared(next(_KEYS), options)
        message = Prepare(prepared.key, data, options, encoding)
        for helper in ready:
            _answer_unused(helper.run(message))
            helper.prepared = prepared.key
        return prepared

    def forget(self, prepared: Prepared) -> None:
        """The helpers may drop their copy of a prepared document."""
        for helper in self._helpers:
            if helper.prepared == prepared.key:
                _answer_unused(helper.run(Forget(prepared.key)))
                helper.prepared = None

    def worth_sharing(self, analysis: DocumentAnalysis, prepared: Prepared | None = None) -> bool:
        """Whether helpers (ready, or starting) should take a part of the analysis."""
        by_place = prepared is not None and prepared.matches(analysis)
        least = PREPARED_BYTES if by_place else SHARED_BYTES
        return bool(self._helpers) and analysis.unsettled_bytes() > least

    async def share(self, analysis: DocumentAnalysis, prepared: Prepared | None = None) -> None:
        """Hand items of the analysis to the helpers while the server analyses the
        rest, until there is nothing worth sending or an edit comes; return once
        every batch sent is back (settled, or given back to the queue). Items of a
        `prepared` document still as it was sent go by where they are."""
        edit_count = analysis.edit_count
        pending: set[asyncio.Future[list[Any]]] = set()
        while analysis.edit_count == edit_count:
            helper = self._with_room()
            if helper is None:
                if pending:
                    await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                    pending = {f for f in pending if not f.done()}
                elif self._changed is not None and any(not h.ready for h in self._helpers):
                    # (helpers still loading: the first ready one takes the next batch)
                    self._changed.clear()
                    await self._changed.wait()
                else:
                    break
                continue
            by_place = (
                prepared is not None
                and helper.prepared == prepared.key
                and prepared.matches(analysis)
            )
            least, most, kept = PREPARED_BATCH_BYTES, PREPARED_MOST_BATCH_BYTES, PREPARED_KEPT_BYTES
            if not by_place:
                least, most, kept = BATCH_BYTES, MOST_BATCH_BYTES, KEPT_BYTES
            unsettled = analysis.unsettled_bytes()
            claims = analysis.claim(self._batch_bytes(unsettled, least, most), kept, unsettled)
            if not claims:
                break
            message: object
            if by_place and prepared is not None:
                items = tuple((token, record.start, record.end) for record, token in claims)
                message = Claimed(prepared.key, items)
                self.named += len(items)
            else:
                message = remote_checks.batches_of(analysis, claims)
            future = helper.run(message)
            future.add_done_callback(partial(self._settle, analysis, claims))
            pending.add(future)
            await asyncio.sleep(0)  # (the server's own analysis goes on between batches)
        if pending:
            await asyncio.wait(pending)

    def _batch_bytes(self, unsettled: int, least: int, most: int) -> int:
        """How much to send in the next message, out of `unsettled` bytes left: a
        share of it, smaller as less is left (guided scheduling), so that the last
        messages come back about when the server's own part is done."""
        shares = IN_FLIGHT * (len(self._helpers) + 1)
        return min(most, max(least, unsettled // shares))

    def _settle(
        self,
        analysis: DocumentAnalysis,
        claims: list[tuple[ItemRecord, int]],
        done: asyncio.Future[list[Any]],
    ) -> None:
        outcomes: dict[int, Outcome] = {}
        if done.cancelled() or done.exception() is not None:
            if not done.cancelled():
                logger.warning("%s", done.exception())
        else:
            outcomes = {outcome.token: outcome for outcome in done.result()}
        for record, token in claims:
            outcome = outcomes.get(token)
            if outcome is None:
                analysis.settle_claimed(token, record, None, frozenset(), None)
            elif analysis.settle_claimed(
                token, record, outcome.diagnostics, outcome.used_aliases, outcome.symbol
            ):
                self.items += 1


def _answer_unused(future: asyncio.Future[list[Any]]) -> None:
    """A message whose answer nothing waits for: a failure is logged (a helper that
    could not prepare a document gives the items named in it back)."""

    def done(finished: asyncio.Future[list[Any]]) -> None:
        if not finished.cancelled() and finished.exception() is not None:
            logger.warning("%s", finished.exception())

    future.add_done_callback(done)
