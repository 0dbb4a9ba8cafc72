"""The locality model (`transforms/locality.py`) and what `fuse --all` does with it:
it never undoes a loop order a user chose for its strides (PolyBench shapes in
`fixtures/locality.mlir`), stays within its budget of isl operations on a tiled
kernel, and reports the lines of the input file, with why it left pairs apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from affine_lsp.checks import Severity, check_document
from affine_lsp.cli import main
from affine_lsp.ir import AffineForOp
from affine_lsp.poly import budgets
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms import locality
from affine_lsp.transforms.fusion import FusionOptions, fuse_all
from affine_lsp.transforms.fusion.nests import loops_in
from affine_lsp.transforms.fusion.run import LOCALITY_SLACK
from tests.fusion.corpus_check import expected_structures, matches, our_structures
from tests.fusion.helpers import function_named, model_of, pair

FIXTURES = Path(__file__).parent / "fixtures" / "locality.mlir"
_LABEL = re.compile(r"CHECK-LABEL: func @([\w$.]+)")
KERNELS = ("kernel_gemm", "kernel_2mm", "kernel_covariance")


def cases() -> dict[str, str]:
    found = {}
    for text in re.split(r"(?m)^// -----\n", FIXTURES.read_text()):
        label = _LABEL.search(text)
        assert label is not None, text[:200]
        found[label.group(1)] = text
    return found


def _verifies(text: bytes) -> bool:
    return not [d for d in check_document(SourceDocument(text)) if d.severity == Severity.ERROR]


def _nests(name: str):
    text = cases()[name]
    model = model_of(text)
    function = function_named(model, f"@{name}")
    assert function.body is not None and function.body.entry is not None
    return model, loops_in(function.body.entry)


def _band(nest: AffineForOp) -> list[AffineForOp]:
    band = [nest]
    while True:
        body = band[-1].body
        inner = [op for op in body.operations() if op.name != "affine.yield"] if body else []
        if len(inner) != 1 or not isinstance(inner[0], AffineForOp):
            return band
        band.append(inner[0])


def test_strides_reuse_and_lines_of_a_product():
    model, nests = _nests("kernel_2mm")
    product = nests[1]  # tmp[i][j] += alpha * A[i][k] * B[k][j], loops (i, k, j)
    found = locality.cost(product, model)
    assert found is not None
    by_memref = {a.memref: a for a in found.accesses}
    assert by_memref["%A"].strides == {"%i": 70, "%k": 1, "%j": 0}
    assert by_memref["%B"].strides == {"%i": 0, "%k": 50, "%j": 1}
    assert by_memref["%tmp"].strides == {"%i": 50, "%k": 0, "%j": 1}
    assert found.stride1_fraction == 1.0
    # %A[i][k] stays put along %j: reused after one %j iteration's 3 elements (24 bytes).
    assert by_memref["%A"].reuse_loop == "%j" and by_memref["%A"].reuse_distance == 24
    assert by_memref["%B"].reuse_loop == "%i"
    assert [(loop.iv, loop.trip) for loop in found.loops] == [
        ("%i", 40),
        ("%k", 70),
        ("%j", 50),
    ]
    assert found.loop("%k") is not None and found.loop("%k").working_set == 808  # type: ignore[union-attr]
    # %j, %k innermost instead: %B[k][j] moves a row per iteration.
    i, k, j = _band(product)
    swapped = locality.cost(product, model, order=[i, j, k])
    assert swapped is not None
    assert swapped.lines > 4 * found.lines
    assert swapped.stride1_fraction == 0.75
    assert "stride-1" in found.describe()


def test_an_access_that_never_moves_costs_one_line():
    text = """func.func @f(%a: memref<16xf32>, %s: memref<1xf32>) {
  affine.for %i = 0 to 16 {
    %v = affine.load %a[%i] : memref<16xf32>
    %t = affine.load %s[0] : memref<1xf32>
    %u = arith.addf %v, %t : f32
    affine.store %u, %s[0] : memref<1xf32>
  }
  return
}
"""
    model = model_of(text)
    function = function_named(model, "@f")
    assert function.body is not None and function.body.entry is not None
    found = locality.cost(loops_in(function.body.entry)[0], model)
    assert found is not None
    assert found.lines == 16 * 4 / 64 + 1  # %a by lines of 16 floats, %s[0] once


@pytest.mark.parametrize("name", KERNELS)
def test_fuse_all_keeps_the_users_interchange(name: str):
    text = cases()[name]
    result = fuse_all(text.encode())
    assert not [
        d for d in check_document(SourceDocument(result.text)) if d.severity == Severity.ERROR
    ]
    assert result.fusions and not any(f.permuted for f in result.fusions)
    expected = expected_structures(text, "CHECK")[name]
    ours = our_structures(result.text.decode())[name]
    assert matches(expected, ours), f"expected {expected}\nours {ours}"
    kept = [p for p in result.left_alone if p.reordering]
    assert kept and all("which would load" in (p.reordering or "") for p in kept)
    assert not result.spent


def test_without_the_veto_the_interchange_would_be_undone(monkeypatch):
    # What MLIR's order would give: the update's loops reordered to %j, %k first.
    from affine_lsp.transforms.fusion import run

    monkeypatch.setattr(run.GreedyRun, "_order_veto", lambda self, host: None)
    result = fuse_all(cases()["kernel_gemm"].encode())
    assert any(f.permuted == ("%j", "%k") for f in result.fusions)


def test_the_veto_needs_more_than_rounding():
    assert 0 < LOCALITY_SLACK < 1


def test_a_tiled_covariance_stays_within_the_budget():
    text = cases()["kernel_covariance_tiled"]
    result = fuse_all(text.encode())
    assert not [
        d for d in check_document(SourceDocument(result.text)) if d.severity == Severity.ERROR
    ]
    assert result.fusions and not any(f.permuted for f in result.fusions)
    # A pair's session stops at the budget left; the probes that count add a little.
    assert result.operations <= budgets.FUSE_ALL_OPERATIONS * 1.05
    smaller = fuse_all(text.encode(), max_operations=2_000_000)
    assert smaller.spent and smaller.operations <= 2_000_000 * 1.25


def _pairs() -> list[tuple[str, str, int]]:
    """(text, function, index) of every pair of consecutive top-level nests of the
    fixtures of fuse --all and of this file's kernels."""
    from tests.fusion.test_fixtures import cases as fuse_all_cases

    texts = [(c.text, c.name) for c in fuse_all_cases()]
    texts += [(cases()[name], name) for name in KERNELS]
    found = []
    for text, name in texts:
        model = model_of(text)
        function = function_named(model, f"@{name}")
        assert function.body is not None and function.body.entry is not None
        count = len(loops_in(function.body.entry))
        found += [(text, name, k) for k in range(count - 1)]
    return found


