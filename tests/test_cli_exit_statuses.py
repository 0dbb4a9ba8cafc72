"""One rule of exit statuses for every subcommand (`cli.output.EXIT_STATUSES`, the
table of docs/cli.md), held here over every command of `cli.COMMANDS`.

A new subcommand needs its row in `CALLS`: how it is called on a file (or None when
it reads none), so that the rule is checked on it too."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from affine_lsp.cli import COMMANDS, main
from affine_lsp.cli.output import (
    DONE,
    EXIT_STATUSES,
    INPUT_ERRORS,
    INTERNAL_ERROR,
    REFUSED,
    USAGE,
    exit_statuses_help,
    exit_statuses_table,
)

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"

# A loop on line 2 with an error (an undefined value), a lint and a syntax error.
BROKEN = """func.func @f(%a: memref<4xf32>) {
  affine.for %i = 0 to 4 {
    %v = affine.load %a[%undefined] : memref<4xf32>
    %w = memref.load %a[%i] : memref<4xf32>
    affine.store %v, %a[%i + ] : memref<4xf32>
  }
  return
}
"""

# Two nests, on lines 2 and 6, that cannot be fused (the second overwrites what the
# first reads later, in reverse order); a loop on line 10 with nothing to draw.
GOOD = """func.func @f(%a: memref<10xf32>, %b: memref<10xf32>) {
  affine.for %i = 0 to 10 {
    %v = affine.load %a[-%i + 9] : memref<10xf32>
    affine.store %v, %b[%i] : memref<10xf32>
  }
  affine.for %j = 0 to 10 {
    %w = affine.load %b[%j] : memref<10xf32>
    affine.store %w, %a[%j] : memref<10xf32>
  }
  affine.parallel () = () to () {
    affine.yield
  }
  return
}
"""
LOOP_LINE = 2
NO_LOOP_LINE = 1
NO_IVS_LINE = 10

# Nests on lines 7 and 10 in an op that the project file makes an affine scope: its
# region argument %t is a valid symbol there, and an invalid one without the file.
NODE = """func.func @f(%a: memref<32xf32>) {
  "hls.dataflow.node"(%a) ({
  ^bb0(%t: index):
    %one = arith.constant 1.0 : f32
    %buf = memref.alloc() : memref<16xf32>
    %out = memref.alloc() : memref<8xf32>
    affine.for %i = 0 to 8 {
      affine.store %one, %buf[%i + symbol(%t)] : memref<16xf32>
    }
    affine.for %j = 0 to 8 {
      %v = affine.load %buf[%j + symbol(%t)] : memref<16xf32>
      affine.store %v, %out[%j] : memref<8xf32>
    }
    "hls.dataflow.yield"() : () -> ()
  }) : (memref<32xf32>) -> ()
  return
}
"""
NODE_PROJECT = '[ops."hls.dataflow.node"]\ntraits = ["AffineScope"]\n'
NODE_LOOP_LINE = 7
# GOOD's loop on line 2, and on line 6 a nest that walks down the columns of %A (worth
# optimizing; the loop on line 2 is not).
NESTS = """func.func @f(%a: memref<10xf32>, %A: memref<512x512xf64>, %s: memref<512xf64>) {
  affine.for %i = 0 to 10 {
    %v = affine.load %a[-%i + 9] : memref<10xf32>
    affine.store %v, %a[%i] : memref<10xf32>
  }
  affine.for %i = 0 to 512 {
    affine.for %j = 0 to 512 {
      %x = affine.load %A[%j, %i] : memref<512x512xf64>
      %t = affine.load %s[%i] : memref<512xf64>
      %u = arith.addf %t, %x : f64
      affine.store %u, %s[%i] : memref<512xf64>
    }
  }
  return
}
"""


@dataclass
class Call:
    """How a subcommand is called on a file: the arguments after FILE; for those
    that take `--line`, the arguments with the line left out; a call refused on GOOD."""

    arguments: list[str]
    at_line: list[str] | None = None
    refused: list[str] | None = None
    writes: bool = field(default=False)
    project: bool = False  # reads the file with its project file (takes --config)
    text: str = GOOD  # the file a writer changes (and refuses to change)


CALLS: dict[str, Call | None] = {
    "parse": Call([]),
    "check": Call([], project=True),
    "fuse": Call(
        ["--all"], at_line=[], refused=["--line", str(LOOP_LINE)], writes=True, project=True
    ),
    "transform": Call(
        ["--line", str(LOOP_LINE), "--unroll", "3"],
        at_line=["--unroll", "3"],
        refused=["--line", str(LOOP_LINE), "--interchange"],
        writes=True,
        project=True,
    ),
    "draw": Call(
        ["--line", str(LOOP_LINE)],
        at_line=[],
        refused=["--line", str(NO_IVS_LINE)],
        writes=True,
        project=True,
    ),
    "optimize": Call(
        ["--all"], at_line=[], refused=["--line", str(LOOP_LINE)], writes=True, text=NESTS
    ),
    "serve": None,
    "traits": None,  # (reads ODS files, not MLIR: tests/ods/test_traits.py)
}


def _status(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit_:
        assert isinstance(exit_.code, int)
        return exit_.code


def _file(tmp_path: Path, text: str, name: str = "in.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_every_command_has_its_row():
    assert set(CALLS) == set(COMMANDS)


def test_docs_hold_the_table_and_every_help_names_it(capsys):
    assert exit_statuses_table() in DOCS.read_text(encoding="utf-8")
    assert [status for status, _, _ in EXIT_STATUSES][:5] == [
        DONE,
        INPUT_ERRORS,
        USAGE,
        REFUSED,
        INTERNAL_ERROR,
    ]
    for name in COMMANDS:
        assert _status([name, "--help"]) == DONE
        shown = " ".join(capsys.readouterr().out.split())
        assert shown.endswith(exit_statuses_help()), name


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_unknown_option_is_a_usage_error(name, capsys):
    assert _status([name, "--no-such-option"]) == USAGE
    assert "error:" in capsys.readouterr().err


FILE_COMMANDS = sorted(name for name, call in CALLS.items() if call is not None)


@pytest.mark.parametrize("name", FILE_COMMANDS)
def test_a_file_that_cannot_be_read_is_a_usage_error(name, tmp_path, capsys):
    call = CALLS[name]
    assert call is not None
    missing = tmp_path / "missing.mlir"
    assert _status([name, str(missing), *call.arguments]) == USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"affine-lsp {name}: cannot read {missing}: No such file or directory\n"


@pytest.mark.parametrize("name", FILE_COMMANDS)
def test_input_errors_exit_1_printed_as_check_prints_them(name, tmp_path, capsys):
    call = CALLS[name]
    assert call is not None
    path = _file(tmp_path, BROKEN)
    assert _status(["check", path]) == INPUT_ERRORS
    checked = capsys.readouterr().out
    for code in ("ssa-undefined", "lint-memref-access-in-affine-loop", "syntax"):
        assert f" [{code}]\n" in checked
    assert _status([name, path, *call.arguments]) == INPUT_ERRORS
    captured = capsys.readouterr()
    if name == "parse":  # (syntax errors only, without a code)
        assert captured.out == f"{path}:5:29: error: expected an SSA value\n"
        return
    if name == "check":
        assert captured.out == checked
        return
    assert captured.out == ""
    assert captured.err.startswith(checked)  # then: "PATH has errors; nothing was ..."
    assert len(captured.err.splitlines()) == len(checked.splitlines()) + 1


RESULTS = "affine_lsp.cli.results"


@pytest.mark.parametrize("name", FILE_COMMANDS)
def test_a_bug_is_an_internal_error(name, tmp_path, capsys, monkeypatch):
    call = CALLS[name]
    assert call is not None
    module = importlib.import_module(COMMANDS[name][0])

    def broken(*_arguments: object) -> bytes:
        raise RuntimeError("a bug")

    # (the commands that rewrite or draw a file read it through cli/results.py)
    reader = module if hasattr(module, "read_input") else importlib.import_module(RESULTS)
    monkeypatch.setattr(reader, "read_input", broken)
    assert _status([name, _file(tmp_path, GOOD), *call.arguments]) == INTERNAL_ERROR
    err = capsys.readouterr().err
    assert "RuntimeError: a bug" in err
    assert err.endswith(
        f"affine-lsp {name}: internal error (a bug of affine-lsp; please report it with "
        "the input)\n"
    )


WRITERS = sorted(name for name, call in CALLS.items() if call is not None and call.writes)


@pytest.mark.parametrize("name", ["parse", "check"])
def test_readers_are_done_on_a_file_without_errors(name, tmp_path, capsys):
    assert _status([name, _file(tmp_path, GOOD)]) == DONE


@pytest.mark.parametrize("name", WRITERS)
def test_an_output_that_cannot_be_written_is_a_usage_error(name, tmp_path, capsys):
    call = CALLS[name]
    assert call is not None
    target = tmp_path / "no" / "such" / "out"
    assert _status([name, _file(tmp_path, call.text), *call.arguments, "-o", str(target)]) == USAGE
    assert f"cannot write {target}" in capsys.readouterr().err
    assert not target.parent.exists()


@pytest.mark.parametrize("name", WRITERS)
def test_done_and_refused(name, tmp_path, capsysbinary):
    call = CALLS[name]
    assert call is not None and call.refused is not None
    path = _file(tmp_path, call.text)
    out = tmp_path / "out"
    assert _status([name, path, *call.arguments, "-o", str(out)]) == DONE
    assert out.exists()
    capsysbinary.readouterr()
    out.unlink()
    assert _status([name, path, *call.refused, "-o", str(out)]) == REFUSED, call.refused
    captured = capsysbinary.readouterr()
    assert captured.out == b"" and captured.err
    assert not out.exists()


LINE_COMMANDS = sorted(name for name, call in CALLS.items() if call and call.at_line is not None)


@pytest.mark.parametrize("name", LINE_COMMANDS)
def test_a_line_without_a_loop_is_a_usage_error(name, tmp_path, capsys):
    call = CALLS[name]
    assert call is not None and call.at_line is not None
    path = _file(tmp_path, GOOD)
    for line in ("0", "x"):
        assert _status([name, path, "--line", line, *call.at_line]) == USAGE
    for line in (NO_LOOP_LINE, 1000):
        assert _status([name, path, "--line", str(line), *call.at_line]) == USAGE
        captured = capsys.readouterr()
        assert captured.out == "" and f"line {line}" in captured.err


@pytest.mark.parametrize(
    "option", ["--unroll 1", "--unroll-jam 1", "--tile 0", "--permute 0", "--permute 0,1"]
)
def test_a_transformation_that_is_never_a_change_is_a_usage_error(option, tmp_path, capsys):
    path = _file(tmp_path, GOOD)
    assert _status(["transform", path, "--line", str(LOOP_LINE), *option.split()]) == USAGE


PROJECT_COMMANDS = sorted(name for name, call in CALLS.items() if call and call.project)


def _on_node(name: str) -> list[str]:
    call = CALLS[name]
    assert call is not None
    if call.at_line is None:
        return call.arguments
    return ["--line", str(NODE_LOOP_LINE), *call.at_line]


@pytest.mark.parametrize("name", PROJECT_COMMANDS)
def test_the_project_file_decides_the_errors(name, tmp_path, capsys):
    path = _file(tmp_path, NODE)
    assert _status([name, path, *_on_node(name)]) == INPUT_ERRORS
    assert "[affine-symbol-invalid]" in " ".join(capsys.readouterr())
    config = tmp_path / "hls.toml"
    config.write_text(NODE_PROJECT)
    assert _status([name, path, *_on_node(name), "--config", str(config)]) == DONE
    (tmp_path / ".affine-lsp.toml").write_text(NODE_PROJECT)
    assert _status([name, path, *_on_node(name)]) == DONE


@pytest.mark.parametrize("name", PROJECT_COMMANDS)
def test_a_config_that_is_not_a_file_is_a_usage_error(name, tmp_path, capsys):
    missing = tmp_path / "missing.toml"
    assert _status([name, _file(tmp_path, GOOD), *_on_node(name), "--config", str(missing)]) == (
        USAGE
    )
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"affine-lsp {name}: cannot read {missing}: not a file\n"
