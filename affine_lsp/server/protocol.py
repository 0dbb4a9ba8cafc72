"""The pygls protocol, with text synchronisation taken away from pygls's workspace.

pygls keeps its own copy of every open document and re-splits the whole text
on each change. The server keeps its own incremental `SourceDocument` instead,
so the built-in open/change/close handlers here only hand the notification to
the server's handler and never touch pygls's workspace.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol, lsp_method


class RawResult:
    """A request result that is already plain JSON data, or encoded JSON text,
    sent as it is."""

    __slots__ = ("data", "json_bytes")

    def __init__(self, data: Any = None, *, json_bytes: bytes | None = None) -> None:
        self.data = data
        self.json_bytes = json_bytes


class AffineProtocol(LanguageServerProtocol):
    """LanguageServerProtocol whose document sync is left to the server."""

    def _forward(self, method: str, params: Any):
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        yield from self._forward(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        yield from self._forward(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        yield from self._forward(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def structure_message(self, data: dict[str, Any]):
        """As pygls, but a request whose params cannot be read gets an error answer
        (pygls would only log it, leaving the client waiting)."""
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if isinstance(data, dict) and "id" in data and "method" in data:
                error = JsonRpcInvalidParams(f"invalid params for {data['method']}")
                self._send_response(data["id"], error=error.to_response_error())
            raise

    def _send_response(self, msg_id, result=None, error=None):
        """As pygls, except that a `RawResult` skips cattrs (large outlines, folds)."""
        if error is None and isinstance(result, RawResult):
            self._result_types.pop(msg_id, None)
            if result.json_bytes is None:
                self._send_data({"jsonrpc": "2.0", "id": msg_id, "result": result.data})
            else:
                self._send_json_bytes(msg_id, result.json_bytes)
            return
        super()._send_response(msg_id, result, error)

    def _send_json_bytes(self, msg_id, body: bytes) -> None:
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