def test_the_quick_refutation_never_changes_a_verdict():
    # Refuting first (as fuse --all does) decides every depth as the exact comparison
    # alone does: a refuted rewrite is one the comparison refuses too.
    compared = 0
    for text, name, index in _pairs():
        exact = pair(text, f"@{name}", index)
        quick = pair(text, f"@{name}", index, options=FusionOptions(refute=True))
        for depth in exact.depths():
            one, other = exact.candidate(depth), quick.candidate(depth)
            assert (one.legal, one.timed_out) == (other.legal, other.timed_out), (name, depth)
            compared += 1
    assert compared >= 20


def test_reports_name_lines_of_the_input(tmp_path, capsysbinary):
    text = cases()["kernel_2mm"]
    path = tmp_path / "2mm.mlir"
    path.write_text(text)
    lines = text.splitlines()
    assert main(["fuse", str(path), "--all"]) == 0
    err = capsysbinary.readouterr().err.decode()
    fused = re.findall(r"fused the nest on line (\d+) into the nest on line (\d+)", err)
    assert fused
    for first, second in fused:
        assert lines[int(first) - 1].lstrip().startswith("affine.for")
        assert lines[int(second) - 1].lstrip().startswith("affine.for")
    apart = re.findall(r"left the nests on lines (\d+) and (\d+) apart: (.*)", err)
    assert apart
    for first, second, why in apart:
        assert lines[int(first) - 1].lstrip().startswith("affine.for")
        assert lines[int(second) - 1].lstrip().startswith("affine.for")
        assert why
    assert main(["fuse", str(path), "--all", "-v"]) == 0
    verbose = capsysbinary.readouterr().err.decode()
    assert re.search(r"apart \(producer-consumer\): depth 1: ", verbose)


TILED = """func.func @tiled(%A: memref<64x64xf64>, %B: memref<64x64xf64>) {
  affine.for %ii = 0 to 64 step 16 {
    affine.for %j = 0 to 64 step 2 {
      affine.for %i = affine_map<(d0) -> (d0)>(%ii) to affine_map<(d0) -> (d0 + 16)>(%ii) {
        %a = affine.load %A[%i, %j] : memref<64x64xf64>
        affine.store %a, %B[%j, %i] : memref<64x64xf64>
      }
    }
  }
  return
}
"""


def test_a_loop_with_a_step_runs_its_extent_over_the_step():
    """A tile loop over 0..64 step 16 runs 4 times, not 61; a loop of step 2 moves
    an access twice its coefficient per iteration."""
    model = model_of(TILED)
    function = function_named(model, "@tiled")
    assert function.body is not None and function.body.entry is not None
    nest = loops_in(function.body.entry)[0]
    found = locality.cost(nest, model)
    assert found is not None
    assert [(loop.iv, loop.trip) for loop in found.loops] == [
        ("%ii", 4.0),
        ("%j", 32.0),
        ("%i", 16.0),
    ]
    load = next(a for a in found.accesses if a.memref == "%A")
    assert load.strides == {"%ii": 0, "%j": 2, "%i": 64}
    # 4 x 32 x 16 iterations, two accesses each: at most a line per access.
    assert found.lines <= 2 * 4 * 32 * 16


