"""Shared helpers for the picture tests: the fixture nests and their spaces."""

from __future__ import annotations

from pathlib import Path

from affine_lsp.ir import build_module
from affine_lsp.ir.model import FuncOp, ModuleModel, Operation
from affine_lsp.poly.budgets import DRAW_LIMITS, PictureLimits
from affine_lsp.poly.session import Unknown
from affine_lsp.poly.space import LOOPS, IterationSpace, iteration_space
from affine_lsp.syntax import SourceDocument

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NESTS = FIXTURES / "nests.mlir"


# `affine.parallel () = () to ()` is valid MLIR (mlir-opt verifies this text): alone, its
# body runs once and there is nothing to draw; around a loop, the loop is drawn.
NO_IVS = """func.func @alone() {
  affine.parallel () = () to () {
    affine.yield
  }
  return
}
func.func @around(%m: memref<4xf32>) {
  affine.parallel () = () to () {
    affine.for %i = 0 to 4 {
      %v = affine.load %m[%i] : memref<4xf32>
    }
  }
  return
}
"""


def nests_text() -> str:
    return NESTS.read_text(encoding="utf-8")


def model_of(text: str) -> ModuleModel:
    return build_module(SourceDocument(text).tree.root_node)


def outer_loop(model: ModuleModel, function: str) -> Operation:
    """The first top-level loop of `@function`."""
    for op in model.walk():
        if isinstance(op, FuncOp) and op.symbol.lstrip("@") == function:
            assert op.body is not None
            return next(o for o in op.body.operations() if isinstance(o, LOOPS))
    raise AssertionError(f"no function @{function}")


def line_of(text: str, needle: str, occurrence: int = 0) -> int:
    """1-based line of the `occurrence`-th `needle`."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    return text[:index].count("\n") + 1


def space_of(
    function: str,
    values: dict[str, int] | None = None,
    limits: PictureLimits = DRAW_LIMITS,
    text: str | None = None,
) -> IterationSpace:
    model = model_of(text if text is not None else nests_text())
    space = iteration_space(outer_loop(model, function), model, values, limits=limits)
    assert not isinstance(space, Unknown), space
    return space


def arrow_counts(space: IterationSpace) -> dict[tuple[str, tuple[int, ...]], int]:
    counts: dict[tuple[str, tuple[int, ...]], int] = {}
    for arrow in space.arrows:
        key = (arrow.kind, arrow.distance)
        counts[key] = counts.get(key, 0) + 1
    return counts
