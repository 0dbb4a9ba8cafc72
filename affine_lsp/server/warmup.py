"""Warming up cattrs before serving.

cattrs generates (and compiles) the converter of each lsprotocol type the first
time it is used, which for the union-heavy LSP types costs tens of milliseconds
per type. Doing it at start-up keeps that cost out of the first hover, the
first edit and the first completion a user makes. What is converted is the
typical message and result of each row of `handlers.HANDLERS`, and the requests
the server sends (work-done progress, settings) with their answers.
"""

from __future__ import annotations

import logging
import time

from lsprotocol import types

from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.server.handlers import COMMAND, HANDLERS, REQUEST, Handler
from affine_lsp.server.protocol import AffineProtocol

logger = logging.getLogger("affine_lsp.server")


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
"""A document analysed once before serving: what the analysis builds on first use
(tree-sitter queries, lazily loaded rules) is then ready for the first document."""


def warm_up(protocol: AffineProtocol) -> None:
    """Convert one message of each kind the server reads and writes (errors ignored)."""
    started = time.perf_counter()
    for row in HANDLERS:
        try:
            protocol.read_as_pygls(message_of(row))
            if row.result is not None:
                protocol.write_as_pygls(row.method, row.result())
        except Exception:  # a warm-up must never stop the server
            logger.debug("warm-up of %s failed", row.method, exc_info=True)
    for method, params, answer in SERVER_REQUESTS:
        try:
            protocol.request_as_pygls(method, params, answer)
        except Exception:
            logger.debug("warm-up of %s failed", method, exc_info=True)
    try:
        analysis = DocumentAnalysis.from_text(SAMPLE)
        analysis.analyse_all()
        analysis.settled_diagnostics()
    except Exception:
        logger.debug("warm-up of the analysis failed", exc_info=True)
    logger.info("converters warmed up in %.0f ms", (time.perf_counter() - started) * 1000)
