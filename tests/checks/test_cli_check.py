"""`affine-lsp check`: output formats, exit status, directories and chunks."""

from __future__ import annotations

import json
import subprocess
import sys

from affine_lsp.cli import main
from tests.corpus_data import CORPUS, TOOLS, require_shared

TWO_CHUNKS = """func.func @f(%n: index) {
  affine.for %i = 0 to 10 {
    %m = arith.addi %n, %i : index
    affine.for %j = 0 to %m {
    }
  }
  return
}
// -----
func.func @g(%n: index) {
  %0 = affine.apply affine_map<(d0)[s0] -> (d0 + s0)>(%n)
  %1 = "x.y"() : () -> i32 // é
  affine.for %i = 0 to 10 step -1 {}
  return
}
"""


def test_text_output_and_exit_status(tmp_path, capsys):
    path = tmp_path / "a.mlir"
    path.write_text(TWO_CHUNKS)
    assert main(["check", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{path}:4:26: error: operand cannot be used as a symbol")
    assert lines[0].endswith("[affine-symbol-invalid]")
    assert lines[1].startswith(f"{path}:11:")  # second chunk: file positions
    assert "[affine-operand-count]" in lines[1]
    assert any(":13:32: error:" in line and "[affine-step-not-positive]" in line for line in lines)


def test_json_output(tmp_path, capsys):
    path = tmp_path / "a.mlir"
    path.write_text(TWO_CHUNKS)
    assert main(["check", "--format", "json", str(path)]) == 1
    records = json.loads(capsys.readouterr().out)
    first = records[0]
    assert first["path"] == str(path)
    assert first["range"]["start"] == {"line": 3, "character": 25}
    assert first["severity"] == "error" and first["code"] == "affine-symbol-invalid"
    assert {r["code"] for r in records} >= {"affine-operand-count", "affine-step-not-positive"}


def test_directories_are_walked_and_clean_files_exit_zero(tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "ok.mlir").write_text("func.func @f() {\n  return\n}\n")
    (tmp_path / "notes.txt").write_text("not mlir")
    assert main(["check", str(tmp_path)]) == 0
    assert capsys.readouterr().out == ""


def test_what_mlir_accepts_is_a_lint_that_no_lints_hides(tmp_path, capsys):
    """A step of 0 and a division by 0 are valid MLIR 22: warnings, not errors."""
    path = tmp_path / "a.mlir"
    path.write_text(
        "func.func @f(%n: index) {\n"
        "  affine.for %i = 0 to 10 step 0 {\n"
        "    %x = affine.apply affine_map<(d0) -> (d0 mod 0)>(%i)\n"
        "  }\n"
        "  return\n"
        "}\n"
    )
    assert main(["check", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[1] for line in lines] == ["warning", "warning"]
    assert lines[0].endswith("[lint-step-not-positive]")
    assert lines[1].endswith("[lint-zero-divisor]")
    assert main(["check", "--no-lints", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_no_split_checks_the_file_as_a_whole(tmp_path, capsys):
    path = tmp_path / "a.mlir"
    path.write_text(
        "func.func @f() {\n  %x = arith.constant 0 : index\n// -----\n"
        "  %x = arith.constant 1 : index\n  return\n}\n"
    )
    assert main(["check", "--no-split", str(path)]) == 1
    assert "redefinition of SSA value '%x'" in capsys.readouterr().out


def test_usage_errors_exit_two(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "affine_lsp", "check", str(tmp_path / "missing.mlir")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "cannot read" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "affine_lsp", "check", "--format", "xml", "x.mlir"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2


def _check_output(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "affine_lsp", "check", *argv],
        capture_output=True,
        timeout=600,
        check=False,
    )


def test_worker_processes_print_what_one_process_prints(tmp_path):
    """Files and chunks checked in worker processes: the same output, in the same order,
    and the same exit status, in both formats."""
    require_shared()
    (tmp_path / "two.mlir").write_text(TWO_CHUNKS)
    paths = [str(CORPUS), str(tmp_path)]
    for output in ("text", "json"):
        alone = _check_output("--format", output, "--jobs", "1", *paths)
        spread = _check_output("--format", output, "--jobs", "3", *paths)
        assert alone.stderr == spread.stderr == b""
        assert alone.returncode == spread.returncode == 1
        assert alone.stdout == spread.stdout
    text = _check_output("--jobs", "2", *paths).stdout.splitlines()
    assert any(b"two.mlir:4:26: error:" in line for line in text)  # first chunk
    assert any(b"two.mlir:11:" in line for line in text)  # second chunk


def test_jobs_must_not_be_negative():
    result = _check_output("--jobs", "-1", "x.mlir")
    assert result.returncode == 2 and b"--jobs" in result.stderr


def test_generated_file_has_no_errors(tmp_path, capsys):
    """A seeded 2000-line slice of the benchmark input: valid code, no errors."""
    require_shared()
    out = tmp_path / "gen.mlir"
    subprocess.run(
        [sys.executable, str(TOOLS / "gen_affine.py"), "2000", "-o", str(out), "--seed", "3"],
        check=True,
        timeout=120,
    )
    assert main(["check", str(out)]) == 0
