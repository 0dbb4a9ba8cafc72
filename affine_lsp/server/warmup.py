"""Warming up, once `initialize` is answered.

The server answers `initialize` with nothing of the analysis loaded (the
handlers' modules load on first use, see `handlers.py`). Then, from
`initialized` on, `WarmUp` does what the first requests would otherwise wait
for, off the critical path: it imports the analysis (first: a document is opened
next) and the rest in a thread, converts a typical
message and result of each row of `handlers.HANDLERS` and the requests the
server sends (cattrs generates and compiles the converter of each lsprotocol
type the first time it is used, tens of milliseconds for the union-heavy LSP
types), one per turn of the event loop, analyses a sample document (tree-sitter
queries, rules loaded on first use), and freezes what is loaded (`gc.freeze`).
The planning worker (a process that loads the refactorings) starts first, the
check helpers (processes that load the analysis again) last.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from lsprotocol import types

from affine_lsp.server.handlers import COMMAND, HANDLERS, REQUEST, Handler
from affine_lsp.server.protocol import AffineProtocol

if TYPE_CHECKING:
    from affine_lsp.server.server import AffineLanguageServer

logger = logging.getLogger("affine_lsp.server")

FIRST_MODULES = (
    "affine_lsp.ide.analysis",
    "affine_lsp.server.documents",
    "affine_lsp.server.check_helpers",
    "affine_lsp.server.lifecycle",
)
"""What a document opened next needs."""

LATER_MODULES = (
    "affine_lsp.server.planner",
    "affine_lsp.ide.planning",
    "affine_lsp.server.code_actions",
    *sorted({row.module for row in HANDLERS}),
)
"""What requests need: refactorings first (the slowest to load), then every handler."""


def message_of(row: Handler) -> dict:
    """The typical message of a row, as a client would send it."""
    if row.kind == COMMAND:
        params = {"command": row.method, "arguments": row.example}
        method = types.WORKSPACE_EXECUTE_COMMAND
        return {"jsonrpc": "2.0", "id": 0, "method": method, "params": params}
    message = {"jsonrpc": "2.0", "method": row.method, "params": row.example}
    if row.kind == REQUEST:
        message["id"] = 0
    return message


SERVER_REQUESTS = [
    # (method, params, the client's typical answer) of requests the server sends
    (types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.WorkDoneProgressCreateParams(token="t"), None),
    (
        types.WORKSPACE_CONFIGURATION,
        types.ConfigurationParams(items=[types.ConfigurationItem(section="affineLsp")]),
        [None],
    ),
]


SAMPLE = """#map = affine_map<(d0)[s0] -> (d0 + s0)>
func.func @f(%A: memref<?xf32>, %n: index) {
  affine.for %i = 0 to %n {
    %j = affine.apply #map(%i)[%n]
    %v = affine.load %A[%j] : memref<?xf32>
  }
  return
}
"""
"""A document analysed in the warm-up: what the analysis builds on first use
(tree-sitter queries, lazily loaded rules) is then ready for the first document."""


def warm_up(protocol: AffineProtocol) -> None:
    """Convert one message of each kind the server reads and writes, at once (errors
    ignored)."""
    for step in _conversions(protocol):
        step()


def _conversions(protocol: AffineProtocol) -> list[Callable[[], None]]:
    """One step per row and per request the server sends: convert its messages
    (errors are logged and ignored: a warm-up must never stop the server)."""

    def row_step(row: Handler) -> None:
        protocol.read_as_pygls(message_of(row))
        if row.result is not None:
            protocol.write_as_pygls(row.method, row.result())

    def request_step(method: str, params: object, answer: object) -> None:
        protocol.request_as_pygls(method, params, answer)

    def quietly(step: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                step()
            except Exception:
                logger.debug("a warm-up step failed", exc_info=True)

        return run

    steps: list[Callable[[], None]] = [partial(row_step, row) for row in HANDLERS]
    steps += [partial(request_step, *request) for request in SERVER_REQUESTS]
    return [quietly(step) for step in steps]


def _import(names: tuple[str, ...]) -> None:
    for name in names:
        importlib.import_module(name)


class WarmUp:
    """The warm-up of a server that has answered `initialize` (see the module
    docstring); `done` is set at its end."""

    def __init__(self, server: AffineLanguageServer) -> None:
        self._server = server
        self.done = asyncio.Event()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        started = time.perf_counter()
        try:
            # The planning worker loads meanwhile (on another core, if there is one):
            # refactorings are planned there ahead once a document is analysed.
            self._server.spawn_planning_worker()
            await asyncio.to_thread(_import, FIRST_MODULES)
            await asyncio.to_thread(_import, LATER_MODULES)
            for step in _conversions(self._server.affine_protocol):
                step()
                await asyncio.sleep(0)
            from affine_lsp.ide.analysis import DocumentAnalysis

            analysis = DocumentAnalysis.from_text(SAMPLE)
            analysis.analyse_all()
            analysis.settled_diagnostics()
            # The check helpers load the same again: started last, they do not slow
            # the loading above down (large documents are checked here meanwhile).
            self._server.check_helpers.start()
        except Exception:
            logger.exception("the warm-up failed (what it loads is loaded when needed)")
        # Everything loaded so far lives as long as the process: keep the collector
        # from scanning it again and again while documents are analysed.
        gc.freeze()
        self.done.set()
        logger.info("warmed up in %.0f ms", (time.perf_counter() - started) * 1000)
