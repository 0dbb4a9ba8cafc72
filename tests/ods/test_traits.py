"""`affine-lsp traits`: ODS files (written here in the style of out-of-tree dialects)
read without TableGen into the project file that checks their MLIR."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from affine_lsp.checks import CheckOptions, check_document
from affine_lsp.cli import main
from affine_lsp.ir import parse_project, read_ods
from affine_lsp.ir.ods import _tokens
from affine_lsp.syntax import SourceDocument

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _text(path: Path) -> str:
    return path.read_text()


def _ops() -> dict[str, tuple[str, ...]]:
    return {op.name: op.traits for op in read_ods([FIXTURES], _text).ops}


def test_ops_their_dialect_and_traits():
    assert _ops() == {
        # traits added by a class (!listconcat with a defvar), a trait list, and a
        # native trait under another name
        "air.launch": ("AffineScope", "IsolatedFromAbove", "AutomaticAllocationScope"),
        "air.segment": ("AffineScope", "IsolatedFromAbove"),
        "air.herd": ("AffineScope", "IsolatedFromAbove"),
        "air.segment_terminator": ("Terminator",),
        "air.herd_terminator": ("Pure", "Terminator"),
        # a mnemonic pasted by a class; multi-line lists with parameterised traits
        "hls.dataflow.node": ("AffineScope", "IsolatedFromAbove"),
        "hls.dataflow.schedule": ("AffineScope",),
        "hls.dataflow.yield": ("Pure", "Terminator"),  # (NoSideEffect: Pure's old name)
        "hls.dataflow.buffer": (),  # (inside `let ... in { }`)
        "hls.const": ("Pure", "ConstantLike"),
        "hls.affine_select": ("Pure",),  # (NoMemoryEffect and AlwaysSpeculatable)
    }


def test_interfaces_are_listed_by_their_class():
    (node,) = [op for op in read_ods([FIXTURES], _text).ops if op.name == "hls.dataflow.node"]
    assert "DeclareOpInterfaceMethods" in node.listed
    assert "SingleBlockImplicitTerminator" in node.listed


def test_defs_that_could_not_be_read_say_why():
    problems = {(p.name, p.line): p.reason for p in read_ods([FIXTURES], _text).problems}
    assert problems == {
        ("air_WaitAllOp", 17): "its class air_AsyncBaseOp is not defined in the files read",
        ("multiclass air_ChannelOps", 20): "multiclass is not expanded: its ops are not read",
    }


def test_includes_found_beside_a_file_are_read():
    """HLSOps.td alone: its classes and dialect come from the HLSBase.td it includes."""
    result = read_ods([FIXTURES / "hls" / "HLSOps.td"], _text)
    assert {op.name for op in result.ops} >= {"hls.dataflow.node", "hls.const"}
    assert result.dialects == ["hls"]
    assert result.element_dialects == ["hls"]  # (a type with MemRefElementTypeInterface)


def test_tokens_keep_strings_code_and_comments_apart():
    text = 'def X : Y<"a // b", [{ c /* d */ }]> /* e\n f */ // g\n;'
    kinds = [(t.kind, t.text) for t in _tokens(text)]
    assert kinds == [
        ("name", "def"),
        ("name", "X"),
        ("punct", ":"),
        ("name", "Y"),
        ("punct", "<"),
        ("string", '"a // b"'),
        ("punct", ","),
        ("code", "[{ c /* d */ }]"),
        ("punct", ">"),
        ("punct", ";"),
        ("end", ""),
    ]
    assert _tokens(text)[-2].line == 3


def test_the_command_prints_a_project_file_that_checks_their_mlir(tmp_path, capsys):
    assert main(["traits", str(FIXTURES)]) == 0
    captured = capsys.readouterr()
    assert "air_WaitAllOp: its class air_AsyncBaseOp is not defined" in captured.err
    project = parse_project(captured.out.encode())
    assert project.problems == ()
    assert '[ops."air.herd"]\ntraits = ["AffineScope", "IsolatedFromAbove"]' in captured.out
    assert "[dialects.hls]\nmemref_element_types = true" in captured.out
    source = SourceDocument((FIXTURES / "dataflow.mlir").read_bytes())
    without = [d.code for d in check_document(source)]
    assert set(without) == {"affine-symbol-invalid", "affine-dim-invalid"}
    options = replace(CheckOptions(), dialects=project.dialects)
    assert [d.code for d in check_document(source, options)] == []


def test_nothing_to_read(tmp_path, capsys):
    (tmp_path / "empty.td").write_text("// nothing\n")
    assert main(["traits", str(tmp_path)]) == 1
    assert "no op definitions" in capsys.readouterr().err
    assert main(["traits", str(tmp_path / "missing.td")]) == 2


def test_broken_input_is_never_a_crash(tmp_path):
    pieces = [
        "def",
        "class C<",
        'def X : C<"a", [A,',
        "let x = in {",
        "def Y : Op<D, ",
        '"unterminated',
        "/* open comment",
        "!listconcat(",
        'def Z : Op<Missing, "z", [Pure]>;',
    ]
    for count, piece in enumerate(pieces):
        path = tmp_path / f"broken{count}.td"
        path.write_text("class K<string m, list<Trait> t = []> : Op<D, m, t>;\n" + piece)
        result = read_ods([path], _text)
    assert [p.reason for p in result.problems] == ["its dialect Missing has no name the files give"]
