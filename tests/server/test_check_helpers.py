"""A large document checked with help from check worker processes gets the
diagnostics the server finds alone: opened, edited while the helpers work, and
with a helper killed in the middle."""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import threading
import time
from multiprocessing.reduction import ForkingPickler
from pathlib import Path

from affine_lsp.checks import CheckOptions
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.remote_checks import Claimed, Forget, Prepare, WholeFile, Worker
from affine_lsp.server.check_helpers import (
    PREPARED_BYTES,
    PREPARED_MOST_BYTES,
    CheckHelpers,
    _Helper,
)
from affine_lsp.syntax import ContentChange, encode
from affine_lsp.testing.lsp_client import LspClient
from tests.server.conftest import ENV, SERVER

URI = "file:///big.mlir"


def big_text(functions: int = 700) -> str:
    """About 250 KB of functions; one in ten with mistakes (an undefined value,
    an access with one subscript too many), all using a map alias."""
    parts = ["#shift = affine_map<(d0) -> (d0 + 1)>\n"]
    for n in range(functions):
        value = "%undefined" if n % 10 == 3 else "%v"
        subscripts = "%i, %i" if n % 10 == 7 else "%i"
        parts.append(
            f"func.func @f{n}(%A: memref<64xf32>, %B: memref<65xf32>) {{\n"
            "  affine.for %i = 0 to 64 {\n"
            f"    %v = affine.load %A[{subscripts}] : memref<64xf32>\n"
            "    %w = arith.addf %v, %v : f32\n"
            f"    affine.store {value}, %B[%i + 1] : memref<65xf32>\n"
            "    %u = affine.apply #shift(%i)\n"
            "    affine.store %w, %B[%u] : memref<65xf32>\n"
            "  }\n"
            "  return\n"
            "}\n"
        )
    return "".join(parts)


def _client(workers: int, log: Path) -> LspClient:
    env = {**ENV, "AFFINE_LSP_CHECK_WORKERS": str(workers)}
    command = [*SERVER, "--log-level", "info", "--log-file", str(log)]
    client = LspClient(command, env=env)
    client.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    client.notify("initialized", {})
    return client


def _wait_for_helpers(log: Path, timeout: float = 120.0) -> None:
    """Until the server says a helper is loaded (it loads while the server does)."""
    deadline = time.monotonic() + timeout
    while "a check helper is ready" not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def _open(client: LspClient, text: str) -> None:
    document = {"uri": URI, "languageId": "mlir", "version": 1, "text": text}
    client.notify("textDocument/didOpen", {"textDocument": document})


def _alone(text: str, tmp_path: Path) -> list[dict]:
    """The diagnostics of `text` from a server without helpers."""
    with _client(0, tmp_path / "alone.log") as client:
        _open(client, text)
        return client.diagnostics(URI, 1, timeout=120)


def _helped_items(log: Path) -> int:
    lines = [line for line in log.read_text().splitlines() if "items analysed" in line]
    return int(lines[-1].rsplit("check helpers: ", 1)[1].split()[0])


def _items_sent_by_place(log: Path) -> int:
    """Items the helpers were given by where they are in their copy of the document."""
    lines = [line for line in log.read_text().splitlines() if "items analysed" in line]
    return int(lines[-1].rsplit(" sent by place", 1)[0].rsplit(" ", 1)[1])


def _assert_clean(log: Path) -> None:
    text = log.read_text()
    assert "Traceback" not in text and " ERROR " not in text, text[-3000:]


def test_helpers_check_part_of_a_large_document_and_find_the_same(tmp_path):
    text = big_text()
    log = tmp_path / "helped.log"
    with _client(1, log) as client:
        _wait_for_helpers(log)
        _open(client, text)
        helped = client.diagnostics(URI, 1, timeout=120)
    assert helped == _alone(text, tmp_path)
    assert len(helped) >= 52  # the mistakes of two functions in ten
    # The helper parsed the document as it was opened: items went by place.
    assert _helped_items(log) > 0 and _items_sent_by_place(log) > 0
    _assert_clean(log)


def test_edits_while_the_helpers_work_end_with_the_diagnostics_of_the_final_text(tmp_path):
    text = big_text()
    lines = text.splitlines(keepends=True)
    log = tmp_path / "helped.log"
    with _client(1, log) as client:
        _wait_for_helpers(log)
        _open(client, text)
        # At the end (where helpers take items from) and at the start, at once.
        last = len(lines) - 4
        changes = [
            (2, {"range": _line_range(last), "text": "    %x = arith.addf %nope, %nope : f32\n"}),
            (3, {"range": _line_range(3), "text": "    %v = affine.load %A[] : memref<64xf32>\n"}),
        ]
        for version, change in changes:
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": URI, "version": version}, "contentChanges": [change]},
            )
        helped = client.diagnostics(URI, 3, timeout=120)
        # (items of version 1 may have gone by place; of the edited text, as texts)
    lines[last] = "    %x = arith.addf %nope, %nope : f32\n"
    lines[3] = "    %v = affine.load %A[] : memref<64xf32>\n"
    assert helped == _alone("".join(lines), tmp_path)
    _assert_clean(log)


