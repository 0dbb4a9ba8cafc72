"""A binary file opened in the editor: the server publishes the one error `check`
gives the same text, not a cascade (the client sends the file as its editor decoded
it: NULs kept, bytes that are not UTF-8 as U+FFFD)."""

from __future__ import annotations

import pytest

from affine_lsp.checks import check_document
from affine_lsp.syntax import SourceDocument
from tests.robustness.test_binary_input import BINARIES
from tests.server.helpers import open_text

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_binary_file_gets_one_error(client):
    for number, name in enumerate(("elf header", "random 1", "not utf-8")):
        text = BINARIES[name].decode("utf-8", errors="replace")
        uri = f"file:///tmp/binary{number}.mlir"
        published = await open_text(client, uri, text)
        (expected,) = check_document(SourceDocument(text))
        assert [d.message for d in published] == [expected.message], name
        assert published[0].message.startswith("not MLIR text: "), name
