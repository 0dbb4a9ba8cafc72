"""memref.global ops as symbols: their name, declared type and initial value, in
either form. The module context keeps the top-level ones (`ModuleContext.globals`);
rules read nested symbol tables (an explicit `builtin.module`) on demand."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from affine_lsp.ir import Operation, Type, attribute_entries, string_value, type_from_node
from affine_lsp.syntax import FIELD, Node, Span, text


@dataclass(frozen=True)
class GlobalView:
    """What a memref.global declares (nodes are None when absent)."""

    symbol: str  # "@name"
    type: Type | None
    type_node: Node | None
    initial_value: Node | None
    alignment: Node | None
    symbol_span: Span


def global_view(op: Operation) -> GlobalView | None:
    """The memref.global `op` as a GlobalView (None if it has no symbol)."""
    if op.name != "memref.global" or op.node is None:
        return None
    body = op.node.child_by_field_id(FIELD["body"])
    if body is None:
        return None
    attributes = attribute_entries(body)
    if op.kind == "generic_operation":
        name = string_value(attributes.get("sym_name"))
        if name is None:
            return None
        type_node = attributes.get("type")
        symbol, symbol_span = f"@{name}", Span.of(attributes["sym_name"])
        initial_value = attributes.get("initial_value")
    else:
        symbol_node = body.child_by_field_id(FIELD["symbol"])
        if symbol_node is None or symbol_node.is_missing:
            return None
        symbol, symbol_span = text(symbol_node), Span.of(symbol_node)
        type_node = body.child_by_field_id(FIELD["type"])
        initial_value = body.child_by_field_id(FIELD["initial_value"])
    return GlobalView(
        symbol,
        type_from_node(type_node),
        type_node,
        initial_value,
        attributes.get("alignment"),
        symbol_span,
    )


def global_types(operations: Iterable[Operation]) -> dict[str, Type | None]:
    """symbol -> declared type of the memref.global ops among `operations` (the first
    of each name)."""
    table: dict[str, Type | None] = {}
    for op in operations:
        view = global_view(op)
        if view is not None:
            table.setdefault(view.symbol, view.type)
    return table
