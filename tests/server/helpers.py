"""Opening documents and waiting for their diagnostics in end-to-end tests."""

from __future__ import annotations

import asyncio

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import FIXTURES

TIMEOUT = 30


def fixture_uri(name: str) -> str:
    return (FIXTURES / name).as_uri()


async def diagnostics_for(client: LanguageClient, uri: str, version: int | None):
    """Wait until diagnostics for `uri` with `version` arrive; return them."""

    async def wait():
        while True:
            for params in reversed(client.diagnostic_notifications):  # type: ignore[attr-defined]
                if params.uri == uri and params.version == version:
                    return params.diagnostics
            await asyncio.sleep(0.01)

    return await asyncio.wait_for(wait(), TIMEOUT)


async def open_text(client: LanguageClient, uri: str, text: str, version: int = 1):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="mlir", version=version, text=text
            )
        )
    )
    return await diagnostics_for(client, uri, version)


async def open_fixture(client: LanguageClient, name: str):
    uri = fixture_uri(name)
    return uri, await open_text(client, uri, (FIXTURES / name).read_text())


def position_of(text: str, needle: str, occurrence: int = 0, shift: int = 0) -> types.Position:
    """The position (UTF-16) of the `occurrence`-th `needle` in `text`, plus `shift`."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    index += shift
    line = text.count("\n", 0, index)
    column = index - (text.rfind("\n", 0, index) + 1)
    prefix = text[index - column : index]
    return types.Position(line=line, character=len(prefix.encode("utf-16-le")) // 2)
