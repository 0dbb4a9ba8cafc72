"""The package type-checks with mypy (part of the suite, so CI enforces it; the
settings are in pyproject.toml). mypy comes with the test extras; without it this
test fails rather than skips. Its cache lives in the system's temporary folder, not
in the source tree."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy():
    checkout = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    cache = Path(tempfile.gettempdir()) / f"affine-lsp-mypy-{checkout}"
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
