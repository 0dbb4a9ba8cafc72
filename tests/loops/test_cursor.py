"""The loops at a cursor (`transforms.cursor`): the same answers as a walk of the
whole model, at every offset of generated nests, and a cost that follows the depth
of the position, not the size of the document."""

from __future__ import annotations

from affine_lsp.ir import build_module
from affine_lsp.ir.model import AffineForOp
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing.nestgen import generate_many
from affine_lsp.transforms.cursor import loops_holding
from affine_lsp.transforms.fusion import nest_at
from affine_lsp.transforms.loops.actions import loop_at
from tests.cost import count_calls

SIBLINGS = """func.func @f(%A: memref<8x8xf32>) {
  affine.for %i = 0 to 8 { affine.for %j = 0 to 8 {
      %v = affine.load %A[%i, %j] : memref<8x8xf32>
    } }
  affine.for %k = 0 to 8 {}affine.for %l = 0 to 8 {
  }
  return
}
"""


def _walk_answers(model, start, end, line_of):
    """nest_at and loop_at as a walk of every op of the model decides them."""
    around = [
        op
        for op in model.walk()
        if isinstance(op, AffineForOp) and op.span.start_byte <= start and end <= op.span.end_byte
    ]
    if not around:
        return None, None
    on_line = [op for op in around if line_of(op.span.start_byte) == line_of(start)]
    nest = on_line[-1] if on_line else around[0]
    loop = on_line[0] if on_line else around[-1]
    return nest, loop


def _texts() -> list[str]:
    return [SIBLINGS] + [nest.text for nest in generate_many(2, seed=7)]


def test_the_loops_at_every_offset_are_those_a_walk_finds():
    for text in _texts():
        document = SourceDocument(text)
        model = build_module(document.tree.root_node)

        def line_of(offset: int, document: SourceDocument = document) -> int:
            return document.point(offset)[0]

        size = len(document.data)
        for start in range(size + 1):
            for end in (start, min(size, start + 5)):
                expected = _walk_answers(model, start, end, line_of)
                assert (
                    nest_at(model, start, end, line_of),
                    loop_at(model, start, end, line_of),
                ) == expected


def test_the_search_goes_down_only_where_the_position_is():
    """Asking at the outermost loop of a nest costs the same whatever its depth (code
    actions ask at every loop of a deep nest)."""

    def calls(depth: int) -> int:
        text = (
            "func.func @f() {\n"
            + "affine.for %i = 0 to 10 {\n" * depth
            + "}\n" * depth
            + "return\n}\n"
        )
        model = build_module(SourceDocument(text).tree.root_node)
        at = text.index("affine.for")
        found, count = count_calls(lambda: loops_holding(model, at, at))
        assert len(found) == 1
        return count

    assert calls(10) == calls(300)
