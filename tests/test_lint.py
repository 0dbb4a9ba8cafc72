"""The project is ruff clean (part of the suite, so CI enforces it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_check():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff not installed: pip install -e '.[test]'")
    result = subprocess.run(
        [ruff, "check", str(ROOT)], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
