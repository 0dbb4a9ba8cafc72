"""`affine-lsp transform`: output, exit codes, -o and --in-place."""

from __future__ import annotations

from affine_lsp.cli import main
from tests.loops.fixtures import MATMUL, STENCIL

BROKEN = """func.func @f(%a: memref<4xf32>) {
  affine.for %i = 0 to 4 {
    %v = affine.load %a[%undefined] : memref<4xf32>
  }
  return
}
"""


def _file(tmp_path, text: str, name: str = "in.mlir"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def test_applied_prints_the_whole_file(tmp_path, capsysbinary):
    path = _file(tmp_path, MATMUL)
    assert main(["transform", str(path), "--line", "3", "--interchange"]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out.startswith(b"// C += A * B\n")
    assert b"  affine.for %j = 0 to 48 {\n    affine.for %i = 0 to %n {" in captured.out
    assert b"reordered the loops to %j, %i" in captured.err
    assert path.read_bytes() == MATMUL.encode()


def test_refused_exits_3_with_the_reason_and_no_output(tmp_path, capsysbinary):
    path = _file(tmp_path, STENCIL)
    assert main(["transform", str(path), "--line", "3", "--tile", "4,4"]) == 3
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    assert b"written by iteration (i - 1, j + 1); after tiling 4\xc3\x974 it would run first" in (
        captured.err
    )
    assert b"--skew 1 on this line, then --tile 4,4" in captured.err
    assert main(["transform", str(path), "--line", "4", "--hoist"]) == 3  # nothing to do


def test_input_errors_exit_1_and_usage_errors_exit_2(tmp_path, capsys):
    broken = _file(tmp_path, BROKEN)
    assert main(["transform", str(broken), "--line", "2", "--unroll", "2"]) == 1
    good = _file(tmp_path, STENCIL, "good.mlir")
    assert main(["transform", str(good), "--line", "1", "--unroll", "2"]) == 2  # no loop there
    assert main(["transform", str(tmp_path / "missing.mlir"), "--line", "3", "--hoist"]) == 2
    for argv in (
        ["--line", "3"],
        ["--line", "3", "--tile", "0"],
        ["--line", "3", "--permute", "0,0"],
        ["--line", "3", "--unroll", "often"],
        ["--line", "3", "--hoist", "--distribute"],
    ):
        try:
            code = main(["transform", str(good), *argv])
        except SystemExit as exit:
            code = exit.code
        assert code == 2, argv
    capsys.readouterr()


def test_output_and_in_place(tmp_path, capsysbinary):
    path = _file(tmp_path, STENCIL)
    out = tmp_path / "out.mlir"
    assert main(["transform", str(path), "--line", "4", "--unroll", "full", "-o", str(out)]) == 0
    assert b"%j_9 = arith.constant 8 : index" in out.read_bytes()
    assert path.read_bytes() == STENCIL.encode()
    assert main(["transform", str(path), "--line", "3", "--skew", "1", "--in-place"]) == 0
    assert b"%j_skew" in path.read_bytes()
    assert capsysbinary.readouterr().out == b""
    # refused in place: the file is untouched
    before = path.read_bytes()
    assert main(["transform", str(path), "--line", "3", "--distribute", "--in-place"]) == 3
    assert path.read_bytes() == before


JACOBI = """func.func @jacobi(%A: memref<10x10xf32>, %B: memref<10x10xf32>) {
  affine.for %t = 0 to 4 {
    affine.for %i = 1 to 9 {
      affine.for %j = 1 to 9 {
        %u = affine.load %A[%i - 1, %j] : memref<10x10xf32>
        %r = affine.load %A[%i, %j + 1] : memref<10x10xf32>
        %s = arith.addf %u, %r : f32
        affine.store %s, %B[%i, %j] : memref<10x10xf32>
      }
    }
    affine.for %i = 1 to 9 {
      affine.for %j = 1 to 9 {
        %v = affine.load %B[%i, %j] : memref<10x10xf32>
        affine.store %v, %A[%i, %j] : memref<10x10xf32>
      }
    }
  }
  return
}
"""


def test_iterations_of_other_loops_are_named_as_in_the_same_nest(tmp_path, capsysbinary):
    """A dependence between two nests under %t is worded as one inside a nest (and as
    fusion words them): the writer's iteration as expressions, one per loop."""
    path = _file(tmp_path, JACOBI)
    assert main(["transform", str(path), "--line", "2", "--parallelize"]) == 3
    err = capsysbinary.readouterr().err.decode()
    assert (
        "iteration (t, i, j) reads %A[i - 1, j], written by iteration (t - 1, i - 1, j): "
        "a dependence carried by %t"
    ) in err
    assert main(["transform", str(path), "--line", "2", "--unroll-jam", "2"]) == 3
    err = capsysbinary.readouterr().err.decode()
    assert "written by iteration (t - 1, i - 1, j); after unroll-and-jam by 2" in err
    assert " = " not in err


def test_interleave_goes_with_unroll_jam(tmp_path, capsys):
    path = _file(tmp_path, MATMUL)
    assert main(["transform", str(path), "--line", "4", "--tile", "2", "--interleave"]) == 2
    assert "--interleave goes with --unroll-jam" in capsys.readouterr().err
    status = main(["transform", str(path), "--line", "4", "--unroll-jam", "2", "--interleave"])
    assert status == 0
    out = capsys.readouterr().out
    assert "%c_1 = affine.load %C[%i, %j_1]" in out
    assert out.index("%c = affine.load") < out.index("%p = arith.mulf")
