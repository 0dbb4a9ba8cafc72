"""A client connected to `affine-lsp serve` in a subprocess (pytest-lsp)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "ide" / "fixtures"

SERVER = [sys.executable, "-m", "affine_lsp", "serve"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def capabilities(**general) -> types.ClientCapabilities:
    """What VS Code announces (the parts we use), with work-done progress."""
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(**general) if general else None,
        window=types.WindowClientCapabilities(work_done_progress=True),
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
        ),
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                version_support=True, related_information=True
            ),
            document_symbol=types.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True
            ),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        ),
    )


def record_diagnostics(client: LanguageClient) -> None:
    """Keep every publishDiagnostics (pytest-lsp keeps only the last, without version)."""
    client.diagnostic_notifications = []  # type: ignore[attr-defined]
    features = client.protocol.fm.features
    original = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams):
        client.diagnostic_notifications.append(params)  # type: ignore[attr-defined]
        return original(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record


CONFIG = ClientServerConfig(server_command=SERVER, server_env=ENV)


async def start(client: LanguageClient, initialization_options=None, **general) -> None:
    record_diagnostics(client)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(**general),
            root_uri=FIXTURES.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=FIXTURES.as_uri(), name="fixtures")],
            initialization_options=initialization_options,
        )
    )


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient):
    """One server for a whole test module (most tests only read)."""
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def fresh_client(lsp_client: LanguageClient):
    """A server of its own, for tests that change settings or watch every message."""
    yield
    await lsp_client.shutdown_session()