TILED_GEMM = """func.func @gemm(%beta: f64, %C: memref<64x64xf64>, %A: memref<64x64xf64>,
                %B: memref<64x64xf64>) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 64 {
      %c = affine.load %C[%i, %j] : memref<64x64xf64>
      %scaled = arith.mulf %c, %beta : f64
      affine.store %scaled, %C[%i, %j] : memref<64x64xf64>
    }
  }
  affine.for %i_tile = 0 to 64 step 16 {
    affine.for %k_tile = 0 to 64 step 16 {
      affine.for %j_tile = 0 to 64 step 32 {
        affine.for %i = %i_tile to affine_map<(d0) -> (d0 + 16)>(%i_tile) {
          affine.for %k = %k_tile to affine_map<(d0) -> (d0 + 16)>(%k_tile) {
            affine.for %j = %j_tile to affine_map<(d0) -> (d0 + 32)>(%j_tile) {
              %a = affine.load %A[%i, %k] : memref<64x64xf64>
              %b = affine.load %B[%k, %j] : memref<64x64xf64>
              %product = arith.mulf %a, %b : f64
              %c = affine.load %C[%i, %j] : memref<64x64xf64>
              %sum = arith.addf %c, %product : f64
              affine.store %sum, %C[%i, %j] : memref<64x64xf64>
            }
          }
        }
      }
    }
  }
  return
}
"""


def test_fuse_all_keeps_the_unit_stride_innermost_loop_of_a_tiled_gemm():
    """Counted with the tile loops' steps, a fusion that makes `%k` the innermost loop
    (B read down a column) loads more lines, and is not made."""
    result = fuse_all(TILED_GEMM.encode())
    text = result.text.decode()
    assert _verifies(result.text)
    innermost = text.rindex("affine.for ", 0, text.index("%B["))
    assert text[innermost:].startswith("affine.for %j"), text


TILED_GEMM = """#lo = affine_map<(d0) -> (d0)>
#hi = affine_map<(d0) -> (d0 + 16)>
func.func @gemm(%C: memref<64x64xf64>, %A: memref<64x64xf64>, %B: memref<64x64xf64>,
                %alpha: f64, %beta: f64) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 64 {
      %c = affine.load %C[%i, %j] : memref<64x64xf64>
      %s = arith.mulf %c, %beta : f64
      affine.store %s, %C[%i, %j] : memref<64x64xf64>
    }
  }
  affine.for %i_tile = 0 to 64 step 16 {
    affine.for %k_tile = 0 to 64 step 16 {
      affine.for %j_tile = 0 to 64 step 16 {
        affine.for %i = #lo(%i_tile) to #hi(%i_tile) {
          affine.for %k = #lo(%k_tile) to #hi(%k_tile) {
            affine.for %j = #lo(%j_tile) to #hi(%j_tile) {
              %a = affine.load %A[%i, %k] : memref<64x64xf64>
              %b = affine.load %B[%k, %j] : memref<64x64xf64>
              %p = arith.mulf %a, %b : f64
              %q = arith.mulf %p, %alpha : f64
              %c = affine.load %C[%i, %j] : memref<64x64xf64>
              %r = arith.addf %c, %q : f64
              affine.store %r, %C[%i, %j] : memref<64x64xf64>
            }
          }
        }
      }
    }
  }
  return
}
"""


def test_a_pair_fused_no_deeper_is_not_reported_left_apart(tmp_path, capsysbinary):
    # The scaling of C fuses into the tiled product at depth 1; a deeper fusion of the
    # same pair needs the tile loops reordered. The report says the pair was fused, at
    # depth 1 only, and why not deeper: never both "fused" and "left apart".
    path = tmp_path / "gemm.mlir"
    path.write_text(TILED_GEMM)
    assert main(["fuse", str(path), "--all"]) == 0
    err = capsysbinary.readouterr().err.decode()
    fused = {
        tuple(sorted((int(a), int(b))))
        for a, b in re.findall(r"fused the nest on line (\d+) into the nest on line (\d+)", err)
    }
    apart = {
        (int(a), int(b)) for a, b in re.findall(r"left the nests on lines (\d+) and (\d+)", err)
    }
    assert fused and not fused & apart, err
    no_deeper = re.findall(r"fused the nests on lines (\d+) and (\d+) at depth (\d+) only", err)
    assert no_deeper, err
    for first, second, _ in no_deeper:
        assert (int(first), int(second)) in fused
