"""The language server: open documents, their analysis, diagnostics and settings.

Analysis runs on the event loop in slices: a single keystroke is analysed and
published at once (no debounce); a long analysis (opening a large file) yields
to the loop every few milliseconds so requests keep being answered, and is
cancelled when a newer version of its document arrives. What was analysed
before the cancellation is kept.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from affine_lsp import __version__
from affine_lsp.server.convert import Positions, diagnostic_data
from affine_lsp.server.incoming import Incoming
from affine_lsp.server.methods import CONTENT_MODIFIED
from affine_lsp.server.progress import Progress
from affine_lsp.server.protocol import AffineProtocol
from affine_lsp.syntax import ContentChange, encode

if TYPE_CHECKING:  # (loaded after `initialize` is answered: see `warmup.py`)
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from affine_lsp.checks import CheckOptions, Diagnostic
    from affine_lsp.ide.analysis import DocumentAnalysis
    from affine_lsp.ide.settings import Settings
    from affine_lsp.server.check_helpers import CheckHelpers
    from affine_lsp.server.documents import OpenDocument
    from affine_lsp.server.planner import Planner
    from affine_lsp.server.projects import ProjectFiles

SECTION = "affineLsp"
"""The settings' section (`ide.settings.SECTION`)."""

logger = logging.getLogger("affine_lsp.server")
T = TypeVar("T")

SLICE_SECONDS = 0.008
"""Longest stretch of analysis before the event loop gets a turn."""

REQUEST_SLICE_SECONDS = 0.002
"""The same for whole-document requests computed alongside edits: reading one
message takes the loop several turns, each costing a slice."""

PROGRESS_AFTER_SECONDS = 0.2
"""Analyses running longer than this report work-done progress."""

VISIBLE_LINES = 60
"""What the editor shows of a document just opened, until it asks for the semantic
tokens of a range: its first lines."""

REST_SLICE_SECONDS = 0.0005
"""The same once a partial set is published: the rest of the analysis runs while the
user works (reading one message takes the loop several turns, each costing a slice)."""

REST_PAUSE_SECONDS = 0.02
"""After the partial set of a version made by an edit, the rest of the analysis waits
this long: the next keystroke, if it comes, finds the event loop idle (its message is
read in several turns) instead of sharing it with the rest."""

ANSWER_TURNS = 20
"""Turns of the event loop given, between two items, to the client's answer to a
progress that a partial set waits for (reading a message takes several)."""

EARLY_PUBLISH_BYTES = 16 * 1024
"""An analysis with more than this left to do once the items the editor shows are
analysed (about 15 ms of work) publishes their diagnostics first, as a partial set
under work-done progress, then the whole set."""

_LOG_LEVELS = {
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}


