"""Project files in the server: each document checked with the `.affine-lsp.toml`
of its folder or one above, read again when it changes; a project file open in
the editor gets its own warnings."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from tests.server.conftest import start
from tests.server.helpers import TIMEOUT, diagnostics_for, open_text, position_of
from tests.test_project_dialects import HERD
from tests.test_project_dialects import PROJECT as HERD_PROJECT

# A region argument of an op that declares AffineScope is a valid symbol.
SOURCE = """func.func @f(%m: memref<64xf32>) {
  "hls.node"() ({
  ^bb0(%n: index):
    affine.for %i = 0 to %n {
      %v = affine.load %m[%i] : memref<64xf32>
    }
    "hls.yield"() : () -> ()
  }) : () -> ()
  return
}
"""
PROJECT = '[ops."hls.node"]\ntraits = ["AffineScope"]\n'


def _codes(diagnostics) -> list[str]:
    return [str(d.code) for d in diagnostics]


async def _next_diagnostics(client, uri: str, seen: int):
    """The first diagnostics for `uri` published after the first `seen` notifications."""

    async def wait():
        while True:
            for params in client.diagnostic_notifications[seen:]:
                if params.uri == uri:
                    return params.diagnostics
            await asyncio.sleep(0.01)

    return await asyncio.wait_for(wait(), TIMEOUT)


def _watched(client, path) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)]
        )
    )


async def test_a_document_is_checked_with_its_project_file(fresh_client, tmp_path):
    await start(fresh_client)
    folder = tmp_path / "kernels"
    folder.mkdir()
    (tmp_path / ".affine-lsp.toml").write_text(PROJECT)
    uri = (folder / "node.mlir").as_uri()
    assert _codes(await open_text(fresh_client, uri, SOURCE)) == []


async def test_a_project_file_written_later_is_read_when_the_client_says_so(fresh_client, tmp_path):
    await start(fresh_client)
    uri = (tmp_path / "node.mlir").as_uri()
    assert _codes(await open_text(fresh_client, uri, SOURCE)) == ["affine-symbol-invalid"]
    seen = len(fresh_client.diagnostic_notifications)
    project = tmp_path / ".affine-lsp.toml"
    project.write_text(PROJECT)
    _watched(fresh_client, project)
    assert _codes(await _next_diagnostics(fresh_client, uri, seen)) == []
    # Removed again: the next edit of the document finds it gone.
    project.unlink()
    change = types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=SOURCE)],
    )
    fresh_client.text_document_did_change(change)
    assert _codes(await diagnostics_for(fresh_client, uri, 2)) == ["affine-symbol-invalid"]


async def test_a_project_file_open_in_the_editor_gets_its_warnings(fresh_client, tmp_path):
    await start(fresh_client)
    uri = (tmp_path / ".affine-lsp.toml").as_uri()
    text = '[ops."hls.node"]\ntraits = ["AffineScope", "Sparkly"]\n'
    fresh_client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="toml", version=1, text=text)
        )
    )
    (warning,) = await diagnostics_for(fresh_client, uri, 1)
    assert warning.severity == types.DiagnosticSeverity.Warning
    assert "unknown trait 'Sparkly'" in warning.message
    assert (warning.range.start.line, warning.range.start.character) == (1, 25)
    fixed = types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[
            types.TextDocumentContentChangePartial(
                range=types.Range(
                    start=types.Position(line=1, character=23),
                    end=types.Position(line=1, character=34),
                ),
                text="",
            )
        ],
    )
    fresh_client.text_document_did_change(fixed)
    assert list(await diagnostics_for(fresh_client, uri, 2)) == []


async def test_clients_that_take_it_are_asked_to_watch_project_files(fresh_client):
    registered: list[types.Registration] = []

    @fresh_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        registered.extend(params.registrations)

    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True
            )
        )
    )
    await fresh_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    for _ in range(300):
        if registered:
            break
        await asyncio.sleep(0.01)
    (registration,) = registered
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    options = registration.register_options
    assert isinstance(options, dict)
    watchers = options["watchers"]
    assert [w["globPattern"] for w in watchers] == ["**/.affine-lsp.toml"]


async def test_refactorings_are_planned_with_the_documents_project(fresh_client, tmp_path):
    await start(fresh_client)
    (tmp_path / ".affine-lsp.toml").write_text(HERD_PROJECT)
    uri = (tmp_path / "herd.mlir").as_uri()
    assert _codes(await open_text(fresh_client, uri, HERD)) == []
    at = position_of(HERD, "affine.for %i ")
    context = types.CodeActionContext(
        diagnostics=[],
        only=[types.CodeActionKind.RefactorRewrite],
        trigger_kind=types.CodeActionTriggerKind.Invoked,
    )
    actions = await fresh_client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=at, end=at),
            context=context,
        )
    )
    titles = {a.title: a for a in actions}
    assert titles["Fuse with the next loop nest (depth 2, +0% compute)"].disabled is None
    tile = titles["Tile 32×32"]
    assert tile.disabled is None
    if tile.edit is None:
        tile = await fresh_client.code_action_resolve_async(tile)
    (change,) = tile.edit.document_changes
    assert any("step 32" in edit.new_text for edit in change.edits)
