"""The PolyBench harness run at the suite's tiny sizes: every kernel's lowered MLIR
computes what its C reference computes (checksums over every array, bit for bit), and the
recipes of a few kernels, chained through the CLI, keep the result. Correctness only: no
time is measured. Needs mlir-opt, mlir-translate and clang-22 (skipped without them);
builds are cached by content in the system's temporary folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from affine_lsp.testing import polybench, polybench_build
from affine_lsp.testing.polybench_build import Builder, Tools
from affine_lsp.testing.polybench_driver import signature

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]
RECIPE_KERNELS = ("gemm", "atax", "covariance", "trmm", "seidel-2d", "jacobi-2d")
"""Linear algebra, a time-tiled stencil, and a stencil whose recipe starts with a refusal
(a fusion that needs a shift)."""


@pytest.fixture(scope="module")
def tools() -> Tools:
    found = polybench_build.find_tools()
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.fixture(scope="module")
def builder(tools: Tools) -> Builder:
    return Builder(tools)


def _checksums(builder: Builder, kernel: polybench.Kernel, variant: str) -> dict[str, str]:
    build = builder.build(kernel, variant, dict(kernel.tiny))
    assert build.status == "ok" and build.exe is not None, build.message
    return polybench_build.run(build.exe, builder.tools).checksums


@pytest.mark.parametrize("kernel", polybench.kernels(), ids=lambda k: k.name)
def test_kernel_computes_what_its_c_reference_computes(builder, kernel):
    original = _checksums(builder, kernel, "original")
    assert original == _checksums(builder, kernel, "c-reference")
    arguments = signature(kernel.text(kernel.tiny), kernel.function)
    assert set(original) == {a.name for a in arguments if a.shape}


@pytest.mark.parametrize("name", RECIPE_KERNELS)
def test_recipe_keeps_the_result(builder, name):
    (kernel,) = polybench.kernels(names=[name])
    build = builder.build(kernel, "recipe", dict(kernel.tiny))
    assert build.status == "ok", build.message
    assert [o.step for o in build.outcomes] == [str(s) for s in kernel.recipe]
    assert all(o.status != "failed" for o in build.outcomes), build.outcomes
    if name != "jacobi-2d":  # its later steps need the fused sweeps
        assert any(o.status == "applied" for o in build.outcomes), build.outcomes
    assert _checksums(builder, kernel, "recipe") == _checksums(builder, kernel, "original")


def test_benchmark_cli_at_tiny_sizes(tools, tmp_path: Path):
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "polybench.py"),
            "--tiny",
            "--repeat",
            "2",
            "--kernels",
            "atax",
            "--variants",
            "recipe,optimize,c-reference",
            "--json",
            str(out),
            "--keep",
            str(tmp_path / "kept"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WRONG" not in done.stdout and "geomean" in done.stdout
    figures = json.loads(out.read_text())
    row = figures["kernels"]["atax"]["variants"]
    assert row["original"]["status"] == "ok" and len(row["original"]["times"]) == 2
    assert row["recipe"]["checksums"] == row["original"]["checksums"]
    assert row["c-reference"]["checksums"] == row["original"]["checksums"]
    assert row["optimize"]["status"] in ("ok", "unavailable")
    assert (tmp_path / "kept" / "atax" / "recipe.mlir").is_file()
    assert (tmp_path / "kept" / "atax" / "driver.c").is_file()
