"""`affine-lsp draw`: SVG on stdout or in a file, symbols, exit codes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from affine_lsp.cli import main
from affine_lsp.poly import budgets
from affine_lsp.poly.budgets import Budget
from tests.draw.helpers import NESTS, NO_IVS, nests_text
from tests.draw.svg import read_svg

TEXT = nests_text()


def _line(function: str) -> int:
    """The line of the first loop of `@function`."""
    start = TEXT.index(f"func.func @{function}(")
    return TEXT[: TEXT.index("affine.", start)].count("\n") + 1


def _draw(capsysbinary, *arguments: str) -> tuple[int, bytes, str]:
    status = main(["draw", *arguments])
    captured = capsysbinary.readouterr()
    return status, captured.out, captured.err.decode()


def test_draws_to_stdout(capsysbinary):
    status, out, err = _draw(capsysbinary, str(NESTS), "--line", str(_line("stencil")))
    assert status == 0, err
    picture = read_svg(out)
    assert len(picture.circles) == 81 and len(picture.arrows) == 144
    assert f"affine.for %i = 1 to 10 (line {_line('stencil')})" in picture.texts


def test_inner_loop_line_draws_the_nest_from_there(capsysbinary):
    line = _line("stencil") + 1
    status, out, _ = _draw(capsysbinary, str(NESTS), "--line", str(line))
    assert status == 0
    assert len(read_svg(out).circles) == 81


def test_params_and_output_file(tmp_path, capsysbinary):
    out = tmp_path / "triangle.svg"
    status, stdout, err = _draw(
        capsysbinary,
        str(NESTS),
        "--line",
        str(_line("triangle")),
        "--param",
        "n=10",
        "-o",
        str(out),
    )
    assert status == 0, err
    assert stdout == b""
    picture = read_svg(out.read_bytes())
    assert len(picture.circles) == 55 and len(picture.arrows) == 45
    assert "symbols: %n = 10" in picture.text()


def test_missing_symbol_gets_a_default_and_a_note(capsysbinary):
    status, out, err = _draw(capsysbinary, str(NESTS), "--line", str(_line("triangle")))
    assert status == 0
    assert "note: %n has no value; drawn with n = 8 (give --param n=VALUE)" in err
    picture = read_svg(out)
    assert len(picture.circles) == 36
    assert "%n = 8 (give --param n=VALUE)" in picture.text()


def test_unknown_symbol_is_a_warning(capsysbinary):
    status, _, err = _draw(
        capsysbinary, str(NESTS), "--line", str(_line("stencil")), "--param", "m=3"
    )
    assert status == 0
    assert "warning: --param m: the nest has no symbol %m" in err


def test_line_without_a_loop_exits_2(capsysbinary):
    for line in (1, _line("stencil") + 2, 10_000):
        status, out, err = _draw(capsysbinary, str(NESTS), "--line", str(line))
        assert status == 2 and out == b""
        assert f"line {line} heads no affine.for or affine.parallel loop" in err


def test_loop_without_induction_variables_exits_3(tmp_path, capsysbinary):
    path = tmp_path / "no_ivs.mlir"
    path.write_text(NO_IVS, encoding="utf-8")
    status, out, err = _draw(capsysbinary, str(path), "--line", "2")
    assert status == 3 and out == b""
    assert "line 2: the loop has no induction variables: its body runs once" in err


def test_function_filter(capsysbinary):
    line = str(_line("stencil"))
    assert _draw(capsysbinary, str(NESTS), "--line", line, "--func", "stencil")[0] == 0
    status, _, err = _draw(capsysbinary, str(NESTS), "--line", line, "--func", "@triangle")
    assert status == 2 and "not in @triangle" in err


def test_over_budget_exits_3(monkeypatch, capsysbinary):
    monkeypatch.setattr(budgets, "DRAW", Budget(max_operations=20_000, time_limit=None))
    status, out, err = _draw(
        capsysbinary, str(NESTS), "--line", str(_line("triangle")), "--param", "n=1000000000"
    )
    assert status == 3 and out == b""
    assert "too complex to analyse within its isl operation budget" in err


def test_input_errors_exit_1(tmp_path, capsysbinary):
    broken = tmp_path / "broken.mlir"
    broken.write_text(
        "func.func @f(%A: memref<4xf32>) {\n"
        "  affine.for %i = 0 to 4 {\n"
        "    %v = affine.load %A[%undefined] : memref<4xf32>\n"
        "  }\n"
        "  return\n"
        "}\n"
    )
    status, out, err = _draw(capsysbinary, str(broken), "--line", "2")
    assert status == 1 and out == b""
    assert f"{broken}:3:" in err and "nothing was drawn" in err
    status, out, err = _draw(capsysbinary, str(tmp_path / "missing.mlir"), "--line", "2")
    assert status == 2 and "cannot read" in err


def test_unwritable_output_exits_2(tmp_path, capsysbinary):
    target = tmp_path / "no" / "such" / "dir.svg"
    status, _, err = _draw(
        capsysbinary, str(NESTS), "--line", str(_line("stencil")), "-o", str(target)
    )
    assert status == 2 and "cannot write" in err
    assert not target.exists()


@pytest.mark.parametrize("arguments", [["--param", "n"], ["--param", "n=x"], ["--line", "0"]])
def test_usage_errors_exit_2(arguments, capsysbinary):
    with pytest.raises(SystemExit) as exit_info:
        main(["draw", str(NESTS), "--line", "7", *arguments])
    assert exit_info.value.code == 2


def test_chunks_are_drawn_on_their_own(tmp_path, capsysbinary):
    path = tmp_path / "split.mlir"
    first = "func.func @f(%A: memref<4xf32>) {\n  return\n}\n"
    second = (
        "func.func @f(%A: memref<8xf32>) {\n"
        "  affine.for %i = 0 to 5 {\n"
        "    %v = affine.load %A[%i] : memref<8xf32>\n"
        "  }\n"
        "  return\n"
        "}\n"
    )
    path.write_text(first + "// -----\n" + second)
    status, out, err = _draw(capsysbinary, str(path), "--line", "6")
    assert status == 0, err
    assert len(read_svg(out).circles) == 5
    assert "(line 6)" in read_svg(out).text()


def test_the_installed_command(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "affine_lsp", "draw", str(NESTS), "--line", str(_line("cube"))],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    picture = read_svg(result.stdout)
    assert len(picture.circles) == 120 and len(picture.arrows) == 90


def test_raw_arrows_by_default_and_the_other_kinds_on_request(capsysbinary):
    line = str(_line("reduction"))
    status, out, err = _draw(capsysbinary, str(NESTS), "--line", line)
    assert status == 0
    picture = read_svg(out)
    assert len(picture.arrows) == len(picture.arrows_of("RAW")) == 5
    assert "note: WAR and WAW dependences not drawn" in err
    text = " ".join(picture.text().split())
    assert "WAW (write after write) on %s: (1) ×5 (not drawn: give --dependences WAW)" in text
    status, out, err = _draw(capsysbinary, str(NESTS), "--line", line, "--dependences", "all")
    assert status == 0 and "not drawn" not in err
    picture = read_svg(out)
    assert [len(picture.arrows_of(kind)) for kind in ("RAW", "WAR", "WAW")] == [5, 5, 5]
    status, out, _ = _draw(capsysbinary, str(NESTS), "--line", line, "--dependences", "war,WAW")
    assert [len(read_svg(out).arrows_of(kind)) for kind in ("RAW", "WAR", "WAW")] == [0, 5, 5]
    status, out, _ = _draw(capsysbinary, str(NESTS), "--line", line, "--dependences", "none")
    assert status == 0 and read_svg(out).arrows == []


@pytest.mark.parametrize("kinds", ["RAWW", "", "all,RAW"])
def test_unknown_kinds_of_dependence_are_usage_errors(kinds, capsysbinary):
    with pytest.raises(SystemExit) as exit_info:
        main(["draw", str(NESTS), "--line", str(_line("reduction")), "--dependences", kinds])
    assert exit_info.value.code == 2
    assert "RAW, WAR and WAW" in capsysbinary.readouterr().err.decode()


def test_a_sampled_nest_shows_the_dependences_of_every_panel(tmp_path, capsysbinary):
    from tests.draw.test_sampled_pictures import MATMUL

    path = tmp_path / "matmul.mlir"
    path.write_text(MATMUL)
    status, out, err = _draw(capsysbinary, str(path), "--line", "2")
    assert status == 0 and "4,096 of 262,144 points drawn (sampled)" in err
    picture = read_svg(out)
    panels = [t for t in picture.texts if t.startswith("%i = ")]
    assert len(panels) == 16
    # Every panel has its arrows (one per drawn point below the top row of each column).
    assert len(picture.arrows_of("RAW")) == 16 * 16 * 15
