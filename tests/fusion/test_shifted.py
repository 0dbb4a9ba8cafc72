"""Fusion with a shift (`transforms/fusion/shift.py`): stencil sweeps that fuse only
with the second nest's iterations moved (or aligned), found by `fuse --line` and
`fuse --all`, written without `affine.if`, proven by the exact dataflow
comparison, and run by mlir-runner to the same bits as the original."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from affine_lsp.checks import Severity, check_document
from affine_lsp.syntax import SourceDocument, decode, encode
from affine_lsp.testing import oracle
from affine_lsp.transforms.fusion import FusionOptions, PairFusion, fuse_all
from affine_lsp.transforms.fusion import shift as shift_module
from affine_lsp.transforms.fusion.nests import loops_in, nest_blocks
from tests.fusion.corpus_check import expected_structures, matches, our_structures
from tests.fusion.helpers import function_named, model_of

FIXTURES = Path(__file__).parent / "fixtures" / "shifted.mlir"
_LABEL = re.compile(r"CHECK-LABEL: func @([\w$.]+)")


def cases() -> dict[str, str]:
    found = {}
    for text in re.split(r"(?m)^// -----\n", FIXTURES.read_text()):
        label = _LABEL.search(text)
        assert label is not None, text[:200]
        found[label.group(1)] = text
    return found


def pair(text: str, name: str) -> PairFusion:
    """The fusion of the first two nests of one block of `@name` (the sweeps inside the
    time loop, or two top-level nests)."""
    data = text.encode()
    model = model_of(data)
    function = function_named(model, name)
    block = next(b for b in nest_blocks(function) if len(loops_in(b)) >= 2)
    first, second = loops_in(block)[:2]
    return PairFusion(data, model, function, first, second)


def _verifies(text: bytes) -> bool:
    return not [d for d in check_document(SourceDocument(text)) if d.severity == Severity.ERROR]


@pytest.mark.parametrize("name", sorted(cases()))
def test_fused_structure_is_the_one_checked(name: str):
    text = cases()[name]
    best = pair(text, f"@{name}").best()
    fused = best.new_text if best is not None and best.new_text is not None else text.encode()
    assert _verifies(fused)
    code = "\n".join(line.split("//")[0] for line in fused.decode().splitlines())
    assert "affine.if" not in code
    expected = expected_structures(text, "CHECK")[name]
    ours = our_structures(fused.decode())[name]
    assert matches(expected, ours), f"expected {expected}\nours {ours}"


def test_fuse_all_reports_the_shift_and_input_lines():
    shifts = {"jacobi_2d": (1,), "ex_then_hz": (0,), "heat_3d": (1, 1)}
    for name, shift in shifts.items():
        text = cases()[name]
        (fusion,) = fuse_all(text.encode()).fusions
        assert fusion.shift == shift, name
        lines = [k + 1 for k, line in enumerate(text.splitlines()) if "affine.for %i =" in line]
        assert (fusion.first_line, fusion.second_line) == tuple(lines[:2]), name
    assert not fuse_all(cases()["reversed"].encode()).fusions


def test_fuse_all_leaves_a_shift_that_would_not_vectorize():
    # Fused, jacobi-1d's one loop carries a dependence from the first sweep to the
    # second (the second reads %B[i - 2 .. i]): LLVM does not vectorize it (0.5x).
    for name in ("jacobi_1d", "jacobi_1d_sym"):
        result = fuse_all(cases()[name].encode())
        assert not result.fusions, name
        (apart,) = result.left_alone
        assert "would not vectorize" in apart.verdict.why()
        maximal = fuse_all(cases()[name].encode(), FusionOptions(tolerance=float("inf")))
        assert [f.shift for f in maximal.fusions] == [(1,)], name


def test_the_fused_loop_runs_the_second_sweep_one_iteration_behind():
    best = pair(cases()["jacobi_1d"], "@jacobi_1d").best()
    assert best is not None and best.new_text is not None
    fused = best.new_text.decode()
    loop = fused[fused.index("affine.for %i = 2 to 99") :]
    loop = loop[: loop.index("\n    }\n")]
    assert "affine.store %r, %B[%i]" in loop
    assert "affine.load %B[%i - 2]" in loop and "affine.store %r_1, %A[%i - 1]" in loop
    # The first sweep's iteration 1 and the second's iteration 98, without a loop.
    before, after = fused.split("affine.for %i = 2 to 99")
    assert "affine.store %r_2, %B[1]" in before
    assert "affine.store %r_3, %A[98]" in after


def test_the_smallest_shift_per_loop():
    jacobi_2d = pair(cases()["jacobi_2d"], "@jacobi_2d")
    assert jacobi_2d.candidate(1).reason is not None  # no fusion without a shift
    shifted_1, shifted_2 = jacobi_2d.shifted(1), jacobi_2d.shifted(2)
    assert shifted_1 is not None and shifted_1.shift == (1,)
    assert shifted_2 is not None and shifted_2.shift == (1, 1)
    assert shifted_2.innermost_together and not shifted_1.innermost_together
    best = jacobi_2d.best()  # each sweep keeps its innermost loop
    assert best is not None and (best.depth, best.shift) == (1, (1,))
    heat = pair(cases()["heat_3d"], "@heat_3d")
    deepest = heat.shifted(3)
    assert deepest is not None and deepest.shift == (1, 1, 1) and deepest.extra == 0.0


def test_no_shift_when_the_nests_would_barely_overlap():
    fusion = pair(cases()["reversed"], "@reversed")
    assert fusion.shifted(1) is None
    assert fusion.best() is None
    assert fusion.candidate(1).reason == (
        "iteration i of the second nest writes %a[-i + 8], which iteration -i + 8 of the "
        "first nest reads"
    )


def test_a_shift_too_small_is_refused_by_the_proof(monkeypatch):
    # The dependences want the second sweep one iteration behind; one iteration ahead,
    # it reads %B before the first sweep writes it: the proof must find that.
    monkeypatch.setattr(shift_module.ShiftPlanner, "amounts", lambda self, depth: (-1,))
    assert pair(cases()["jacobi_1d"], "@jacobi_1d").shifted(1) is None


IV_USE = """func.func @iv_use(%A: memref<64xf64>, %B: memref<64xf64>) {
  affine.for %i = 1 to 63 {
    %a = affine.load %A[%i - 1] : memref<64xf64>
    %c = affine.load %A[%i + 1] : memref<64xf64>
    %s = arith.addf %a, %c : f64
    affine.store %s, %B[%i] : memref<64xf64>
  }
  affine.for %i = 1 to 63 {
    %x = arith.index_cast %i : index to i64
    %f = arith.sitofp %x : i64 to f64
    %a = affine.load %B[%i - 1] : memref<64xf64>
    %c = affine.load %B[%i + 1] : memref<64xf64>
    %s = arith.addf %a, %c : f64
    %m = arith.mulf %s, %f : f64
    affine.store %m, %A[%i] : memref<64xf64>
  }
  return
}
"""


def test_an_iv_used_outside_subscripts_gets_its_shifted_value():
    best = pair(IV_USE, "@iv_use").best()
    assert best is not None and best.shift == (1,) and best.new_text is not None
    text = best.new_text.decode()
    assert "%i_1 = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)" in text
    assert "%x = arith.index_cast %i_1 : index to i64" in text
    # The peeled last iteration of the second nest: its iv is the constant 62.
    assert "%i_2 = arith.constant 62 : index" in text
    assert "affine.store %m_1, %A[62]" in text


# -- run by mlir-runner --------------------------------------------------------------


def _loops(ivs: list[str], shape: tuple[int, ...]) -> list[str]:
    return [f"  affine.for {iv} = 0 to {size} {{" for iv, size in zip(ivs, shape, strict=True)]


def driver(kernel: str, name: str, shapes: Sequence[tuple[int, ...]]) -> str:
    """`kernel` and a @main that fills its memrefs (f64, static shapes), calls it and
    prints every element's bits."""
    lines = ["func.func private @printMemrefI64(memref<*xi64>)", "func.func @main() {"]
    arguments = []
    for n, shape in enumerate(shapes):
        kind = f"memref<{'x'.join(map(str, shape))}xf64>"
        bits = kind.replace("xf64>", "xi64>")
        ivs = [f"%x{n}_{d}" for d in range(len(shape))]
        lines.append(f"  %m{n} = memref.alloc() : {kind}")
        lines += [
            f"  affine.for {iv} = 0 to {size} {{" for iv, size in zip(ivs, shape, strict=True)
        ]
        total = "%z"
        lines.append(f"    %z = arith.constant {n + 1} : i64")
        for d, iv in enumerate(ivs):
            lines.append(f"    %c{d} = arith.index_cast {iv} : index to i64")
            lines.append(f"    %k{d} = arith.constant {3 + 2 * d} : i64")
            lines.append(f"    %p{d} = arith.muli %c{d}, %k{d} : i64")
            lines.append(f"    %t{d} = arith.addi {total}, %p{d} : i64")
            total = f"%t{d}"
        lines.append("    %seventeen = arith.constant 17 : i64")
        lines.append(f"    %q = arith.remsi {total}, %seventeen : i64")
        lines.append("    %f = arith.sitofp %q : i64 to f64")
        lines.append(f"    affine.store %f, %m{n}[{', '.join(ivs)}] : {kind}")
        lines += ["  }"] * len(shape)
        arguments.append((f"%m{n}", kind, bits, shape))
    call = ", ".join(a for a, _, _, _ in arguments)
    types = ", ".join(k for _, k, _, _ in arguments)
    lines.append(f"  call @{name}({call}) : ({types}) -> ()")
    for n, (memref, kind, bits, shape) in enumerate(arguments):
        ivs = [f"%y{n}_{d}" for d in range(len(shape))]
        lines.append(f"  %b{n} = memref.alloc() : {bits}")
        lines += [
            f"  affine.for {iv} = 0 to {size} {{" for iv, size in zip(ivs, shape, strict=True)
        ]
        lines.append(f"    %v = affine.load {memref}[{', '.join(ivs)}] : {kind}")
        lines.append("    %w = arith.bitcast %v : f64 to i64")
        lines.append(f"    affine.store %w, %b{n}[{', '.join(ivs)}] : {bits}")
        lines += ["  }"] * len(shape)
        lines.append(f"  %u{n} = memref.cast %b{n} : {bits} to memref<*xi64>")
        lines.append(f"  call @printMemrefI64(%u{n}) : (memref<*xi64>) -> ()")
    lines += ["  return", "}"]
    return kernel + "\n" + "\n".join(lines) + "\n"


