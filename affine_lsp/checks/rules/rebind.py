"""Quick fixes that bind the operands of an affine map or set otherwise, where the
corrected text is determined and means what the text meant:

- a value given as a symbol that is a valid dimension at its use becomes a
  dimension: `symbol(%v)` in subscripts becomes `%v`; a shorthand bound `to %v`
  becomes `to affine_map<(d0) -> (d0)>(%v)`; in the operands of a map or set, `%v`
  moves to the end of the dimension list and the map or set is rewritten inline
  with that symbol as the new last dimension (`dims_symbols`);
- operands split between the dimension and symbol lists otherwise than the map's
  inputs, their number right: the split moves (`arity`), when each operand that
  changes lists is valid in its new one.

The custom forms only: the generic form binds operands through attributes.
"""

from __future__ import annotations

from collections.abc import Callable

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Fix, TextEdit
from affine_lsp.checks.rules.base import body_node, is_generic, node_at
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
    AffineSymbol,
    IntegerSet,
    MapRef,
    Operation,
    Subscripts,
    Use,
    format_expr,
)
from affine_lsp.syntax import FIELD, Node, Span

# -- a symbol that is a valid dimension ------------------------------------------------


def symbol_as_dimension(ctx: CheckContext, use: Use, user: Operation) -> tuple[Fix, ...]:
    """A fix binding `use`, given as a symbol of `user`, as a dimension (the caller
    knows that its value is a valid dimension there)."""
    if is_generic(user):
        return ()
    name = use.name
    edits: tuple[TextEdit, ...] = ()
    if use.in_symbol_call:
        edits = _unwrapped(user, use)
    elif isinstance(user, AffineForOp):
        for bound in (user.lower, user.upper):
            if bound is not None and bound.shorthand_value is use:
                edits = (TextEdit(use.span, f"affine_map<(d0) -> (d0)>({name})"),)
            elif bound is not None and any(u is use for u in bound.symbols):
                holder = node_at(user, bound.span)
                edits = _rebound(ctx, user, bound.map_ref, bound.dims, bound.symbols, use, holder)
    elif isinstance(user, AffineIfOp) and any(u is use for u in user.symbols):
        edits = _rebound(ctx, user, user.condition, user.dims, user.symbols, use, body_node(user))
    if not edits:
        return ()
    return (Fix(f"Bind {name} as a dimension", edits, preferred=True),)


def _parses_as_dimension(exprs: list[AffineExpr], symbol: int) -> bool:
    """Whether the expressions stay affine as MLIR parses them with the symbol at
    `symbol` made a dimension: every product keeps a side without dimensions, every
    divisor and modulus has none (`d0 * s0` is affine, `d0 * d1` is not)."""

    def has_dimension(expr: AffineExpr) -> bool:
        return any(
            isinstance(n, AffineDim) or (isinstance(n, AffineSymbol) and n.position == symbol)
            for n in expr.walk()
        )

    for expr in exprs:
        for node in expr.walk():
            if not isinstance(node, AffineBinary):
                continue
            if node.op == "*" and has_dimension(node.lhs) and has_dimension(node.rhs):
                return False
            if node.op in ("floordiv", "ceildiv", "mod") and has_dimension(node.rhs):
                return False
    return True


def _unwrapped(user: Operation, use: Use) -> tuple[TextEdit, ...]:
    """`symbol(%v)` -> `%v` wherever the subscripts holding `use` write it so."""
    subscripts = _subscripts_holding(user, use)
    top = node_at(user, subscripts.span) if subscripts is not None else None
    if subscripts is None or top is None:
        return ()
    position = next(k for k, u in enumerate(subscripts.symbols) if u is use)
    if not _parses_as_dimension(list(subscripts.map.results), position):
        return ()
    edits = []
    stack = [top]
    while stack:
        node = stack.pop()
        if node.type == "symbol_use":
            inner = node.child_by_field_id(FIELD["value"])
            if inner is not None and inner.text is not None and inner.text.decode() == use.name:
                edits.append(TextEdit(Span.of(node), use.name))
            continue
        stack.extend(node.children)
    return tuple(sorted(edits, key=lambda e: e.span.start_byte))


def _subscripts_holding(user: Operation, use: Use) -> Subscripts | None:
    candidates: list[Subscripts] = []
    if isinstance(user, AffineAccessOp) and user.subscripts is not None:
        candidates.append(user.subscripts)
    elif isinstance(user, AffineParallelOp):
        candidates += [s for bound in (*user.lower, *user.upper) for s in bound.exprs]
    elif isinstance(user, AffineDmaOp):
        candidates += [subscripts for _, subscripts, _ in user.accesses]
    return next((s for s in candidates if any(u is use for u in s.symbols)), None)


