"""The project is ruff clean and ruff formatted (part of the suite, so CI enforces
it). ruff comes with the test extras (`pip install -e '.[test]'`); without it this
test fails rather than skips, since the suite's own set-up provides it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_ruff_check():
    result = _ruff("check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format():
    result = _ruff("format", "--check")
    assert result.returncode == 0, "run `ruff format`:\n" + result.stdout + result.stderr
