"""Bounded polyhedral work: when isl's operation budget or the time budget runs
out, hovers say the domain is too complex, fusion is not offered (disabled, with
the reason), and the server keeps answering."""

from __future__ import annotations

import islpy as isl

from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.hover import hover, iteration_domain
from affine_lsp.ide.inlay_hints import inlay_hints
from affine_lsp.ir import AffineForOp, build_module
from affine_lsp.poly import Budget
from affine_lsp.poly.budgets import time_limits
from affine_lsp.poly.describe import describe_access, describe_condition, describe_loop
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing.lsp_client import LspClient
from affine_lsp.testing.storm import SERVER
from affine_lsp.transforms.fusion import PRODUCER_CONSUMER, SIBLING, FusionOptions, PairFusion
from affine_lsp.transforms.fusion.actions import TOO_COMPLEX
from affine_lsp.transforms.fusion.nests import functions, loops_in, nest_blocks
from affine_lsp.transforms.loops import loop_actions
from tests.cost import count_calls
from tests.fusion.test_actions import _actions
from tests.fusion.test_engine import seed_program
from tests.loops.fixtures import REDUCE, STENCIL, TRIANGLE
from tests.server.conftest import ENV


def tangled_nest(depth: int) -> str:
    """A nest whose bounds mix every outer iv through `mod` and `floordiv`: each
    level multiplies the existentials isl must eliminate."""
    lines = ["func.func @tangled(%A: memref<100xf32>, %N: index) {", "  affine.for %i0 = 0 to %N {"]
    for k in range(1, depth):
        ivs = ", ".join(f"%i{j}" for j in range(k))
        dims = ", ".join(f"d{j}" for j in range(k))
        expr = " + ".join(
            f"(d{j} * {7 + 3 * j}) mod {11 + 2 * j} + d{j} floordiv {3 + j}" for j in range(k)
        )
        lines.append(
            f"  affine.for %i{k} = affine_map<({dims}) -> ({expr})>({ivs}) to "
            f"affine_map<({dims})[s0] -> ({expr} + s0 mod 13 + 5)>({ivs})[%N] {{"
        )
    lines.append(f"    %v = affine.load %A[%i{depth - 1} mod 100] : memref<100xf32>")
    lines += ["  }"] * depth + ["  return", "}"]
    return "\n".join(lines) + "\n"


TANGLED = tangled_nest(9)
INNERMOST = TANGLED.index("affine.for %i8")


def _analysis(text: str) -> DocumentAnalysis:
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    return analysis


def test_hover_says_the_domain_is_too_complex_and_returns_promptly():
    analysis = _analysis(TANGLED)
    result, calls = count_calls(lambda: hover(analysis, INNERMOST))
    assert calls < 500_000, f"{calls} calls before answering"
    assert result is not None
    assert "Iteration domain unavailable: too complex to analyse" in result.markdown
    domain, message = iteration_domain(analysis, INNERMOST)
    assert domain is None and "too complex to analyse" in message
    # The outer loops of the same nest are simple enough and still described.
    outer = hover(analysis, TANGLED.index("affine.for %i0"))
    assert outer is not None and "**Iteration domain**" in outer.markdown


def test_inlay_hints_leave_out_what_is_too_complex():
    analysis = _analysis(TANGLED)
    hints = inlay_hints(analysis, 0, len(TANGLED.encode()))
    assert all("too complex" not in hint.label for hint in hints)


def test_fusion_over_budget_is_disabled_with_the_reason():
    # The options' own budget is the binding limit: no more time later would help.
    options = FusionOptions(budget=Budget(max_operations=200, time_limit=0.1))
    _, actions = _actions(seed_program(), "affine.for %arg5", options)
    pair = [a for a in actions if a.title.startswith("Fuse with the next loop nest")]
    assert pair and all(a.disabled_reason == TOO_COMPLEX and not a.edits for a in pair)
    fuse_all = [a for a in actions if a.title.startswith("Fuse all")]
    assert fuse_all and fuse_all[0].resolve(5.0) == [] and fuse_all[0].disabled_reason


def test_fusion_undecided_in_planning_is_decided_on_resolve_or_refused():
    # The planning clock ran out first: the action is analysed when chosen, and a
    # budget that runs out there too gives no edit, only the reason.
    # Deterministic with time limits on: the options' 200 operations run out at
    # once, and planning's time limit is tighter than the options' (none).
    options = FusionOptions(budget=Budget(max_operations=200, time_limit=None))
    with time_limits(True):
        _, actions = _actions(seed_program(), "affine.for %arg5", options)
        (pair,) = [a for a in actions if a.title.startswith("Fuse with the next loop nest")]
        assert pair.edits is None and pair.disabled_reason is None
        assert pair.resolve(5.0) == [] and pair.disabled_reason == TOO_COMPLEX


