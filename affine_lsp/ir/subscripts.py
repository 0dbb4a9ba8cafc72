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

    Every distinct value becomes a dimension (or a symbol inside `symbol(...)`) where
    it first appears, in that order. Returns the subscripts and every use, in order.
    `make_use(node, role, in_symbol_call)` makes the Use of a value node, spanning it.
    """
    bound: dict[str, AffineExpr] = {}  # name -> its dimension or symbol
    dims: list[Use] = []
    symbols: list[Use] = []
    uses: list[Use] = []

    def bind(use: Use, as_symbol: bool, span: Span) -> AffineExpr:
        """A value is bound where it first appears, as MLIR's parser does: later
        appearances are that dimension or symbol, with or without `symbol(...)`."""
        uses.append(use)
        first = bound.get(use.name)
        if isinstance(first, AffineSymbol):
            return AffineSymbol(first.position, span=span)
        if isinstance(first, AffineDim):
            return AffineDim(first.position, span=span)
        if as_symbol:
            expr: AffineExpr = AffineSymbol(len(symbols), span=span)
            symbols.append(use)
        else:
            expr = AffineDim(len(dims), span=span)
            dims.append(use)
        bound[use.name] = expr
        return expr

    def dim(node: Node) -> AffineExpr:
        use = make_use(node, "dim", False)
        return bind(use, False, use.span)

    def leaf(node: Node) -> AffineExpr:
        kind = node.type
        if kind == "value_use":
            return dim(node)
        if kind == "symbol_use":
            node_span = Span.of(node)
            value_node = node.child_by_field_id(FIELD["value"])
            if value_node is None:
                return AffineUnknown("", span=node_span)
            return bind(make_use(value_node, "symbol", True), True, node_span)
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