class AffineLanguageServer(LanguageServer):
    """pygls server holding the open documents (the handlers are listed in
    `handlers.HANDLERS`)."""

    def __init__(self) -> None:
        super().__init__(
            "affine-lsp",
            __version__,
            protocol_cls=AffineProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.documents: dict[str, OpenDocument] = {}
        self.incoming = Incoming()  # (what `watch` reads: messages let through first)
        self.encoding = "utf-16"
        self._reported: set[str] = set()
        # What needs the analysis is made on first use, once `initialize` is answered.
        self._settings: Settings | None = None
        self._initialization_options: Any = None  # applied with the first settings
        self._planner: Planner | None = None
        self._planning_worker: tuple[BaseProcess, Connection] | None = None
        self._check_helpers: CheckHelpers | None = None
        self._projects: ProjectFiles | None = None

    # -- parts made on first use ------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The settings: the defaults, then the `initializationOptions` (applied when
        settings are first asked for), then what the client sends."""
        if self._settings is None:
            from affine_lsp.ide.settings import Settings

            self._settings = Settings()
            options, self._initialization_options = self._initialization_options, None
            if options is not None:
                self.apply_settings(options)
        return self._settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self._settings = settings

    def initialization_options(self, options: Any) -> None:
        """Settings from `initialize`, applied when settings are first asked for."""
        if self._settings is None:
            self._initialization_options = options
        else:
            self.apply_settings(options)

    @property
    def planner(self) -> Planner:
        """Refactorings (dependence analyses), planned in a worker process."""
        if self._planner is None:
            from affine_lsp.server.planner import Planner

            self._planner = Planner(self)
            if self._planning_worker is not None:
                self._planner.adopt(self._planning_worker)
        return self._planner

    def spawn_planning_worker(self) -> None:
        """Start the planning worker process now: it loads while the server does (the
        planner, made later, takes it)."""
        from affine_lsp.ide import planning_worker

        if self._planner is None and self._planning_worker is None:
            self._planning_worker = planning_worker.spawn(planning_worker.NICENESS)

    @property
    def check_helpers(self) -> CheckHelpers:
        """The processes that take part of a large analysis."""
        if self._check_helpers is None:
            from affine_lsp.server.check_helpers import CheckHelpers

            self._check_helpers = CheckHelpers()
        return self._check_helpers

    @property
    def projects(self) -> ProjectFiles:
        """The documents' project files (`.affine-lsp.toml`)."""
        if self._projects is None:
            from affine_lsp.server.projects import ProjectFiles

            self._projects = ProjectFiles()
        return self._projects

    def stop_workers(self) -> None:
        """Stop the planning worker and the check helpers (those that were started)."""
        if self._planner is not None:
            self._planner.shutdown()
        if self._check_helpers is not None:
            self._check_helpers.stop()

    @property
    def affine_protocol(self) -> AffineProtocol:
        assert isinstance(self.protocol, AffineProtocol)
        return self.protocol

    def report_server_error(self, error: Exception, source: object) -> None:
        """Log server-side errors; they are not the user's to see in a pop-up.
        Error answers the server chose to send are only worth a debug line."""
        level = logging.DEBUG if isinstance(error, JsonRpcException) else logging.ERROR
        logger.log(level, "%s: %s", getattr(source, "__name__", source), error)

    # -- client capabilities -------------------------------------------------------------

    def negotiate_encoding(self, capabilities: types.ClientCapabilities) -> None:
        chosen = ServerCapabilitiesBuilder.choose_position_encoding(capabilities)
        self.encoding = str(getattr(chosen, "value", chosen))

    def client_supports(self, path: str) -> bool:
        """Whether a dotted client capability (e.g. `window.workDoneProgress`) is set."""
        current = getattr(self.protocol, "client_capabilities", None)
        for part in path.split("."):
            current = getattr(current, part, None)
            if current is None:
                return False
        return bool(current)

    def hover_pictures(self) -> bool:
        """Whether hovers carry pictures (`hover.pictures`; `auto`: the client's Markdown
        renderer shows images)."""
        from affine_lsp.ide.settings import hover_pictures

        parser = getattr(self.client_markdown(), "parser", None)
        return hover_pictures(self.settings.hover_pictures, parser)

    def client_markdown(self) -> object:
        capabilities = getattr(self.protocol, "client_capabilities", None)
        return getattr(getattr(capabilities, "general", None), "markdown", None)

    async def sliced(self, parts: Iterable[T], analysis: DocumentAnalysis) -> AsyncIterator[T]:
        """The items of `parts` (computed from `analysis`'s current document), with a
        turn for the event loop every few milliseconds; ContentModified if the
        document changes meanwhile."""
        version = analysis.edit_count
        slice_start = time.perf_counter()
        for part in parts:
            yield part
            if time.perf_counter() - slice_start > REQUEST_SLICE_SECONDS:
                await asyncio.sleep(0)
                if analysis.edit_count != version:
                    raise JsonRpcException("the document changed", code=CONTENT_MODIFIED)
                slice_start = time.perf_counter()

    # -- documents -----------------------------------------------------------------------

    def open(self, uri: str, text: str, version: int | None) -> OpenDocument:
        from affine_lsp.ide.analysis import DocumentAnalysis
        from affine_lsp.server.documents import OpenDocument

        self.close(uri)
        # A large document's progress is asked for first: the client's answer comes
        # while the document is parsed, in time for the first partial set.
        progress = None
        if len(text) > EARLY_PUBLISH_BYTES:
            progress = Progress(self, _progress_title(uri))
        options = self.check_options_of(uri)
        data = encode(text)
        # (the helpers parse it while the server does)
        prepared = self.check_helpers.prepare(data, options, self.encoding)
        analysis = DocumentAnalysis.from_text(data, encoding=self.encoding, options=options)
        document = OpenDocument(uri, version, analysis, progress=progress, prepared=prepared)
        self.documents[uri] = document
        self.planner.opened(document)
        self.schedule(document)
        return document

    def change(self, uri: str, version: int | None, changes: list[ContentChange]) -> None:
        document = self.documents.get(uri)
        if document is None:
            logger.warning("change for a document that is not open: %s", uri)
            return
        document.analysis.apply_changes(changes)
        document.version = version
        self._forget_prepared(document)
        document.analysis.set_options(self.check_options_of(uri))  # (its project file)
        self.planner.changed(document, changes)
        self.schedule(document)

    def close(self, uri: str) -> None:
        document = self.documents.pop(uri, None)
        if document is None:
            return
        if document.task is not None:
            document.task.cancel()
        if document.progress is not None:
            document.progress.end()
            document.progress = None
        self._forget_prepared(document)
        self.planner.closed(uri)
        self.affine_protocol.send_notification_data(
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, {"uri": uri, "diagnostics": []}
        )

    def _forget_prepared(self, document: OpenDocument) -> None:
        """The helpers' copy of the document as opened is of no more use."""
        if document.prepared is not None:
            self.check_helpers.forget(document.prepared)
            document.prepared = None

    # -- analysis and diagnostics -----------------------------------------------------------

    def schedule(self, document: OpenDocument) -> None:
        """(Re)start the analysis of a document, dropping any stale one."""
        if document.task is not None and not document.task.done():
            document.task.cancel()
        document.task = asyncio.get_running_loop().create_task(self._analyse(document))

    def show(self, document: OpenDocument, start: int, end: int) -> None:
        """The editor shows bytes [start, end] of the document (it asked for their
        semantic tokens): an analysis under way does them next, and publishes them
        early if the rest is long."""
        if document.visible == (start, end):
            return
        document.visible = (start, end)
        if document.task is not None and not document.task.done():
            document.analysis.prioritise(start, end)

    def _visible(self, document: OpenDocument) -> tuple[int, int]:
        if document.visible is not None:
            return document.visible
        return 0, document.analysis.document.lines.line_start(VISIBLE_LINES)

    async def _analyse(self, document: OpenDocument) -> None:
        await asyncio.sleep(0)  # let notifications already queued arrive first
        analysis = document.analysis
        started = slice_start = time.perf_counter()
        visible = self._visible(document)
        analysis.prioritise(*visible)
        progress = document.progress
        if progress is None and analysis.unsettled_bytes() > EARLY_PUBLISH_BYTES:
            # A long analysis: progress at once, so that the visible items' diagnostics
            # can go out as soon as they are ready.
            progress = document.progress = Progress(self, _progress_title(document.uri))
        early = progress is not None and progress.active
        published_early: tuple[int, int] | None = None
        done = 0
        sharing: asyncio.Future[None] | None = None
        prepared = document.prepared
        if self.check_helpers.worth_sharing(analysis, prepared):
            sharing = asyncio.ensure_future(self.check_helpers.share(analysis, prepared))
        try:
            while True:
                for done, total in analysis.analyse():
                    # (a message arriving is let through before the next item)
                    if await self._between_items():
                        slice_start = time.perf_counter()
                    now = time.perf_counter()
                    if early and progress is not None:
                        visible = self._visible(document)
                        if published_early != visible and analysis.settled(*visible):
                            if not progress.begun:  # the client's answer: a few turns away
                                for _ in range(ANSWER_TURNS):
                                    await asyncio.sleep(0)
                                    if progress.begun:
                                        break
                            if progress.begun:
                                self.publish(document, partial=True)
                                published_early = visible
                                if analysis.edit_count:  # typing: the next edit first
                                    await asyncio.sleep(REST_PAUSE_SECONDS)
                                    slice_start = time.perf_counter()
                    # Once a partial set is out, the editor is in use: shorter slices, as
                    # reading an edit or a request takes the event loop several turns.
                    slice_seconds = SLICE_SECONDS if published_early is None else REST_SLICE_SECONDS
                    if now - slice_start >= slice_seconds:
                        if progress is None and now - started > PROGRESS_AFTER_SECONDS:
                            progress = Progress(self, _progress_title(document.uri))
                        if progress is not None:
                            progress.report(done, total)
                        await asyncio.sleep(0)
                        slice_start = time.perf_counter()
                    if await self._between_items():
                        slice_start = time.perf_counter()
                if sharing is None or not analysis.claimed:
                    break
                # The helpers still have items: wait for them; what they give back
                # unchecked (or, should one be lost, still claimed) is checked here,
                # in one more round.
                await sharing
                sharing = None
                analysis.release_claims()
            if sharing is not None:  # (still waiting for helpers to load: no more need)
                sharing.cancel()
            self.publish(document)
            self._forget_prepared(document)
            self.planner.analysed(document)
            logger.info(
                "%s v%s: %d items analysed in %.1f ms (check helpers: %d items so far, "
                "%d sent by place)",
                document.uri,
                document.version,
                done,
                (time.perf_counter() - started) * 1000,
                self.check_helpers.items,
                self.check_helpers.named,
            )
        except asyncio.CancelledError:
            if sharing is not None:
                sharing.cancel()
            # A newer version goes on from here: a partial set published stays under
            # this progress until that version's complete set replaces it.
            if progress is not None and progress is not document.progress:
                progress.end()
            raise
        except Exception:
            logger.exception("analysis of %s failed", document.uri)
            self._forget_prepared(document)
        if progress is not None:
            progress.end()
        if document.progress is progress:
            document.progress = None

    async def _between_items(self) -> bool:
        """Let a message that is arriving through before the analysis goes on to its
        next item (`incoming.py`); whether it waited."""
        if not self.incoming.arriving():
            return False
        await self.incoming.let_through()
        return True

    def publish(self, document: OpenDocument, *, partial: bool = False) -> None:
        self.publish_diagnostics(document.uri, document.analysis, document.version, partial)

    def publish_diagnostics(
        self,
        uri: str,
        analysis: DocumentAnalysis,
        version: int | None = None,
        partial: bool = False,
    ) -> None:
        """Send the diagnostics of an analysis (as plain JSON: no cattrs): all of them,
        or with `partial`, those computed so far for this version (only while a
        work-done progress says the rest is coming)."""
        found = analysis.settled_diagnostics() if partial else analysis.diagnostics()
        self.publish_found(uri, analysis.document, found, version)

    def publish_found(
        self,
        uri: str,
        positions: Positions,
        found: Iterable[Diagnostic],
        version: int | None = None,
    ) -> None:
        """Send diagnostics, their offsets turned into positions by `positions`."""
        payload = [diagnostic_data(positions, uri, d) for d in found]
        params: dict = {"uri": uri, "diagnostics": payload}
        if version is not None:
            params["version"] = version
        self.affine_protocol.send_notification_data(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)

    # -- settings ---------------------------------------------------------------------------

    def apply_settings(self, raw: object) -> None:
        """New settings from the client (nested or dotted; see `ide.settings`)."""
        from affine_lsp.ide.settings import parse_settings

        if isinstance(raw, dict) and isinstance(raw.get(SECTION), dict):
            raw = raw[SECTION]
        settings, problems = parse_settings(raw, self.settings)
        for problem in problems:
            self.report_once(problem, types.MessageType.Warning)
        previous, self.settings = self.settings, settings
        if settings != previous and self._planner is not None:
            self._planner.settings_changed()
        if settings.log_level is not None:
            logging.getLogger("affine_lsp").setLevel(_LOG_LEVELS[settings.log_level])
        if settings.check_options() != previous.check_options():
            for uri, document in self.documents.items():
                document.analysis.set_options(self.check_options_of(uri))
                self.schedule(document)

    # -- project files ----------------------------------------------------------------------

    def check_options_of(self, uri: str) -> CheckOptions:
        """The check options of a document: the settings', with its project file's
        dialects."""
        dialects = self.projects.project_of(uri).dialects
        return replace(self.settings.check_options(), dialects=dialects)

    def projects_changed(self) -> None:
        """Project files may have changed on disk: documents whose project now says
        something else are analysed again."""
        for uri, document in self.documents.items():
            options = self.check_options_of(uri)
            if options != document.analysis.options:
                document.analysis.set_options(options)
                self.schedule(document)

    def show_project_file(
        self, uri: str, changes: list[ContentChange], version: int | None
    ) -> None:
        """A project file open in the editor (opened with its whole text as the one
        change, or edited): publish what in its text would be left out."""
        from affine_lsp.server.projects import problems_of
        from affine_lsp.syntax import SourceDocument

        document = self.projects.open.get(uri)
        if document is None:
            document = self.projects.open[uri] = SourceDocument(b"", encoding=self.encoding)
        document.apply_changes(changes)
        self.publish_found(uri, document, problems_of(document.source), version)

    def close_project_file(self, uri: str) -> None:
        if self.projects.open.pop(uri, None) is not None:
            self.affine_protocol.send_notification_data(
                types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, {"uri": uri, "diagnostics": []}
            )

    async def pull_settings(self) -> None:
        """Ask the client for the `affineLsp` section (when it supports it)."""
        if not self.client_supports("workspace.configuration"):
            return
        try:
            result = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            )
        except Exception:
            logger.exception("workspace/configuration failed")
            return
        if result:
            self.apply_settings(result[0])

    def report_once(self, message: str, kind: types.MessageType) -> None:
        """Show a message to the user, once per session."""
        if message in self._reported:
            return
        self._reported.add(message)
        logger.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))


def _progress_title(uri: str) -> str:
    return f"Analysing {uri.rsplit('/', 1)[-1]}"
