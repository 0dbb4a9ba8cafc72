"""Handlers of the editor's iteration-space panel (registered in `handlers.HANDLERS`):

- `affine-lsp/iterationSpace` (`{textDocument: {uri}, position}`): the picture of the
  loop at the position, drawn here within `budgets.PANEL_PICTURE`;
- `affine-lsp/previewRefactoring` (`{textDocument: {uri}, range, title}`): the pictures
  before and after the refactoring titled `title` that the code actions offer at
  `range`, drawn by the planning worker, where the refactoring is computed as on
  `codeAction/resolve` (choosing it afterwards finds it done).

Both answers carry the document `version` they describe; the preview fails with
ContentModified when the document changes before it is ready.
"""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcException

from affine_lsp.ide import panel
from affine_lsp.server.documents import OpenDocument
from affine_lsp.server.features import member
from affine_lsp.server.guard import guarded
from affine_lsp.server.methods import CONTENT_MODIFIED, REQUEST_FAILED
from affine_lsp.server.planner import PlanningUnavailable
from affine_lsp.server.server import AffineLanguageServer

INTERNAL_ERROR = "internal error: see the server log"


def _open_document(ls: AffineLanguageServer, params: Any) -> tuple[OpenDocument | None, str]:
    uri = str(member(member(params, "textDocument"), "uri") or "")
    return ls.documents.get(uri), uri


def _offset(open_document: OpenDocument, position: Any) -> int:
    line = member(position, "line") or 0
    character = member(position, "character") or 0
    return open_document.analysis.document.offset((int(line), int(character)))


@guarded({"version": None, "picture": None, "message": INTERNAL_ERROR})
def iteration_space(ls: AffineLanguageServer, params: Any) -> dict:
    open_document, uri = _open_document(ls, params)
    if open_document is None:
        return {"version": None, "picture": None, "message": f"{uri} is not open in the server"}
    at = _offset(open_document, member(params, "position"))
    picture, message = panel.loop_picture(open_document.analysis, at)
    return {
        "version": open_document.version,
        "picture": picture.as_json() if picture is not None else None,
        "message": message,
    }


def _not_previewed(version: int | None, title: str, reason: str) -> dict:
    return {
        "version": version,
        **panel.Preview(title, (), (), reason).as_json(),
        "disabled": None,
    }


@guarded({"version": None, "title": "", "before": [], "after": [], "reason": INTERNAL_ERROR})
async def preview_refactoring(ls: AffineLanguageServer, params: Any) -> dict:
    title = str(member(params, "title") or "")
    open_document, uri = _open_document(ls, params)
    if open_document is None:
        return _not_previewed(None, title, f"{uri} is not open in the server")
    version = open_document.version
    range_ = member(params, "range")
    offsets = sorted(_offset(open_document, member(range_, end)) for end in ("start", "end"))
    try:
        planned = await ls.planner.actions_at(open_document, offsets[0], offsets[1])
        found = next(((a, ref) for a, _start, ref in planned if a.title == title), None)
        if found is None:
            reason = f"no refactoring titled {title!r} here"
            return _not_previewed(version, title, reason)
        action, ref = found
        preview = await ls.planner.preview(open_document, ref)
    except PlanningUnavailable as error:
        raise JsonRpcException(f"preview unavailable: {error}", code=REQUEST_FAILED) from None
    current = ls.documents.get(open_document.uri) is open_document
    if preview is None or not current or open_document.version != version:
        raise JsonRpcException("the document changed", code=CONTENT_MODIFIED)
    return {"version": version, **preview.as_json(), "disabled": action.disabled_reason}
