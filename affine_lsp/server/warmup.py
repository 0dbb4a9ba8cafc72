"""Warming up cattrs before serving.

cattrs generates (and compiles) the converter of each lsprotocol type the first
time it is used, which for the union-heavy LSP types costs tens of milliseconds
per type. Doing it at start-up keeps that cost out of the first hover, the
first edit and the first completion a user makes.
"""

from __future__ import annotations

import logging
import time

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol

from affine_lsp.server.protocol import AffineProtocol

logger = logging.getLogger("affine_lsp.server")

_DOCUMENT = {"uri": "file:///warm-up.mlir"}
_POSITION = {"line": 0, "character": 0}
_RANGE = {"start": _POSITION, "end": _POSITION}

# Requests and notifications the server reads, with minimal params.
_INCOMING = {
    types.TEXT_DOCUMENT_DID_OPEN: {
        "textDocument": {**_DOCUMENT, "languageId": "mlir", "version": 1, "text": ""}
    },
    types.TEXT_DOCUMENT_DID_CHANGE: {
        "textDocument": {**_DOCUMENT, "version": 2},
        "contentChanges": [{"range": _RANGE, "text": " "}, {"text": ""}],
    },
    types.TEXT_DOCUMENT_DID_CLOSE: {"textDocument": _DOCUMENT},
    types.TEXT_DOCUMENT_HOVER: {"textDocument": _DOCUMENT, "position": _POSITION},
    types.TEXT_DOCUMENT_DEFINITION: {"textDocument": _DOCUMENT, "position": _POSITION},
    types.TEXT_DOCUMENT_REFERENCES: {
        "textDocument": _DOCUMENT,
        "position": _POSITION,
        "context": {"includeDeclaration": True},
    },
    types.TEXT_DOCUMENT_PREPARE_RENAME: {"textDocument": _DOCUMENT, "position": _POSITION},
    types.TEXT_DOCUMENT_RENAME: {"textDocument": _DOCUMENT, "position": _POSITION, "newName": "x"},
    types.TEXT_DOCUMENT_DOCUMENT_SYMBOL: {"textDocument": _DOCUMENT},
    types.TEXT_DOCUMENT_FOLDING_RANGE: {"textDocument": _DOCUMENT},
    types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL: {"textDocument": _DOCUMENT},
    types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE: {"textDocument": _DOCUMENT, "range": _RANGE},
    types.TEXT_DOCUMENT_INLAY_HINT: {"textDocument": _DOCUMENT, "range": _RANGE},
    types.TEXT_DOCUMENT_COMPLETION: {"textDocument": _DOCUMENT, "position": _POSITION},
    types.TEXT_DOCUMENT_CODE_ACTION: {
        "textDocument": _DOCUMENT,
        "range": _RANGE,
        "context": {"diagnostics": [{"range": _RANGE, "message": "m"}], "only": ["quickfix"]},
    },
    types.CODE_ACTION_RESOLVE: {"title": "t", "data": {"id": "0"}},
}


def _samples() -> dict[str, object]:
    """A typical result of each request, to convert once."""
    range_ = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=1)
    )
    location = types.Location(uri=_DOCUMENT["uri"], range=range_)
    edit = types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=_DOCUMENT["uri"], version=1
                ),
                edits=[types.TextEdit(range=range_, new_text="x")],
            )
        ]
    )
    diagnostic = types.Diagnostic(range=range_, message="m", code="c", source="s")
    return {
        types.TEXT_DOCUMENT_HOVER: types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="x"), range=range_
        ),
        types.TEXT_DOCUMENT_DEFINITION: [location],
        types.TEXT_DOCUMENT_REFERENCES: [location],
        types.TEXT_DOCUMENT_PREPARE_RENAME: types.PrepareRenamePlaceholder(
            range=range_, placeholder="x"
        ),
        types.TEXT_DOCUMENT_RENAME: edit,
        types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL: types.SemanticTokens(data=[0, 0, 1, 0, 0]),
        types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE: types.SemanticTokens(data=[0, 0, 1, 0, 0]),
        types.TEXT_DOCUMENT_INLAY_HINT: [
            types.InlayHint(position=range_.start, label="x", kind=types.InlayHintKind.Type)
        ],
        types.TEXT_DOCUMENT_COMPLETION: types.CompletionList(
            is_incomplete=False,
            items=[
                types.CompletionItem(
                    label="x",
                    kind=types.CompletionItemKind.Variable,
                    text_edit=types.TextEdit(range=range_, new_text="x"),
                    insert_text_format=types.InsertTextFormat.Snippet,
                )
            ],
        ),
        types.TEXT_DOCUMENT_CODE_ACTION: [
            types.CodeAction(
                title="x",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                edit=edit,
                disabled=types.CodeActionDisabled(reason="r"),
                data={"id": "0"},
            )
        ],
        types.CODE_ACTION_RESOLVE: types.CodeAction(title="x", edit=edit),
    }


def warm_up(protocol: AffineProtocol) -> None:
    """Convert one message of each kind the server reads and writes (errors ignored)."""
    started = time.perf_counter()
    notifications = {
        types.TEXT_DOCUMENT_DID_OPEN,
        types.TEXT_DOCUMENT_DID_CHANGE,
        types.TEXT_DOCUMENT_DID_CLOSE,
    }
    for method, params in _INCOMING.items():
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if method not in notifications:
            message["id"] = 0
        try:  # pygls's own reading (ours would answer a failure to the client)
            LanguageServerProtocol.structure_message(protocol, message)
        except Exception:  # a warm-up must never stop the server
            logger.debug("warm-up of %s failed", method, exc_info=True)
    converter = protocol._converter
    for method, result in _samples().items():
        response_type = protocol.get_result_type(method)
        try:
            if response_type is not None:
                converter.unstructure(response_type(id=0, result=result, jsonrpc="2.0"))
        except Exception:
            logger.debug("warm-up of %s results failed", method, exc_info=True)
    logger.info("converters warmed up in %.0f ms", (time.perf_counter() - started) * 1000)
