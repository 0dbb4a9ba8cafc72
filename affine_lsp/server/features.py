"""Handlers of the language features: each finds the document, converts the
client's positions to byte offsets, calls the `ide` layer and converts back.
Registered in `handlers.HANDLERS`."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from affine_lsp.ide import completion, hover, inlay_hints, navigation
from affine_lsp.ide import semantic_tokens as tokens
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.completion import snippet_to_text
from affine_lsp.ide.navigation import RenameError
from affine_lsp.server.convert import lsp_range, offset, span_of
from affine_lsp.server.edits import workspace_edit
from affine_lsp.server.guard import guarded
from affine_lsp.server.methods import REQUEST_FAILED
from affine_lsp.server.protocol import RawResult
from affine_lsp.server.server import AffineLanguageServer
from affine_lsp.server.tokens import TokenEncoder
from affine_lsp.syntax import SourceDocument, Span

_COMPLETION_KINDS = {
    "operation": types.CompletionItemKind.Function,
    "value": types.CompletionItemKind.Variable,
    "alias": types.CompletionItemKind.Constant,
    "block": types.CompletionItemKind.Reference,
    "symbol": types.CompletionItemKind.Function,
    "type": types.CompletionItemKind.TypeParameter,
    "keyword": types.CompletionItemKind.Keyword,
}
_INLAY_KINDS = {"type": types.InlayHintKind.Type, "parameter": types.InlayHintKind.Parameter}


def member(params: Any, name: str) -> Any:
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


@guarded()
def hover_request(ls: AffineLanguageServer, params: types.HoverParams) -> types.Hover | None:
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


@guarded({"domain": None, "message": "internal error: see the server log"})
def iteration_domain(ls: AffineLanguageServer, params: Any) -> dict:
    uri = str(member(member(params, "textDocument"), "uri") or "")
    analysis = _analysis(ls, uri)
    if analysis is None:
        return {"domain": None, "message": f"{uri} is not open in the server"}
    position = member(params, "position")
    line = member(position, "line") or 0
    character = member(position, "character") or 0
    at = analysis.document.offset((int(line), int(character)))
    domain, message = hover.iteration_domain(analysis, at)
    return {"domain": domain, "message": message}


@guarded([])
def definition(ls: AffineLanguageServer, params: types.DefinitionParams) -> list[types.Location]:
    uri = params.text_document.uri
    analysis = _analysis(ls, uri)
    if analysis is None:
        return []
    spans = navigation.definition(analysis, offset(analysis.document, params.position))
    return [_location(uri, analysis.document, s) for s in spans]


@guarded([])
def references(ls: AffineLanguageServer, params: types.ReferenceParams) -> list[types.Location]:
    uri = params.text_document.uri
    analysis = _analysis(ls, uri)
    if analysis is None:
        return []
    spans = navigation.references(
        analysis, offset(analysis.document, params.position), params.context.include_declaration
    )
    return [_location(uri, analysis.document, s) for s in spans]


@guarded()
def prepare_rename(
    ls: AffineLanguageServer, params: types.PrepareRenameParams
) -> types.PrepareRenamePlaceholder | None:
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


@guarded()
def rename(ls: AffineLanguageServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
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


# Whole-document results of large files take a while: they are computed item by
# item, giving the event loop a turn every few milliseconds so that edits and
# other requests go on meanwhile (an edit makes the request fail with
# ContentModified, and the client asks again).


@guarded(RawResult([]))
async def document_symbol(
    ls: AffineLanguageServer, params: types.DocumentSymbolParams
) -> RawResult:
    open_document = ls.documents.get(params.text_document.uri)
    if open_document is None:
        return RawResult([])
    parts = open_document.outline.parts(open_document.analysis)
    texts = [part async for part in ls.sliced(parts, open_document.analysis)]
    return RawResult(json_bytes=("[" + "".join(texts) + "]").encode())


@guarded(RawResult([]))
def folding_range(ls: AffineLanguageServer, params: types.FoldingRangeParams) -> RawResult:
    open_document = ls.documents.get(params.text_document.uri)
    if open_document is None:
        return RawResult([])
    folds = []
    for fold in open_document.folding.ranges(open_document.analysis):
        data: dict[str, object] = {"startLine": fold.start_line, "endLine": fold.end_line}
        if fold.kind is not None:
            data["kind"] = fold.kind
        folds.append(data)
    return RawResult(folds)


@guarded(RawResult({"data": []}))
async def semantic_tokens(
    ls: AffineLanguageServer, params: types.SemanticTokensParams
) -> RawResult:
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


@guarded(types.SemanticTokens(data=[]))
def semantic_tokens_range(
    ls: AffineLanguageServer, params: types.SemanticTokensRangeParams
) -> types.SemanticTokens:
    analysis = _analysis(ls, params.text_document.uri)
    if analysis is None:
        return types.SemanticTokens(data=[])
    document = analysis.document
    span = span_of(document, params.range)
    ls.show(ls.documents[params.text_document.uri], span.start_byte, span.end_byte)
    encoder = TokenEncoder(document)
    encoder.add(tokens.semantic_tokens(document, span.start_byte, span.end_byte))
    return types.SemanticTokens(data=encoder.data)


@guarded([])
def inlay_hint(ls: AffineLanguageServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    analysis = _analysis(ls, params.text_document.uri)
    if analysis is None:
        return []
    document = analysis.document
    span = span_of(document, params.range)
    return [
        types.InlayHint(
            position=lsp_range(document, Span(h.offset, h.offset)).start,
            label=h.label,
            kind=_INLAY_KINDS[h.kind],
            tooltip=h.tooltip or None,
            padding_left=h.pad_left,
            padding_right=h.pad_right,
        )
        for h in inlay_hints.inlay_hints(analysis, span.start_byte, span.end_byte)
    ]


@guarded(types.CompletionList(is_incomplete=False, items=[]))
def completion_request(
    ls: AffineLanguageServer, params: types.CompletionParams
) -> types.CompletionList:
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
