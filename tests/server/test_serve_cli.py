"""`affine-lsp serve`: stdio is covered by the other server tests; here TCP and
the command line's checks."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

from tests.server.conftest import ENV


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(stream) -> dict:
    length = 0
    while True:
        line = stream.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))


def test_serve_over_tcp():
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "affine_lsp", "serve", "--tcp", f"127.0.0.1:{port}"],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.1)
        with connection, connection.makefile("rb") as stream:
            prepare = {"textDocument": {"rename": {"prepareSupport": True}}}
            initialize = {"processId": None, "rootUri": None, "capabilities": prepare}
            connection.sendall(
                _message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
            )
            answer = _read(stream)
            assert answer["id"] == 1
            assert answer["result"]["capabilities"]["textDocumentSync"]["change"] == 2
            assert answer["result"]["serverInfo"]["name"] == "affine-lsp"
            capabilities = answer["result"]["capabilities"]
            for provider in (
                "hoverProvider",
                "definitionProvider",
                "referencesProvider",
                "documentSymbolProvider",
                "foldingRangeProvider",
                "inlayHintProvider",
                "completionProvider",
            ):
                assert capabilities[provider], provider
            assert capabilities["renameProvider"]["prepareProvider"]
            assert capabilities["codeActionProvider"]["resolveProvider"]
            assert set(capabilities["codeActionProvider"]["codeActionKinds"]) == {
                "quickfix",
                "refactor.rewrite",
            }
            tokens = capabilities["semanticTokensProvider"]
            assert (
                tokens["full"]
                and tokens["range"]
                and "dimension" in tokens["legend"]["tokenModifiers"]
            )
            assert capabilities["executeCommandProvider"]["commands"] == [
                "affine-lsp.checkWorkspace"
            ]
            connection.sendall(_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            assert _read(stream)["id"] == 2
            connection.sendall(_message({"jsonrpc": "2.0", "method": "exit"}))
    finally:
        server.kill()
        server.wait(timeout=10)


def test_bad_tcp_address_is_a_usage_error():
    result = subprocess.run(
        [sys.executable, "-m", "affine_lsp", "serve", "--tcp", "nonsense"],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "HOST:PORT" in result.stderr
