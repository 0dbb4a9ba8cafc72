"""LSP handlers: each translates a request into a call of the `ide` layer and its
plain result back into LSP types. Nothing here computes anything itself."""

from __future__ import annotations

from lsprotocol import types

from affine_lsp.server.guard import guarded
from affine_lsp.server.server import AffineLanguageServer
from affine_lsp.syntax import ContentChange


def _changes(params: types.DidChangeTextDocumentParams) -> list[ContentChange]:
    changes = []
    for change in params.content_changes:
        range_ = getattr(change, "range", None)
        if range_ is None:
            changes.append(ContentChange(change.text))
        else:
            changes.append(
                ContentChange(
                    change.text,
                    (
                        (range_.start.line, range_.start.character),
                        (range_.end.line, range_.end.character),
                    ),
                )
            )
    return changes


def register_sync(server: AffineLanguageServer) -> None:
    """Lifecycle, document synchronisation and settings."""

    @server.feature(types.INITIALIZE)
    @guarded()
    def initialize(ls: AffineLanguageServer, params: types.InitializeParams) -> None:
        ls.negotiate_encoding(params.capabilities)
        ls.apply_settings(params.initialization_options)

    @server.feature(types.INITIALIZED)
    @guarded()
    async def initialized(ls: AffineLanguageServer, params: types.InitializedParams) -> None:
        await ls.pull_settings()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded()
    async def did_change_configuration(
        ls: AffineLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        if ls.client_supports("workspace.configuration"):
            await ls.pull_settings()
        else:
            ls.apply_settings(params.settings)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded()
    def did_open(ls: AffineLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        ls.open(document.uri, document.text, document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded()
    def did_change(ls: AffineLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        document = params.text_document
        ls.change(document.uri, document.version, _changes(params))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded()
    def did_close(ls: AffineLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)


def create_server() -> AffineLanguageServer:
    """A server with every handler registered."""
    from affine_lsp.server.features import register_features

    server = AffineLanguageServer()
    register_sync(server)
    register_features(server)
    return server
