"""Fixtures shared by the editor tests: the VS Code extension is built once per run."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
EXTENSION = ROOT / "editors" / "vscode"
# What a build may create; none of it may appear in the source tree.
BUILD_OUTPUTS = ("node_modules", "out", "dist")


@dataclass
class ExtensionBuild:
    """The result of `editors/vscode/scripts/check.sh`."""

    returncode: int
    output: str
    vsix: Path
    created_in_source: list[str]

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.vsix.is_file()


@pytest.fixture(scope="session")
def vscode_extension_build(tmp_path_factory) -> ExtensionBuild:
    """Builds, lints, tests and packages the extension (check.sh) once per session."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("Node.js/npm not installed")
    out = tmp_path_factory.mktemp("vsix")
    before = {name for name in BUILD_OUTPUTS if (EXTENSION / name).exists()}
    result = subprocess.run(
        ["bash", str(EXTENSION / "scripts" / "check.sh")],
        env={**os.environ, "VSIX_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    created = [name for name in BUILD_OUTPUTS if name not in before and (EXTENSION / name).exists()]
    created += [path.name for path in EXTENSION.glob("*.vsix")]
    return ExtensionBuild(
        result.returncode,
        result.stdout[-4000:] + result.stderr[-4000:],
        out / "affine-lsp.vsix",
        created,
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the test item, for fixtures that look at the outcome."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)
