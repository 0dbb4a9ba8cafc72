"""The pygls protocol, and the one module that uses pygls's private names.

Document sync is taken away from pygls's workspace: pygls keeps its own copy of
every open document and re-splits the whole text on each change, while the
server keeps its own incremental `SourceDocument`; the open/change/close
handlers here only hand the notification to the server's handler.

Beyond that, a few things need pygls internals (`PYGLS_INTERNALS`): large
results and diagnostics are written as plain JSON without cattrs, a request
whose params cannot be read gets an error answer, and the converters are warmed
up before serving. They are used here and nowhere else; pyproject.toml pins
pygls to the range they were tested with, and
`tests/server/test_pygls_internals.py` fails if any of them changes.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Generator
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol, lsp_method

logger = logging.getLogger("affine_lsp.server")

PYGLS_INTERNALS = {
    "LanguageServerProtocol._send_response": "write a RawResult without cattrs",
    "LanguageServerProtocol._result_types": "forget a request's result type once answered",
    "LanguageServerProtocol._send_data": "write plain JSON notifications and results",
    "LanguageServerProtocol._include_headers": "frame a pre-encoded result",
    "LanguageServerProtocol._converter": "convert sample results at warm-up",
    "LanguageServerProtocol.structure_message": "answer unreadable requests; warm-up",
    "LanguageServerProtocol.fm.features": "forward sync notifications to our handlers",
    "log 'Unable to deserialize message'": "shorten pygls's log of malformed messages",
    "JsonRPCProtocol.handle_message": "know when a message read is handled",
    "JsonRPCProtocol._server": "the server a message read is handled for",
}
"""What of pygls this module relies on beyond its documented API, and why."""


class RawResult:
    """A request result that is already plain JSON data, or encoded JSON text,
    sent as it is."""

    __slots__ = ("data", "json_bytes")

    def __init__(self, data: Any = None, *, json_bytes: bytes | None = None) -> None:
        self.data = data
        self.json_bytes = json_bytes


class AffineProtocol(LanguageServerProtocol):
    """LanguageServerProtocol whose document sync is left to the server."""

    def _forward(self, method: str, params: Any) -> Generator[Any, Any, None]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(
        self, params: types.DidOpenTextDocumentParams
    ) -> Generator[Any, Any, None]:
        yield from self._forward(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        yield from self._forward(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(
        self, params: types.DidCloseTextDocumentParams
    ) -> Generator[Any, Any, None]:
        yield from self._forward(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """As pygls, but a request whose params cannot be read gets an error answer
        (pygls would only log it, leaving the client waiting)."""
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if isinstance(data, dict) and "id" in data and "method" in data:
                error = JsonRpcInvalidParams(f"invalid params for {data['method']}")
                self._send_response(data["id"], error=error.to_response_error())
            self._handled()
            raise

    def handle_message(self, message: Any) -> None:
        """As pygls, then tell the server the message read is handled (its analysis
        waits meanwhile: `incoming.py`)."""
        try:
            super().handle_message(message)
        finally:
            self._handled()

    def _handled(self) -> None:
        incoming = getattr(self._server, "incoming", None)
        if incoming is not None:
            incoming.handled()

    def _send_response(
        self,
        msg_id: str | int,
        result: Any | None = None,
        error: types.ResponseError | None = None,
    ) -> None:
        """As pygls, except that a `RawResult` skips cattrs (large outlines, folds)."""
        if error is None and isinstance(result, RawResult):
            self._result_types.pop(msg_id, None)
            if result.json_bytes is None:
                self._send_data({"jsonrpc": "2.0", "id": msg_id, "result": result.data})
            else:
                self._send_json_bytes(msg_id, result.json_bytes)
            return
        super()._send_response(msg_id, result, error)

    def _send_json_bytes(self, msg_id: str | int, body: bytes) -> None:
        """Write a response around an encoded result (header and body apart, so
        that a large result is not copied once more)."""
        if self.writer is None:
            return
        head = f'{{"jsonrpc": "2.0", "id": {json.dumps(msg_id)}, "result": '.encode()
        length = len(head) + len(body) + 1
        header = f"Content-Length: {length}\r\n\r\n".encode() if self._include_headers else b""
        for part in (header + head, body, b"}"):
            written = self.writer.write(part)
            if inspect.isawaitable(written):
                asyncio.ensure_future(written)

    def send_notification_data(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification whose params are already plain JSON data.

        Skips cattrs: publishing thousands of diagnostics through lsprotocol
        objects costs more than computing them.
        """
        self._send_data({"jsonrpc": "2.0", "method": method, "params": params})

    # -- warm-up ---------------------------------------------------------------------

    def read_as_pygls(self, message: dict[str, Any]) -> Any:
        """Read (structure) a message as pygls does, without answering failures."""
        return LanguageServerProtocol.structure_message(self, message)

    def request_as_pygls(self, method: str, params: Any, answer: Any) -> Any:
        """Convert a request the server sends, and read the client's `answer` to it,
        as pygls would."""
        request_type = self.get_message_type(method)
        if request_type is not None:
            self._converter.unstructure(request_type(id=0, method=method, params=params))
        msg_id = f"warm-up {method}"
        self._result_types[msg_id] = self.get_result_type(method)
        return self.read_as_pygls({"jsonrpc": "2.0", "id": msg_id, "result": answer})

    def write_as_pygls(self, method: str, result: Any) -> Any:
        """Convert a result of `method` to JSON data as pygls would send it."""
        response_type = self.get_result_type(method)
        if response_type is None:
            return None
        return self._converter.unstructure(response_type(id=0, result=result, jsonrpc="2.0"))


def answers_are_not_errors(record: logging.LogRecord) -> bool:
    """A log filter: drop pygls's tracebacks for the error answers the server chose
    to send ("nothing to rename here", "the document changed", ...) and shorten
    those for malformed messages: they are answers, not failures (unexpected
    exceptions are still logged with their tracebacks)."""
    if not record.name.startswith("pygls"):
        return True
    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, JsonRpcException):
        return False
    if record.getMessage().startswith("Unable to deserialize message"):
        # A client's malformed message: answered with InvalidParams; one line says it.
        details = [line.strip(" |") for line in record.getMessage().splitlines()]
        last = next((line for line in reversed(details) if line), "")
        record.msg, record.args = f"Unable to deserialize a message (answered): {last}", ()
        record.exc_info = record.exc_text = None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
    return True
