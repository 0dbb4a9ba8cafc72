"""The Iteration Space panel's requests through a real server over stdio:
`affine-lsp/iterationSpace` (the picture of the loop at a position) and
`affine-lsp/previewRefactoring` (before and after, drawn by the planning worker)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.draw.svg import read_svg
from tests.server.conftest import start
from tests.server.helpers import open_text

pytestmark = pytest.mark.asyncio(loop_scope="function")

ROWS = (Path(__file__).resolve().parents[1] / "editors" / "fixtures" / "rows.mlir").read_text()
URI = "file:///panel/rows.mlir"
SETTINGS = {"transforms": {"tileSizes": [4]}}


def _at(line: int, character: int = 4) -> dict:
    """A position on 1-based `line`."""
    return {"line": line - 1, "character": character}


async def _space(client, line: int, uri: str = URI):
    return await client.protocol.send_request_async(
        "affine-lsp/iterationSpace", {"textDocument": {"uri": uri}, "position": _at(line)}
    )


async def _preview(client, line: int, title: str):
    position = _at(line)
    return await client.protocol.send_request_async(
        "affine-lsp/previewRefactoring",
        {
            "textDocument": {"uri": URI},
            "range": {"start": position, "end": position},
            "title": title,
        },
    )


async def test_the_picture_of_the_loop_at_a_position_names_its_version(fresh_client):
    await start(fresh_client, SETTINGS)
    await open_text(fresh_client, URI, ROWS, version=3)
    first = await _space(fresh_client, 4)
    assert first.version == 3 and first.message == first.picture.caption
    picture = first.picture
    assert picture.caption == "affine.for %i = 1 to 9 (line 4)"
    assert (picture.points, picture.total, picture.arrows, picture.tiles) == (48, 48, 42, 0)
    assert len(read_svg(picture.svg).circles) == 48
    second = await _space(fresh_client, 10)
    assert (second.picture.points, second.picture.arrows) == (12, 11)
    outside = await _space(fresh_client, 14)
    assert outside.picture is None and "No affine.for" in outside.message
    closed = await _space(fresh_client, 4, "file:///panel/closed.mlir")
    assert closed.version is None and "not open" in closed.message


async def test_a_preview_draws_before_and_after_for_the_current_version(fresh_client):
    await start(fresh_client, SETTINGS)
    await open_text(fresh_client, URI, ROWS)
    tiled = await _preview(fresh_client, 4, "Tile 4×4")
    assert (tiled.version, tiled.title, tiled.reason, tiled.disabled) == (1, "Tile 4×4", None, None)
    [before], [after] = tiled.before, tiled.after
    assert (before.points, before.tiles) == (48, 0)
    assert (after.points, after.tiles, after.moved) == (48, 4, 0)
    interchanged = await _preview(fresh_client, 4, "Interchange %i and %j")
    assert interchanged.after[0].moved == 43
    missing = await _preview(fresh_client, 4, "Tile 5×5")
    assert missing.after == [] and "no refactoring titled" in missing.reason
    # A disabled refactoring: before only, with the reason it is not offered.
    parallel = await _preview(fresh_client, 4, "Parallelize %i")
    assert parallel.after == [] and "carried by %i" in parallel.disabled


async def test_a_preview_of_a_changed_document_is_refused(fresh_client):
    await start(fresh_client, SETTINGS)
    await open_text(fresh_client, URI, ROWS)
    pending = asyncio.ensure_future(_preview(fresh_client, 4, "Tile 4×4"))
    await asyncio.sleep(0)  # sent before the change
    fresh_client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=ROWS + "\n")],
        )
    )
    try:
        answer = await pending
    except JsonRpcException as error:
        assert "changed" in str(error)
    else:  # computed before the change arrived: then for version 1, never 2
        assert answer.version == 1


COLUMNS = """func.func @column_sums(%A: memref<512x512xf64>, %s: memref<512xf64>) {
  affine.for %i = 0 to 512 {
    affine.for %j = 0 to 512 {
      %a = affine.load %A[%j, %i] : memref<512x512xf64>
      %t = affine.load %s[%i] : memref<512xf64>
      %u = arith.addf %t, %a : f64
      affine.store %u, %s[%i] : memref<512xf64>
    }
  }
  return
}
"""


async def test_the_optimized_schedule_is_previewed_next_to_the_original(fresh_client):
    """ "Optimize nest" is previewed like any refactoring: the nest before, and after the
    steps it takes (here %j outside %i, unrolled and jammed)."""
    await start(fresh_client)
    await open_text(fresh_client, URI, COLUMNS)
    shown = await _preview(fresh_client, 2, "Optimize nest")
    assert (shown.title, shown.reason, shown.disabled) == ("Optimize nest", None, None)
    assert len(shown.before) == 1 and shown.after
    [before], [after] = shown.before, shown.after
    assert before.caption == "affine.for %i = 0 to 512 (line 2)" and before.total == 512 * 512
    # (%j jammed by 2: each copy reads another row of A, 2 MB, beyond L1, a vector at a time)
    assert after.caption == "affine.for %j = 0 to 512 step 2 (line 2)"
    assert after.moved > after.points / 2  # (points of %i now run in another order)
