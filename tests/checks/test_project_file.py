""".affine-lsp.toml: reading it (never failing: a warning at the place of what is
left out), what each trait changes in the model and the checks, and `check`
finding it from a file's folder upward (or `--config`)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from affine_lsp.checks import CheckOptions, check_document
from affine_lsp.cli import main
from affine_lsp.ir import (
    PROJECT_FILE,
    UPSTREAM,
    find_project_file,
    parse_project,
)
from affine_lsp.syntax import SourceDocument


def _codes(text: str, project: str | None = None) -> list[str]:
    options = CheckOptions()
    if project is not None:
        parsed = parse_project(project.encode())
        assert not parsed.problems, parsed.problems
        options = replace(options, dialects=parsed.dialects)
    return [d.code for d in check_document(SourceDocument(text), options)]


def _problem_at(text: str, message_part: str) -> str:
    """The text a problem's span covers (its message must contain `message_part`)."""
    data = text.encode()
    (problem,) = [p for p in parse_project(data).problems if message_part in p.message]
    return data[problem.span.start_byte : problem.span.end_byte].decode()


# -- reading -------------------------------------------------------------------------


def test_a_file_extends_what_mlir_registers():
    project = parse_project(
        b'[dialects]\nregistered = ["hls"]\n[dialects.hls]\nmemref_element_types = true\n\n'
        b'[ops."hls.node"]\ntraits = ["AffineScope", "IsolatedFromAbove"]\n'
    )
    assert project.problems == ()
    dialects = project.dialects
    assert "hls.node" in dialects.affine_scope and "func.func" in dialects.affine_scope
    assert "hls.node" in dialects.isolated_from_above
    assert {"hls", "affine"} <= dialects.registered
    assert dialects.element_dialects == frozenset({"hls"})
    assert UPSTREAM.element_dialects is None  # (no file: other dialects' types unchecked)


def test_an_op_named_has_exactly_its_traits():
    """Declared without a trait, an upstream op loses it; a declared op is known not
    to be isolated (its scoping is known) and its dialect is registered."""
    dialects = parse_project(b'[ops."scf.for"]\ntraits = []\n[ops."air.herd"]\ntraits = []\n')
    assert "scf.for" not in dialects.dialects.allocation_scope
    assert dialects.dialects.knows_scoping("air.herd")
    assert "air" in dialects.dialects.registered
    assert dialects.dialects.element_dialects is None  # ([dialects] registered not said)


@pytest.mark.parametrize(
    ("text", "message", "at"),
    [
        ('[ops."a.b"]\ntraits = ["AffineScope", "Shiny"]\n', "unknown trait 'Shiny'", '"Shiny"'),
        ('[ops."a.b"]\ntraits = []\ncolour = "red"\n', "unknown key 'colour'", "colour"),
        ("[extra]\nx = 1\n", "unknown key 'extra'", "extra"),
        ("[ops.air.herd]\ntraits = []\n", "an op's name is its dialect", "air"),
        ('[ops."a.b"]\ntraits = "Pure"\n', "traits must be a list", "traits"),
        ('[dialects]\nregistered = "hls"\n', "must be a list of dialect names", "registered"),
        (
            '[dialects]\nregistered = ["x"]\n[dialects.y]\nmemref_element_types = true\n',
            "'y' is not in [dialects] registered",
            "dialects.y",
        ),
        (
            "[dialects.x]\nmemref_element_types = 1\n",
            "must be true or false",
            "memref_element_types",
        ),
        ('[ops."a.b"]\ntraits = [\n', "not a valid TOML file", ""),
    ],
)
def test_what_is_left_out_is_a_warning_at_its_place(text, message, at):
    assert _problem_at(text, message) == at


def test_a_broken_file_counts_as_absent():
    project = parse_project(b"[ops\n")
    assert project.dialects == UPSTREAM
    (problem,) = project.problems
    assert "line 1" in problem.message


def test_the_nearest_file_above_is_the_one(tmp_path):
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert find_project_file(inner) is None
    (tmp_path / PROJECT_FILE).write_text("")
    assert find_project_file(inner / "x.mlir") == tmp_path / PROJECT_FILE
    (tmp_path / "a" / PROJECT_FILE).write_text("")
    assert find_project_file(inner) == tmp_path / "a" / PROJECT_FILE


