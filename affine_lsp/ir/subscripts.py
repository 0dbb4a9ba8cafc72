"""Subscripts (`%A[%i + symbol(%n), 3]`) as the map MLIR builds from them, with the
uses of the values they name."""

from __future__ import annotations

from collections.abc import Callable

from affine_lsp.ir.affine import AffineDim, AffineExpr, AffineMap, AffineSymbol, AffineUnknown
from affine_lsp.ir.affine_syntax import build_expr
from affine_lsp.ir.model import Subscripts, Use
from affine_lsp.syntax import FIELD, Node, Span, text


def subscripts_from_exprs(
    span: Span, expr_nodes: list[Node], make_use: Callable[[Node, str, bool], Use]
) -> tuple[Subscripts, list[Use]]:
    """The map MLIR builds from subscript expressions over SSA values.

    Every distinct value becomes a dimension (or a symbol inside `symbol(...)`),
    in order of first appearance. Returns the subscripts and every use, in order.
    `make_use(node, role, in_symbol_call)` makes the Use of a value node, spanning it.
    """
    dim_positions: dict[str, int] = {}
    symbol_positions: dict[str, int] = {}
    dims: list[Use] = []
    symbols: list[Use] = []
    uses: list[Use] = []

    def dim(node: Node) -> AffineExpr:
        use = make_use(node, "dim", False)
        uses.append(use)
        position = dim_positions.get(use.name)
        if position is None:
            position = dim_positions[use.name] = len(dims)
            dims.append(use)
        return AffineDim(position, span=use.span)

    def leaf(node: Node) -> AffineExpr:
        kind = node.type
        if kind == "value_use":
            return dim(node)
        if kind == "symbol_use":
            node_span = Span.of(node)
            value_node = node.child_by_field_id(FIELD["value"])
            if value_node is None:
                return AffineUnknown("", span=node_span)
            use = make_use(value_node, "symbol", True)
            uses.append(use)
            position = symbol_positions.get(use.name)
            if position is None:
                position = symbol_positions[use.name] = len(symbols)
                symbols.append(use)
            return AffineSymbol(position, span=node_span)
        return AffineUnknown(text(node), span=Span.of(node))

    results = []
    result_spans = []
    for expr_node in expr_nodes:
        result_spans.append(Span(expr_node.start_byte, expr_node.end_byte))
        if expr_node.type == "value_use" and not expr_node.is_missing:
            results.append(dim(expr_node))  # a lone value, as in most subscripts
        else:
            results.append(build_expr(expr_node, leaf))
    affine_map = AffineMap(
        len(dims),
        len(symbols),
        tuple(results),
        tuple([u.name for u in dims]),
        tuple([u.name for u in symbols]),
        span,
    )
    return Subscripts(span, affine_map, dims, symbols, result_spans), uses
