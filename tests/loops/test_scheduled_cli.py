"""`affine-lsp transform` with skews, time tiles and wavefronts: the steps a refusal
suggests, applied one after the other, and the usage errors of the new options."""

from __future__ import annotations

import pytest

from affine_lsp.cli import main
from tests.loops.stencils import JACOBI_1D, SEIDEL


def _run(tmp_path, capsysbinary, text: str, *arguments: str) -> tuple[int, str, str]:
    path = tmp_path / "in.mlir"
    path.write_bytes(text.encode())
    status = main(["transform", str(path), *arguments])
    captured = capsysbinary.readouterr()
    return status, captured.out.decode(), captured.err.decode()


def test_the_steps_a_refused_time_tile_suggests_make_it_legal(tmp_path, capsysbinary):
    status, out, err = _run(tmp_path, capsysbinary, SEIDEL, "--line", "3", "--tile", "2,4,4")
    assert status == 3 and out == ""
    assert (
        "a legal variant: --skew 1,1 on this line, then --skew 1 on line 4, then "
        "--tile 2,4,4 on this line"
    ) in err
    status, skewed, err = _run(tmp_path, capsysbinary, SEIDEL, "--line", "3", "--skew", "1,1")
    assert status == 0 and "skewed %i by %t, %j by %t" in err
    status, twice, err = _run(tmp_path, capsysbinary, skewed, "--line", "4", "--skew", "1")
    assert status == 0 and "skewed %j_skew by 1" in err
    status, tiled, err = _run(tmp_path, capsysbinary, twice, "--line", "3", "--tile", "2,4,4")
    assert status == 0 and "tiled by 2×4×4" in err
    assert "affine.for %t_tile = 0 to 4 step 2 {" in tiled


def test_a_wavefront_from_the_command_line(tmp_path, capsysbinary):
    status, out, err = _run(tmp_path, capsysbinary, SEIDEL, "--line", "4", "--wavefront")
    assert status == 0 and "the points in wavefront along 2i + j" in err
    assert "affine.parallel (%i) = " in out
    status, out, err = _run(tmp_path, capsysbinary, SEIDEL, "--line", "4", "--wavefront", "3")
    assert status == 0 and "affine.parallel" not in out
    status, out, err = _run(
        tmp_path, capsysbinary, JACOBI_1D, "--line", "5", "--wavefront", "--tile-sizes", "4,8"
    )
    assert status == 3 and "skew %i by 2 first" in err
    assert "--skew 2 on this line, then --wavefront --tile-sizes 4,8 on this line" in err


def test_a_negative_skew_from_the_command_line(tmp_path, capsysbinary):
    # (a skew keeps every dependence forward whatever the sign of its factors)
    status, out, err = _run(tmp_path, capsysbinary, SEIDEL, "--line", "3", "--skew", "1,-1")
    assert status == 0 and "skewed %i by %t, %j by -%t" in err, err
    assert "%i_skew" in out and "%j_skew" in out


@pytest.mark.parametrize(
    "arguments",
    [
        ("--wavefront", "1"),
        ("--skew", "0"),
        ("--skew", "0,0"),
        ("--tile", "2,2", "--tile-sizes", "2,2"),
    ],
)
def test_usage_errors_of_the_new_options_exit_2(tmp_path, capsysbinary, arguments):
    path = tmp_path / "in.mlir"
    path.write_bytes(SEIDEL.encode())
    with pytest.raises(SystemExit) as stopped:
        status = main(["transform", str(path), "--line", "3", *arguments])
        raise SystemExit(status)
    assert stopped.value.code == 2
