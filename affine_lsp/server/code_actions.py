"""Handlers of code actions and their resolution.

Actions whose edits are computed only when chosen are kept in the server's
`ResolveTable` (`ls.resolvable`) with the document version they were made for."""

from __future__ import annotations

import asyncio

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from affine_lsp.ide import code_actions
from affine_lsp.server.convert import lsp_diagnostic, span_of
from affine_lsp.server.edits import workspace_edit
from affine_lsp.server.features import REQUEST_FAILED
from affine_lsp.server.guard import guarded
from affine_lsp.server.server import CONTENT_MODIFIED, AffineLanguageServer

CODE_ACTION_OPTIONS = types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite],
    resolve_provider=True,
)


@guarded([])
async def code_action(ls: AffineLanguageServer, params: types.CodeActionParams):
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
            diagnostics=[lsp_diagnostic(document, open_document.uri, d) for d in action.diagnostics]
            or None,
            disabled=types.CodeActionDisabled(reason=action.disabled_reason)
            if action.disabled_reason
            else None,
        )
        if action.edits is not None:
            lsp_action.edit = workspace_edit(ls, open_document, action.edits)
        elif action.disabled_reason is None:
            lsp_action.data = {"id": ls.resolvable.add(open_document, action)}
        result.append(lsp_action)
    return result


@guarded()
async def resolve_code_action(ls: AffineLanguageServer, params: types.CodeAction):
    data = params.data if isinstance(params.data, dict) else {}
    entry = ls.resolvable.get(str(data.get("id")))
    if entry is None:
        raise JsonRpcException("this code action is out of date", code=REQUEST_FAILED)
    open_document, version, action = entry

    def current() -> bool:
        """The document is open as it was when the action was made (not even closed
        and opened again)."""
        return ls.documents.get(open_document.uri) is open_document and (
            open_document.version == version
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
