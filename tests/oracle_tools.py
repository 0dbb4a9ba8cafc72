"""Finding and running the MLIR oracle tools in tests (skips when absent)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

LLVM_BIN = Path("/usr/lib/llvm-22/bin")
INSTALL_HINT = "apt-get install -y mlir-22-tools"


def tool_path(name: str) -> str | None:
    override = os.environ.get("AFFINE_LSP_MLIR_BIN")
    candidates = [Path(override) / name] if override else []
    found = shutil.which(name)
    if found:
        candidates.append(Path(found))
    candidates.append(LLVM_BIN / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def mlir_opt_path() -> str:
    path = tool_path("mlir-opt")
    if path is None:
        pytest.skip(f"mlir-opt not found: {INSTALL_HINT}")
    return path


def run_tool(
    argv: list[str], *, check: bool = True, timeout: float = 120, stdin: str | None = None
):
    """Run a tool with an argument list (no shell) and a timeout."""
    result = subprocess.run(
        argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and result.returncode != 0:
        raise AssertionError(f"{argv[0]} failed ({result.returncode}): {result.stderr[:2000]}")
    return result
