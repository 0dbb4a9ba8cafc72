"""Handlers of code actions and their resolution.

Quick fixes come with the diagnostics. Refactorings come from the planner
(`planner.py`): planned ahead in a worker process and answered at once, for
every request whatever its trigger kind (an editor's automatic request for its
lightbulb, an invoked one, or one without a kind); what is not planned yet is
planned for the request. Disabled actions (with the dependence they would
break) go only to clients that show them (`codeAction.disabledSupport`).

An action whose edits are computed only when chosen carries in its `data`
what resolving it needs (the planned action's place and title, the document's
opening and version), so that resolving never depends on what the server
still remembers. An action that turns out not to apply when resolved comes back
disabled, and the user is told why in a message (clients do not look at
`disabled` after resolving).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from affine_lsp.ide import code_actions
from affine_lsp.server.convert import lsp_diagnostic, span_of
from affine_lsp.server.documents import OpenDocument
from affine_lsp.server.edits import workspace_edit
from affine_lsp.server.guard import guarded
from affine_lsp.server.methods import CONTENT_MODIFIED, REQUEST_FAILED
from affine_lsp.server.planner import PlannedRef, PlanningUnavailable
from affine_lsp.server.progress import Progress
from affine_lsp.server.server import AffineLanguageServer

OPTIMIZE = "optimize"
PERFORMANCE_HINT = "performance"
LONG_RESOLVES = frozenset({OPTIMIZE})
"""Refactorings whose resolution takes seconds: shown under work-done progress (and
cancelling the request stops the worker computing it)."""

INVALID_PARAMS = -32602


def _current(ls: AffineLanguageServer, open_document: OpenDocument, version: int | None) -> bool:
    """The document is open as it was (not even closed and opened again)."""
    return ls.documents.get(open_document.uri) is open_document and (
        open_document.version == version
    )


def _disabled(reason: str | None) -> types.CodeActionDisabled | None:
    return types.CodeActionDisabled(reason=reason) if reason else None


def shows_disabled(ls: AffineLanguageServer) -> bool:
    """Whether the client shows disabled code actions (LSP: `disabledSupport`)."""
    return ls.client_supports("text_document.code_action.disabled_support")


def resolve_data(open_document: OpenDocument, ref: PlannedRef) -> dict:
    """What an action's `data` carries for `codeAction/resolve`."""
    return {
        "uri": open_document.uri,
        "serial": open_document.serial,
        "version": open_document.version,
        "refactoring": ref.refactoring,
        "start": ref.start,
        "end": ref.end,
        "title": ref.title,
    }


def _resolve_entry(
    ls: AffineLanguageServer, data: Any
) -> tuple[OpenDocument | None, int | None, PlannedRef | None]:
    """The open document, version and planned action named by an action's `data`
    (None where it names none: data from elsewhere, or a document no longer open)."""
    if not isinstance(data, dict):
        return None, None, None
    fields = ("refactoring", "start", "end", "title")
    refactoring, start, end, title = (data.get(name) for name in fields)
    if not (isinstance(refactoring, str) and isinstance(title, str)):
        return None, None, None
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end):
        return None, None, None
    open_document = ls.documents.get(str(data.get("uri")))
    if open_document is not None and open_document.serial != data.get("serial"):
        open_document = None
    version = data.get("version")
    return (
        open_document,
        version if isinstance(version, int) else None,
        PlannedRef(refactoring, start, end, title),
    )


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
    # The performance hints of the range: "Optimize nest" is their quick fix.
    hints = [d for d in params.context.diagnostics if d.code == PERFORMANCE_HINT]
    fixes_hints = bool(hints) and code_actions.wanted(only, code_actions.QUICKFIX)
    if not code_actions.wanted(only, code_actions.REWRITE) and only is not None and not fixes_hints:
        return result
    ls.planner.focus(open_document.uri, span.start_byte)
    try:
        planned = await ls.planner.actions_at(open_document, span.start_byte, span.end_byte)
    except PlanningUnavailable as error:
        raise JsonRpcException(f"refactorings unavailable: {error}", code=REQUEST_FAILED) from None
    if not _current(ls, open_document, version):
        # Every range and edit is of the version the request was made for.
        raise JsonRpcException("the document changed", code=CONTENT_MODIFIED)
    disabled_shown = shows_disabled(ls)
    for action, item_start, ref in planned:
        quick_fix = fixes_hints and ref.refactoring == OPTIMIZE
        if not code_actions.wanted(only, action.kind) and not quick_fix:
            continue
        if action.disabled_reason is not None and not disabled_shown:
            continue
        lsp_action = types.CodeAction(
            title=action.title,
            kind=code_actions.QUICKFIX if quick_fix else action.kind,
            is_preferred=action.preferred or quick_fix or None,
            disabled=_disabled(action.disabled_reason),
            diagnostics=hints if quick_fix else None,
        )
        if action.edits is not None:
            lsp_action.edit = workspace_edit(ls, open_document, action.text_edits(item_start))
        elif action.disabled_reason is None:
            lsp_action.data = resolve_data(open_document, ref)
        result.append(lsp_action)
    return result


def _not_applicable(
    ls: AffineLanguageServer, action: types.CodeAction, reason: str
) -> types.CodeAction:
    """The action, disabled with `reason`, which the user is also shown."""
    action.disabled = types.CodeActionDisabled(reason=reason)
    action.edit = None
    ls.window_show_message(
        types.ShowMessageParams(
            type=types.MessageType.Warning, message=f"{action.title}: cannot apply, {reason}"
        )
    )
    return action


@guarded()
async def resolve_code_action(
    ls: AffineLanguageServer, params: types.CodeAction
) -> types.CodeAction:
    if params.edit is not None:
        return params  # (planned with its edits: nothing is left to compute)
    if params.disabled is not None:
        return _not_applicable(ls, params, params.disabled.reason)
    open_document, version, ref = _resolve_entry(ls, params.data)
    if ref is None:
        raise JsonRpcException(
            f"{params.title!r} is not an action of affine-lsp to resolve", code=INVALID_PARAMS
        )
    if open_document is None or not _current(ls, open_document, version):
        raise JsonRpcException(
            "the document changed since this code action was computed", code=CONTENT_MODIFIED
        )
    progress = Progress(ls, ref.title) if ref.refactoring in LONG_RESOLVES else None
    try:
        resolved = await ls.planner.resolve(open_document, ref)
    except PlanningUnavailable as error:
        raise JsonRpcException(
            f"cannot compute this action: {error}", code=REQUEST_FAILED
        ) from None
    finally:
        if progress is not None:
            progress.end()
    if resolved is None or not _current(ls, open_document, version):
        raise JsonRpcException(
            "the document changed while this code action was computed", code=CONTENT_MODIFIED
        )
    edits, reason = resolved
    if not edits:
        return _not_applicable(ls, params, reason or "it changes nothing")
    params.edit = workspace_edit(ls, open_document, edits)
    return params
