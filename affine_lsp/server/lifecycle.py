"""Handlers of the session's life: initialisation, settings, and document sync."""

from __future__ import annotations

from lsprotocol import types

from affine_lsp.server.guard import guarded
from affine_lsp.server.server import AffineLanguageServer
from affine_lsp.syntax import ContentChange


@guarded()
def initialize(ls: AffineLanguageServer, params: types.InitializeParams) -> None:
    """What answering `initialize` needs, and nothing more: the answer comes before
    the analysis is loaded (`initialized` starts that)."""
    ls.negotiate_encoding(params.capabilities)
    ls.initialization_options(params.initialization_options)


@guarded()
async def initialized(ls: AffineLanguageServer, params: types.InitializedParams) -> None:
    from affine_lsp.server.warmup import WarmUp

    WarmUp(ls).start()  # the analysis, the converters, the check helpers
    watch_project_files(ls)
    await ls.pull_settings()


def watch_project_files(ls: AffineLanguageServer) -> None:
    """Ask the client to say when a project file changes, where it can be asked (its
    answer is not waited for)."""
    if not ls.client_supports("workspace.did_change_watched_files.dynamic_registration"):
        return
    from affine_lsp.server.projects import WATCHED

    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=WATCHED)]
    )
    registration = types.Registration(
        id="affine-lsp-project-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options,
    )
    ls.client_register_capability(types.RegistrationParams(registrations=[registration]))


@guarded()
def did_change_watched_files(
    ls: AffineLanguageServer, params: types.DidChangeWatchedFilesParams
) -> None:
    ls.projects_changed()


@guarded()
async def did_change_configuration(
    ls: AffineLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    if ls.client_supports("workspace.configuration"):
        await ls.pull_settings()
    else:
        ls.apply_settings(params.settings)


@guarded()
def shutdown(ls: AffineLanguageServer, params: None) -> None:
    ls.stop_workers()


@guarded()
def did_open(ls: AffineLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    document = params.text_document
    if _is_project_file(document.uri):
        ls.show_project_file(document.uri, [ContentChange(document.text)], document.version)
        return
    ls.open(document.uri, document.text, document.version)


@guarded()
def did_change(ls: AffineLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    document = params.text_document
    if _is_project_file(document.uri):
        ls.show_project_file(document.uri, content_changes(params), document.version)
        return
    ls.change(document.uri, document.version, content_changes(params))


@guarded()
def did_close(ls: AffineLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    if _is_project_file(uri):
        ls.close_project_file(uri)
        return
    ls.close(uri)


def _is_project_file(uri: str) -> bool:
    from affine_lsp.server.projects import is_project_file  # (loaded after `initialize`)

    return is_project_file(uri)


def content_changes(params: types.DidChangeTextDocumentParams) -> list[ContentChange]:
    """The client's changes as the syntax layer takes them."""
    changes = []
    for change in params.content_changes:
        range_ = getattr(change, "range", None)
        if range_ is None:
            changes.append(ContentChange(change.text))
        else:
            changes.append(
                ContentChange(
                    change.text,
                    (
                        (range_.start.line, range_.start.character),
                        (range_.end.line, range_.end.character),
                    ),
                )
            )
    return changes
