"""Running one loop transformation on a text, for the tests."""

from __future__ import annotations

from affine_lsp.ir import build_module
from affine_lsp.ir.model import AffineForOp
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.loops import Result, Spec, transform


def loop_at(text: str, needle: str):
    """(data, model, the affine.for whose text starts at `needle`)."""
    data = text.encode()
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    offset = data.index(needle.encode())
    for op in model.walk():
        body = op.body if isinstance(op, AffineForOp) else None
        if body is not None and op.span.start_byte <= offset < body.span.start_byte:
            return data, model, op
    raise AssertionError(f"no affine.for at {needle!r}")


def run(text: str, needle: str, spec: Spec, **options) -> Result:
    data, model, loop = loop_at(text, needle)
    return transform(data, model, loop, spec, **options)


def applied(text: str, needle: str, spec: Spec) -> str:
    result = run(text, needle, spec)
    assert result.applied, result.reason
    assert result.new_text is not None
    return result.new_text.decode()


def refused(text: str, needle: str, spec: Spec) -> str:
    result = run(text, needle, spec)
    assert not result.applied, result.new_text.decode() if result.new_text else ""
    assert result.reason
    return result.reason


def changed_lines(before: str, after: str) -> tuple[set[str], set[str]]:
    """(lines only in `before`, lines only in `after`)."""
    old, new = before.splitlines(), after.splitlines()
    return set(old) - set(new), set(new) - set(old)
