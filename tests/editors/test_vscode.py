"""The VS Code extension builds, lints, passes its tests and packages to a .vsix
(editors/vscode/scripts/check.sh; needs Node.js and npm)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parent.parent.parent / "editors" / "vscode"


def test_vscode_extension_check_script():
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("Node.js/npm not installed")
    result = subprocess.run(
        ["bash", str(EXTENSION / "scripts" / "check.sh")],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert list(EXTENSION.glob("*.vsix")), "no .vsix produced"
