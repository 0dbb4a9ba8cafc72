"""The VS Code extension builds, lints, passes its tests and packages to a .vsix
(editors/vscode/scripts/check.sh; needs Node.js and npm)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parent.parent.parent / "editors" / "vscode"


@pytest.mark.slow
def test_vscode_extension_check_script(tmp_path):
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("Node.js/npm not installed")
    result = subprocess.run(
        ["bash", str(EXTENSION / "scripts" / "check.sh")],
        env={**os.environ, "VSIX_OUT": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert (tmp_path / "affine-lsp.vsix").is_file(), "no .vsix produced"
    assert not list(EXTENSION.glob("*.vsix")), "a .vsix was written into the source tree"
