"""Affine maps, integer sets and subscripts: identifiers unique and declared,
and the affine / semi-affine rules for products and divisions."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Fix, Related, Severity, TextEdit
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import (
    body_node,
    generic_op_rule,
    is_generic,
    item_rule,
    op_rule,
)
from affine_lsp.ir import (
    AffineAccessOp,
    AffineApplyOp,
    AffineBinary,
    AffineDim,
    AffineDmaOp,
    AffineExpr,
    AffineForOp,
    AffineIfOp,
    AffineMap,
    AffineParallelOp,
    AffineUnknown,
    IntegerSet,
    MapRef,
    Operation,
    Subscripts,
    TopLevelItem,
    attribute_entries,
    constant_value,
    format_expr,
    identifier_nodes,
    is_constant,
    is_symbolic_or_constant,
    map_from_node,
    set_from_node,
)
from affine_lsp.syntax import FIELD, Node, Span, text

UNDECLARED = register(
    "affine-undeclared-identifier",
    "an affine expression uses an identifier its map or set does not declare",
    "maps",
)
DUPLICATE = register(
    "affine-duplicate-identifier",
    "a map or set declares the same dimension/symbol identifier twice",
    "maps",
)
NON_AFFINE = register(
    "affine-non-affine",
    "a product of two non-symbolic terms, or a division/modulo by a non-symbolic term",
    "maps",
)
ZERO_DIVISOR = register(
    "lint-zero-divisor",
    "floordiv, ceildiv and mod by the constant 0: valid MLIR 22 (it prints `mod 0` itself), but "
    "the result is undefined and lowering rejects it",
    "lint",
    Severity.WARNING,
    mlir_checks=False,
)
NEGATIVE_DIVISOR = register(
    "lint-negative-divisor",
    "floordiv, ceildiv and mod by a negative constant: valid MLIR, but the affine dialect asks "
    "for a positive one and analyses may not handle it",
    "lint",
    Severity.WARNING,
    mlir_checks=False,
)

_DIVISIONS = ("floordiv", "ceildiv", "mod")


def check_expressions(
    ctx: CheckContext,
    exprs: list[AffineExpr],
    *,
    subscripts: Subscripts | None = None,
    user: Operation | None = None,
    names: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
) -> None:
    """The expression rules for the results/constraints of one map, set or subscript list."""
    for root in exprs:
        for node in root.walk():
            if isinstance(node, AffineUnknown):
                if node.name and node.span is not None:
                    ctx.report(
                        UNDECLARED,
                        node.span,
                        f"use of undeclared identifier '{node.name}': only the dimensions "
                        "and symbols declared by the map or set may appear in it",
                    )
            elif isinstance(node, AffineBinary) and node.span is not None:
                _check_binary(ctx, node, subscripts, user, names)


def _check_binary(
    ctx: CheckContext,
    node: AffineBinary,
    subscripts: Subscripts | None,
    user: Operation | None,
    names: tuple[tuple[str, ...], tuple[str, ...]],
) -> None:
    span = node.span

    def _source(expr: AffineExpr) -> str:
        return format_expr(expr, *names)

    assert span is not None
    if node.op == "*":
        if is_symbolic_or_constant(node.lhs) or is_symbolic_or_constant(node.rhs):
            return
        ctx.report(
            NON_AFFINE,
            span,
            "non-affine expression: at least one of the multiply operands has to be either a "
            f"constant or symbolic: both '{_source(node.lhs)}' and '{_source(node.rhs)}' "
            "involve dimensions",
            fixes=_symbol_fixes(ctx, (node.rhs, node.lhs), subscripts, user),
        )
        return
    if node.op not in _DIVISIONS:
        return
    if not is_symbolic_or_constant(node.rhs):
        ctx.report(
            NON_AFFINE,
            span,
            f"non-affine expression: right operand of {node.op} has to be either a constant or "
            f"symbolic: '{_source(node.rhs)}' involves dimensions",
            fixes=_symbol_fixes(ctx, (node.rhs,), subscripts, user),
        )
        return
    if is_constant(node.rhs):
        value = constant_value(node.rhs)
        if not ctx.options.lints:
            return
        if value == 0:
            ctx.report(
                ZERO_DIVISOR,
                node.rhs.span or span,
                f"{node.op} by zero: MLIR 22 accepts it, but the result is undefined and "
                "lowering it (--lower-affine) fails; the right operand should be a positive "
                "constant or a symbol",
            )
        elif value is not None and value < 0:
            ctx.report(
                NEGATIVE_DIVISOR,
                node.rhs.span or span,
                f"{node.op} by a negative constant ({value}): the affine dialect asks for a "
                "positive constant (MLIR 22 accepts it; the analyses may not)",
            )


def _symbol_fixes(
    ctx: CheckContext,
    candidates: tuple[AffineExpr, ...],
    subscripts: Subscripts | None,
    user: Operation | None,
) -> tuple[Fix, ...]:
    """In subscripts, offer `symbol(%v)` for a bare operand that is a valid symbol."""
    if subscripts is None or user is None:
        return ()
    for candidate in candidates:
        if not isinstance(candidate, AffineDim) or candidate.span is None:
            continue
        if candidate.position >= len(subscripts.dims):
            continue
        use = subscripts.dims[candidate.position]
        if use.value is None or not ctx.validity.symbol(use.value, user).valid:
            continue
        return (
            Fix(
                f"Bind {use.name} as a symbol: symbol({use.name})",
                (TextEdit(candidate.span, f"symbol({use.name})"),),
                preferred=True,
            ),
        )
    return ()


def check_identifiers(ctx: CheckContext, node: Node) -> None:
    """Dimension and symbol identifiers of a map or set node are unique."""
    dims, symbols = identifier_nodes(node)
    first: dict[str, Node] = {}
    for identifier in (*dims, *symbols):
        name = text(identifier)
        earlier = first.get(name)
        if earlier is None:
            first[name] = identifier
            continue
        ctx.report(
            DUPLICATE,
            Span.of(identifier),
            f"redefinition of identifier '{name}'",
            related=(Related(Span.of(earlier), f"'{name}' is first declared here"),),
        )


def check_map_or_set(ctx: CheckContext, value: AffineMap | IntegerSet, node: Node | None) -> None:
    if node is not None:
        check_identifiers(ctx, node)
    if isinstance(value, AffineMap):
        check_expressions(ctx, list(value.results), names=(value.dim_names, value.symbol_names))
    else:
        exprs: list[AffineExpr] = []
        for constraint in value.constraints:
            exprs += [constraint.lhs, constraint.rhs]
        check_expressions(ctx, exprs, names=(value.dim_names, value.symbol_names))


def check_inline(ctx: CheckContext, ref: MapRef | None) -> None:
    if ref is not None and ref.inline is not None:
        check_map_or_set(ctx, ref.inline, ref.node)


@item_rule
def alias_definition(item: TopLevelItem, ctx: CheckContext) -> None:
    alias = item.alias
    if alias is None or alias.node is None:
        return
    value = alias.map if alias.map is not None else alias.set
    if value is not None:
        check_map_or_set(ctx, value, alias.node.child_by_field_id(FIELD["value"]))


@generic_op_rule
def generic_maps(op: Operation, ctx: CheckContext) -> None:
    """The maps and sets of affine ops in the generic form are attributes: an inline one is
    checked where it is written (an alias, where it is defined)."""
    if op.dialect != "affine":
        return
    for value in attribute_entries(body_node(op)).values():
        if value.type in ("affine_map", "integer_set"):
            inline = map_from_node(value) if value.type == "affine_map" else set_from_node(value)
            check_map_or_set(ctx, inline, value)


@op_rule("affine.apply", "affine.min", "affine.max")
def apply_map(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineApplyOp) or is_generic(op):
        return  # not modelled, or checked by generic_maps
    check_inline(ctx, op.map_ref)


@op_rule("affine.for")
def for_maps(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineForOp) or is_generic(op):
        return  # not modelled, or checked by generic_maps
    for bound in (op.lower, op.upper):
        if bound is not None:
            check_inline(ctx, bound.map_ref)


@op_rule("affine.if")
def if_set(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineIfOp) or is_generic(op):
        return  # not modelled, or checked by generic_maps
    check_inline(ctx, op.condition)


@op_rule(
    "affine.load", "affine.store", "affine.vector_load", "affine.vector_store", "affine.prefetch"
)
def access_expressions(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineAccessOp) or is_generic(op):
        return  # not modelled, or checked by generic_maps
    if op.subscripts is not None:
        _check_subscripts(ctx, op.subscripts, op)


@op_rule("affine.dma_start", "affine.dma_wait")
def dma_expressions(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineDmaOp) or is_generic(op):
        return  # not modelled, or checked by generic_maps
    for _, subscripts, _ in op.accesses:
        _check_subscripts(ctx, subscripts, op)


@op_rule("affine.parallel")
def parallel_expressions(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineParallelOp) or is_generic(op):
        return  # not modelled, or checked by generic_maps
    for bound in (*op.lower, *op.upper):
        for subscripts in bound.exprs:
            _check_subscripts(ctx, subscripts, op)


def _check_subscripts(ctx: CheckContext, subscripts: Subscripts, user: Operation) -> None:
    check_expressions(
        ctx,
        list(subscripts.map.results),
        subscripts=subscripts,
        user=user,
        names=(subscripts.map.dim_names, subscripts.map.symbol_names),
    )
