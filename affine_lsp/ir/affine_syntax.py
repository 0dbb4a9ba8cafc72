"""Affine maps, integer sets and expressions from syntax nodes (the map of a subscript list:
`subscripts.py`).

Builds the expression trees of `affine_lsp.ir.affine` from the grammar's
`affine_*` and `subscript_*` nodes, resolving identifiers to dimension and
symbol positions. Nothing here fails on broken input: an undeclared
identifier becomes `AffineUnknown`, a missing operand `AffineUnknown("")`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from affine_lsp.ir.affine import (
    AffineBinary,
    AffineConst,
    AffineDim,
    AffineExpr,
    AffineMap,
    AffineNeg,
    AffineSymbol,
    AffineUnknown,
    Constraint,
    ConstraintKind,
    IntegerSet,
)
from affine_lsp.syntax import FIELD, Node, Span, text

_BINARY = {"affine_binary_expr", "subscript_binary_expr"}
_NEG = {"affine_neg_expr", "subscript_neg_expr"}
_PAREN = {"affine_paren_expr", "subscript_paren_expr"}
_CALL = {"affine_legacy_call_expr", "subscript_legacy_call_expr"}
_STRUCTURED = _BINARY | _NEG | _PAREN | _CALL | {"integer", "ERROR"}
_NEGATE = "negate"  # (compared by identity) marks a negation waiting for its operand


def parse_integer(node: Node) -> int | None:
    """Value of an `integer` node (decimal, hex, or the aliased `- 42` form)."""
    spelling = "".join(text(node).split())
    negative = spelling.startswith("-")
    digits = spelling.lstrip("-")
    try:
        value = int(digits, 16) if digits.lower().startswith("0x") else int(digits)
    except ValueError:
        return None
    return -value if negative else value


def build_expr(node: Node, leaf: Callable[[Node], AffineExpr]) -> AffineExpr:
    """Expression tree of an expression node; `leaf` builds identifiers (iterative)."""
    if node.type not in _STRUCTURED and not node.is_missing:
        return leaf(node)  # a lone identifier or value: most subscripts
    built: list[AffineExpr] = []
    # (node, None) to visit a node; (node, operator) to combine its built operands.
    stack: list[tuple[Node, str | None]] = [(node, None)]
    while stack:
        current, combine = stack.pop()
        if combine is not None:
            span = Span(current.start_byte, current.end_byte)
            if combine is _NEGATE:
                built.append(AffineNeg(built.pop(), span=span))
            else:
                rhs = built.pop()
                lhs = built.pop()
                built.append(AffineBinary(combine, lhs, rhs, span=span))  # type: ignore[arg-type]
            continue
        kind = current.type
        if current.is_missing or kind == "ERROR":
            built.append(AffineUnknown("", span=Span.of(current)))
            continue
        if kind in _PAREN:
            inner = current.child_by_field_id(FIELD["inner"])
            if inner is None:
                built.append(AffineUnknown("", span=Span.of(current)))
            else:
                stack.append((inner, None))
            continue
        if kind in _BINARY or kind in _CALL:
            left = current.child_by_field_id(FIELD["left"])
            right = current.child_by_field_id(FIELD["right"])
            operator = current.child_by_field_id(FIELD["operator"])
            if left is None or right is None or operator is None:
                built.append(AffineUnknown("", span=Span.of(current)))
                continue
            stack += [(current, operator.type), (right, None), (left, None)]
            continue
        if kind in _NEG:
            operand = current.child_by_field_id(FIELD["operand"])
            if operand is None:
                built.append(AffineUnknown("", span=Span.of(current)))
                continue
            stack += [(current, _NEGATE), (operand, None)]
            continue
        if kind == "integer":
            value = parse_integer(current)
            span = Span.of(current)
            built.append(
                AffineConst(value, span=span) if value is not None else AffineUnknown("", span=span)
            )
            continue
        built.append(leaf(current))
    return built[0] if built else AffineUnknown("", span=Span.of(node))


def _identifier_names(list_node: Node | None) -> tuple[list[str], list[Node]]:
    if list_node is None:
        return [], []
    nodes = [c for c in list_node.named_children if c.type in ("dim_id", "symbol_id")]
    return [text(n) for n in nodes], nodes


def _positions(dim_names: list[str], symbol_names: list[str]) -> Callable[[Node], AffineExpr]:
    dims: dict[str, int] = {}
    symbols: dict[str, int] = {}
    for i, name in enumerate(dim_names):
        dims.setdefault(name, i)
    for i, name in enumerate(symbol_names):
        symbols.setdefault(name, i)

    def leaf(node: Node) -> AffineExpr:
        name = text(node)
        span = Span.of(node)
        if node.type == "affine_id":
            if name in dims:
                return AffineDim(dims[name], span=span)
            if name in symbols:
                return AffineSymbol(symbols[name], span=span)
        return AffineUnknown(name, span=span)

    return leaf


def map_from_node(node: Node) -> AffineMap:
    """An `affine_map` or `legacy_affine_map` node as an AffineMap."""
    dim_names, _ = _identifier_names(node.child_by_field_id(FIELD["dimensions"]))
    symbol_names, _ = _identifier_names(node.child_by_field_id(FIELD["symbols"]))
    leaf = _positions(dim_names, symbol_names)
    results_node = node.child_by_field_id(FIELD["results"])
    results = tuple(
        build_expr(child, leaf)
        for child in (results_node.named_children if results_node else [])
        if child.type != "comment"
    )
    return AffineMap(
        len(dim_names),
        len(symbol_names),
        results,
        tuple(dim_names),
        tuple(symbol_names),
        Span.of(node),
    )


def set_from_node(node: Node) -> IntegerSet:
    """An `integer_set` or `legacy_integer_set` node as an IntegerSet."""
    dim_names, _ = _identifier_names(node.child_by_field_id(FIELD["dimensions"]))
    symbol_names, _ = _identifier_names(node.child_by_field_id(FIELD["symbols"]))
    leaf = _positions(dim_names, symbol_names)
    constraints = []
    list_node = node.child_by_field_id(FIELD["constraints"])
    for child in list_node.named_children if list_node else []:
        if child.type != "constraint":
            continue
        left = child.child_by_field_id(FIELD["left"])
        right = child.child_by_field_id(FIELD["right"])
        operator = child.child_by_field_id(FIELD["operator"])
        if left is None or right is None or operator is None:
            continue
        kind = cast(ConstraintKind, operator.type)  # the grammar's `>=`, `<=` or `==`
        constraints.append(
            Constraint(build_expr(left, leaf), kind, build_expr(right, leaf), Span.of(child))
        )
    return IntegerSet(
        len(dim_names),
        len(symbol_names),
        tuple(constraints),
        tuple(dim_names),
        tuple(symbol_names),
        Span.of(node),
    )


def identifier_nodes(node: Node) -> tuple[list[Node], list[Node]]:
    """The dimension and symbol identifier nodes declared by a map or set node."""
    _, dims = _identifier_names(node.child_by_field_id(FIELD["dimensions"]))
    _, symbols = _identifier_names(node.child_by_field_id(FIELD["symbols"]))
    return dims, symbols


def expression_children(list_node: Node | None) -> list[Node]:
    """The expression children of a `subscript_list` / result list (no punctuation)."""
    if list_node is None:
        return []
    return [c for c in list_node.named_children if c.type not in ("comment", "split_marker")]
