"""What the server loads before it answers `initialize` (not how long it takes:
`benchmarks/startup.py` measures that): pygls, lsprotocol and the few modules
that register the handlers, nothing of the analysis, the checks, the polyhedral
core or the refactorings, which the warm-up loads once the client has the answer."""

from __future__ import annotations

import sys
from pathlib import Path

from affine_lsp.testing.lsp_client import LspClient
from tests.server.conftest import ENV

HEAVY = (
    "islpy",
    "affine_lsp.ir",
    "affine_lsp.checks",
    "affine_lsp.poly",
    "affine_lsp.transforms",
    "affine_lsp.ide.analysis",
    "affine_lsp.ide.settings",
    "affine_lsp.server.features",
    "affine_lsp.server.planner",
)


def _imported_until_initialize_is_answered(log: Path) -> set[str]:
    """Run `affine-lsp serve` with `-X importtime`, send `initialize` alone and stop
    the server once it is answered (no `initialized`: the warm-up never starts); the
    modules its import log names."""
    command = [sys.executable, "-X", "importtime", "-m", "affine_lsp", "serve"]
    with log.open("wb") as stderr:
        client = LspClient(command, stderr=stderr, env=ENV)
        answer = client.call(
            "initialize", {"processId": None, "rootUri": None, "capabilities": {}}, 120
        )
        client.process.kill()
        client.stop()
    assert "result" in answer, answer
    imported = set()
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("import time:") and "|" in line:
            imported.add(line.rsplit("|", 1)[1].strip())
    return imported


def test_nothing_of_the_analysis_is_loaded_before_initialize_is_answered(tmp_path):
    imported = _imported_until_initialize_is_answered(tmp_path / "imports.log")
    assert {"pygls.lsp.server", "lsprotocol.types", "affine_lsp.server.handlers"} <= imported
    loaded = sorted(m for m in imported if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert loaded == [], loaded
