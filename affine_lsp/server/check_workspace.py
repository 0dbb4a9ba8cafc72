"""The `affine-lsp.checkWorkspace` command: diagnostics of every MLIR file of the
workspace folders."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from affine_lsp.checks import CheckOptions, Diagnostic
from affine_lsp.ide import workspace
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.server.guard import guarded
from affine_lsp.server.progress import Progress
from affine_lsp.server.server import PROGRESS_AFTER_SECONDS, SLICE_SECONDS, AffineLanguageServer
from affine_lsp.syntax import LocalLines

logger = logging.getLogger("affine_lsp.server")


@guarded({"files": 0, "errors": 0, "warnings": 0})
async def check_workspace(ls: AffineLanguageServer, *folder_uris: object) -> dict:
    return await _check_workspace(ls, [str(u) for u in folder_uris])


async def _check_workspace(ls: AffineLanguageServer, folder_uris: list[str]) -> dict:
    """Analyse every `.mlir` file under the folders (by default the workspace folders),
    publish their diagnostics, count. Nothing outside the workspace folders is read:
    other folders are refused with a warning. Files that are not open go to the check
    helpers while they have room (`CheckHelpers.take_file`), and are checked here
    otherwise (and when a helper fails)."""
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
    tally = _Tally(ls, len(paths))
    helped: list[tuple[Path, bytes, asyncio.Future[list[Diagnostic]]]] = []
    try:
        for path in paths:
            tally.take_answers(helped)
            open_document = open_by_path.get(path)
            if open_document is not None:
                await _analyse_here(open_document.analysis)
                tally.count(open_document.analysis.diagnostics())
                ls.publish(open_document)
                continue
            try:
                data = workspace.read_file(path)
            except OSError as error:
                message = f"cannot read {path}: {error.strerror}"
                ls.report_once(message, types.MessageType.Warning)
                continue
            options = ls.check_options_of(_uri(path))  # (the file's project's)
            future = ls.check_helpers.take_file(data, options, ls.encoding)
            if future is not None:
                helped.append((path, data, future))
                continue
            await _check_here(ls, tally, path, data, options)
            await asyncio.sleep(0)
        if helped:
            await asyncio.wait([future for _, _, future in helped])
        tally.take_answers(helped)
        for path, data, _ in helped:  # (what a failed helper had: checked here)
            await _check_here(ls, tally, path, data, ls.check_options_of(_uri(path)))
    finally:
        for _, _, future in helped:
            future.cancel()
        tally.end()
    logger.info("Check Workspace: %d files, %d checked by helpers", tally.files, tally.helped)
    return {"files": tally.files, "errors": tally.errors, "warnings": tally.warnings}


async def _check_here(
    ls: AffineLanguageServer, tally: _Tally, path: Path, data: bytes, options: CheckOptions
) -> None:
    """Check a file that is not open in the server, publish and count its diagnostics."""
    analysis = workspace.analysis_of(data, options, ls.encoding)
    await _analyse_here(analysis)
    tally.count(analysis.diagnostics())
    ls.publish_diagnostics(_uri(path), analysis)


async def _analyse_here(analysis: DocumentAnalysis) -> None:
    """Analyse in the server, giving the event loop a turn every few milliseconds."""
    slice_start = time.perf_counter()
    for _ in analysis.analyse():
        if time.perf_counter() - slice_start > SLICE_SECONDS:
            await asyncio.sleep(0)
            slice_start = time.perf_counter()


def _uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


class _Tally:
    """Files checked and their errors and warnings, with work-done progress once the
    command has run for a while; publishes what the helpers answered."""

    def __init__(self, ls: AffineLanguageServer, total: int) -> None:
        self.ls = ls
        self.total = total
        self.files = self.errors = self.warnings = 0
        self.helped = 0  # files a helper checked
        self.started = time.perf_counter()
        self.progress: Progress | None = None

    def count(self, diagnostics: list[Diagnostic]) -> None:
        errors, warnings = workspace.count_severities(diagnostics)
        self.files, self.errors, self.warnings = (
            self.files + 1,
            self.errors + errors,
            self.warnings + warnings,
        )
        if self.progress is None and time.perf_counter() - self.started > PROGRESS_AFTER_SECONDS:
            self.progress = Progress(self.ls, "Checking MLIR files")
        if self.progress is not None:
            self.progress.report(self.files, self.total)

    def take_answers(
        self, helped: list[tuple[Path, bytes, asyncio.Future[list[Diagnostic]]]]
    ) -> None:
        """Publish and count the files helpers have answered for (taken out of
        `helped`); those a helper failed on stay, to be checked here."""
        for entry in list(helped):
            path, data, future = entry
            if not future.done() or future.cancelled() or future.exception() is not None:
                continue
            helped.remove(entry)
            self.helped += 1
            found = future.result()
            self.count(found)
            self.ls.publish_found(
                _uri(path), LocalLines(data, 0, len(data), self.ls.encoding), found
            )

    def end(self) -> None:
        if self.progress is not None:
            self.progress.end()


def _workspace_roots(ls: AffineLanguageServer) -> list[Path]:
    """The workspace folders as paths (the root folder if the client named no folders)."""
    try:
        uris = [f.uri for f in ls.workspace.folders.values()] or [ls.workspace.root_uri]
    except RuntimeError:  # not initialised
        return []
    paths = [to_fs_path(uri) for uri in uris if uri and uri.startswith("file:")]
    return [Path(path) for path in paths if path]
