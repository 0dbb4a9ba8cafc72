"""The pygls internals `server/protocol.py` relies on (`PYGLS_INTERNALS`): each is
checked here, so that a pygls release that changes one fails loudly instead of
breaking the server quietly."""

from __future__ import annotations

import inspect
import json
import re
from importlib.metadata import version
from pathlib import Path

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol, json_rpc

from affine_lsp.server import create_server
from affine_lsp.server.protocol import PYGLS_INTERNALS, RawResult

ROOT = Path(__file__).resolve().parent.parent.parent


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def test_pygls_is_in_the_pinned_range():
    pins = re.findall(r'"pygls>=([\d.]+),<([\d.]+)"', (ROOT / "pyproject.toml").read_text())
    assert len(pins) == 1, pins
    ((lower, upper),) = pins
    installed = _release(version("pygls"))
    assert _release(lower) <= installed < _release(upper), (lower, upper, version("pygls"))


def test_the_private_methods_have_the_signatures_we_override():
    assert _parameters(LanguageServerProtocol._send_response) == [
        "self",
        "msg_id",
        "result",
        "error",
    ]
    assert _parameters(LanguageServerProtocol._send_data) == ["self", "data"]
    assert _parameters(LanguageServerProtocol.structure_message) == ["self", "data"]
    assert _parameters(LanguageServerProtocol.get_result_type) == ["self", "method"]
    assert _parameters(json_rpc.JsonRPCProtocol.handle_message) == ["self", "message"]


def test_the_private_attributes_exist_on_a_server_protocol():
    protocol = create_server().affine_protocol
    assert isinstance(protocol._result_types, dict)
    assert isinstance(protocol._include_headers, bool)
    assert callable(protocol._converter.unstructure)
    assert isinstance(protocol.fm.features, dict)
    assert getattr(protocol._server, "incoming", None) is not None
    assert types.TEXT_DOCUMENT_DID_CHANGE in protocol.fm.features


def test_pygls_still_logs_unreadable_messages_as_we_shorten_them():
    assert "Unable to deserialize message" in inspect.getsource(json_rpc)


class _Writer:
    def __init__(self) -> None:
        self.written = b""

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:
        pass


def _messages(data: bytes) -> list[dict]:
    messages = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        fields = dict(line.split(b":", 1) for line in header.split(b"\r\n"))
        length = int(fields[b"Content-Length"])
        messages.append(json.loads(rest[:length]))
        data = rest[length:]
    return messages


def test_raw_results_and_notifications_go_out_as_framed_json():
    protocol = create_server().affine_protocol
    writer = _Writer()
    protocol.set_writer(writer, include_headers=True)
    protocol._result_types[7] = object()
    protocol._send_response(7, RawResult(json_bytes=b'[{"a":1}]'))
    protocol._send_response(8, RawResult({"data": [1, 2]}))
    protocol.send_notification_data("window/logMessage", {"type": 3, "message": "m"})
    protocol._send_response(
        9,
        [
            types.Location(
                uri="file:///x",
                range=types.Range(
                    start=types.Position(line=0, character=0),
                    end=types.Position(line=0, character=1),
                ),
            )
        ],
    )
    first, second, third, fourth = _messages(writer.written)
    assert first == {"jsonrpc": "2.0", "id": 7, "result": [{"a": 1}]}
    assert 7 not in protocol._result_types
    assert second == {"jsonrpc": "2.0", "id": 8, "result": {"data": [1, 2]}}
    assert third["method"] == "window/logMessage" and third["params"]["message"] == "m"
    assert fourth["id"] == 9 and fourth["result"][0]["uri"] == "file:///x"


def test_no_other_module_uses_pygls_internals():
    names = {"_send_response", "_result_types", "_send_data", "_include_headers", "_converter"}
    listed = " ".join(PYGLS_INTERNALS)
    assert all(name in listed for name in names)
    offenders = []
    for path in sorted((ROOT / "affine_lsp").rglob("*.py")):
        if path == ROOT / "affine_lsp" / "server" / "protocol.py":
            continue
        text = path.read_text()
        offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if f".{n}" in text]
    assert not offenders
