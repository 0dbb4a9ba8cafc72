"""Code actions and their resolution from a plain JSON-RPC client: disabled actions
only for clients that show them, an action that carries its edit resolves to
itself, and an action that cannot be applied says why (the dependence), never
that it is "out of date"."""

from __future__ import annotations

from pathlib import Path

import pytest

from affine_lsp.testing.lsp_client import LspClient
from tests.server.conftest import ENV, FIXTURES, SERVER

SKEWED = (Path(__file__).parents[1] / "editors" / "fixtures" / "skewed.mlir").read_text()
FUSION = (FIXTURES / "fusion.mlir").read_text()
URI = "file:///actions.mlir"

CODE_ACTION = {
    "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["refactor.rewrite"]}},
    "dataSupport": True,
    "resolveSupport": {"properties": ["edit"]},
}
NEOVIM_07 = {
    "textDocument": {"codeAction": CODE_ACTION},
    "workspace": {"workspaceEdit": {"documentChanges": True}},
}
"""What Neovim 0.7 announces about code actions: no `disabledSupport`."""

WITH_DISABLED = {
    **NEOVIM_07,
    "textDocument": {"codeAction": {**CODE_ACTION, "disabledSupport": True}},
}


def _client(capabilities: dict, text: str) -> LspClient:
    client = LspClient(SERVER, env=ENV)
    client.call("initialize", {"processId": None, "rootUri": None, "capabilities": capabilities})
    client.notify("initialized", {})
    document = {"uri": URI, "languageId": "mlir", "version": 1, "text": text}
    client.notify("textDocument/didOpen", {"textDocument": document})
    client.diagnostics(URI, 1, timeout=60)
    return client


def _actions_at(client: LspClient, text: str, needle: str) -> list[dict]:
    line = next(n for n, t in enumerate(text.splitlines()) if needle in t)
    here = {"line": line, "character": text.splitlines()[line].index(needle) + 2}
    answer = client.call(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": URI},
            "range": {"start": here, "end": here},
            "context": {"diagnostics": []},  # (no trigger kind, as Neovim 0.7)
        },
        timeout=120,
    )
    assert "error" not in answer, answer
    return answer["result"]


def test_clients_without_disabled_support_get_no_disabled_actions():
    with _client(NEOVIM_07, SKEWED) as client:
        actions = _actions_at(client, SKEWED, "affine.for %i")
        client.stop()
    titles = [a["title"] for a in actions]
    assert titles and not [a for a in actions if "disabled" in a], actions
    assert not any(t.startswith("Interchange") for t in titles), titles
    assert any(t.startswith("Skew %j by 1") for t in titles), titles  # (the legal variant)


def test_clients_with_disabled_support_see_why_an_action_is_disabled():
    with _client(WITH_DISABLED, SKEWED) as client:
        actions = _actions_at(client, SKEWED, "affine.for %i")
        client.stop()
    interchange = next(a for a in actions if a["title"].startswith("Interchange"))
    assert "written by iteration (i - 1, j + 1)" in interchange["disabled"]["reason"]
    assert "edit" not in interchange and "data" not in interchange


def test_an_action_that_carries_its_edit_resolves_to_itself():
    with _client(NEOVIM_07, FUSION) as client:
        actions = _actions_at(client, FUSION, "affine.for")
        fuse = next(a for a in actions if a["title"].startswith("Fuse with the next loop nest"))
        assert fuse["edit"]["documentChanges"][0]["edits"]
        answer = client.call("codeAction/resolve", fuse)
        client.stop()
    assert answer.get("result") == fuse, answer


@pytest.mark.parametrize("capabilities", [NEOVIM_07, WITH_DISABLED])
def test_an_action_that_cannot_be_applied_says_which_dependence(capabilities):
    """An action found not to apply only when resolved (planned undecided within the
    planning budget, then refused) comes back disabled, the user told why."""
    with _client(capabilities, SKEWED) as client:
        actions = _actions_at(client, SKEWED, "affine.for %i")
        tile = next(a for a in actions if a.get("data") and "disabled" not in a)
        # The same place, the title of the action that the dependence forbids.
        chosen = {**tile, "title": "Interchange %i and %j"}
        chosen["data"] = {**tile["data"], "title": "Interchange %i and %j"}
        answer = client.call("codeAction/resolve", chosen, timeout=120)
        messages = client.notifications("window/showMessage")
        client.stop()
    assert "error" not in answer, answer
    resolved = answer["result"]
    assert "edit" not in resolved or resolved["edit"] is None
    reason = resolved["disabled"]["reason"]
    assert "written by iteration (i - 1, j + 1)" in reason
    assert [m["message"] for m in messages] == [f"Interchange %i and %j: cannot apply, {reason}"]
    assert "out of date" not in reason


def test_a_disabled_action_sent_back_is_answered_with_its_reason():
    with _client(WITH_DISABLED, SKEWED) as client:
        actions = _actions_at(client, SKEWED, "affine.for %i")
        interchange = next(a for a in actions if "disabled" in a)
        answer = client.call("codeAction/resolve", interchange)
        messages = client.notifications("window/showMessage")
        client.stop()
    assert answer["result"]["disabled"] == interchange["disabled"], answer
    assert interchange["disabled"]["reason"] in messages[0]["message"]
