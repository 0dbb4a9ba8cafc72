"""A raw JSON-RPC client for a language server on stdio, for storm tests: it sends
exactly what it is told (malformed positions, cancellations, bursts) and records
every answer. Server requests get empty answers. Standard library only."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, TypeVar

T = TypeVar("T")


class ServerDied(Exception):
    """The server's output ended (it exited or closed stdout)."""


@dataclass
class Published:
    """One publishDiagnostics notification."""

    uri: str
    version: int | None
    diagnostics: list[dict]
    received: float = 0.0  # time.perf_counter() when it arrived


@dataclass
class _State:
    responses: dict[int, dict] = field(default_factory=dict)
    published: list[Published] = field(default_factory=list)
    progress: list[tuple[float, dict]] = field(default_factory=list)  # ($/progress params)
    notifications: list[dict] = field(default_factory=list)  # every other notification
    server_requests: int = 0
    closed: bool = False


class LspClient:
    """`with LspClient(command) as client:` starts the server and stops it at the end."""

    def __init__(
        self,
        command: Sequence[str],
        stderr: IO[bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else subprocess.DEVNULL,
            env=env,
        )
        self._state = _State()
        self._changed = threading.Condition()
        self._write_lock = threading.Lock()
        self._next_id = 0
        self.sent_requests: list[int] = []
        self.sent_notifications: list[dict] = []  # every notification, in order
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # -- sending --------------------------------------------------------------------

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        with self._write_lock:
            try:
                self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
                self.process.stdin.flush()
            except (BrokenPipeError, OSError) as error:
                raise ServerDied(f"cannot write to the server: {error}") from None

    def request(self, method: str, params: Any) -> int:
        """Send a request; returns its id (answers come in `response`)."""
        self._next_id += 1
        self.sent_requests.append(self._next_id)
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def notify(self, method: str, params: Any) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        self.sent_notifications.append(message)
        self._send(message)

    def cancel(self, request_id: int) -> None:
        self.notify("$/cancelRequest", {"id": request_id})

    # -- receiving ------------------------------------------------------------------

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if length is None:
                    continue
                self._dispatch(json.loads(stream.read(length)))
        finally:
            with self._changed:
                self._state.closed = True
                self._changed.notify_all()

    def _dispatch(self, message: dict) -> None:
        if "method" in message and "id" in message:  # a request from the server
            self._state.server_requests += 1
            result: Any = None
            if message["method"] == "workspace/configuration":
                result = [{} for _ in message.get("params", {}).get("items", [])]
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            return
        with self._changed:
            if "id" in message:
                self._state.responses[message["id"]] = message
            elif message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                self._state.published.append(
                    Published(
                        params["uri"],
                        params.get("version"),
                        params["diagnostics"],
                        time.perf_counter(),
                    )
                )
            elif message.get("method") == "$/progress":
                self._state.progress.append((time.perf_counter(), message["params"]))
            elif "method" in message:
                self._state.notifications.append(message)
            self._changed.notify_all()

    def _wait(self, ready: Callable[[], T | None], timeout: float) -> T:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = ready()
                if found is not None:
                    return found
                if self._state.closed:
                    raise ServerDied("the server closed its output")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no answer in time")
                self._changed.wait(left)

    def response(self, request_id: int, timeout: float = 30.0) -> dict:
        """The answer to a request (a dict with `result` or `error`)."""
        return self._wait(lambda: self._state.responses.get(request_id), timeout)

    def call(self, method: str, params: Any, timeout: float = 30.0) -> dict:
        return self.response(self.request(method, params), timeout)

    def diagnostics(self, uri: str, version: int, timeout: float = 30.0) -> list[dict]:
        """The diagnostics published for `uri` at `version` (waiting for them)."""

        def found() -> list[dict] | None:
            for published in reversed(self._state.published):
                if published.uri == uri and published.version == version:
                    return published.diagnostics
            return None

        return self._wait(found, timeout)

    def publishes(self) -> list[Published]:
        """Every publishDiagnostics so far, in order."""
        with self._changed:
            return list(self._state.published)

    def progress(self) -> list[tuple[float, dict]]:
        """Every `$/progress` so far: (time.perf_counter() on arrival, params)."""
        with self._changed:
            return list(self._state.progress)

    def notifications(self, method: str) -> list[dict]:
        """The params of every notification of `method` so far (other than diagnostics
        and progress), in order."""
        with self._changed:
            found = self._state.notifications
            return [n.get("params") or {} for n in found if n.get("method") == method]

    def wait_for(self, ready: Callable[[], T | None], timeout: float = 30.0) -> T:
        """Wait until `ready()` returns something else than None (re-asked at each message)."""
        return self._wait(ready, timeout)

    def answers(self) -> dict[int, dict]:
        """Every answer so far, by request id."""
        with self._changed:
            return dict(self._state.responses)

    def unanswered(self) -> list[int]:
        answers = self.answers()
        return [i for i in self.sent_requests if i not in answers]

    @property
    def server_requests(self) -> int:
        return self._state.server_requests

    # -- lifetime -------------------------------------------------------------------

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> int | None:
        """shutdown + exit; the exit code (killed if it does not end in time)."""
        try:
            if self.alive():
                self.call("shutdown", None, timeout)
                self.notify("exit", None)
            return self.process.wait(timeout)
        except (ServerDied, TimeoutError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait(timeout)
            return None
        finally:
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()

    def __enter__(self) -> LspClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.stop()
