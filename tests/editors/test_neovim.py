"""Neovim support, tested in a real headless Neovim: the plugin sets the
filetype, loads our tree-sitter grammar and queries, starts the server, the
server's diagnostics and hovers reach Neovim, and the stock code-action menu
lists the refactorings at a loop and applies them as the CLI does."""

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
FUSION = ROOT / "tests" / "ide" / "fixtures" / "fusion.mlir"
SERVER = [sys.executable, "-m", "affine_lsp"]


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


def _neovim() -> str:
    if importlib.util.find_spec("affine_lsp.cli.serve") is None:
        pytest.skip("the language server (`affine-lsp serve`) is not part of this build yet")
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim not found: apt-get install -y neovim")
    return nvim


def _run_session(tmp_path: Path, script: str, **variables: str) -> dict:
    """Run a Lua session script in a headless Neovim; its JSON result."""
    nvim = _neovim()
    result_file = tmp_path / "result.json"
    env = dict(
        os.environ,
        AFFINE_REPO=str(ROOT),
        AFFINE_SERVER_CMD=json.dumps([*SERVER, "serve"]),
        AFFINE_OUT=str(result_file),
        # The server must be this checkout's, whatever else is installed.
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    env.update(variables)
    command = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n"]
    command += ["-c", f"luafile {ROOT / 'tests' / 'editors' / script}"]
    completed = subprocess.run(
        command, env=env, cwd=tmp_path, timeout=120, check=False, capture_output=True
    )
    assert result_file.exists(), completed.stderr.decode(errors="replace")
    result = json.loads(result_file.read_text())
    assert "error" not in result, result.get("error")
    return result


def test_neovim_gets_diagnostics_hover_and_highlighting(tmp_path):
    _neovim()
    parser = _compile_parser(tmp_path)
    result = _run_session(
        tmp_path, "nvim_session.lua", AFFINE_FIXTURE=str(FIXTURE), AFFINE_PARSER=str(parser)
    )
    assert result["filetype"] == "mlir"
    assert result["tree_root"] == "source_file"
    assert all(result[f"query_{name}"] for name in ("highlights", "locals", "folds", "indents"))
    assert result["attached"]
    messages = [d["message"] for d in result["diagnostics"]]
    assert len(messages) >= 2, messages
    lines = sorted({d["lnum"] for d in result["diagnostics"]})
    assert lines[0] < lines[-1], "both independent errors are reported"
    assert "hover" in result and result["hover"], result.get("hover_error")


@pytest.mark.parametrize(
    ("choose", "cli"),
    [
        ("Fuse with the next loop nest", ["fuse", "{file}", "--line", "{line}"]),
        ("Fuse all loop nests", ["fuse", "{file}", "--all"]),
        ("Interchange", ["transform", "{file}", "--line", "{line}", "--interchange"]),
        ("Tile", ["transform", "{file}", "--line", "{line}", "--tile", "32,32"]),
        ("Unroll", ["transform", "{file}", "--line", "{line}", "--unroll", "4"]),
    ],
)
def test_neovim_code_action_menu_applies_what_the_cli_prints(tmp_path, choose, cli):
    text = FUSION.read_text()
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "affine.for" in t)
    result = _run_session(
        tmp_path,
        "nvim_code_action.lua",
        AFFINE_FIXTURE=str(FUSION),
        AFFINE_LINE=str(line),
        AFFINE_CHOOSE=choose,
    )
    assert result["attached"]
    titles = result["titles"]
    assert any(t.startswith("Fuse with the next loop nest") for t in titles), titles
    assert any(t.startswith("Fuse all loop nests") for t in titles), titles
    assert any(t.startswith("Tile") for t in titles), titles
    assert result["chosen"], titles
    assert result["changed"], "the chosen action changed the buffer"
    arguments = [a.format(line=line, file=FUSION) for a in cli]
    printed = subprocess.run(
        [*SERVER, *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=dict(
            os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        ),
    ).stdout
    assert printed != text
    assert "\n".join(result["lines"]) + "\n" == printed


HERD = """func.func @f(%m: memref<64xf32>) {
  "hls.node"() ({
  ^bb0(%n: index):
    affine.for %i = 0 to %n {
      %v = affine.load %m[%i] : memref<64xf32>
    }
    "hls.yield"() : () -> ()
  }) : () -> ()
  return
}
"""


def test_neovim_writing_a_project_file_rechecks_the_buffer(tmp_path):
    _neovim()
    source = tmp_path / "node.mlir"
    source.write_text(HERD)
    result = _run_session(
        tmp_path,
        "nvim_project.lua",
        AFFINE_FIXTURE=str(source),
        AFFINE_PROJECT=str(tmp_path / ".affine-lsp.toml"),
        AFFINE_PROJECT_TEXT='[ops."hls.node"]\ntraits = ["AffineScope"]',
    )
    assert result["before"] == ["affine-symbol-invalid"]
    assert result["after"] == []


VIEWER = """import json, os, sys
with open(os.environ["AFFINE_VIEWED"], "a") as handle:
    handle.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def test_neovim_draw_command_writes_the_svg_and_opens_the_viewer(tmp_path):
    _neovim()
    from tests.draw.svg import read_svg

    fixture = tmp_path / "nests.mlir"
    fixture.write_bytes((ROOT / "tests" / "draw" / "fixtures" / "nests.mlir").read_bytes())
    viewer = tmp_path / "viewer.py"
    viewer.write_text(VIEWER)
    viewed = tmp_path / "viewed.json"
    pictures = tmp_path / "pictures"
    result = _run_session(
        tmp_path,
        "nvim_draw.lua",
        AFFINE_FIXTURE=str(fixture),
        AFFINE_VIEWER=json.dumps([sys.executable, str(viewer)]),
        AFFINE_VIEWED=str(viewed),
        AFFINE_DIR=str(pictures),
    )
    assert result["command_defined"]
    assert result["draw_command"] == [sys.executable, "-m", "affine_lsp", "draw"]
    # The unsaved buffer was drawn: %i runs 1..11 now, %j 1..9.
    stencil = read_svg(Path(result["stencil_svg"]).read_bytes())
    assert len(stencil.circles) == 99
    assert result["viewed"]
    opened = [json.loads(line) for line in viewed.read_text().splitlines()]
    assert opened == [[result["stencil_svg"]], [result["triangle_svg"]]]
    triangle = read_svg(Path(result["triangle_svg"]).read_bytes())
    assert len(triangle.circles) == 55 and len(triangle.arrows) == 45
    assert result["no_loop"]
    errors = [n["message"] for n in result["notes"] if n["level"] == 4]
    assert any("heads no affine.for or affine.parallel loop" in m for m in errors), result["notes"]
    assert result["broken"].startswith(f"{fixture}:"), result["broken"]
    assert "nothing was drawn" in result["broken"]


def _readme_setup_lines() -> str:
    """The two lines of editors/neovim/README.md that set the plugin up without a
    plugin manager, with this checkout's path."""
    readme = (ROOT / "editors" / "neovim" / "README.md").read_text()
    block = readme.split("or without a plugin manager:", 1)[1].split("```lua\n", 1)[1]
    lines = block.split("```", 1)[0]
    assert "setup()" in lines and "runtimepath:prepend" in lines, lines
    return lines.replace("/path/to/affine-lsp", str(ROOT))


def test_neovim_setup_from_the_readme_prints_nothing(tmp_path):
    """The README's two lines as init.lua, then an MLIR file opened: no message at all
    (Neovim 0.7 once printed W18 for every `@capture` highlight group), and the
    affine captures still highlighted (0.7's capture table, or `@` groups later)."""
    nvim = _neovim()
    init = tmp_path / "init.lua"
    init.write_text(_readme_setup_lines())
    fixture = tmp_path / "two_errors.mlir"
    fixture.write_bytes(FIXTURE.read_bytes())
    report = tmp_path / "report.json"
    probe = (
        "local ok, h = pcall(require, 'vim.treesitter.highlighter');"
        "local linked = (ok and h.hl_map and h.hl_map['variable.induction'])"
        " or vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID('@variable.induction')), 'name');"
        "vim.wait(20000, function() return #vim.lsp.buf_get_clients(0) > 0 end, 50);"
        "vim.wait(500);"
        f"local f = io.open({json.dumps(str(report))}, 'w');"
        "f:write(vim.fn.json_encode({messages = vim.fn.execute('messages'),"
        " errmsg = vim.v.errmsg, linked = linked,"
        " attached = #vim.lsp.buf_get_clients(0) > 0}));"
        "f:close()"
    )
    env = dict(
        os.environ,
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    command = [nvim, "--headless", "-u", str(init), "-i", "NONE", "-n", str(fixture)]
    command += ["-c", f"lua {probe}", "-c", "qall!"]
    completed = subprocess.run(
        command, env=env, cwd=tmp_path, timeout=120, check=False, capture_output=True
    )
    printed = (completed.stdout + completed.stderr).decode(errors="replace")
    assert printed.strip() == "", printed
    result = json.loads(report.read_text())
    assert result["messages"].strip() == "", result["messages"]
    assert result["errmsg"] == "", result["errmsg"]
    assert result["linked"] == "Identifier", result
    assert result["attached"], "the server started from PATH"


SKEWED = ROOT / "tests" / "editors" / "fixtures" / "skewed.mlir"


def test_neovim_07_lists_no_action_that_cannot_be_applied(tmp_path):
    """Neovim 0.7 shows no `disabled` action as such: the menu at a loop whose
    dependence forbids interchange and tiling lists neither; what it lists applies,
    and no error is shown."""
    text = SKEWED.read_text()
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "affine.for %i" in t)
    result = _run_session(
        tmp_path,
        "nvim_code_action.lua",
        AFFINE_FIXTURE=str(SKEWED),
        AFFINE_LINE=str(line),
        AFFINE_CHOOSE="Unroll %i by 4",
    )
    titles = result["titles"]
    assert titles and result["disabled"] == [], titles
    assert not any(t.startswith(("Interchange", "Tile")) for t in titles), titles
    assert result["changed"], titles
    assert not [n for n in result["notes"] if n["level"] == 4], result["notes"]
    printed = subprocess.run(
        [*SERVER, "transform", str(SKEWED), "--line", str(line), "--unroll", "4"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=dict(
            os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        ),
    ).stdout
    assert "\n".join(result["lines"]) + "\n" == printed
