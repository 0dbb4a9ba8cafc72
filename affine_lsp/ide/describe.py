"""Plain-words descriptions of IR objects shared by hover, completion and symbols."""

from __future__ import annotations

from affine_lsp.checks import Validity, Verdict, affine_scope, describe_op
from affine_lsp.ir import (
    UPSTREAM,
    AffineApplyOp,
    AffineForOp,
    AffineIfOp,
    AffineMap,
    AffineParallelOp,
    Dialects,
    FuncOp,
    IntegerSet,
    MapRef,
    Operation,
    Use,
    Value,
)
from affine_lsp.syntax import SourceDocument


def line_of(document: SourceDocument, offset: int) -> int:
    """1-based line of a byte offset."""
    return document.point(offset)[0] + 1


def loop_header(document: SourceDocument, op: Operation) -> str:
    """`affine.for %i = 0 to %N step 2`: an op's text up to its body, on one line."""
    end = op.regions[0].span.start_byte if op.regions else op.span.end_byte
    start = op.name_span.start_byte
    header = " ".join(document.slice(start, end).split())
    return header if len(header) <= 120 else header[:117] + "..."


def value_origin(document: SourceDocument, value: Value) -> str:
    """Where a value comes from, e.g. "result of `affine.load` (line 12)"."""
    if value.is_block_argument:
        block = value.owner_block
        owner = block.parent_op if block is not None else None
        where = f" (line {line_of(document, owner.span.start_byte)})" if owner else ""
        if value.role == "induction_variable" and owner is not None:
            return f"induction variable of `{loop_header(document, owner)}`{where}"
        if value.role == "iter_arg" and owner is not None:
            return f"loop-carried value (iter_args) of `{describe_op(owner).strip('`')}`{where}"
        if isinstance(owner, FuncOp):
            return f"argument {value.arg_number} of `func.func {owner.symbol}`"
        label = f" of block {block.label}" if block is not None and block.label else ""
        return f"argument {value.arg_number}{label} of `{owner.name if owner else '?'}`{where}"
    op = value.defining_op
    if op is None:
        return "a value defined at the top level"
    result = f" #{value.index}" if value.group_size > 1 else ""
    return f"result{result} of `{op.name}` (line {line_of(document, op.span.start_byte)})"


def input_names(value: AffineMap | IntegerSet) -> tuple[list[str], list[str]]:
    """The names of a map's or set's dimensions and symbols (`d0`, `s0` if unnamed)."""

    def names(written: tuple[str, ...], count: int, prefix: str) -> list[str]:
        return list(written) if len(written) == count else [f"{prefix}{i}" for i in range(count)]

    return (
        names(value.dim_names, value.num_dims, "d"),
        names(value.symbol_names, value.num_symbols, "s"),
    )


def map_bindings(op: Operation) -> list[tuple[MapRef, list[Use], list[Use]]]:
    """The maps and sets an op applies, each with the operands bound to its
    dimensions and symbols (affine.apply/min/max, affine.if, affine.for bounds)."""
    if isinstance(op, AffineApplyOp) and op.map_ref is not None:
        return [(op.map_ref, op.dims, op.symbols)]
    if isinstance(op, AffineIfOp) and op.condition is not None:
        return [(op.condition, op.dims, op.symbols)]
    if isinstance(op, AffineForOp):
        return [
            (bound.map_ref, bound.dims, bound.symbols)
            for bound in (op.lower, op.upper)
            if bound is not None and bound.map_ref is not None
        ]
    return []


def map_summary(value: AffineMap | IntegerSet) -> str:
    """A map's or set's inputs and size: `2 dimensions (d0, d1), 1 symbol (s0), 1 result`."""

    def count(names: list[str], noun: str) -> str:
        listed = f" ({', '.join(names)})" if names else ""
        return f"{len(names)} {noun}{'' if len(names) == 1 else 's'}{listed}"

    dims, symbols = input_names(value)
    parts = [count(dims, "dimension"), count(symbols, "symbol")]
    if isinstance(value, AffineMap):
        n = len(value.results)
        parts.append(f"{n} result{'' if n == 1 else 's'}")
    else:
        n = len(value.constraints)
        parts.append(f"{n} constraint{'' if n == 1 else 's'}")
    return ", ".join(parts)


def _why_valid(value: Value, kind: str, user: Operation, dialects: Dialects) -> str:
    """Which rule makes a value (already judged valid) a dimension or symbol here."""
    scope = affine_scope(user, dialects)
    owner = value.parent_op
    if value.role == "induction_variable" and isinstance(owner, AffineForOp | AffineParallelOp):
        if kind == "dim":
            return f"it is the induction variable of {describe_op(owner)}"
    if owner is None or owner.name in dialects.affine_scope:
        what = "a region argument" if value.is_block_argument else "defined at the top level"
        return f"it is {what} of {describe_op(owner)}, an affine scope (symbol rules 1-2)"
    if scope is not None and not defined_inside(value, scope):
        return f"it is defined outside {describe_op(scope)}, the affine scope of this use (rule 3)"
    op = value.defining_op
    if op is not None and op.name in dialects.constant:
        return "it is the result of a constant (rule 4)"
    if op is not None and op.name == "affine.apply":
        return f"it is an affine.apply of operands that are valid {kind}s (rule 5)"
    if op is not None and op.name.endswith(".dim"):
        return "it is the size of a memref dimension known at the affine scope (rule 6)"
    if kind == "dim" and op is not None:
        return f"it is a {op.name} of operands that are valid dimensions"
    return "it satisfies the affine dialect's rules"


def defined_inside(value: Value, op: Operation) -> bool:
    """Whether `value` is defined in a region of `op` (at any depth)."""
    owner = value.parent_op
    while owner is not None:
        if owner is op:
            return True
        owner = owner.parent_op
    return False


def validity(
    value: Value, kind: str, user: Operation, dialects: Dialects = UPSTREAM
) -> tuple[bool, str]:
    """Whether `value` may be bound as a `kind` ("dim" or "symbol") at an op, and why
    (with the traits of `dialects`: the document's)."""
    judge = Validity(dialects)
    verdict: Verdict = judge.dim(value, user) if kind == "dim" else judge.symbol(value, user)
    if verdict.valid:
        return True, _why_valid(value, kind, user, dialects)
    return False, verdict.reason


def use_role(use: Use) -> str | None:
    """ "dim" or "symbol" when a use is bound to a map input, else None."""
    if use.role == "dim":
        return "dim"
    if use.role == "symbol":
        return "symbol"
    return None
