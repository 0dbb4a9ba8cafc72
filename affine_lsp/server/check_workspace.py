"""The `affine-lsp.checkWorkspace` command: diagnostics of every MLIR file of the
workspace folders."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from affine_lsp.ide import workspace
from affine_lsp.server.guard import guarded
from affine_lsp.server.server import (
    PROGRESS_AFTER_SECONDS,
    SLICE_SECONDS,
    AffineLanguageServer,
    Progress,
)

CHECK_WORKSPACE = "affine-lsp.checkWorkspace"


@guarded({"files": 0, "errors": 0, "warnings": 0})
async def check_workspace(ls: AffineLanguageServer, *folder_uris: object) -> dict:
    return await _check_workspace(ls, [str(u) for u in folder_uris])


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
