"""A message arriving while a long analysis runs is let through before the next
item: a hover is answered while the rest of the file waits, not after it."""

from __future__ import annotations

import asyncio
import contextlib
import io

from lsprotocol import types

from affine_lsp.server.features import hover_request
from affine_lsp.server.incoming import Incoming
from affine_lsp.server.server import AffineLanguageServer

URI = "file:///long.mlir"
FUNCTION = """func.func @f{n}(%A: memref<64xf32>) {{
  affine.for %i = 0 to 64 {{
    %v = affine.load %A[%i] : memref<64xf32>
    affine.store %v, %A[%i] : memref<64xf32>
  }}
  return
}}
"""
TEXT = "".join(FUNCTION.format(n=n) for n in range(400))


class _Writer:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def _analysed(server: AffineLanguageServer) -> int:
    records = server.documents[URI].analysis.records
    return sum(1 for record in records if not record.dirty)


def test_a_hover_is_answered_before_the_analysis_goes_on():
    server = AffineLanguageServer()
    server.protocol.set_writer(_Writer())

    async def scenario() -> None:
        server.open(URI, TEXT, 1)
        while _analysed(server) < 5:  # the analysis is under way
            await asyncio.sleep(0)
        # The first line of a message is read (by pygls's reading thread).
        server.incoming.watch(io.BytesIO(b"Content-Length: 99\r\n\r\n")).readline()
        analysed = _analysed(server)
        for _ in range(50):  # the message takes turns of the loop to be read
            await asyncio.sleep(0)
        assert _analysed(server) == analysed  # no item analysed meanwhile
        load = TEXT.count("\n") - 5  # in the last function: not analysed yet
        params = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            position=types.Position(line=load, character=12),
        )
        found = hover_request(server, params)
        server.incoming.handled()  # (the protocol, once it has handled the message)
        assert found is not None and isinstance(found.contents, types.MarkupContent)
        assert "affine.load" in found.contents.value
        assert _analysed(server) == analysed < len(server.documents[URI].analysis.records)
        while _analysed(server) == analysed:  # then the analysis goes on
            await asyncio.sleep(0)
        server.close(URI)

    asyncio.run(scenario())


def test_a_message_that_never_comes_whole_holds_the_analysis_back_once():
    incoming = Incoming()

    async def scenario() -> None:
        incoming.watch(io.BytesIO(b"Content-Length: 99\r\n")).readline()
        assert incoming.arriving()
        await incoming.let_through()  # (gives up after WAIT_SECONDS)
        assert not incoming.arriving()

    asyncio.run(scenario())


def test_an_analysis_cancelled_in_the_turn_its_message_is_handled_stops():
    """An edit cancels the analysis waiting for it and is handled in the same turn:
    the analysis must stop (it went on, one more for every edit)."""
    incoming = Incoming()

    async def scenario() -> None:
        incoming.watch(io.BytesIO(b"Content-Length: 99\r\n")).readline()
        waiting = asyncio.ensure_future(incoming.let_through())
        await asyncio.sleep(0)  # (waiting for the message)
        waiting.cancel()  # the edit's handler starts a new analysis ...
        incoming.handled()  # ... and the protocol is done with the edit
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        assert waiting.cancelled()

    asyncio.run(scenario())
