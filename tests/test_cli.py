"""The command line as a whole: each subcommand imports only what it uses, messages
never print control characters raw, and every command words I/O errors alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from affine_lsp.cli import COMMANDS, build_parser, main
from affine_lsp.cli.output import printable

# Prints, after running the CLI, the modules it loaded (as JSON on stderr's last line).
_PROBE = """
import json, sys
from affine_lsp.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _loaded(*argv: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return set(json.loads(result.stderr.strip().splitlines()[-1]))


def _ours(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith("affine_lsp.")}


HEAVY = ("islpy", "pygls", "lsprotocol", "cattrs")


def _under(modules: set[str], *packages: str) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)}


def test_version_and_help_import_no_subcommand():
    for argv in (["--version"], ["--help"], []):
        loaded = _loaded(*argv)
        assert _ours(loaded) == {"affine_lsp.cli"}, argv
        assert not _under(loaded, "tree_sitter", *HEAVY), argv


def test_subcommands_import_only_their_layers(tmp_path):
    path = tmp_path / "a.mlir"
    path.write_text("func.func @f() {\n  return\n}\n")
    parse = _loaded("parse", str(path))
    assert not _under(parse, "affine_lsp.ir", "affine_lsp.checks", *HEAVY)
    check = _loaded("check", str(path))
    assert "affine_lsp.checks" in check
    assert not _under(
        check, "affine_lsp.poly", "affine_lsp.transforms", "affine_lsp.ide", "affine_lsp.server"
    )
    assert not _under(check, *HEAVY)
    fuse = _loaded("fuse", str(path), "--all")
    assert "islpy" in fuse
    assert not _under(fuse, "affine_lsp.ide", "affine_lsp.server", "pygls", "lsprotocol")


def test_every_registered_command_has_a_module_and_a_parser():
    for name in COMMANDS:
        parser = build_parser(name)
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args([name, "--help"])
        assert exit_.value.code == 0


def test_an_unknown_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["nope"])
    assert exit_.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_printable_escapes_what_could_act_on_a_terminal():
    assert printable("plain 'text' é ∀") == "plain 'text' é ∀"
    assert printable("a\x1b[31mred\x07") == "a\\x1b[31mred\\x07"
    assert printable("tab\tnew\nline\r\x7f\x85") == "tab\\tnew\\nline\\r\\x7f\\x85"
    assert printable("\u202eevil\u2066\u2028") == "\\u202eevil\\u2066\\u2028"
    assert printable("name\udcff.mlir") == "name\\xff.mlir"  # an undecodable file-name byte


@pytest.mark.parametrize("command", ["parse", "check", "fuse"])
def test_io_errors_have_one_wording(command, tmp_path, capsys):
    missing = tmp_path / "missing\x1b.mlir"
    argv = [command, str(missing)] + (["--all"] if command == "fuse" else [])
    assert main(argv) == 2
    escaped = printable(str(missing))
    assert capsys.readouterr().err == (
        f"affine-lsp {command}: cannot read {escaped}: No such file or directory\n"
    )


def test_a_binary_file_prints_no_control_bytes(tmp_path, capsysbinary):
    path = tmp_path / "binary.mlir"
    path.write_bytes(bytes(range(256)) * 4)
    for command in ("parse", "check"):
        assert main([command, str(path)]) == 1
        captured = capsysbinary.readouterr()
        assert captured.out, command
        printed = captured.out.decode() + captured.err.decode()
        assert all(c == "\n" or c.isprintable() for c in printed), command
    path.write_bytes(b"func.func @f() {\n  \x1b[2J\x07\n}\n")
    assert main(["fuse", str(path), "--all"]) == 1
    err = capsysbinary.readouterr().err.decode()
    assert "\\x1b" in err and "\x1b" not in err and "\x07" not in err


def test_check_searches_directories_as_check_workspace_does(tmp_path, capsys):
    from affine_lsp.ide import workspace
    from affine_lsp.syntax import files

    assert workspace.mlir_files is files.mlir_files
    bad = "func.func @f() {\n  %x = affine.apply %nope\n}\n"
    for folder in ("src", ".git", "build", "src/node_modules", "src/.cache"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "a.mlir").write_text(bad)
    (tmp_path / "notes.txt").write_text(bad)
    assert main(["check", str(tmp_path)]) == 1
    printed = capsys.readouterr().out
    assert {line.split(":")[0] for line in printed.splitlines()} == {
        str(tmp_path / "src" / "a.mlir")
    }
    # A directory or file named explicitly is taken, whatever its name.
    assert main(["check", str(tmp_path / "build"), str(tmp_path / "notes.txt")]) == 1
    printed = capsys.readouterr().out
    assert {line.split(":")[0] for line in printed.splitlines()} == {
        str(tmp_path / "build" / "a.mlir"),
        str(tmp_path / "notes.txt"),
    }


def test_serve_reports_a_log_file_it_cannot_write(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "dir" / "server.log"
    assert main(["serve", "--log-file", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"affine-lsp serve: cannot write {missing}: No such file or directory\n"
    )


def _writing_commands(tmp_path) -> dict[str, tuple[str, list[str]]]:
    """For draw, fuse and transform: an input file and the arguments that write a result."""
    from tests.draw.helpers import NESTS, line_of, nests_text
    from tests.fusion.test_engine import NAMES_AND_COMMENTS
    from tests.loops.fixtures import STENCIL

    fuse_input = tmp_path / "fuse.mlir"
    fuse_input.write_text(NAMES_AND_COMMENTS)
    transform_input = tmp_path / "transform.mlir"
    transform_input.write_text(STENCIL)
    stencil = line_of(nests_text(), "affine.for", 0)
    return {
        "draw": (str(NESTS), ["--line", str(stencil)]),
        "fuse": (str(fuse_input), ["--all"]),
        "transform": (str(transform_input), ["--line", "4", "--unroll", "2"]),
    }


@pytest.mark.parametrize("command", ["draw", "fuse", "transform"])
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_new_output_files_follow_the_umask(command, umask, tmp_path, capsys):
    path, arguments = _writing_commands(tmp_path)[command]
    out = tmp_path / "out"
    old = os.umask(umask)
    try:
        assert main([command, path, *arguments, "-o", str(out)]) == 0
    finally:
        os.umask(old)
    capsys.readouterr()
    assert os.stat(out).st_mode & 0o777 == 0o666 & ~umask
    # An existing output file keeps its permissions.
    os.chmod(out, 0o604)
    assert main([command, path, *arguments, "-o", str(out)]) == 0
    assert os.stat(out).st_mode & 0o777 == 0o604


@pytest.mark.parametrize("command", ["fuse", "transform"])
def test_in_place_keeps_the_files_mode(command, tmp_path, capsys):
    path, arguments = _writing_commands(tmp_path)[command]
    os.chmod(path, 0o751)
    before = open(path, "rb").read()
    old = os.umask(0o077)
    try:
        assert main([command, path, *arguments, "--in-place"]) == 0
    finally:
        os.umask(old)
    capsys.readouterr()
    assert open(path, "rb").read() != before
    assert os.stat(path).st_mode & 0o777 == 0o751
