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
    # As `tree-sitter parse` prints it: ranges (0-based rows, byte columns), leaves' text.
    assert out.splitlines()[:5] == [
        "(source_file [0, 0] - [1, 0]",
        "  (attribute_alias_def [0, 0] - [0, 29]",
        '    name: (attribute_alias [0, 0] - [0, 2] "#m")',
        "    value: (affine_map [0, 5] - [0, 29]",
        "      dimensions: (dim_list [0, 16] - [0, 20]",
    ]
    assert '(dim_id [0, 17] - [0, 19] "d0"))' in out


def test_tree_leaves_text_is_quoted_and_escaped(tmp_path, capsys):
    path = tmp_path / "s.mlir"
    path.write_bytes(
        b'func.func @f() {\n  %s = "a\\"b" : () -> ()\n  %t = "\x1b\xff"() : () -> ()\n}\n'
    )
    main(["parse", "--tree", str(path)])
    out = capsys.readouterr().out
    assert '"\\"a\\\\\\"b\\""' in out  # the string "a\"b" with its quotes
    assert "\x1b" not in out and "\\x1b\\xff" in out


def test_missing_file_is_a_usage_error(tmp_path, capsys):
    assert main(["parse", str(tmp_path / "nope.mlir")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as exit_:
        assert exit_.code == 0
    assert "affine-lsp" in capsys.readouterr().out


def test_no_command_is_a_usage_error(capsys):
    assert main([]) == 2


def _messages(source: str) -> list[str]:
    from affine_lsp.syntax import SourceDocument, syntax_problems

    document = SourceDocument(source)
    return [
        f"{document.point(p.span.start_byte)[0] + 1}:{document.point(p.span.start_byte)[1] + 1}: "
        f"{p.message}"
        for p in syntax_problems(document.tree)
    ]


def test_error_messages_name_the_token_and_what_was_expected():
    assert _messages("func.func @f() {\n  affine.for %i = 0 10 {\n  }\n}\n") == [
        "2:21: unexpected '10'; expected 'to'"
    ]
    assert _messages("func.func @f() {\n  affine.for %i = 0 to 10 step {\n  }\n}\n") == [
        "2:32: unexpected '{'; expected '-' or an integer"
    ]
    assert _messages("func.func @f() {\n  affine.store %v %A[%c] : memref<4xf32>\n}\n") == [
        "2:19: unexpected '%A'; expected ','"
    ]
    assert _messages("#map = affine_map<(d0) -> d0>\n") == ["1:27: unexpected 'd0'; expected '('"]


def test_nested_missing_braces_are_reported_once():
    assert _messages("func.func @f() {\n  affine.for %i = 0 to 10 {\n") == ["2:28: expected '}'"]
