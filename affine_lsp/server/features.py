"""LSP handlers of the language features: each finds the document, converts the
client's positions to byte offsets, calls the `ide` layer and converts back."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path, to_fs_path

from affine_lsp.ide import (
    code_actions,
    completion,
    hover,
    inlay_hints,
    navigation,
    workspace,
)
from affine_lsp.ide import semantic_tokens as tokens
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.completion import snippet_to_text
from affine_lsp.ide.navigation import RenameError
from affine_lsp.server.convert import (
    lsp_diagnostic,
    lsp_range,
    offset,
    span_of,
)
from affine_lsp.server.guard import guarded
from affine_lsp.server.protocol import RawResult
from affine_lsp.server.server import (
    CONTENT_MODIFIED,
    PROGRESS_AFTER_SECONDS,
    SLICE_SECONDS,
    AffineLanguageServer,
    OpenDocument,
    Progress,
)
from affine_lsp.syntax import SourceDocument, Span
from affine_lsp.syntax.lines import column_units

ITERATION_DOMAIN = "affine-lsp/iterationDomain"
CHECK_WORKSPACE = "affine-lsp.checkWorkspace"
REQUEST_FAILED = -32803

_COMPLETION_KINDS = {
    "operation": types.CompletionItemKind.Function,
    "value": types.CompletionItemKind.Variable,
    "alias": types.CompletionItemKind.Constant,
    "block": types.CompletionItemKind.Reference,
    "symbol": types.CompletionItemKind.Function,
    "type": types.CompletionItemKind.TypeParameter,
    "keyword": types.CompletionItemKind.Keyword,
}
LEGEND = types.SemanticTokensLegend(
    token_types=tokens.TOKEN_TYPES, token_modifiers=tokens.TOKEN_MODIFIERS
)


def _member(params, name: str):
    """A field of custom-request params (pygls gives a dict or a named tuple)."""
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def _client_supports_snippets(ls: AffineLanguageServer) -> bool:
    """Whether the client accepts snippet syntax in completion items."""
    capabilities = ls.client_capabilities
    completion_caps = capabilities.text_document.completion if capabilities.text_document else None
    item = completion_caps.completion_item if completion_caps else None
    return bool(item and item.snippet_support)


def _analysis(ls: AffineLanguageServer, uri: str) -> DocumentAnalysis | None:
    document = ls.documents.get(uri)
    return document.analysis if document is not None else None


def _location(uri: str, document: SourceDocument, span: Span) -> types.Location:
    return types.Location(uri=uri, range=lsp_range(document, span))


def _text_edits(document: SourceDocument, edits) -> list[types.TextEdit]:
    return [types.TextEdit(range=lsp_range(document, e.span), new_text=e.new_text) for e in edits]


def workspace_edit(
    ls: AffineLanguageServer, open_document: OpenDocument, edits
) -> types.WorkspaceEdit:
    """Edits of one document: a versioned TextDocumentEdit when the client takes them."""
    document = open_document.analysis.document
    text_edits = _text_edits(document, edits)
    if ls.client_supports("workspace.workspace_edit.document_changes"):
        identifier = types.OptionalVersionedTextDocumentIdentifier(
            uri=open_document.uri, version=open_document.version
        )
        return types.WorkspaceEdit(
            document_changes=[types.TextDocumentEdit(text_document=identifier, edits=text_edits)]
        )
    return types.WorkspaceEdit(changes={open_document.uri: text_edits})


def register_features(server: AffineLanguageServer) -> None:
    # Actions to resolve, with the open document and version they were made for.
    actions: dict[str, tuple[OpenDocument, int | None, code_actions.Action]] = {}
    action_ids = itertools.count()

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded()
    def on_hover(ls: AffineLanguageServer, params: types.HoverParams) -> types.Hover | None:
        analysis = _analysis(ls, params.text_document.uri)
        if analysis is None:
            return None
        at = offset(analysis.document, params.position)
        found = hover.hover(analysis, at, pictures=ls.hover_pictures())
        if found is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=found.markdown),
            range=lsp_range(analysis.document, found.span),
        )

    @server.feature(ITERATION_DOMAIN)
    @guarded({"domain": None, "message": "internal error: see the server log"})
    def on_iteration_domain(ls: AffineLanguageServer, params) -> dict:
        uri = str(_member(_member(params, "textDocument"), "uri") or "")
        analysis = _analysis(ls, uri)
        if analysis is None:
            return {"domain": None, "message": f"{uri} is not open in the server"}
        position = _member(params, "position")
        line = _member(position, "line") or 0
        character = _member(position, "character") or 0
        at = analysis.document.offset((int(line), int(character)))
        domain, message = hover.iteration_domain(analysis, at)
        return {"domain": domain, "message": message}

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @guarded([])
    def on_definition(
        ls: AffineLanguageServer, params: types.DefinitionParams
    ) -> list[types.Location]:
        uri = params.text_document.uri
        analysis = _analysis(ls, uri)
        if analysis is None:
            return []
        spans = navigation.definition(analysis, offset(analysis.document, params.position))
        return [_location(uri, analysis.document, s) for s in spans]

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    @guarded([])
    def on_references(
        ls: AffineLanguageServer, params: types.ReferenceParams
    ) -> list[types.Location]:
        uri = params.text_document.uri
        analysis = _analysis(ls, uri)
        if analysis is None:
            return []
        spans = navigation.references(
            analysis,
            offset(analysis.document, params.position),
            params.context.include_declaration,
        )
        return [_location(uri, analysis.document, s) for s in spans]

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    @guarded()
    def on_prepare_rename(ls: AffineLanguageServer, params: types.PrepareRenameParams):
        analysis = _analysis(ls, params.text_document.uri)
        if analysis is None:
            return None
        try:
            span, placeholder = navigation.prepare_rename(
                analysis, offset(analysis.document, params.position)
            )
        except RenameError as error:
            raise JsonRpcException(str(error), code=REQUEST_FAILED) from None
        return types.PrepareRenamePlaceholder(
            range=lsp_range(analysis.document, span), placeholder=placeholder
        )

    @server.feature(types.TEXT_DOCUMENT_RENAME)  # pygls adds prepareProvider when it may
    @guarded()
    def on_rename(ls: AffineLanguageServer, params: types.RenameParams):
        open_document = ls.documents.get(params.text_document.uri)
        if open_document is None:
            return None
        analysis = open_document.analysis
        try:
            edits = navigation.rename(
                analysis, offset(analysis.document, params.position), params.new_name
            )
        except RenameError as error:
            raise JsonRpcException(str(error), code=REQUEST_FAILED) from None
        return workspace_edit(ls, open_document, edits)

    # Whole-document results of large files take a while: they are computed item
    # by item, giving the event loop a turn every few milliseconds so that edits
    # and other requests go on meanwhile (an edit makes the request fail with
    # ContentModified, and the client asks again).

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @guarded(RawResult([]))
    async def on_document_symbol(ls: AffineLanguageServer, params: types.DocumentSymbolParams):
        open_document = ls.documents.get(params.text_document.uri)
        if open_document is None:
            return RawResult([])
        parts = open_document.outline.parts(open_document.analysis)
        texts = [part async for part in ls.sliced(parts, open_document.analysis)]
        return RawResult(json_bytes=("[" + "".join(texts) + "]").encode())

    @server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
    @guarded(RawResult([]))
    def on_folding_range(ls: AffineLanguageServer, params: types.FoldingRangeParams):
        open_document = ls.documents.get(params.text_document.uri)
        if open_document is None:
            return RawResult([])
        folds = []
        for fold in open_document.folding.ranges(open_document.analysis):
            data = {"startLine": fold.start_line, "endLine": fold.end_line}
            if fold.kind is not None:
                data["kind"] = fold.kind
            folds.append(data)
        return RawResult(folds)

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
    @guarded(RawResult({"data": []}))
    async def on_semantic_tokens(ls: AffineLanguageServer, params: types.SemanticTokensParams):
        analysis = _analysis(ls, params.text_document.uri)
        if analysis is None:
            return RawResult({"data": []})
        encoder = TokenEncoder(analysis.document)
        texts = []  # the numbers as text, part by part: a list of millions of ints is big
        async for part in ls.sliced(tokens.token_parts(analysis.document), analysis):
            encoder.add(part)
            if encoder.data:
                texts.append(",".join(map(str, encoder.data)).encode())
                encoder.data.clear()
        return RawResult(json_bytes=b'{"data":[' + b",".join(texts) + b"]}")

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND)
    @guarded(types.SemanticTokens(data=[]))
    def on_semantic_tokens_range(ls: AffineLanguageServer, params: types.SemanticTokensRangeParams):
        analysis = _analysis(ls, params.text_document.uri)
        if analysis is None:
            return types.SemanticTokens(data=[])
        document = analysis.document
        span = span_of(document, params.range)
        encoder = TokenEncoder(document)
        encoder.add(tokens.semantic_tokens(document, span.start_byte, span.end_byte))
        return types.SemanticTokens(data=encoder.data)

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    @guarded([])
    def on_inlay_hint(ls: AffineLanguageServer, params: types.InlayHintParams):
        analysis = _analysis(ls, params.text_document.uri)
        if analysis is None:
            return []
        document = analysis.document
        span = span_of(document, params.range)
        kinds = {"type": types.InlayHintKind.Type, "parameter": types.InlayHintKind.Parameter}
        return [
            types.InlayHint(
                position=lsp_range(document, Span(h.offset, h.offset)).start,
                label=h.label,
                kind=kinds[h.kind],
                tooltip=h.tooltip or None,
                padding_left=h.pad_left,
                padding_right=h.pad_right,
            )
            for h in inlay_hints.inlay_hints(analysis, span.start_byte, span.end_byte)
        ]

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=["%", "#", "!", "^", "@", ".", ":"]),
    )
    @guarded(types.CompletionList(is_incomplete=False, items=[]))
    def on_completion(ls: AffineLanguageServer, params: types.CompletionParams):
        analysis = _analysis(ls, params.text_document.uri)
        if analysis is None:
            return types.CompletionList(is_incomplete=False, items=[])
        document = analysis.document
        items = []
        snippets = _client_supports_snippets(ls)
        for item in completion.completions(analysis, offset(document, params.position)):
            replace = lsp_range(document, item.replace) if item.replace is not None else None
            new_text = item.insert_text or item.label
            is_snippet = item.snippet and snippets
            if item.snippet and not snippets:
                new_text = snippet_to_text(new_text)
            items.append(
                types.CompletionItem(
                    label=item.label,
                    kind=_COMPLETION_KINDS.get(item.kind),
                    detail=item.detail or None,
                    documentation=item.documentation or None,
                    insert_text_format=types.InsertTextFormat.Snippet
                    if is_snippet
                    else types.InsertTextFormat.PlainText,
                    text_edit=types.TextEdit(range=replace, new_text=new_text) if replace else None,
                    insert_text=None if replace else new_text,
                )
            )
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite],
            resolve_provider=True,
        ),
    )
    @guarded([])
    async def on_code_action(ls: AffineLanguageServer, params: types.CodeActionParams):
        open_document = ls.documents.get(params.text_document.uri)
        if open_document is None:
            return []
        analysis = open_document.analysis
        document = analysis.document
        version = open_document.version
        span = span_of(document, params.range)
        context = params.context
        only = [str(k) for k in context.only] if context.only else None
        found = []
        if code_actions.wanted(only, code_actions.QUICKFIX):
            found += code_actions.quick_fixes(analysis, span.start_byte, span.end_byte)
        # Fusion analyses dependences: only when asked for (a refactoring requested
        # by kind, or actions invoked by the user), in a worker thread on a snapshot.
        explicit = only is not None or context.trigger_kind == types.CodeActionTriggerKind.Invoked
        if explicit and code_actions.wanted(only, code_actions.REWRITE):
            compute = code_actions.prepare_fusion(
                analysis, span.start_byte, span.end_byte, ls.settings.fusion_tolerance
            )
            found += await asyncio.get_running_loop().run_in_executor(ls.fusion_pool, compute)
            transforms = code_actions.prepare_loop_transforms(
                analysis, span.start_byte, span.end_byte, ls.settings.loop_options()
            )
            found += await asyncio.get_running_loop().run_in_executor(ls.fusion_pool, transforms)
            if open_document.version != version or ls.documents.get(open_document.uri) is not (
                open_document
            ):
                # Every range and edit below is of the version the actions were made for.
                raise JsonRpcException("the document changed", code=CONTENT_MODIFIED)
        result = []
        for action in found:
            lsp_action = types.CodeAction(
                title=action.title,
                kind=action.kind,
                is_preferred=action.preferred or None,
                diagnostics=[
                    lsp_diagnostic(document, open_document.uri, d) for d in action.diagnostics
                ]
                or None,
                disabled=types.CodeActionDisabled(reason=action.disabled_reason)
                if action.disabled_reason
                else None,
            )
            if action.edits is not None:
                lsp_action.edit = workspace_edit(ls, open_document, action.edits)
            elif action.disabled_reason is None:
                key = str(next(action_ids))
                actions[key] = (open_document, version, action)
                while len(actions) > 200:
                    actions.pop(next(iter(actions)))
                lsp_action.data = {"id": key}
            result.append(lsp_action)
        return result

    @server.feature(types.CODE_ACTION_RESOLVE)
    @guarded()
    async def on_code_action_resolve(ls: AffineLanguageServer, params: types.CodeAction):
        data = params.data if isinstance(params.data, dict) else {}
        entry = actions.get(str(data.get("id")))
        if entry is None:
            raise JsonRpcException("this code action is out of date", code=REQUEST_FAILED)
        open_document, version, action = entry

        def current() -> bool:
            """The document is open as it was when the action was made (not even closed
            and opened again)."""
            return (
                ls.documents.get(open_document.uri) is open_document
                and open_document.version == version
            )

        if not current():
            raise JsonRpcException(
                "the document changed since this code action was computed", code=REQUEST_FAILED
            )
        edits = await asyncio.get_running_loop().run_in_executor(ls.fusion_pool, action.resolve)
        if not current():
            raise JsonRpcException(
                "the document changed while this code action was computed", code=REQUEST_FAILED
            )
        if not edits:
            params.disabled = types.CodeActionDisabled(
                reason=action.disabled_reason or "nothing to change"
            )
            return params
        params.edit = workspace_edit(ls, open_document, edits)
        return params

    @server.command(CHECK_WORKSPACE)
    @guarded({"files": 0, "errors": 0, "warnings": 0})
    async def check_workspace(ls: AffineLanguageServer, *folder_uris):
        return await _check_workspace(ls, [str(u) for u in folder_uris])


class TokenEncoder:
    """LSP's relative token encoding (line delta, start delta, length, type,
    modifier bits), fed tokens in document order."""

    def __init__(self, document: SourceDocument) -> None:
        self._document = document
        self._types = {name: i for i, name in enumerate(tokens.TOKEN_TYPES)}
        self._bits = {name: 1 << i for i, name in enumerate(tokens.TOKEN_MODIFIERS)}
        self._line = self._start = 0
        self.data: list[int] = []

    def add(self, found: list[tokens.Token]) -> None:
        document = self._document
        for token in found:
            line, character = document.position(token.start)
            piece = bytes(document.data[token.start : token.end])
            length = column_units(piece, document.encoding)
            if length <= 0:
                continue
            delta_line = line - self._line
            delta_start = character - self._start if delta_line == 0 else character
            bits = 0
            for modifier in token.modifiers:
                bits |= self._bits.get(modifier, 0)
            self.data += [delta_line, delta_start, length, self._types[token.type], bits]
            self._line, self._start = line, character


async def _check_workspace(ls: AffineLanguageServer, folder_uris: list[str]) -> dict:
    """Analyse every `.mlir` file under the folders (by default the workspace folders),
    publish their diagnostics, count. Nothing outside the workspace folders is read:
    other folders are refused with a warning."""
    roots = _workspace_roots(ls)
    paths: list[Path] = []
    for uri in folder_uris or [root.as_uri() for root in roots]:
        folder = to_fs_path(uri) if uri.startswith("file:") else uri
        if not folder:
            continue
        if not workspace.inside(Path(folder), roots):
            message = f"{folder} is not in the workspace folders: it was not checked"
            ls.report_once(message, types.MessageType.Warning)
            continue
        paths += list(workspace.mlir_files(Path(folder), roots))
    open_by_path = {Path(to_fs_path(uri) or ""): document for uri, document in ls.documents.items()}
    files = errors = warnings = 0
    started = slice_start = time.perf_counter()
    progress: Progress | None = None
    try:
        for path in paths:
            open_document = open_by_path.get(path)
            if open_document is not None:
                analysis = open_document.analysis
            else:
                try:
                    analysis = workspace.load_file(path, ls.settings.check_options(), ls.encoding)
                except OSError as error:
                    message = f"cannot read {path}: {error.strerror}"
                    ls.report_once(message, types.MessageType.Warning)
                    continue
            for _ in analysis.analyse():
                if time.perf_counter() - slice_start > SLICE_SECONDS:
                    await asyncio.sleep(0)
                    slice_start = time.perf_counter()
            file_errors, file_warnings = workspace.count_severities(analysis.diagnostics())
            files, errors, warnings = files + 1, errors + file_errors, warnings + file_warnings
            if open_document is not None:
                ls.publish(open_document)
            else:
                ls.publish_diagnostics(from_fs_path(str(path)) or path.as_uri(), analysis)
            if progress is None and time.perf_counter() - started > PROGRESS_AFTER_SECONDS:
                progress = Progress(ls, "Checking MLIR files")
            if progress is not None:
                progress.report(files, len(paths))
            await asyncio.sleep(0)
            slice_start = time.perf_counter()
    finally:
        if progress is not None:
            progress.end()
    return {"files": files, "errors": errors, "warnings": warnings}


def _workspace_roots(ls: AffineLanguageServer) -> list[Path]:
    """The workspace folders as paths (the root folder if the client named no folders)."""
    try:
        uris = [f.uri for f in ls.workspace.folders.values()] or [ls.workspace.root_uri]
    except RuntimeError:  # not initialised
        return []
    paths = [to_fs_path(uri) for uri in uris if uri and uri.startswith("file:")]
    return [Path(path) for path in paths if path]