def test_an_unreadable_file_is_a_problem_of_its_own(tmp_path, capsys, monkeypatch):
    source = tmp_path / "node.mlir"
    source.write_text(NODE)
    project = tmp_path / PROJECT_FILE
    project.write_text('[ops."hls.node"]\ntraits = ["AffineScope"]\n')
    original = Path.read_bytes

    def read_bytes(path: Path) -> bytes:
        if path.name == PROJECT_FILE:
            raise PermissionError(13, "Permission denied")
        return original(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    assert main(["check", str(source)]) == 1  # (MLIR's registry only)
    out = capsys.readouterr().out
    assert f"{project}:1:1: warning: cannot read: Permission denied [project-file]" in out


# -- what traits change ----------------------------------------------------------------

NODE = """func.func @f(%m: memref<64xf32>, %outer: index) {
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


def test_affine_scope_makes_region_arguments_symbols():
    assert _codes(NODE) == ["affine-symbol-invalid"]
    assert _codes(NODE, '[ops."hls.node"]\ntraits = ["AffineScope"]') == []


def test_isolated_from_above_hides_the_values_above():
    project = '[ops."hls.node"]\ntraits = ["AffineScope", "IsolatedFromAbove"]'
    assert _codes(NODE, project) == ["ssa-undefined"]  # (%m, defined above)


PURE = """func.func @f(%m: memref<64xf32>, %n: index) {
  affine.for %j = 0 to 4 {
    %c = "hls.double"(%n) : (index) -> index
    affine.for %i = 0 to %c {
      %v = affine.load %m[%i] : memref<64xf32>
    }
  }
  return
}
"""


def test_pure_ops_of_symbols_give_symbols():
    assert _codes(PURE) == ["affine-symbol-invalid"]  # (an unregistered op: not pure)
    assert _codes(PURE, '[ops."hls.double"]\ntraits = ["Pure"]') == []


CONSTANT = PURE.replace('"hls.double"(%n) : (index)', '"hls.const"() : ()')


def test_constant_ops_give_symbols():
    assert _codes(CONSTANT) == ["affine-symbol-invalid"]
    assert _codes(CONSTANT, '[ops."hls.const"]\ntraits = ["ConstantLike"]') == []


ALLOCA_OUTSIDE = (
    'module {\n  "hls.task"() ({\n    %a = memref.alloca() : memref<4xf32>\n  }) : () -> ()\n}\n'
)


def test_automatic_allocation_scopes():
    assert _codes(ALLOCA_OUTSIDE) == ["memref-alloca-scope"]
    project = '[ops."hls.task"]\ntraits = ["AutomaticAllocationScope"]'
    assert _codes(ALLOCA_OUTSIDE, project) == []


TERMINATOR = """func.func @f() {
  "hls.task"() ({
    "hls.end"() : () -> ()
    "hls.work"() : () -> ()
  }) : () -> ()
  return
}
"""


def test_a_declared_terminator_ends_its_block():
    assert _codes(TERMINATOR) == []
    assert _codes(TERMINATOR, '[ops."hls.end"]\ntraits = ["Terminator"]') == ["terminator-not-last"]


GLOBAL = """"hls.design"() ({
  memref.global "private" @table : memref<4xf32>
  func.func @f() {
    %t = memref.get_global @missing : memref<4xf32>
    return
  }
}) : () -> ()
"""


def test_symbol_tables_hold_the_globals_they_define():
    assert _codes(GLOBAL) == ["memref-global-reference"]  # (the file's module: no @missing)
    assert _codes(GLOBAL.replace("@missing", "@table")) == ["memref-global-reference"]
    project = '[ops."hls.design"]\ntraits = ["SymbolTable"]'
    assert _codes(GLOBAL, project) == ["memref-global-reference"]
    assert _codes(GLOBAL.replace("@missing", "@table"), project) == []


ELEMENTS = """func.func @f(%a: memref<4x!hls.fixed<8, 2>>, %b: memref<4x!other.thing>,
              %c: memref<4x!llvm.ptr>) {
  return
}
"""


ALIASED = """!cipher = !lwe.ciphertext<bits = 8>
func.func @f(%a: memref<2x!cipher>) {
  return
}
"""


def test_memref_elements_named_through_an_alias():
    assert _codes(ALIASED) == []
    assert _codes(ALIASED, '[dialects]\nregistered = ["hls"]\n') == ["memref-element-type"]
    listed = '[dialects]\nregistered = ["lwe"]\n[dialects.lwe]\nmemref_element_types = true\n'
    assert _codes(ALIASED, listed) == []


def test_memref_elements_of_other_dialects_once_the_file_says_which_exist():
    assert _codes(ELEMENTS) == []
    listed = '[dialects]\nregistered = ["hls"]\n'
    assert _codes(ELEMENTS, listed) == ["memref-element-type", "memref-element-type"]
    elements = listed + "[dialects.hls]\nmemref_element_types = true\n"
    assert _codes(ELEMENTS, elements) == ["memref-element-type"]  # (!other.thing)


# -- the command line ------------------------------------------------------------------


def test_check_reads_the_project_file_above(tmp_path, capsys):
    (tmp_path / "kernels").mkdir()
    source = tmp_path / "kernels" / "node.mlir"
    source.write_text(NODE)
    assert main(["check", str(source)]) == 1
    capsys.readouterr()
    (tmp_path / PROJECT_FILE).write_text('[ops."hls.node"]\ntraits = ["AffineScope", "Gleam"]\n')
    assert main(["check", str(source)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{tmp_path / PROJECT_FILE}:2:26: warning: unknown trait 'Gleam' of hls.node, left out "
        "(understood: AffineScope, IsolatedFromAbove, Pure, ConstantLike, Terminator, "
        "SymbolTable, AutomaticAllocationScope) [project-file]"
    ]


def test_check_config_overrides_the_project_file_found(tmp_path, capsys):
    source = tmp_path / "node.mlir"
    source.write_text(NODE)
    (tmp_path / PROJECT_FILE).write_text('[ops."hls.node"]\ntraits = ["AffineScope"]\n')
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    assert main(["check", str(source)]) == 0
    assert main(["check", "--config", str(empty), "--format", "json", str(source)]) == 1
    records = json.loads(capsys.readouterr().out)
    assert [r["code"] for r in records] == ["affine-symbol-invalid"]
    assert main(["check", "--config", str(tmp_path / "none.toml"), str(source)]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_each_file_gets_its_own_project(tmp_path, capsys):
    with_project, without = tmp_path / "a", tmp_path / "b"
    with_project.mkdir()
    without.mkdir()
    (with_project / PROJECT_FILE).write_text('[ops."hls.node"]\ntraits = ["AffineScope"]\n')
    for folder in (with_project, without):
        (folder / "node.mlir").write_text(NODE)
    assert main(["check", "-j", "2", str(with_project), str(without)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [Path(line.split(":")[0]).parent.name for line in lines] == ["b"]
