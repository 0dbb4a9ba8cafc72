"""The hover of an outer loop from a plain JSON-RPC client that shows no images:
the loop's own domain, named by its induction variable, and the whole nest's
domain below it (once only the picture, for clients that show images, had it)."""

from __future__ import annotations

from affine_lsp.testing.lsp_client import LspClient
from tests.server.conftest import ENV, SERVER

NEST = """func.func @f(%A: memref<24x32xf32>) {
  affine.for %i = 0 to 24 {
    affine.for %j = 0 to 32 {
      %v = affine.load %A[%i, %j] : memref<24x32xf32>
      affine.store %v, %A[%i, %j] : memref<24x32xf32>
    }
  }
  return
}
"""
URI = "file:///nest.mlir"


def _hover(capabilities: dict, line: int) -> str:
    with LspClient(SERVER, env=ENV) as client:
        client.call(
            "initialize", {"processId": None, "rootUri": None, "capabilities": capabilities}
        )
        client.notify("initialized", {})
        item = {"uri": URI, "languageId": "mlir", "version": 1, "text": NEST}
        client.notify("textDocument/didOpen", {"textDocument": item})
        client.diagnostics(URI, 1)
        position = {"line": line, "character": NEST.splitlines()[line].index("affine.for") + 2}
        answer = client.call(
            "textDocument/hover", {"textDocument": {"uri": URI}, "position": position}
        )
        client.stop()
    value: str = answer["result"]["contents"]["value"]
    return value


def test_the_outer_loop_shows_the_whole_nest_to_text_clients():
    markdown = _hover({}, 1)
    assert "![" not in markdown
    assert "**Iteration domain** of `%i`: `{ [i] : 0 <= i <= 23 }`" in markdown
    whole = "**Iteration domain of the whole nest**: "
    assert whole + "`{ [i, j] : 0 <= i <= 23 and 0 <= j <= 31 }`" in markdown
    assert "of the nest" not in markdown.replace("of the whole nest", "")


def test_the_inner_loop_is_the_whole_nest_already():
    markdown = _hover({}, 2)
    assert "**Iteration domain** of `%j`" in markdown
    assert "{ [i, j] : 0 <= i <= 23 and 0 <= j <= 31 }" in markdown
    assert "whole nest" not in markdown


def test_clients_that_show_images_get_the_same_text_and_the_picture():
    markdown = _hover({"general": {"markdown": {"parser": "marked", "version": "1.1.0"}}}, 1)
    assert markdown.count("{ [i, j] : 0 <= i <= 23 and 0 <= j <= 31 }") == 1
    assert markdown.index("**Iteration domain of the whole nest**") < markdown.index("![")
