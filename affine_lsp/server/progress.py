"""Server-initiated work-done progress, as plain JSON notifications."""

from __future__ import annotations

import uuid
from typing import Protocol

from lsprotocol import types

from affine_lsp.server.protocol import AffineProtocol


class ProgressClient(Protocol):
    """What progress needs of the server: the client's capabilities, the protocol."""

    def client_supports(self, path: str) -> bool: ...

    @property
    def affine_protocol(self) -> AffineProtocol: ...


class Progress:
    """Server-initiated work-done progress (only if the client supports it).

    The notifications go out as plain JSON: reports are sent while analysis runs,
    where a first use of cattrs' generated converters would cost more than them."""

    def __init__(self, server: ProgressClient, title: str) -> None:
        self._server = server
        self._token: str | None = None
        self._last = -1
        self._begun = False
        if not server.client_supports("window.work_done_progress"):
            return
        self._token = f"affine-lsp-{uuid.uuid4()}"
        self._title = title
        server.affine_protocol.send_request(
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
            types.WorkDoneProgressCreateParams(token=self._token),
            self._created,
        )

    def _send(self, value: dict) -> None:
        assert self._token is not None
        self._server.affine_protocol.send_notification_data(
            types.PROGRESS, {"token": self._token, "value": value}
        )

    def _created(self, *_args: object) -> None:
        if self._token is not None:
            self._send({"kind": "begin", "title": self._title, "percentage": 0})
            self._begun = True

    @property
    def active(self) -> bool:
        """Whether the client takes progress (begun or about to be)."""
        return self._token is not None

    @property
    def begun(self) -> bool:
        """Whether the client shows it (it has answered its creation)."""
        return self._token is not None and self._begun

    def report(self, done: int, total: int) -> None:
        if self._token is None or not self._begun:
            return
        percentage = int(100 * done / max(total, 1))
        if percentage != self._last:
            self._last = percentage
            self._send({"kind": "report", "percentage": percentage, "message": f"{done}/{total}"})

    def end(self) -> None:
        if self._token is not None and self._begun:
            self._send({"kind": "end"})
        self._token = None
