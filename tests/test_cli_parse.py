"""`affine-lsp parse`: messages, positions and exit codes."""

from __future__ import annotations

from affine_lsp.cli import main


def test_reports_each_error_with_one_based_position(tmp_path, capsys):
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @f() {\n  %a = affine.load %A[%i : memref<4xf32>\n}\n")
    assert main(["parse", str(path)]) == 1
    out = capsys.readouterr().out
    assert out == f"{path}:2:25: error: expected ']'\n"


def test_valid_file_exits_zero(tmp_path, capsys):
    path = tmp_path / "ok.mlir"
    path.write_text("func.func @f() {\n  return\n}\n")
    assert main(["parse", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_tree_output(tmp_path, capsys):
    path = tmp_path / "ok.mlir"
    path.write_text("#m = affine_map<(d0) -> (d0)>\n")
    assert main(["parse", "--tree", str(path)]) == 0
    out = capsys.readouterr().out
    assert "(attribute_alias_def" in out and "(dim_id)" in out


def test_missing_file_is_a_usage_error(tmp_path, capsys):
    assert main(["parse", str(tmp_path / "nope.mlir")]) == 2
    assert "cannot read file" in capsys.readouterr().err


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as exit_:
        assert exit_.code == 0
    assert "affine-lsp" in capsys.readouterr().out


def test_no_command_is_a_usage_error(capsys):
    assert main([]) == 2
