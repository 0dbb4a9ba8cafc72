"""Every language feature end to end, through a real server over stdio."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.server.conftest import FIXTURES
from tests.server.helpers import diagnostics_for, fixture_uri, open_fixture, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

NEST = (FIXTURES / "nest.mlir").read_text()
FIXES = (FIXTURES / "fixes.mlir").read_text()


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def _nest(client) -> str:
    uri = fixture_uri("nest.mlir")
    if uri not in client.diagnostics:
        await open_fixture(client, "nest.mlir")
    return uri


async def test_hover_shows_the_iteration_domain(client):
    uri = await _nest(client)
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(uri), position=position_of(NEST, "affine.for", 1, 3))
    )
    assert result.contents.kind == types.MarkupKind.Markdown
    assert "(i + j) mod 2 = 0 and i >= 0 and i <= j < N" in result.contents.value
    assert result.range.start == position_of(NEST, "affine.for", 1)


async def test_hover_on_value_and_access(client):
    uri = await _nest(client)
    value = await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(uri), position=position_of(NEST, "%N", 3, 1))
    )
    assert "Bound as a **symbol** of `affine.if` here: ✓ valid" in value.contents.value
    access = await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(uri), position=position_of(NEST, "affine.load", 0, 2))
    )
    assert "[N] -> { [i, j] -> A[i, j + 1] }" in access.contents.value


async def test_iteration_domain_request(client):
    uri = await _nest(client)
    position = position_of(NEST, "affine.store")
    result = await client.protocol.send_request_async(
        "affine-lsp/iterationDomain",
        {"textDocument": {"uri": uri}, "position": {"line": position.line, "character": 4}},
    )
    assert result.domain == "[N] -> { [i, j] : (i + j) mod 2 = 0 and i >= 0 and i <= j < N }"
    assert "affine.for %j" in result.message
    outside = await client.protocol.send_request_async(
        "affine-lsp/iterationDomain",
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
    )
    assert outside.domain is None and outside.message


async def test_definition_and_references(client):
    uri = await _nest(client)
    locations = await client.text_document_definition_async(
        types.DefinitionParams(text_document=_doc(uri), position=position_of(NEST, "#inside", 1, 2))
    )
    assert [loc.range.start.line for loc in locations] == [3]
    references = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=_doc(uri),
            position=position_of(NEST, "@triangle", 0, 2),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert [loc.range.start.line for loc in references] == [6, 28]


async def test_prepare_rename_and_rename(client):
    uri = await _nest(client)
    prepared = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=_doc(uri), position=position_of(NEST, "%v", 0, 1))
    )
    assert prepared.placeholder == "%v"
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=_doc(uri), position=position_of(NEST, "%v", 1, 1), new_name="value"
        )
    )
    (change,) = edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == 1
    assert {e.new_text for e in change.edits} == {"%value"} and len(change.edits) == 2
    with pytest.raises(JsonRpcException, match="already defined"):
        await client.text_document_rename_async(
            types.RenameParams(
                text_document=_doc(uri), position=position_of(NEST, "%v", 1, 1), new_name="%zero"
            )
        )
    with pytest.raises(JsonRpcException, match="Operation names"):
        await client.text_document_prepare_rename_async(
            types.PrepareRenameParams(
                text_document=_doc(uri), position=position_of(NEST, "affine.for", 0, 1)
            )
        )


async def test_document_symbols(client):
    uri = await _nest(client)
    found = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=_doc(uri))
    )
    names = [s.name for s in found]
    assert names == ["#lower", "#tile", "#inside", "#unused", "@triangle", "@caller"]
    triangle = found[4]
    assert triangle.kind == types.SymbolKind.Function
    loop = triangle.children[0]
    assert loop.name == "affine.for %i = 0 to %N" and loop.kind == types.SymbolKind.Array
    assert loop.children[0].children[0].name == "affine.if #inside(%i)[%N]"


async def test_folding_ranges(client):
    uri = await _nest(client)
    folds = await client.text_document_folding_range_async(
        types.FoldingRangeParams(text_document=_doc(uri))
    )
    assert any(f.start_line == 6 and f.end_line == 24 for f in folds)  # @triangle's body


async def test_semantic_tokens_full_and_range(client):
    uri = await _nest(client)
    full = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=_doc(uri))
    )
    assert full.data and len(full.data) % 5 == 0
    part = await client.text_document_semantic_tokens_range_async(
        types.SemanticTokensRangeParams(
            text_document=_doc(uri),
            range=types.Range(
                start=types.Position(line=9, character=0), end=types.Position(line=10, character=0)
            ),
        )
    )
    # line 10: `  affine.for %i = 0 to %N {`: op name, IV, 0, `to`, %N
    assert len(part.data) // 5 == 5 and part.data[0] == 9 and part.data[1] == 2


async def test_inlay_hints(client):
    uri = await _nest(client)
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=_doc(uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=40, character=0)
            ),
        )
    )
    labels = {(h.position.line, h.label) for h in hints}
    assert (9, "N iterations") in labels and (12, "s0:") in labels


async def test_completion(client):
    uri = await _nest(client)
    position = position_of(NEST, "%A[%x, %y]", 0, 4)
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=_doc(uri), position=position)
    )
    labels = {item.label for item in result.items}
    assert {"%x", "%y", "%N"} <= labels and "%w" not in labels and "%A" not in labels


async def test_code_actions_quick_fix(client):
    uri = fixture_uri("fixes.mlir")
    _, diagnostics = await open_fixture(client, "fixes.mlir")
    legacy = next(d for d in diagnostics if d.code == "legacy-op-name")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=_doc(uri),
            range=legacy.range,
            context=types.CodeActionContext(diagnostics=[legacy]),
        )
    )
    fix = next(a for a in actions if a.title == "Rename to func.func")
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    (change,) = fix.edit.document_changes
    assert change.edits[0].new_text == "func.func" and change.text_document.version == 1
    assert fix.diagnostics[0].code == "legacy-op-name"
    only_rewrites = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=_doc(uri),
            range=legacy.range,
            context=types.CodeActionContext(diagnostics=[], only=["refactor.rewrite"]),
        )
    )
    assert all(a.kind == "refactor.rewrite" for a in only_rewrites)


async def test_check_workspace_command(client):
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="affine-lsp.checkWorkspace", arguments=[FIXTURES.as_uri()]
        )
    )
    assert result["files"] == len(list(FIXTURES.glob("*.mlir")))
    assert result["errors"] >= 4 and result["warnings"] >= 1
    broken = await diagnostics_for(client, fixture_uri("broken.mlir"), None)
    assert {d.code for d in broken} >= {"ssa-undefined", "ssa-redefinition", "syntax"}


async def test_requests_for_unknown_documents_are_empty(client):
    uri = "file:///nowhere.mlir"
    position = types.Position(line=0, character=0)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(uri), position=position)
    )
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=_doc(uri))
    )
    assert hover is None and symbols == []


async def test_out_of_range_positions_are_clamped(client):
    uri = await _nest(client)
    far = types.Position(line=10**6, character=10**6)
    past_line = types.Position(line=9, character=500)
    for position in (far, past_line):
        await client.text_document_hover_async(
            types.HoverParams(text_document=_doc(uri), position=position)
        )
        await client.text_document_completion_async(
            types.CompletionParams(text_document=_doc(uri), position=position)
        )
        await client.text_document_definition_async(
            types.DefinitionParams(text_document=_doc(uri), position=position)
        )
    ranges = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=_doc(uri), range=types.Range(start=far, end=far))
    )
    assert not ranges


async def test_fusion_code_actions_and_resolve(client):
    uri, _ = await open_fixture(client, "fusion.mlir")
    text = (FIXTURES / "fusion.mlir").read_text()
    at = position_of(text, "affine.for", 0, 2)
    here = types.Range(start=at, end=at)

    async def ask(trigger_kind=None, only=None):
        context = types.CodeActionContext(diagnostics=[], only=only, trigger_kind=trigger_kind)
        return await client.text_document_code_action_async(
            types.CodeActionParams(text_document=_doc(uri), range=here, context=context)
        )

    actions = await ask(types.CodeActionTriggerKind.Invoked, [types.CodeActionKind.RefactorRewrite])
    best = actions[0]
    assert best.title == "Fuse with the next loop nest (depth 2, +0% compute)"
    assert best.is_preferred and best.kind == types.CodeActionKind.RefactorRewrite
    (change,) = best.edit.document_changes
    assert change.text_document.version == 1 and change.edits
    fuse_all = next(a for a in actions if a.title.startswith("Fuse all"))
    assert fuse_all.edit is None and fuse_all.data
    resolved = await client.code_action_resolve_async(fuse_all)
    assert resolved.edit.document_changes[0].edits
    # The lightbulb's automatic request, and a client's request without a trigger
    # kind (Neovim 0.7), get the same refactorings.
    titles = [a.title for a in actions]
    for trigger_kind in (types.CodeActionTriggerKind.Automatic, None):
        assert [a.title for a in await ask(trigger_kind)] == titles
