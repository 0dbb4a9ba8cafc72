"""Reading a kernel and finding its loops, for the optimizer's tests."""

from __future__ import annotations

from affine_lsp.ir import AffineForOp, ModuleModel, build_module
from affine_lsp.syntax import SourceDocument


def loop_on_line(text: str, line: int) -> tuple[bytes, ModuleModel, AffineForOp]:
    """(data, model, the affine.for starting on 1-based `line`)."""
    data = text.encode()
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    for op in model.walk():
        if isinstance(op, AffineForOp) and document.point(op.span.start_byte)[0] == line - 1:
            return data, model, op
    raise AssertionError(f"no affine.for on line {line}")
