"""`affine-lsp fuse`: output, exit codes, --in-place safety."""

from __future__ import annotations

import os

from affine_lsp.cli import main
from tests.fusion.test_engine import NAMES_AND_COMMENTS, REVERSED_WAR, WAR

BROKEN = """func.func @f(%a: memref<4xf32>) {
  %v = affine.load %a[%undefined] : memref<4xf32>
  return
}
"""


CHAIN = """func.func @chain(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
  affine.for %i = 0 to 8 {
    %v = affine.load %a[%i] : memref<8xf32>
    affine.store %v, %b[%i] : memref<8xf32>
  }
  affine.for %i = 0 to 8 {
    %v = affine.load %b[%i] : memref<8xf32>
    affine.store %v, %c[%i] : memref<8xf32>
  }
  return
}
"""


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


FIRST = _line_of(NAMES_AND_COMMENTS, "affine.for %i")
SECOND = _line_of(NAMES_AND_COMMENTS, "affine.for %j")


def _file(tmp_path, text: str, name: str = "in.mlir"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def test_all_prints_the_fused_file(tmp_path, capsysbinary):
    path = _file(tmp_path, NAMES_AND_COMMENTS)
    assert main(["fuse", str(path), "--all"]) == 0
    captured = capsysbinary.readouterr()
    assert b"affine.for %j = 0 to 16 {\n    // Scale the input." in captured.out
    expected = f"fused the nest on line {FIRST} into the nest on line {SECOND}"
    assert expected.encode() in captured.err
    assert path.read_bytes() == NAMES_AND_COMMENTS.encode()


def test_line_and_depth(tmp_path, capsysbinary):
    path = _file(tmp_path, NAMES_AND_COMMENTS)
    out = tmp_path / "out.mlir"
    assert main(["fuse", str(path), "--line", str(FIRST), "--depth", "1", "-o", str(out)]) == 0
    assert b"%t = memref.alloc() : memref<1xf32>" in out.read_bytes()
    assert b"(depth 1, +0% compute)" in capsysbinary.readouterr().err


def test_a_refused_fusion_exits_3_with_the_reason_and_no_output(tmp_path, capsysbinary):
    path = _file(tmp_path, REVERSED_WAR)
    line = _line_of(REVERSED_WAR, "affine.for")
    assert main(["fuse", str(path), "--line", str(line)]) == 3
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    assert b"iteration i of the second nest writes %a[-i + 8]" in captured.err


def test_a_fusion_that_needs_a_shift_says_so(tmp_path, capsysbinary):
    path = _file(tmp_path, WAR)
    assert main(["fuse", str(path), "--line", str(_line_of(WAR, "affine.for"))]) == 0
    captured = capsysbinary.readouterr()
    assert b"affine.store %v_1, %a[%i] : memref<10xf32>" in captured.out
    assert b"(depth 1, second nest shifted by 1, +0% compute)" in captured.err


def test_errors_in_the_input_exit_one_and_in_place_leaves_the_file(tmp_path, capsysbinary):
    path = _file(tmp_path, BROKEN)
    assert main(["fuse", str(path), "--all", "--in-place"]) == 1
    assert path.read_bytes() == BROKEN.encode()
    assert b"error:" in capsysbinary.readouterr().err


def test_in_place_rewrites_atomically(tmp_path):
    path = _file(tmp_path, NAMES_AND_COMMENTS)
    os.chmod(path, 0o640)
    assert main(["fuse", str(path), "--all", "--in-place"]) == 0
    assert b"memref<1xf32>" in path.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.mlir"]
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_usage_errors(tmp_path, capsys):
    path = _file(tmp_path, NAMES_AND_COMMENTS)
    assert main(["fuse", str(path), "--all", "--depth", "2"]) == 2
    assert main(["fuse", str(tmp_path / "missing.mlir"), "--all"]) == 2
    assert main(["fuse", str(path), "--line", "2"]) == 2  # no loop on that line
    assert main(["fuse", str(path), "--line", str(FIRST), "--depth", "0"]) == 2
    try:
        main(["fuse", str(path), "--all", "-o", "x", "--in-place"])
    except SystemExit as exit_:
        assert exit_.code == 2


def test_impossible_requests_exit_two_with_the_reason(tmp_path, capsysbinary):
    path = _file(tmp_path, NAMES_AND_COMMENTS)
    assert main(["fuse", str(path), "--line", str(FIRST), "--depth", "3"]) == 2
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    assert (
        f"the nests on lines {FIRST} and {SECOND} have no depth 3 to fuse at (only depth 1)"
    ).encode() in captured.err
    assert main(["fuse", str(path), "--line", str(SECOND)]) == 2
    assert b"no loop nest follows the one on line" in capsysbinary.readouterr().err
    assert main(["fuse", str(path), "--all", "--func", "nope"]) == 2
    assert b"has no function @nope" in capsysbinary.readouterr().err
    assert main(["fuse", str(path), "--line", str(FIRST), "--func", "@nope"]) == 2


def test_func_selects_a_function(tmp_path, capsysbinary):
    path = _file(tmp_path, NAMES_AND_COMMENTS + REVERSED_WAR)
    assert main(["fuse", str(path), "--all", "--func", "war"]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out == (NAMES_AND_COMMENTS + REVERSED_WAR).encode()
    assert b"nothing could be fused" in captured.err
    path = _file(tmp_path, NAMES_AND_COMMENTS + CHAIN)
    assert main(["fuse", str(path), "--all", "--func", "chain"]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out.startswith(NAMES_AND_COMMENTS.encode())
    assert captured.out != (NAMES_AND_COMMENTS + CHAIN).encode()


def test_all_reports_removed_nests_and_permuted_loops(tmp_path, capsysbinary):
    from tests.fusion.test_fixtures import case

    path = _file(tmp_path, case("dead_producer") + case("producer_into_in_place_nest"))
    assert main(["fuse", str(path), "--all"]) == 0
    err = capsysbinary.readouterr().err
    assert (
        b"@dead_producer: removed the nest on line 10: nothing reads what it writes "
        b"before it is overwritten"
    ) in err
    assert b"depth 1, +0% compute, its loops reordered to %i, %k first)" in err