PRODUCTS = """#tile = affine_map<(d0) -> (d0 * 4)>
#tile_end = affine_map<(d0)[s0] -> (d0 * 4 + 4, s0)>
#band_end = affine_map<(d0)[s0] -> (d0 + 8, s0)>
func.func @products(%P: memref<?x?xf32>, %Q: memref<?x?xf32>, %R: memref<?x?xf32>,
                    %rows: index, %cols: index) {
  %zero = arith.constant 0.0 : f32
  affine.for %a = 0 to %rows {
    affine.for %b = 0 to %cols {
      affine.for %k = 0 to %rows step 2 {
        %p = affine.load %P[%a, %k] : memref<?x?xf32>
        %q = affine.load %Q[%k, %b] : memref<?x?xf32>
        %r = affine.load %R[%a, %b] : memref<?x?xf32>
        %pq = arith.mulf %p, %q : f32
        %sum = arith.addf %r, %pq : f32
        affine.store %sum, %R[%a, %b] : memref<?x?xf32>
      }
    }
  }
  affine.for %c = 0 to %rows {
    affine.for %d = 0 to %cols {
      affine.for %l = 0 to %rows step 2 {
        %p = affine.load %P[%c, %l] : memref<?x?xf32>
        %q = affine.load %Q[%l, %d] : memref<?x?xf32>
        %r = affine.load %R[%c, %d] : memref<?x?xf32>
        %pq = arith.mulf %p, %q : f32
        %sum = arith.addf %r, %pq : f32
        affine.store %sum, %R[%c, %d] : memref<?x?xf32>
      }
    }
  }
  affine.for %tx = 0 to %rows {
    affine.for %ty = 0 to 16 {
      affine.for %x = #tile(%tx) to min #tile_end(%tx)[%rows] {
        affine.for %y = #tile(%ty) to min #band_end(%ty)[%cols] {
          %p = affine.load %P[%x, %y] : memref<?x?xf32>
          %q = affine.load %Q[%y, %x] : memref<?x?xf32>
          %diff = arith.subf %p, %q : f32
          %top = arith.maximumf %diff, %zero : f32
          affine.store %top, %R[%x, %y] : memref<?x?xf32>
        }
      }
    }
  }
  return
}
"""
"""Two matrix products with a step-2 reduction loop, then a tiled nest with `min`
bounds: slicing them costs enough isl operations for a cap to run out anywhere
in slice planning (checked by `mlir-opt`: it verifies)."""


def test_fusion_planning_keeps_isl_errors_in_at_every_operation_cap():
    """Whatever the operation cap, running out of it in fusion is a refusal or an
    undecided fusion, never isl's own exception (slice planning called isl outside
    the budget's session: a code-action request failed with it)."""
    data = PRODUCTS.encode()
    model = build_module(SourceDocument(data).tree.root_node)
    (function,) = functions(model)
    loops = loops_in(next(nest_blocks(function)))  # (the function's body: three nests)
    tried = 0
    for cap in (int(50 * 1.25**k) for k in range(40)):  # (50 to 300 000 operations)
        options = FusionOptions(budget=Budget(max_operations=cap, time_limit=None))
        for first, second in zip(loops, loops[1:], strict=False):
            for mode in (PRODUCER_CONSUMER, SIBLING):
                fusion = PairFusion(data, model, function, first, second, mode, options)
                try:
                    fusion.best()
                except isl.Error as error:  # pragma: no cover - the failure reported
                    raise AssertionError(f"cap {cap}, {mode}: {error}") from None
                tried += 1
    assert tried == 40 * 2 * 2


def _lines_and_columns(text: str, offset: int) -> dict:
    before = text[:offset]
    return {"line": before.count("\n"), "character": len(before) - before.rfind("\n") - 1}


def test_the_server_stays_responsive_on_a_too_complex_nest():
    text = tangled_nest(12) + seed_program()
    uri = "file:///bounded/tangled.mlir"
    doc = {"uri": uri}
    with LspClient(SERVER, env=ENV) as client:
        client.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        client.notify("initialized", {})
        item = {"uri": uri, "languageId": "mlir", "version": 1, "text": text}
        client.notify("textDocument/didOpen", {"textDocument": item})
        client.diagnostics(uri, 1)
        inner = _lines_and_columns(text, text.index("affine.for %i11"))
        heavy = [
            client.request("textDocument/hover", {"textDocument": doc, "position": inner}),
            client.request(
                "textDocument/codeAction",
                {
                    "textDocument": doc,
                    "range": {"start": inner, "end": inner},
                    "context": {"diagnostics": []},
                },
            ),
            client.request(
                "textDocument/inlayHint",
                {
                    "textDocument": doc,
                    "range": {
                        "start": {"line": 0, "character": 0},
                        "end": {"line": 10**4, "character": 0},
                    },
                },
            ),
        ]
        light = client.request("textDocument/documentSymbol", {"textDocument": doc})
        answers = [client.response(i, timeout=60) for i in [*heavy, light]]
        assert all("result" in a for a in answers), answers
        assert "too complex to analyse" in answers[0]["result"]["contents"]["value"]
        assert client.stop() == 0


def test_hovers_and_loop_transformations_keep_isl_errors_in_at_every_operation_cap():
    """Whatever the operation cap, running out of it in a hover's description or in a
    loop transformation (planned, then written and proven) is an `Unknown` or a
    refusal, never isl's own exception (both called isl outside their session's
    budget handling; found by forcing a cap on every session of the editor's requests)."""
    tried = 0
    for text in (STENCIL, TRIANGLE, REDUCE, PRODUCTS):
        data = text.encode()
        document = SourceDocument(data)
        model = build_module(document.tree.root_node)
        ops = list(model.walk())
        loops = [op for op in ops if isinstance(op, AffineForOp)]
        for k in range(40):  # (caps of 50 to 300 000 operations)
            cap = int(50 * 1.25**k)
            budget = Budget(max_operations=cap, time_limit=None)
            try:
                for op in ops:
                    describe_loop(op, model, budget)
                    describe_access(op, model, budget)
                    describe_condition(op, model, budget)
                for loop in loops if k % 3 == 0 else ():  # (a slice: each costs a proof)
                    at = loop.span.start_byte
                    for action in loop_actions(
                        document, model, at, at, budget=budget, resolve=budget
                    ):
                        action.resolve()
                        tried += 1
            except isl.Error as error:  # pragma: no cover - the failure reported
                raise AssertionError(f"cap {cap}: {error}") from None
    assert tried
