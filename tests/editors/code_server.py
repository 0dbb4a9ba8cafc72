"""A real VS Code for the end-to-end tests: code-server (VS Code's browser build)
installed by `editors/vscode/scripts/install-code-server.sh`, driven headless in
Debian's Chromium through Playwright.

Every wait here is generous and only bounds a hang: what a test asserts is what
the page shows, never how fast it showed it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
INSTALL_SCRIPT = ROOT / "editors" / "vscode" / "scripts" / "install-code-server.sh"
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser")
# Set by CI once it has installed everything: a missing piece then fails instead of skipping.
REQUIRED_VARIABLE = "AFFINE_LSP_REQUIRE_VSCODE_E2E"
# Long enough for a loaded 2-core machine; only a hang reaches them.
START_TIMEOUT_S = 180
INSTALL_TIMEOUT_S = 1500


class Unavailable(Exception):
    """Something the end-to-end test needs cannot be had on this machine."""


def chromium() -> str:
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise Unavailable("Chromium not found (Debian: apt-get install chromium)")


def install_code_server() -> Path:
    """code-server's entry.js, installed into the cache on first use."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise Unavailable("Node.js/npm not installed")
    result = subprocess.run(
        ["bash", str(INSTALL_SCRIPT)],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if result.returncode != 0:
        raise Unavailable(
            f"code-server could not be installed ({INSTALL_SCRIPT.name} exited "
            f"{result.returncode}): {result.stderr.strip()[-1500:]}"
        )
    return Path(result.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_command() -> dict[str, str]:
    """Settings that make the extension start this checkout's server."""
    executable = Path(sys.executable).parent / "affine-lsp"
    if executable.is_file():
        return {"affineLsp.server.path": str(executable)}
    return {"affineLsp.python.path": sys.executable}


BASE_SETTINGS = {
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "workbench.colorTheme": "Default Dark Modern",
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "update.mode": "none",
    "editor.minimap.enabled": False,
    "editor.fontSize": 14,
    "chat.commandCenter.enabled": False,
    "window.commandCenter": False,
}


class CodeServer:
    """One code-server process with its own user data and extensions folders."""

    def __init__(self, entry: Path, home: Path, settings: dict | None = None) -> None:
        self.entry = entry
        self.home = home
        self.user_data = home / "user-data"
        self.extensions = home / "extensions"
        self.config = home / "config.yaml"
        self.log = home / "code-server.log"
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        (self.user_data / "User").mkdir(parents=True, exist_ok=True)
        self.extensions.mkdir(parents=True, exist_ok=True)
        self.config.write_text("auth: none\n")
        all_settings = {**BASE_SETTINGS, **server_command(), **(settings or {})}
        (self.user_data / "User" / "settings.json").write_text(json.dumps(all_settings, indent=2))

    def _base_args(self) -> list[str]:
        return [
            "node",
            str(self.entry),
            "--config",
            str(self.config),
            "--user-data-dir",
            str(self.user_data),
            "--extensions-dir",
            str(self.extensions),
        ]

    def _environment(self) -> dict[str, str]:
        # The server the extension starts must be this checkout's, with the suite's
        # deterministic budgets (the environment carries AFFINE_LSP_TIME_LIMITS).
        path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        return {**os.environ, "PYTHONPATH": path, "XDG_CONFIG_HOME": str(self.home / "xdg")}

    def install_extension(self, vsix: Path) -> None:
        result = subprocess.run(
            [*self._base_args(), "--install-extension", str(vsix)],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            env=self._environment(),
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"installing {vsix.name} failed: {result.stdout}{result.stderr}")

    def start(self, folder: Path) -> str:
        """Starts serving `folder`; returns the URL that opens it."""
        log = self.log.open("w")
        self.process = subprocess.Popen(
            [
                *self._base_args(),
                "--auth",
                "none",
                "--bind-addr",
                f"127.0.0.1:{self.port}",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                str(folder),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self._environment(),
        )
        log.close()
        base = f"http://127.0.0.1:{self.port}"
        self._wait_until_serving(f"{base}/healthz")
        return f"{base}/?folder={folder}"

    def _wait_until_serving(self, url: str) -> None:
        import time

        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"code-server exited: {self.log.read_text()[-2000:]}")
            with suppress(urllib.error.URLError, ConnectionError, TimeoutError):
                with urllib.request.urlopen(url, timeout=5):
                    return
            time.sleep(0.25)
        raise RuntimeError(f"code-server did not answer within {START_TIMEOUT_S} s")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)
        self.process = None


# -- a stand-in for LLVM's MLIR extension ---------------------------------------------

LLVM_MLIR_ID = ("llvm-vs-code-extensions", "vscode-mlir")
# The stand-in's grammar gives every line this scope, which Dark Modern colours like a string.
STUB_SCOPE = "string.quoted.stub.mlir"
STUB_DIAGNOSTIC_MARKER = "affine.apply"
STUB_EXTENSION_JS = """
const vscode = require("vscode");
// Like mlir-lsp-server, which reports under the source "mlir": one error on every
// line containing the marker, for every MLIR document.
exports.activate = (context) => {
  const collection = vscode.languages.createDiagnosticCollection("mlir");
  const publish = (document) => {
    if (document.languageId !== "mlir") return;
    const found = [];
    for (let line = 0; line < document.lineCount; line++) {
      const column = document.lineAt(line).text.indexOf(MARKER);
      if (column < 0) continue;
      const range = new vscode.Range(line, column, line, column + MARKER.length);
      const severity = vscode.DiagnosticSeverity.Error;
      const diagnostic = new vscode.Diagnostic(range, "stand-in verifier error", severity);
      diagnostic.source = "mlir";
      found.push(diagnostic);
    }
    collection.set(document.uri, found);
  };
  vscode.workspace.textDocuments.forEach(publish);
  context.subscriptions.push(collection, vscode.workspace.onDidOpenTextDocument(publish),
    vscode.workspace.onDidChangeTextDocument((event) => publish(event.document)));
};
"""


def build_llvm_mlir_stand_in(directory: Path) -> Path:
    """A .vsix with the id of LLVM's MLIR extension that registers the same language
    and grammar scope and reports an error under the source `mlir` on each line
    containing `STUB_DIAGNOSTIC_MARKER`."""
    import zipfile

    publisher, name = LLVM_MLIR_ID
    manifest = {
        "name": name,
        "publisher": publisher,
        "displayName": "MLIR (test stand-in)",
        "version": "0.0.1",
        "engines": {"vscode": "^1.60.0"},
        "main": "./extension.js",
        "activationEvents": ["onLanguage:mlir"],
        "contributes": {
            "languages": [{"id": "mlir", "aliases": ["MLIR"], "extensions": [".mlir"]}],
            "grammars": [
                {"language": "mlir", "scopeName": "source.mlir", "path": "./grammar.json"}
            ],
        },
    }
    grammar = {"scopeName": "source.mlir", "patterns": [{"match": ".+", "name": STUB_SCOPE}]}
    vsix_manifest = f"""<?xml version="1.0" encoding="utf-8"?>
<PackageManifest Version="2.0.0" xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011">
  <Metadata>
    <Identity Language="en-US" Id="{name}" Version="0.0.1" Publisher="{publisher}" />
    <DisplayName>MLIR (test stand-in)</DisplayName>
    <Properties>
      <Property Id="Microsoft.VisualStudio.Code.Engine" Value="^1.60.0" />
    </Properties>
  </Metadata>
  <Installation><InstallationTarget Id="Microsoft.VisualStudio.Code"/></Installation>
  <Dependencies/>
  <Assets>
    <Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" />
  </Assets>
</PackageManifest>
"""
    path = directory / f"{publisher}.{name}-stand-in.vsix"
    script = f"const MARKER = {json.dumps(STUB_DIAGNOSTIC_MARKER)};\n{STUB_EXTENSION_JS}"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("extension.vsixmanifest", vsix_manifest)
        archive.writestr("extension/package.json", json.dumps(manifest, indent=2))
        archive.writestr("extension/grammar.json", json.dumps(grammar))
        archive.writestr("extension/extension.js", script)
    return path
