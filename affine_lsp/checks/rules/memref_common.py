"""What the memref rules read from an op in either of its forms: the source and
result types it declares, lists of offsets/sizes/strides, and where to report.

Where to report: a problem with one operand or list is reported on it; a
declared result type that contradicts the op's source and operands is reported
on the result value (`%r`), with the declared type as related information, and
a source whose type the op cannot take on the source operand.
"""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Fix, Related, TextEdit
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, is_generic, signature_spans
from affine_lsp.ir import (
    DYNAMIC_INDEX,
    MemRefType,
    Operation,
    Type,
    Use,
    attribute_entries,
    integer_array,
    parse_integer,
    type_from_node,
)
from affine_lsp.syntax import FIELD, Node, Span

RESULT_TYPE = register(
    "memref-result-type",
    "the declared result type differs from the one the source and operands imply (shape, "
    "element type, layout or memory space)",
    "memref",
)
LAYOUT = register(
    "memref-layout-unsupported",
    "the op needs a strided layout (subview, reinterpret_cast) or the identity layout (view, "
    "reshape, realloc)",
    "memref",
)


@dataclass(frozen=True)
class Declared:
    """A type as an op declares it, and where."""

    type: Type | None
    span: Span | None

    @property
    def memref(self) -> MemRefType | None:
        return self.type if isinstance(self.type, MemRefType) else None


def declared_source(op: Operation) -> Declared:
    """The first operand's type: `from` of the custom form, or the generic form's first
    input type."""
    if is_generic(op):
        spans = signature_spans(op, "inputs")
        return Declared(op.operand_types[0] if op.operand_types else None, _first(spans))
    node = _field(op, "from")
    return Declared(type_from_node(node), Span.of(node) if node is not None else None)


def declared_result(op: Operation) -> Declared:
    """The first result type: `to`/`into` of the custom form, or the generic form's."""
    if is_generic(op):
        spans = signature_spans(op, "results")
        return Declared(op.result_types[0] if op.result_types else None, _first(spans))
    node = _field(op, "to")
    if node is not None and node.type == "type_list":
        node = node.named_children[0] if node.named_children else None
    return Declared(type_from_node(node), Span.of(node) if node is not None else None)


def _field(op: Operation, name: str) -> Node | None:
    body = body_node(op)
    return body.child_by_field_id(FIELD[name]) if body is not None else None


def _first(spans: list[Span]) -> Span | None:
    return spans[0] if spans else None


def source_use(op: Operation) -> Use | None:
    return op.operands[0] if op.operands else None


def result_anchor(op: Operation, declared: Declared) -> tuple[Span, tuple[Related, ...]]:
    """Where to report a wrong result type: the result value, with the declared type
    as related information (the declared type itself when the op names no result)."""
    related = (
        (Related(declared.span, f"the result type is declared here as {declared.type}"),)
        if declared.span is not None
        else ()
    )
    if op.results:
        return op.results[0].span, related
    return declared.span or op.name_span, ()


def report_result(
    ctx: CheckContext,
    op: Operation,
    result: Declared,
    message: str,
    code: str = RESULT_TYPE,
    expected: MemRefType | None = None,
) -> None:
    """Report a wrong result type on the result; with `expected`, offer it as a fix."""
    span, related = result_anchor(op, result)
    fixes = retype_fix(result, expected) if expected is not None else ()
    ctx.report(code, span, message, related=related, fixes=fixes)


def retype_fix(declared: Declared, expected: Type) -> tuple[Fix, ...]:
    """A quick fix declaring the result with the type the op computes."""
    if declared.span is None:
        return ()
    edit = TextEdit(declared.span, str(expected))
    return (Fix(f"Declare the result as {expected}", (edit,), preferred=True),)


def source_anchor(op: Operation, declared: Declared) -> tuple[Span, tuple[Related, ...]]:
    """Where to report a source the op cannot take: the source operand."""
    use = source_use(op)
    related = (
        (Related(declared.span, f"its type is declared here as {declared.type}"),)
        if declared.span is not None
        else ()
    )
    if use is not None:
        return use.span, related
    return declared.span or op.name_span, ()


# -- offsets, sizes and strides ------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One offset, size or stride: a constant, or dynamic (None) given by a value."""

    value: int | None
    span: Span


@dataclass(frozen=True)
class IndexList:
    entries: tuple[Entry, ...]
    span: Span
    dynamic_operands: int | None = None  # generic form: values given for dynamic entries

    def static(self) -> tuple[int | None, ...]:
        return tuple(entry.value for entry in self.entries)


def mixed_list(node: Node | None) -> IndexList | None:
    """`[%a, 4, -1]` of the custom form."""
    if node is None:
        return None
    entries = []
    for child in node.named_children:
        if child.type == "value_use":
            entries.append(Entry(None, Span.of(child)))
        elif child.type == "integer":
            entries.append(Entry(parse_integer(child), Span.of(child)))
    return IndexList(tuple(entries), Span.of(node))


def static_list(op: Operation, name: str, dynamic_operands: int) -> IndexList | None:
    """`static_offsets = array<i64: 0, -9223372036854775808>` of the generic form."""
    node = attribute_entries(body_node(op)).get(name)
    values = integer_array(node)
    if node is None or values is None:
        return None
    span = Span.of(node)
    entries = tuple(Entry(None if v == DYNAMIC_INDEX else v, span) for v in values)
    return IndexList(entries, span, dynamic_operands)


def segment_sizes(op: Operation) -> list[int] | None:
    """`operandSegmentSizes` of a generic op."""
    return integer_array(attribute_entries(body_node(op)).get("operandSegmentSizes"))