def _rebound(
    ctx: CheckContext,
    user: Operation,
    ref: MapRef | None,
    dims: list[Use],
    symbols: list[Use],
    use: Use,
    holder: Node | None,
) -> tuple[TextEdit, ...]:
    """The map or set of `ref` and its operands rewritten, inline, with the symbol
    `use` as the new last dimension."""
    inputs = ctx.resolve(ref)
    span = _map_and_operands(holder)
    if inputs is None or span is None or holder is None:
        return ()
    if (len(dims), len(symbols)) != (inputs.num_dims, inputs.num_symbols):
        # The counts are wrong too: splitting the operands again may fix both.
        position = len(dims) + next(k for k, u in enumerate(symbols) if u is use)
        if position >= inputs.num_dims:
            return ()
        split = split_again(ctx, user, inputs, dims, symbols, _lists(holder))
        return split[0].edits if split else ()
    moved = next(k for k, u in enumerate(symbols) if u is use)
    if not _parses_as_dimension(_expressions(inputs), moved):
        return ()
    count = inputs.num_dims

    def symbol_name(position: int) -> str:
        if position == moved:
            return f"d{count}"
        return f"s{position - (position > moved)}"

    written = _written(inputs, count + 1, inputs.num_symbols - 1, symbol_name)
    rest = [u for u in symbols if u is not use]
    operands = _operand_text([*dims, use], rest)
    return (TextEdit(span, written + operands),)


def _lists(holder: Node) -> tuple[Span | None, Span | None]:
    """The spans of the dimension and symbol lists of the operands of `holder`."""
    operands = holder.child_by_field_id(FIELD["operands"])
    if operands is None:
        return None, None
    dims = operands.child_by_field_id(FIELD["dims"])
    symbols = operands.child_by_field_id(FIELD["symbols"])
    return (Span.of(dims) if dims else None, Span.of(symbols) if symbols else None)


def _expressions(inputs: AffineMap | IntegerSet) -> list[AffineExpr]:
    if isinstance(inputs, AffineMap):
        return list(inputs.results)
    return [side for c in inputs.constraints for side in (c.lhs, c.rhs)]


def _map_and_operands(holder: Node | None) -> Span | None:
    """From the map (or set) of a bound, an affine.if or an affine.apply/min/max to
    the end of its operands."""
    if holder is None:
        return None
    operands = holder.child_by_field_id(FIELD["operands"])
    first = holder.child_by_field_id(FIELD["map"]) or holder.child_by_field_id(FIELD["condition"])
    if operands is None or first is None:
        return None
    return Span(first.start_byte, operands.end_byte)


def _written(
    inputs: AffineMap | IntegerSet,
    num_dims: int,
    num_symbols: int,
    symbol_name: Callable[[int], str],
) -> str:
    """`affine_map<...>`/`affine_set<...>` of `inputs` with `num_dims` dimensions,
    `num_symbols` symbols and its symbols renamed by `symbol_name`."""
    header = f"({', '.join(f'd{k}' for k in range(num_dims))})"
    if num_symbols:
        header += f"[{', '.join(f's{k}' for k in range(num_symbols))}]"

    def text(expr: AffineExpr) -> str:
        return format_expr(expr, dim_namer=lambda k: f"d{k}", symbol_namer=symbol_name)

    if isinstance(inputs, AffineMap):
        return f"affine_map<{header} -> ({', '.join(text(r) for r in inputs.results)})>"
    constraints = ", ".join(f"{text(c.lhs)} {c.kind} {text(c.rhs)}" for c in inputs.constraints)
    return f"affine_set<{header} : ({constraints})>"


def _operand_text(dims: list[Use], symbols: list[Use]) -> str:
    text = f"({', '.join(u.name for u in dims)})"
    return text + (f"[{', '.join(u.name for u in symbols)}]" if symbols else "")


# -- operands split otherwise than the map's inputs ------------------------------------


def split_again(
    ctx: CheckContext,
    user: Operation,
    inputs: AffineMap | IntegerSet,
    dims: list[Use],
    symbols: list[Use],
    lists: tuple[Span | None, Span | None],
) -> tuple[Fix, ...]:
    """A fix splitting the operands as the map's (or set's) inputs are, when their
    number is right and each that changes lists is valid in its new one (any index
    value is, for affine.apply/min/max)."""
    operands = [*dims, *symbols]
    if len(operands) != inputs.num_inputs or len(dims) == inputs.num_dims:
        return ()
    dims_span, symbols_span = lists
    if dims_span is None or is_generic(user):
        return ()
    new_dims, new_symbols = operands[: inputs.num_dims], operands[inputs.num_dims :]
    if not isinstance(user, AffineApplyOp):
        to_symbols = [u for u in new_symbols if any(u is d for d in dims)]
        to_dims = [u for u in new_dims if any(u is s for s in symbols)]
        if not all(_valid(ctx, u, user, "symbol") for u in to_symbols):
            return ()
        if not all(_valid(ctx, u, user, "dim") for u in to_dims):
            return ()
    end = (symbols_span or dims_span).end_byte
    edit = TextEdit(Span(dims_span.start_byte, end), _operand_text(new_dims, new_symbols))
    return (Fix(f"Bind {_moved_words(dims, symbols, inputs)}", (edit,), preferred=True),)


def _valid(ctx: CheckContext, use: Use, user: Operation, kind: str) -> bool:
    if use.value is None:
        return False
    verdict = ctx.validity.symbol if kind == "symbol" else ctx.validity.dim
    return verdict(use.value, user).valid


def _moved_words(dims: list[Use], symbols: list[Use], inputs: AffineMap | IntegerSet) -> str:
    """`%j as a symbol`, `%a, %b as dimensions`: the operands that change lists."""
    if len(dims) > inputs.num_dims:
        moved, kind = dims[inputs.num_dims :], "symbol"
    else:
        moved, kind = symbols[: inputs.num_dims - len(dims)], "dimension"
    what = f"a {kind}" if len(moved) == 1 else f"{kind}s"
    return f"{', '.join(u.name for u in moved)} as {what}"
