"""`affine-lsp optimize`: output, steps on stderr, exit codes, --tune without tools."""

from __future__ import annotations

import pytest

from affine_lsp.cli import main
from affine_lsp.transforms.optimize import TuneError
from tests.optimize.kernels import GEMM, JACOBI_2D, MVT

SMALL = ["--cache", "2K,16K,256K", "--vector-bits", "256"]


def _file(tmp_path, text: str, name: str = "in.mlir"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def test_a_nest_prints_the_whole_file_and_its_steps(tmp_path, capsysbinary):
    path = _file(tmp_path, GEMM)
    assert main(["optimize", str(path), "--line", "3", *SMALL]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out.startswith(b"// gemm in the shape")
    assert b"affine.parallel (%i_tile)" in captured.out
    assert b"affine-lsp optimize: line 3 (%i): distributed %i into 2 nests, " in captured.err
    assert b" parallel; model: " in captured.err and b"x fewer cycles\n" in captured.err
    assert path.read_bytes() == GEMM.encode()


def test_func_and_all_optimize_every_nest_and_write_in_place(tmp_path, capsysbinary):
    path = _file(tmp_path, MVT)
    assert main(["optimize", str(path), "--func", "mvt", *SMALL, "--in-place"]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    assert b"line 3 (%i):" in captured.err and b"line 13 (%i): permuted" in captured.err
    assert path.read_bytes() != MVT.encode()
    out = tmp_path / "out.mlir"
    other = _file(tmp_path, MVT, "b.mlir")
    assert main(["optimize", str(other), "--all", *SMALL, "-o", str(out)]) == 0
    assert out.read_bytes() == path.read_bytes()


def test_nothing_to_gain_exits_3_and_says_why(tmp_path, capsysbinary):
    path = _file(tmp_path, JACOBI_2D)
    assert main(["optimize", str(path), "--line", "4", "-v", *SMALL]) == 3
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    assert b"%t is kept whole: its pieces would not share what they read" in captured.err
    assert b"schedule: band at depth 0: S0: (t, 2t + i, 2t + j)" in captured.err
    assert b"nothing changed" in captured.err


def test_a_whole_file_with_nothing_to_change_is_done_and_printed_as_it_is(tmp_path, capsysbinary):
    path = _file(tmp_path, JACOBI_2D)
    assert main(["optimize", str(path), "--all", *SMALL]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out == JACOBI_2D.encode()
    assert captured.err.endswith(b"affine-lsp optimize: nothing changed\n")
    loopless = _file(tmp_path, "func.func @f() {\n  return\n}\n", "none.mlir")
    assert main(["optimize", str(loopless), "--all"]) == 0
    assert b"no loop nest to optimize" in capsysbinary.readouterr().err


def test_usage_and_input_errors(tmp_path, capsys):
    broken = _file(tmp_path, "func.func @f() {\n  affine.for %i = 0 to 4 {\n  }\n  return %x\n}\n")
    assert main(["optimize", str(broken), "--all"]) == 1
    good = _file(tmp_path, GEMM, "good.mlir")
    assert main(["optimize", str(good), "--line", "1"]) == 2
    assert main(["optimize", str(good), "--func", "nothere"]) == 2
    with pytest.raises(SystemExit):
        main(["optimize", str(good), "--line", "3", "--cache", "48K,lots"])
    assert "not a cache size: 'lots'" in capsys.readouterr().err


def test_tune_without_its_tools_says_why_and_uses_the_model(tmp_path, capsysbinary, monkeypatch):
    from affine_lsp.transforms.optimize import tuning

    def missing(*_args, **_kwargs):
        raise TuneError("clang-22 is not installed (apt-get install mlir-22-tools clang-22)")

    monkeypatch.setattr(tuning, "measure", missing)
    path = _file(tmp_path, GEMM)
    assert main(["optimize", str(path), "--line", "3", "--tune", *SMALL]) == 0
    captured = capsysbinary.readouterr()
    assert b"not tuned (clang-22 is not installed" in captured.err
    assert b"the cost model decides" in captured.err
    assert b"distributed %i into 2 nests" in captured.err


def test_tune_times_a_register_tile_wherever_one_fits():
    from affine_lsp.transforms.optimize import Options
    from affine_lsp.transforms.optimize.tuning import candidate_options

    found = candidate_options(Options())
    assert found[0][0] == Options() and found[0][1] == "the model's schedule"
    assert [words for options, words in found if options.register_tile] == [
        "the model's schedule (a register tile wherever one fits)"
    ]