def _line_range(line: int) -> dict:
    return {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}}


def test_a_helper_killed_midway_leaves_its_items_to_the_server(tmp_path):
    text = big_text()
    log = tmp_path / "helped.log"
    with _client(1, log) as client:
        _wait_for_helpers(log)
        helpers = _children(client.process.pid)
        assert helpers
        _open(client, text)
        time.sleep(0.05)
        for pid in helpers:
            os.kill(pid, signal.SIGKILL)
        helped = client.diagnostics(URI, 1, timeout=120)
        assert client.alive()
    assert helped == _alone(text, tmp_path)
    assert "a check helper stopped" in log.read_text()


def _children(pid: int) -> list[int]:
    """The server's check workers (processes it spawned, not its resource tracker)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            command = Path(f"/proc/{child}/cmdline").read_bytes()
            if b"spawn_main" in command:
                found.append(int(child))
    return found


def test_a_failed_batch_gives_its_items_back():
    """What a helper that failed or died leaves: the server checks the items."""
    analysis = DocumentAnalysis.from_text(big_text(4))
    claims = analysis.claim(most_bytes=10**6, leave_bytes=0)

    async def fail() -> None:
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        future.set_exception(RuntimeError("a check helper stopped"))
        CheckHelpers()._settle(analysis, claims, future)

    asyncio.run(fail())
    assert analysis.claimed == 0
    analysis.analyse_all()
    assert analysis.complete


class _Recorder:
    """A helper's connection that records what is written, and by which thread."""

    def __init__(self) -> None:
        self.written: list[tuple[bytes, str]] = []
        self.done = threading.Event()
        self.answers: queue.SimpleQueue = queue.SimpleQueue()

    def send_bytes(self, payload: bytes) -> None:
        self.written.append((payload, threading.current_thread().name))
        if len(self.written) == 3:
            self.done.set()

    def recv(self) -> object:  # (the reader thread waits here for the test's answers)
        answer = self.answers.get()
        if answer is EOFError:
            raise EOFError
        return answer

    def close(self) -> None:
        self.answers.put(EOFError)


class _Process:
    def is_alive(self) -> bool:
        return False


def test_messages_to_a_helper_are_written_outside_the_event_loop():
    """A helper reads a message only once done with the one before: writing a long
    message from the event loop would stop the server until then. Messages go out
    in order, written by the helper's writer thread, and their answers come back
    to their futures in that order."""
    connection = _Recorder()
    messages = [WholeFile(bytes([n]) * 3_000_000, CheckOptions()) for n in range(3)]

    async def exchange() -> list:
        loop = asyncio.get_running_loop()
        helper = _Helper((_Process(), connection), loop, lambda: None, lambda h: None)  # type: ignore[arg-type]
        futures = [helper.run(message) for message in messages]
        assert threading.current_thread().name not in {n for _, n in connection.written}
        await loop.run_in_executor(None, connection.done.wait)
        for n in range(3):
            connection.answers.put([n])
        answers = [await future for future in futures]
        helper.stop()
        return answers

    assert asyncio.run(exchange()) == [[0], [1], [2]]
    assert [p for p, _ in connection.written] == [ForkingPickler.dumps(m) for m in messages]
    assert {name for _, name in connection.written} == {"affine-lsp-checker-writer"}


class _InProcess:
    """A ready helper that answers at once, in this process, as a worker does."""

    def __init__(self) -> None:
        self.ready = True
        self.prepared: int | None = None
        self.waiting: list = []
        self.sent: list = []
        self._worker = Worker()

    def run(self, message: object) -> asyncio.Future:
        self.sent.append(message)
        future = asyncio.get_running_loop().create_future()
        future.set_result(self._worker.answer(message))
        return future


class _Recording(_InProcess):
    """A ready helper that only records what it is sent (answered at once with [])."""

    def run(self, message: object) -> asyncio.Future:
        self.sent.append(message)
        future = asyncio.get_running_loop().create_future()
        future.set_result([])
        return future


def _helpers_of(helper: _InProcess) -> CheckHelpers:
    """The server's helpers, made of `helper` alone."""
    helpers = CheckHelpers()
    helpers._helpers = [helper]  # type: ignore[list-item]
    return helpers