RUNS: dict[str, list[tuple[int, ...]]] = {
    "jacobi_1d": [(100,), (100,)],
    "jacobi_2d": [(40, 40), (40, 40)],
    "ex_then_hz": [(20, 30), (20, 30)],
    "heat_3d": [(12, 12, 12), (12, 12, 12)],
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(RUNS))
def test_shifted_fusion_runs_to_the_same_bits(name: str):
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    text = cases()[name]
    fusion = pair(text, f"@{name}")
    best, deepest = fusion.best(), fusion.shifted(len(RUNS[name][0]))
    assert best is not None and best.new_text is not None and best.shift
    assert deepest is not None and deepest.new_text is not None
    original = driver(text, name, RUNS[name])
    before = oracle.lower_and_run(original, timeout=120)
    assert before.ok, before.describe()
    variants = [best.new_text.decode(), deepest.new_text.decode()]
    variants.append(fuse_all(text.encode()).text.decode())
    for variant in variants:
        verdict = oracle.equivalent(original, driver(variant, name, RUNS[name]), timeout=120)
        assert verdict.outcome == oracle.Outcome.SAME, verdict.detail[:2000]


@pytest.mark.oracle
def test_an_iv_used_outside_subscripts_runs_to_the_same_bits():
    reason = oracle.missing_reason()
    if reason:
        pytest.skip(reason)
    best = pair(IV_USE, "@iv_use").best()
    assert best is not None and best.new_text is not None
    shapes: list[tuple[int, ...]] = [(64,), (64,)]
    verdict = oracle.equivalent(
        driver(IV_USE, "iv_use", shapes),
        driver(best.new_text.decode(), "iv_use", shapes),
        timeout=120,
    )
    assert verdict.outcome == oracle.Outcome.SAME, verdict.detail[:2000]


LONE = "\ud800"


def test_a_lone_surrogate_in_a_shifted_nest_is_kept():
    """Text from a client may hold a lone surrogate (`syntax.encode` keeps it): the
    shifted fusion measures the code it copies in the document's own bytes."""
    text = cases()["jacobi_1d"].replace(
        "      affine.store %r, %A[%i] : memref<100xf64>\n",
        f"      affine.store %r, %A[%i] : memref<100xf64>  // {LONE}\n",
    )
    data = encode(text)
    model = model_of(data)
    function = function_named(model, "@jacobi_1d")
    block = next(b for b in nest_blocks(function) if len(loops_in(b)) >= 2)
    first, second = loops_in(block)[:2]
    best = PairFusion(data, model, function, first, second).best()
    assert best is not None and best.new_text is not None and best.shift == (1,)
    fused = decode(best.new_text)
    assert LONE in fused and "\ufffd" not in fused
    assert _verifies(best.new_text)
