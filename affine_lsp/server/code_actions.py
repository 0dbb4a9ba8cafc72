"""Handlers of code actions and their resolution.

Quick fixes come with the diagnostics. Refactorings come from the planner
(`planner.py`): planned ahead in a worker process and answered at once, for
every request whatever its trigger kind (an editor's automatic request for its
lightbulb, an invoked one, or one without a kind); what is not planned yet is
planned for the request. Actions whose edits are computed only when chosen
are kept in the server's `ResolveTable` (`ls.resolvable`) with the document
version they were made for.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from affine_lsp.ide import code_actions
from affine_lsp.server.convert import lsp_diagnostic, span_of
from affine_lsp.server.edits import workspace_edit
from affine_lsp.server.features import REQUEST_FAILED
from affine_lsp.server.guard import guarded
from affine_lsp.server.planner import PlannedRef, PlanningUnavailable
from affine_lsp.server.server import CONTENT_MODIFIED, AffineLanguageServer, OpenDocument

CODE_ACTION_OPTIONS = types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite],
    resolve_provider=True,
)


def _current(ls: AffineLanguageServer, open_document: OpenDocument, version: int | None) -> bool:
    """The document is open as it was (not even closed and opened again)."""
    return ls.documents.get(open_document.uri) is open_document and (
        open_document.version == version
    )


def _disabled(reason: str | None) -> types.CodeActionDisabled | None:
    return types.CodeActionDisabled(reason=reason) if reason else None


@guarded([])
async def code_action(
    ls: AffineLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction]:
    open_document = ls.documents.get(params.text_document.uri)
    if open_document is None:
        return []
    analysis = open_document.analysis
    document = analysis.document
    version = open_document.version
    span = span_of(document, params.range)
    only = [str(k) for k in params.context.only] if params.context.only else None
    result: list[types.CodeAction] = []
    if code_actions.wanted(only, code_actions.QUICKFIX):
        for fix in code_actions.quick_fixes(analysis, span.start_byte, span.end_byte):
            diagnostics = [lsp_diagnostic(document, open_document.uri, d) for d in fix.diagnostics]
            action = types.CodeAction(
                title=fix.title,
                kind=fix.kind,
                is_preferred=fix.preferred or None,
                diagnostics=diagnostics or None,
                edit=workspace_edit(ls, open_document, fix.edits or []),
            )
            result.append(action)
    if not code_actions.wanted(only, code_actions.REWRITE) and only is not None:
        return result
    ls.planner.focus(open_document.uri, span.start_byte)
    try:
        planned = await ls.planner.actions_at(open_document, span.start_byte, span.end_byte)
    except PlanningUnavailable as error:
        raise JsonRpcException(f"refactorings unavailable: {error}", code=REQUEST_FAILED) from None
    if not _current(ls, open_document, version):
        # Every range and edit is of the version the request was made for.
        raise JsonRpcException("the document changed", code=CONTENT_MODIFIED)
    for action, item_start, ref in planned:
        if not code_actions.wanted(only, action.kind):
            continue
        lsp_action = types.CodeAction(
            title=action.title,
            kind=action.kind,
            is_preferred=action.preferred or None,
            disabled=_disabled(action.disabled_reason),
        )
        if action.edits is not None:
            lsp_action.edit = workspace_edit(ls, open_document, action.text_edits(item_start))
        elif action.disabled_reason is None:
            lsp_action.data = {"id": ls.resolvable.add(open_document, ref)}
        result.append(lsp_action)
    return result


@guarded()
async def resolve_code_action(
    ls: AffineLanguageServer, params: types.CodeAction
) -> types.CodeAction:
    data = params.data if isinstance(params.data, dict) else {}
    entry = ls.resolvable.get(str(data.get("id")))
    if entry is None:
        raise JsonRpcException("this code action is out of date", code=REQUEST_FAILED)
    open_document, version, ref = entry
    if not isinstance(ref, PlannedRef) or not _current(ls, open_document, version):
        raise JsonRpcException(
            "the document changed since this code action was computed", code=REQUEST_FAILED
        )
    try:
        resolved = await ls.planner.resolve(open_document, ref)
    except PlanningUnavailable as error:
        raise JsonRpcException(
            f"cannot compute this action: {error}", code=REQUEST_FAILED
        ) from None
    if resolved is None or not _current(ls, open_document, version):
        raise JsonRpcException(
            "the document changed while this code action was computed", code=REQUEST_FAILED
        )
    edits, reason = resolved
    if not edits:
        params.disabled = types.CodeActionDisabled(reason=reason or "nothing to change")
        return params
    params.edit = workspace_edit(ls, open_document, edits)
    return params
