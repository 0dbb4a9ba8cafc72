"""`fuse --all` on hand-written cases (`fixtures/fuse_all.mlir`, in the idiom of MLIR's
loop-fusion tests): each result has the loop structure its CHECK lines describe and
verifies; the cases for the order search, the loop permutation and the placement
between intervening nests fuse less without them; dead nests are removed only when
the proof allows it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from affine_lsp.checks import Severity, check_document
from affine_lsp.ir import AffineForOp, FuncOp
from affine_lsp.poly import budgets
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing.oracle import count_top_level_loops
from affine_lsp.transforms.fusion import SIBLING, FusionOptions, PairFusion, fuse_all
from affine_lsp.transforms.fusion import run as fusion_run
from affine_lsp.transforms.fusion.dead import removal
from affine_lsp.transforms.fusion.engine import STAY
from affine_lsp.transforms.fusion.nests import loops_in
from tests.fusion.corpus_check import expected_structures, matches, our_structures
from tests.fusion.helpers import function_named, model_of
from tests.oracle_tools import mlir_opt_path, run_tool

FIXTURES = Path(__file__).parent / "fixtures" / "fuse_all.mlir"
_LABEL = re.compile(r"CHECK-LABEL: func @([\w$.]+)")


@dataclass(frozen=True)
class Case:
    name: str
    text: str


def cases() -> list[Case]:
    found = []
    for text in re.split(r"(?m)^// -----\n", FIXTURES.read_text()):
        label = _LABEL.search(text)
        assert label is not None, text[:200]
        found.append(Case(label.group(1), text))
    return found


def case(name: str) -> str:
    return next(c.text for c in cases() if c.name == name)


def _verifies(text: bytes) -> bool:
    return not [d for d in check_document(SourceDocument(text)) if d.severity == Severity.ERROR]


@pytest.mark.parametrize("fixture", cases(), ids=lambda c: c.name)
def test_fused_structure_is_the_one_checked(fixture: Case):
    result = fuse_all(fixture.text.encode())
    assert _verifies(result.text)
    expected = expected_structures(fixture.text, "CHECK")[fixture.name]
    ours = our_structures(result.text.decode())[fixture.name]
    assert matches(expected, ours), f"expected {expected}\nours {ours}"


def _loops(op: FuncOp | AffineForOp) -> list[AffineForOp]:
    """The loops directly in the body of a function or a loop."""
    assert op.body is not None and op.body.entry is not None
    return loops_in(op.body.entry)


def _nests(text: bytes, name: str) -> int | None:
    return count_top_level_loops(text.decode(), name)


def test_dead_producer_is_removed_and_reported():
    result = fuse_all(case("dead_producer").encode())
    assert [type(step).__name__ for step in result.steps] == ["Removed", "Fusion"]
    assert result.removed[0].line == 10


def test_producers_whose_results_are_read_are_not_removed():
    for name in ("partly_overwritten_producer", "producer_read_before_overwrite"):
        assert not fuse_all(case(name).encode()).removed, name


def test_a_buffer_carried_to_later_iterations_keeps_its_writer():
    data = case("carried_across_iterations").encode()
    model = model_of(data)
    function = function_named(model, "@carried_across_iterations")
    outer = _loops(function)[0]
    writer = _loops(outer)[0]
    assert removal(data, model, function, writer, budgets.FUSION) is None
    assert not fuse_all(data).removed


def test_the_order_search_finds_the_order_that_leaves_one_nest():
    data = case("fusion_order").encode()
    assert _nests(fuse_all(data, orders=1).text, "fusion_order") == 2
    assert _nests(fuse_all(data).text, "fusion_order") == 1


def test_fusion_into_an_in_place_nest_needs_its_loops_permuted(monkeypatch):
    data = case("producer_into_in_place_nest").encode()
    fused = fuse_all(data)
    assert fused.fusions[0].permuted == ("%i", "%k")
    monkeypatch.setattr(fusion_run.Evaluator, "permuted", lambda self, state, nest: None)
    assert not fuse_all(data).steps


BETWEEN = """func.func @between(%in: memref<16xf32>, %in2: memref<16xf32>, %u: memref<16xf32>,
                    %w: memref<16xf32>, %out: memref<16xf32>) {
  %t = memref.alloc() : memref<16xf32>
  affine.for %i = 0 to 16 {
    %v = affine.load %in[%i] : memref<16xf32>
    affine.store %v, %t[%i] : memref<16xf32>
  }
  affine.for %i = 0 to 16 {
    %v = affine.load %in2[%i] : memref<16xf32>
    affine.store %v, %u[%i] : memref<16xf32>
  }
  affine.for %i = 0 to 16 {
    %v = affine.load %t[%i] : memref<16xf32>
    affine.store %v, %w[%i] : memref<16xf32>
  }
  affine.for %i = 0 to 16 {
    %a = affine.load %t[%i] : memref<16xf32>
    %b = affine.load %u[%i] : memref<16xf32>
    %s = arith.addf %a, %b : f32
    affine.store %s, %out[%i] : memref<16xf32>
  }
  memref.dealloc %t : memref<16xf32>
  return
}
"""


def test_the_fused_nest_can_stand_between_intervening_nests():
    # The first nest cannot move below the third (which reads %t), the last cannot
    # move above the second (which writes %u): the fused nest goes between them.
    data = BETWEEN.encode()
    model = model_of(data)
    function = function_named(model, "@between")
    loops = _loops(function)
    options = FusionOptions(keep_producer=False)
    fusion = PairFusion(data, model, function, loops[0], loops[3], options=options)
    places = fusion.placements()
    assert places[0] is STAY and len(places) == 3
    best = fusion.best()
    assert best is not None and best.new_text is not None and best.extra == 0.0
    text = best.new_text.decode()
    # The second nest (reads %in2), the fused nest (reads %in and %u), the third (writes %w).
    order = [text.index(needle) for needle in ("%in2[", "%in[", "%u[%i]", "%w[")]
    assert order[0] < order[1] < order[3] and order[0] < order[2] < order[3]
    for place in (STAY, places[-1]):
        monkey = PairFusion(data, model, function, loops[0], loops[3], options=options)

        def only_here(place: int | None = place) -> list[int | None]:
            return [place]

        monkey.placements = only_here  # type: ignore[method-assign]
        assert monkey.best() is None


@pytest.mark.oracle
def test_fused_fixtures_verify_with_mlir_opt():
    mlir_opt = mlir_opt_path()
    for fixture in cases():
        fused = fuse_all(fixture.text.encode()).text.decode()
        verdict = run_tool([mlir_opt, "-", "-o", "/dev/null"], check=False, timeout=60, stdin=fused)
        assert verdict.returncode == 0, (fixture.name, verdict.stderr[:2000])


def test_siblings_free_in_an_outer_loop_fuse_with_their_loops_aligned():
    data = case("aligned_siblings").encode()
    model = model_of(data)
    function = function_named(model, "@aligned_siblings")
    first, second = _loops(function)
    best = PairFusion(data, model, function, first, second, SIBLING).best()
    assert best is not None and best.depth == 2 and best.extra == 0.0
    # The slice the shared reads define copies every outer iteration of the first nest.
    fusion = PairFusion(data, model, function, first, second, SIBLING)
    shared = fusion._attempt(2, True, fusion.relations[0])
    assert shared.legal and not shared.within(fusion.options.tolerance)


REPEATED = """func.func @repeated(%a: memref<8xf32>, %b: memref<8x8xf32>, %t: memref<16x8xf32>,
                    %o: memref<8xf32>) {
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 8 {
      %v = affine.load %a[%j] : memref<8xf32>
      affine.store %v, %t[%i, %j] : memref<16x8xf32>
    }
    affine.for %k = affine_map<(d0) -> (d0)>(%i) to min affine_map<(d0) -> (8, d0 + 1)>(%i) {
      affine.for %l = 0 to 8 {
        %v = affine.load %a[%l] : memref<8xf32>
        affine.store %v, %b[%k, %l] : memref<8x8xf32>
      }
      %x = affine.load %a[%k] : memref<8xf32>
      affine.store %x, %o[%k] : memref<8xf32>
    }
  }
  return
}
"""


def test_a_copy_repeated_in_every_inner_iteration_is_not_free():
    # Copying the %k loop (one row of %b and %o[%k], for %i < 8) into the %j loop runs
    # it whole 8 times (the read of %a[%k] ties it to no %j): legal (the same values
    # are stored again) but over the tolerance. The trip
    # count of %k depends on %i, an iv around the window: it ranges over 0..15, and
    # where the bounds cross the loop runs 0 times, not a negative count.
    data = REPEATED.encode()
    model = model_of(data)
    function = function_named(model, "@repeated")
    writer, copied = _loops(_loops(function)[0])
    fusion = PairFusion(data, model, function, copied, writer, SIBLING)
    candidate = fusion.candidate(1)
    assert candidate.legal and not candidate.within(fusion.options.tolerance)
    assert fusion.best() is None
