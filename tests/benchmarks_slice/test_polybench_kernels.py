"""The PolyBench kernels of benchmarks/polybench/ and their recipes, read without running
anything: every template instantiates at both sizes into MLIR our checker accepts, every
recipe parses, and loops are found by their iv names."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest

from affine_lsp.checks import Severity, check_document
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing import polybench
from affine_lsp.testing.polybench import KernelError, Step, instantiate, loop_line, parse_step
from affine_lsp.testing.polybench_build import BuildError, Cache
from affine_lsp.testing.polybench_driver import Argument, SignatureError, driver_source, signature

KERNELS = polybench.kernels()
ISSUE_KERNELS = {
    "gemm", "2mm", "atax", "bicg", "mvt", "covariance",
    "jacobi-1d", "jacobi-2d", "seidel-2d", "fdtd-2d", "heat-3d", "gesummv",
}  # fmt: skip


def test_at_least_seventeen_kernels_with_the_issue_s_twelve():
    names = {k.name for k in KERNELS}
    assert len(names) >= 17
    assert ISSUE_KERNELS <= names, ISSUE_KERNELS - names


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_kernel_instantiates_to_valid_affine_mlir(kernel):
    assert kernel.summary and kernel.c_path.is_file()
    for sizes in (kernel.sizes, kernel.tiny):
        text = kernel.text(sizes)
        assert re.search(r"\{[A-Z]", text) is None, "a placeholder is left"
        errors = [
            d.message for d in check_document(SourceDocument(text)) if d.severity == Severity.ERROR
        ]
        assert not errors, errors
        arguments = signature(text, kernel.function)
        assert any(a.shape for a in arguments)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_every_recipe_step_names_a_command_and_the_first_loop_exists(kernel):
    assert kernel.recipe, "every kernel has a recipe"
    first = kernel.recipe[0]
    if first.loop is not None:
        assert loop_line(kernel.text(kernel.tiny), first.loop) is not None


def test_placeholders_take_offsets_and_unknown_names_are_errors():
    assert instantiate("memref<{N}x{M-1}xf64> to {T+1}", {"N": 8, "M": 5, "T": 3}) == (
        "memref<8x4xf64> to 4"
    )
    assert instantiate("attributes {llvm.emit_c_interface}", {}) == (
        "attributes {llvm.emit_c_interface}"
    )
    with pytest.raises(KernelError, match="size Q has no value"):
        instantiate("{Q}", {"N": 1})


def test_header_fields(tmp_path: Path):
    path = tmp_path / "k.mlir"
    path.write_text(
        "// k: what it computes.\n"
        "//\n"
        "// sizes: N=100 M=20\n"
        "// tiny: N=10 M=2\n"
        "// calls: 3\n"
        "// polly-best: -mllvm -polly-tiling\n"
        "//   tried: -mllvm -polly-tile-sizes=32 (slower)\n"
        "// recipe:\n"
        "//   transform %i#2 --tile 4,4\n"
        "//   fuse --all\n"
        "func.func @kernel_k(%A: memref<{N}x{M}xf64>) {\n  return\n}\n"
    )
    kernel = polybench.load_kernel(path)
    assert kernel.summary == "k: what it computes."
    assert kernel.sizes == {"N": 100, "M": 20} and kernel.tiny == {"N": 10, "M": 2}
    assert kernel.calls == 3
    assert kernel.polly_best == ("-mllvm", "-polly-tiling")
    assert kernel.recipe == (
        Step("transform", "%i#2", ("--tile", "4,4")),
        Step("fuse", None, ("--all",)),
    )
    assert kernel.function == "kernel_k"


def test_a_template_without_a_size_s_value_is_refused(tmp_path: Path):
    path = tmp_path / "k.mlir"
    path.write_text("// sizes: N=4\n// tiny: N=2\nfunc.func @kernel_k(%A: memref<{M}xf64>) {\n}\n")
    with pytest.raises(KernelError, match="gives no value to M"):
        polybench.load_kernel(path)


def test_steps_parse_and_bad_steps_are_refused():
    assert parse_step("transform %k#3 --unroll-jam 4") == Step(
        "transform", "%k#3", ("--unroll-jam", "4")
    )
    assert str(parse_step("fuse --all")) == "fuse --all"
    with pytest.raises(KernelError, match="starts with one of"):
        parse_step("interchange %i")
    with pytest.raises(KernelError, match="not a loop name"):
        parse_step("transform %i#x --tile 4")


LOOPS = """\
func.func @f(%A: memref<8x8xf64>) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 8 {
    }
  }
  affine.for %i = 0 to 8 {
  }
  %r = affine.for %i_tile = 0 to 8 step 4 iter_args(%s = %z) -> (f64) {
  }
  affine.parallel (%p, %q) = (0, 0) to (8, 8) {
  }
  return
}
"""


def test_loops_are_found_by_iv_and_occurrence():
    assert loop_line(LOOPS, "%i") == 2
    assert loop_line(LOOPS, "%i#2") == 6
    assert loop_line(LOOPS, "%i#3") is None
    assert loop_line(LOOPS, "%j") == 3
    assert loop_line(LOOPS, "%i_tile") == 8
    assert loop_line(LOOPS, "%q") == 10
    assert loop_line(LOOPS, "%k") is None


def test_loops_with_several_results_are_found_too():
    text = (
        "  %a, %b = affine.for %j = 0 to 8 iter_args(%x = %z, %y = %z) -> (f64, f64) {\n"
        "  %c:2 = affine.for %j = 0 to 8\n"
    )
    assert loop_line(text, "%j") == 1
    assert loop_line(text, "%j#2") == 2


def test_driver_passes_memrefs_expanded_and_checksums_every_array(tmp_path: Path):
    text = "func.func @kernel_k(%alpha: f64, %A: memref<3x5xf64>, %x: memref<7xf64>) {\n}\n"
    arguments = signature(text, "kernel_k")
    assert arguments == [
        Argument("alpha", None),
        Argument("A", (3, 5)),
        Argument("x", (7,)),
    ]
    source = driver_source("kernel_k", arguments, {"N": 3}, tmp_path / "k.c", calls=2)
    assert "kernel_k(arg0, arg1, arg1, 0, 3, 5, 5, 1, arg2, arg2, 0, 7, 1);" in source
    assert "init(&arg0, (void *)arg1, (void *)arg2);" in source
    assert "reference(arg0, (void *)arg1, (void *)arg2);" in source
    assert 'printf("checksum A %016llx\\n"' in source and "checksum x" in source
    assert "#define N 3" in source and "call < 2" in source
    with pytest.raises(SignatureError, match="neither f64 nor a static f64 memref"):
        signature("func.func @kernel_k(%n: index) {\n}\n", "kernel_k")


NEST = """\
func.func @kernel_k(%A: memref<8xf64>) {
  affine.for %i = 0 to 8 {
    %a = affine.load %A[%i] : memref<8xf64>
    %b = arith.addf %a, %a : f64
    affine.store %b, %A[%i] : memref<8xf64>
  }
  return
}
"""


def test_a_recipe_reports_each_step_and_goes_on_after_a_refusal():
    steps = [
        parse_step("transform %i --unroll-jam 2"),
        parse_step("transform %q --tile 4"),
        parse_step("transform %i --frobnicate"),
        parse_step("transform %i --unroll 2"),
    ]
    result = polybench.run_steps(NEST, steps)
    statuses = [(o.status, o.step) for o in result.outcomes]
    assert statuses == [
        ("refused", "transform %i --unroll-jam 2"),
        ("no-loop", "transform %q --tile 4"),
        ("failed", "transform %i --frobnicate"),
        ("applied", "transform %i --unroll 2"),
    ]
    assert "no loop in %i's body to jam" in result.outcomes[0].message
    assert "step 2" in result.text and result.applied == 1


def test_optimize_is_detected_as_a_subcommand_or_not():
    assert polybench.command_available("transform")
    assert not polybench.command_available("no-such-command")


def test_the_cache_makes_a_file_once_and_keeps_failures_but_not_timeouts_or_stops(tmp_path: Path):
    cache = Cache(tmp_path)
    made: list[Path] = []

    def make(out: Path) -> None:
        made.append(out)
        out.write_text("made")

    key = cache.key("a", b"b")
    assert key != cache.key("ab") and key == cache.key("a", b"b")
    first = cache.file(key, ".txt", make)
    assert cache.file(key, ".txt", make) == first and first.read_text() == "made"
    assert len(made) == 1 and not list(tmp_path.rglob(".*"))

    def fail(out: Path) -> None:
        made.append(out)
        raise BuildError("clang failed (exit 1): bad")

    for _ in range(2):
        with pytest.raises(BuildError, match="bad"):
            cache.file(cache.key("broken"), ".o", fail)
    assert len(made) == 2

    def slow(out: Path) -> None:
        made.append(out)
        raise BuildError("clang timed out after 600 s")

    for _ in range(2):
        with pytest.raises(BuildError, match="timed out"):
            cache.file(cache.key("slow"), ".o", slow)
    assert len(made) == 4

    def killed(out: Path) -> None:  # (a tool stopped from outside: not its input's fault)
        made.append(out)
        raise BuildError("clang was stopped (SIGKILL)")

    for _ in range(2):
        with pytest.raises(BuildError, match="stopped"):
            cache.file(cache.key("killed"), ".o", killed)
    assert len(made) == 6


def test_a_step_stopped_from_outside_says_so_and_is_transient(monkeypatch):
    # A recipe step killed by SIGTERM (a CI runner stopped) said nothing about its input:
    # cached, it failed every later run with that text.
    def stopped(argv, **_):
        return subprocess.CompletedProcess(argv, -signal.SIGTERM, "", "")

    monkeypatch.setattr(subprocess, "run", stopped)  # (the one run_steps calls)
    text = "func.func @f() {\n  affine.for %i = 0 to 4 {\n  }\n  return\n}\n"
    result = polybench.run_steps(text, [polybench.parse_step("transform %i --unroll 2")])
    assert [o.message for o in result.outcomes] == ["stopped by SIGTERM"]
    assert polybench.transient("stopped by SIGTERM")
    assert not polybench.transient("crashed (SIGSEGV)")
