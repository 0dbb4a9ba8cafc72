"""Warming up cattrs before serving.

cattrs generates (and compiles) the converter of each lsprotocol type the first
time it is used, which for the union-heavy LSP types costs tens of milliseconds
per type. Doing it at start-up keeps that cost out of the first hover, the
first edit and the first completion a user makes. What is converted is the
typical message and result of each row of `handlers.HANDLERS`.
"""

from __future__ import annotations

import logging
import time

from lsprotocol import types

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
    logger.info("converters warmed up in %.0f ms", (time.perf_counter() - started) * 1000)
