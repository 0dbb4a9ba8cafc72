"""Plain text edits of an open document as an LSP WorkspaceEdit."""

from __future__ import annotations

from collections.abc import Iterable

from lsprotocol import types

from affine_lsp.checks import TextEdit
from affine_lsp.server.convert import lsp_range
from affine_lsp.server.documents import OpenDocument
from affine_lsp.server.server import AffineLanguageServer


def workspace_edit(
    ls: AffineLanguageServer, open_document: OpenDocument, edits: Iterable[TextEdit]
) -> types.WorkspaceEdit:
    """Edits of one document: a versioned TextDocumentEdit when the client takes them."""
    document = open_document.analysis.document
    text_edits = [
        types.TextEdit(range=lsp_range(document, e.span), new_text=e.new_text) for e in edits
    ]
    if ls.client_supports("workspace.workspace_edit.document_changes"):
        identifier = types.OptionalVersionedTextDocumentIdentifier(
            uri=open_document.uri, version=open_document.version
        )
        return types.WorkspaceEdit(
            document_changes=[types.TextDocumentEdit(text_document=identifier, edits=text_edits)]
        )
    return types.WorkspaceEdit(changes={open_document.uri: text_edits})