def _shared(text: str, edit: bool = False, options: CheckOptions | None = None) -> _InProcess:
    """Open `text` as the server does with one helper, maybe edit it (or change the
    options) before it is shared, analyse it with the helper; the helper, whose
    messages tell how items went. The diagnostics are those of a fresh analysis."""
    helper = _InProcess()

    async def run() -> None:
        helpers = _helpers_of(helper)
        prepared = helpers.prepare(encode(text), CheckOptions(), "utf-16")
        analysis = DocumentAnalysis.from_text(text)
        if edit:
            analysis.apply_changes([ContentChange("// a comment\n", ((0, 0), (0, 0)))])
        if options is not None:
            analysis.set_options(options)
        assert helpers.worth_sharing(analysis, prepared)
        await helpers.share(analysis, prepared)
        analysis.analyse_all()
        assert analysis.complete
        fresh = DocumentAnalysis.from_text(bytes(analysis.document.data), options=analysis.options)
        fresh.analyse_all()
        assert analysis.diagnostics() == fresh.diagnostics() and fresh.diagnostics()
        assert prepared is not None
        helpers.forget(prepared)

    asyncio.run(run())
    assert isinstance(helper.sent[0], Prepare) and isinstance(helper.sent[-1], Forget)
    return helper


def test_items_of_a_document_as_opened_go_by_place():
    helper = _shared(big_text(400))
    claimed = [m for m in helper.sent[1:-1] if isinstance(m, Claimed)]
    assert claimed and len(claimed) == len(helper.sent) - 2
    assert sum(len(m.items) for m in claimed) > 20


def test_only_documents_of_a_middle_size_are_prepared():
    """Small ones are checked here; very large ones go as texts, as a helper's copy
    would cost it as much memory as the server's."""
    helper = _Recording()

    async def prepare_each() -> list[bool]:
        helpers = _helpers_of(helper)
        sizes = (PREPARED_BYTES, PREPARED_BYTES + 1, PREPARED_MOST_BYTES, PREPARED_MOST_BYTES + 1)
        found = []
        for size in sizes:
            prepared = helpers.prepare(b" " * size, CheckOptions(), "utf-16")
            found.append(prepared is not None)
            if prepared is not None:
                helpers.forget(prepared)
        return found

    assert asyncio.run(prepare_each()) == [False, True, True, False]
    prepared = [len(m.data) for m in helper.sent if isinstance(m, Prepare)]
    assert prepared == [PREPARED_BYTES + 1, PREPARED_MOST_BYTES]


def test_a_helper_holds_one_document_in_its_first_analysis_at_a_time():
    """Documents opened at once: the first goes whole to the helper, the others as
    texts (each would replace the one before in the helper) until it is forgotten."""
    helper = _Recording()

    async def open_three() -> list[bool]:
        helpers = _helpers_of(helper)
        data = b" " * (PREPARED_BYTES + 1)
        first = helpers.prepare(data, CheckOptions(), "utf-16")
        second = helpers.prepare(data, CheckOptions(), "utf-16")
        assert first is not None
        helpers.forget(first)
        third = helpers.prepare(data, CheckOptions(), "utf-16")
        return [first is not None, second is not None, third is not None]

    assert asyncio.run(open_three()) == [True, False, True]
    assert [type(m).__name__ for m in helper.sent] == ["Prepare", "Forget", "Prepare"]


def test_items_of_an_edited_document_or_with_other_options_go_as_texts():
    for helper in (
        _shared(big_text(400), edit=True),
        _shared(big_text(400), options=CheckOptions(lints=False)),
    ):
        batches = helper.sent[1:-1]
        assert batches and all(isinstance(m, list) for m in batches)


def _workspace(root: Path) -> None:
    """Files of every kind of outcome: clean, with errors, with syntax errors, empty."""
    for n in range(12):
        text = big_text(8 + n).replace("f0(", f"g{n}(")
        if n % 4 == 1:
            text += "func.func @broken( {\n"
        (root / f"file{n}.mlir").write_text(text if n % 6 else "")
    (root / "sub").mkdir()
    (root / "sub" / "deep.mlir").write_text(big_text(30))


def _check_workspace(workers: int, root: Path, log: Path) -> tuple[dict, dict[str, list]]:
    env = {**ENV, "AFFINE_LSP_CHECK_WORKERS": str(workers)}
    command = [*SERVER, "--log-level", "info", "--log-file", str(log)]
    with LspClient(command, env=env) as client:
        client.call("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        if workers:
            _wait_for_helpers(log)
        result = client.call(
            "workspace/executeCommand",
            {"command": "affine-lsp.checkWorkspace", "arguments": [root.as_uri()]},
            timeout=300,
        )["result"]
        published = {p.uri: p.diagnostics for p in client.publishes()}
    return result, published


def test_check_workspace_with_a_helper_finds_what_the_server_finds_alone(tmp_path):
    root = tmp_path / "workspace"
    root.mkdir()
    _workspace(root)
    helped, helped_published = _check_workspace(1, root, tmp_path / "helped.log")
    alone, alone_published = _check_workspace(0, root, tmp_path / "alone.log")
    assert helped == alone and alone["files"] == 13 and alone["errors"] > 13
    assert helped_published == alone_published and len(alone_published) == 13
    line = next(
        line
        for line in (tmp_path / "helped.log").read_text().splitlines()
        if "Check Workspace:" in line
    )
    assert "13 files" in line and not line.endswith(" 0 checked by helpers")
    _assert_clean(tmp_path / "helped.log")
