"""Every LSP method the server handles, in one table.

A row names the method (or command), the handler function, the registration
options, and a typical message and result, which the warm-up (`warmup.py`)
converts once the server has answered `initialize`. The fuzz stages
(`testing/editor_stages.py`) read the table too; `tests/server/test_handlers.py`
checks that each row is warmed up and fuzzed (or says why not). Adding a request:
write the handler (a function `(ls, params)` decorated with `guarded`), add its row.

A row names its handler by where it is (`"features.hover_request"`, in
`affine_lsp.server`), and whether it is a coroutine: a handler's module is
imported when the handler is first called, so that nothing of the analysis is
loaded before the server answers `initialize` (the warm-up loads it next).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from affine_lsp.server import methods
from affine_lsp.server.server import AffineLanguageServer
from affine_lsp.server.tokens import LEGEND

REQUEST = "request"
NOTIFICATION = "notification"
COMMAND = "command"  # a `workspace/executeCommand` command


@dataclass(frozen=True)
class Handler:
    """One row: a method, its handler, and what the warm-up converts for it."""

    method: str
    function: str  # "module.name" in affine_lsp.server
    example: Any  # the params of a typical message (a command's arguments)
    result: Callable[[], Any] | None = None  # a typical result (None: plain JSON or none)
    options: Any = None  # registration options
    kind: str = REQUEST
    coroutine: bool = False  # whether the handler is an `async def`

    @property
    def module(self) -> str:
        return f"affine_lsp.server.{self.function.rpartition('.')[0]}"

    def load(self) -> Callable:
        """The handler function (its module imported now if it is not yet)."""
        module, _, name = self.function.rpartition(".")
        found: Callable = getattr(importlib.import_module(f"affine_lsp.server.{module}"), name)
        return found


# Typical messages and results -----------------------------------------------------

_URI = "file:///warm-up.mlir"
_DOCUMENT = {"uri": _URI}
_POSITION = {"line": 0, "character": 0}
_RANGE = {"start": _POSITION, "end": _POSITION}
_AT = {"textDocument": _DOCUMENT, "position": _POSITION}
_IN = {"textDocument": _DOCUMENT, "range": _RANGE}


def _range() -> types.Range:
    return types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=1)
    )


def _locations() -> list[types.Location]:
    return [types.Location(uri=_URI, range=_range())]


def _edit() -> types.WorkspaceEdit:
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=_URI, version=1)
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=identifier, edits=[types.TextEdit(range=_range(), new_text="x")]
            )
        ]
    )


def _hover() -> types.Hover:
    value = types.MarkupContent(kind=types.MarkupKind.Markdown, value="x")
    return types.Hover(contents=value, range=_range())


def _tokens() -> types.SemanticTokens:
    return types.SemanticTokens(data=[0, 0, 1, 0, 0])


def _inlay_hints() -> list[types.InlayHint]:
    return [types.InlayHint(position=_range().start, label="x", kind=types.InlayHintKind.Type)]


def _completions() -> types.CompletionList:
    item = types.CompletionItem(
        label="x",
        kind=types.CompletionItemKind.Variable,
        text_edit=types.TextEdit(range=_range(), new_text="x"),
        insert_text_format=types.InsertTextFormat.Snippet,
    )
    return types.CompletionList(is_incomplete=False, items=[item])


def _code_actions() -> list[types.CodeAction]:
    diagnostic = types.Diagnostic(range=_range(), message="m", code="c", source="s")
    action = types.CodeAction(
        title="x",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=_edit(),
        disabled=types.CodeActionDisabled(reason="r"),
        data={"id": "0"},
    )
    return [action]


# The table ---------------------------------------------------------------------------

HANDLERS: tuple[Handler, ...] = (
    Handler(
        types.INITIALIZE,
        "lifecycle.initialize",
        {"processId": None, "rootUri": None, "capabilities": {}},
    ),
    Handler(types.INITIALIZED, "lifecycle.initialized", {}, kind=NOTIFICATION, coroutine=True),
    Handler(types.SHUTDOWN, "lifecycle.shutdown", None),
    Handler(
        types.WORKSPACE_DID_CHANGE_CONFIGURATION,
        "lifecycle.did_change_configuration",
        {"settings": {}},
        kind=NOTIFICATION,
        coroutine=True,
    ),
    Handler(
        types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        "lifecycle.did_change_watched_files",
        {"changes": [{"uri": "file:///.affine-lsp.toml", "type": 2}]},
        kind=NOTIFICATION,
    ),
    Handler(
        types.TEXT_DOCUMENT_DID_OPEN,
        "lifecycle.did_open",
        {"textDocument": {**_DOCUMENT, "languageId": "mlir", "version": 1, "text": ""}},
        kind=NOTIFICATION,
    ),
    Handler(
        types.TEXT_DOCUMENT_DID_CHANGE,
        "lifecycle.did_change",
        {
            "textDocument": {**_DOCUMENT, "version": 2},
            "contentChanges": [{"range": _RANGE, "text": " "}, {"text": ""}],
        },
        kind=NOTIFICATION,
    ),
    Handler(
        types.TEXT_DOCUMENT_DID_CLOSE,
        "lifecycle.did_close",
        {"textDocument": _DOCUMENT},
        kind=NOTIFICATION,
    ),
    Handler(types.TEXT_DOCUMENT_HOVER, "features.hover_request", _AT, _hover),
    Handler(methods.ITERATION_DOMAIN, "features.iteration_domain", _AT),
    Handler(methods.ITERATION_SPACE, "panel.iteration_space", _AT),
    Handler(
        methods.PREVIEW_REFACTORING,
        "panel.preview_refactoring",
        {**_IN, "title": "t"},
        coroutine=True,
    ),
    Handler(types.TEXT_DOCUMENT_DEFINITION, "features.definition", _AT, _locations),
    Handler(
        types.TEXT_DOCUMENT_REFERENCES,
        "features.references",
        {**_AT, "context": {"includeDeclaration": True}},
        _locations,
    ),
    Handler(
        types.TEXT_DOCUMENT_PREPARE_RENAME,
        "features.prepare_rename",
        _AT,
        lambda: types.PrepareRenamePlaceholder(range=_range(), placeholder="x"),
    ),
    # (pygls announces prepareProvider, as prepareRename is registered too)
    Handler(types.TEXT_DOCUMENT_RENAME, "features.rename", {**_AT, "newName": "x"}, _edit),
    Handler(
        types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
        "features.document_symbol",
        {"textDocument": _DOCUMENT},
        coroutine=True,
    ),
    Handler(
        types.TEXT_DOCUMENT_FOLDING_RANGE, "features.folding_range", {"textDocument": _DOCUMENT}
    ),
    Handler(
        types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
        "features.semantic_tokens",
        {"textDocument": _DOCUMENT},
        _tokens,
        options=LEGEND,
        coroutine=True,
    ),
    Handler(
        types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE,
        "features.semantic_tokens_range",
        _IN,
        _tokens,
        options=LEGEND,
    ),
    Handler(types.TEXT_DOCUMENT_INLAY_HINT, "features.inlay_hint", _IN, _inlay_hints),
    Handler(
        types.TEXT_DOCUMENT_COMPLETION,
        "features.completion_request",
        _AT,
        _completions,
        options=types.CompletionOptions(trigger_characters=methods.COMPLETION_TRIGGERS),
    ),
    Handler(
        types.TEXT_DOCUMENT_CODE_ACTION,
        "code_actions.code_action",
        {
            **_IN,
            "context": {"diagnostics": [{"range": _RANGE, "message": "m"}], "only": ["quickfix"]},
        },
        _code_actions,
        options=methods.CODE_ACTION_OPTIONS,
        coroutine=True,
    ),
    Handler(
        types.CODE_ACTION_RESOLVE,
        "code_actions.resolve_code_action",
        {"title": "t", "data": {"id": "0"}},
        lambda: types.CodeAction(title="x", edit=_edit()),
        coroutine=True,
    ),
    Handler(
        methods.CHECK_WORKSPACE,
        "check_workspace.check_workspace",
        [_URI],
        kind=COMMAND,
        coroutine=True,
    ),
)


def _lazy(row: Handler) -> Callable:
    """A function that calls the row's handler, loading it on the first call."""
    if row.coroutine:

        async def call_later(ls: AffineLanguageServer, *args: Any) -> Any:
            return await row.load()(ls, *args)

        return call_later

    def call(ls: AffineLanguageServer, *args: Any) -> Any:
        return row.load()(ls, *args)

    return call


def register(server: AffineLanguageServer) -> None:
    """Register every handler of the table with the server."""
    for row in HANDLERS:
        if row.kind == COMMAND:
            server.command(row.method)(_lazy(row))
        else:
            server.feature(row.method, row.options)(_lazy(row))


def create_server() -> AffineLanguageServer:
    """A server with every handler registered."""
    server = AffineLanguageServer()
    register(server)
    return server
