"""Dimension and symbol validity of every SSA value bound to an affine map,
set or subscript, judged at its use (see `affine_lsp.checks.validity`).

Checked where the binding defines an iteration domain or an access: affine.for
and affine.parallel bounds, affine.if conditions, and the subscripts of
loads, stores, prefetches and DMAs. The operands of affine.apply/min/max are
checked at the apply only for their type (index): MLIR 22 accepts any index
value there, and the op's documentation no longer restricts them; instead an
apply result is a valid dimension or symbol only if its operands are, which is
checked where the result is bound."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Related
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import is_generic, op_rule, operand_number, operand_type
from affine_lsp.checks.rules.rebind import symbol_as_dimension
from affine_lsp.checks.validity import DIM, describe_op
from affine_lsp.ir import (
    AffineAccessOp,
    AffineDmaOp,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    IndexType,
    Operation,
    Type,
    Use,
)

DIM_INVALID = register(
    "affine-dim-invalid",
    "a value bound to an affine dimension is not a valid dimension at this use",
    "dims-symbols",
)
SYMBOL_INVALID = register(
    "affine-symbol-invalid",
    "a value bound to an affine symbol is not a valid symbol at this use",
    "dims-symbols",
)
NOT_INDEX = register(
    "affine-operand-not-index",
    "a value bound to an affine dimension or symbol does not have index type",
    "dims-symbols",
)

_SYMBOL_RULES = (
    "a symbol must be a region argument or a top-level value of the enclosing AffineScope op "
    "(such as func.func), a value defined outside it, a constant, an affine.apply of symbols, "
    "or a dim of a memref whose size is static or a symbol"
)
_DIM_RULES = (
    "a dimension must be a valid symbol, an induction variable of an enclosing affine.for or "
    "affine.parallel, or an affine.apply of valid dimensions"
)


def check_binding(
    ctx: CheckContext, use: Use, kind: str, user: Operation, head: str | None = None
) -> None:
    """Report `use` if its value cannot be bound to a `kind` (dim or symbol) at `user`;
    `head` replaces MLIR's usual words where the op words it differently."""
    value = use.value
    if value is None:
        return
    if not check_index(ctx, use, user):
        return
    if kind == DIM:
        verdict = ctx.validity.dim(value, user)
        head, rules = head or "operand cannot be used as a dimension id", _DIM_RULES
        code = DIM_INVALID
    else:
        verdict = ctx.validity.symbol(value, user)
        head, rules = head or "operand cannot be used as a symbol", _SYMBOL_RULES
        code = SYMBOL_INVALID
    if verdict.valid:
        return
    culprit = verdict.culprit or value
    related = [Related(culprit.span, f"{culprit.display_name} is defined here")]
    where = "here" if kind == DIM else f"in {describe_op(user)}"
    fixes = ()
    if kind != DIM and ctx.validity.dim(value, user).valid:
        fixes = symbol_as_dimension(ctx, use, user)
    ctx.report(
        code,
        use.span,
        f"{head}: {verdict.reason}, so it is not a valid {kind_word(kind)} {where}; {rules}",
        related=tuple(related),
        fixes=fixes,
    )


def check_index(ctx: CheckContext, use: Use, user: Operation) -> bool:
    """Report `use` unless its type is index (or unknown); whether it passed."""
    declared = operand_type(use)
    if declared is None or isinstance(declared, IndexType):
        return True
    ctx.report(NOT_INDEX, use.span, _not_index_message(use, user, declared), related=_defined(use))
    return False


def _not_index_message(use: Use, user: Operation, declared: Type) -> str:
    reason = "values bound to affine dimensions and symbols must have index type"
    if is_generic(user):
        return (
            f"'{user.name}' op operand #{operand_number(use)} must be variadic of index, but got "
            f"'{declared}': {reason}"
        )
    return (
        f"use of value '{use.name}' expects different type than prior uses: 'index' vs "
        f"'{declared}': {reason}"
    )


def _defined(use: Use) -> tuple[Related, ...]:
    value = use.value
    return (Related(value.span, f"{value.display_name} is defined here"),) if value else ()


def kind_word(kind: str) -> str:
    return "dimension" if kind == DIM else "symbol"


def _check_lists(
    ctx: CheckContext, op: Operation, dims: list[Use], symbols: list[Use], head: str | None = None
) -> None:
    for use in dims:
        check_binding(ctx, use, DIM, op, head)
    for use in symbols:
        check_binding(ctx, use, "symbol", op, head)


@op_rule("affine.apply", "affine.min", "affine.max")
def apply_operand_types(op: Operation, ctx: CheckContext) -> None:
    """The operands of affine.apply/min/max are dimensions and symbols: index values."""
    for use in op.operands:
        check_index(ctx, use, op)


@op_rule("affine.for")
def for_bounds(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineForOp):
        return  # not modelled
    for bound in (op.lower, op.upper):
        if bound is None:
            continue
        if bound.shorthand_value is not None:
            check_binding(ctx, bound.shorthand_value, "symbol", op)
        else:
            _check_lists(ctx, op, bound.dims, bound.symbols)


@op_rule("affine.if")
def if_operands(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineIfOp):
        return  # not modelled
    _check_lists(ctx, op, op.dims, op.symbols)


@op_rule("affine.parallel")
def parallel_bounds(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineParallelOp):
        return  # not modelled
    for bound in (*op.lower, *op.upper):
        for subscripts in bound.exprs:
            _check_lists(ctx, op, subscripts.dims, subscripts.symbols)


@op_rule(
    "affine.load", "affine.store", "affine.vector_load", "affine.vector_store", "affine.prefetch"
)
def access_subscripts(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineAccessOp):
        return  # not modelled
    if op.subscripts is not None:
        _check_lists(ctx, op, op.subscripts.dims, op.subscripts.symbols)


@op_rule("affine.dma_start", "affine.dma_wait")
def dma_subscripts(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineDmaOp):
        return  # not modelled
    for _, subscripts, role in op.accesses:
        prefix = _DMA_ROLES.get(role, "") if op.name == "affine.dma_start" else ""
        head = f"{prefix}index must be a valid dimension or symbol identifier"
        _check_lists(ctx, op, subscripts.dims, subscripts.symbols, head)


_DMA_ROLES = {"source": "src ", "destination": "dst ", "tag": "tag "}
