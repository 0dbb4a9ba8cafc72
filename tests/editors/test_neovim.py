"""Neovim support, tested in a real headless Neovim: the plugin sets the
filetype, loads our tree-sitter grammar and queries, starts the server, and the
server's diagnostics and hovers reach Neovim."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURE = ROOT / "tests" / "editors" / "fixtures" / "two_errors.mlir"


def _compile_parser(directory: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the tree-sitter parser for Neovim")
    output = directory / "mlir.so"
    src = ROOT / "grammar" / "src"
    subprocess.run(
        [
            compiler,
            "-shared",
            "-fPIC",
            "-O0",
            f"-I{src}",
            str(src / "parser.c"),
            str(src / "scanner.c"),
            "-o",
            str(output),
        ],
        check=True,
        timeout=300,
    )
    return output


def test_neovim_gets_diagnostics_hover_and_highlighting(tmp_path):
    if importlib.util.find_spec("affine_lsp.cli.serve") is None:
        pytest.skip("the language server (`affine-lsp serve`) is not part of this build yet")
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim not found: apt-get install -y neovim")
    parser = _compile_parser(tmp_path)
    result_file = tmp_path / "result.json"
    env = dict(
        os.environ,
        AFFINE_REPO=str(ROOT),
        AFFINE_FIXTURE=str(FIXTURE),
        AFFINE_PARSER=str(parser),
        AFFINE_SERVER_CMD=json.dumps([sys.executable, "-m", "affine_lsp", "serve"]),
        AFFINE_OUT=str(result_file),
        # The server must be this checkout's, whatever else is installed.
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    subprocess.run(
        [
            nvim,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "-c",
            f"luafile {ROOT / 'tests' / 'editors' / 'nvim_session.lua'}",
        ],
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
        capture_output=True,
    )
    result = json.loads(result_file.read_text())
    assert "error" not in result, result.get("error")
    assert result["filetype"] == "mlir"
    assert result["tree_root"] == "source_file"
    assert all(result[f"query_{name}"] for name in ("highlights", "locals", "folds", "indents"))
    assert result["attached"]
    messages = [d["message"] for d in result["diagnostics"]]
    assert len(messages) >= 2, messages
    lines = sorted({d["lnum"] for d in result["diagnostics"]})
    assert lines[0] < lines[-1], "both independent errors are reported"
    assert "hover" in result and result["hover"], result.get("hover_error")
