"""Types written on an op that contradict the types of the values it uses, and
result types the generic form declares that differ from what the op produces."""

from __future__ import annotations

from collections.abc import Callable

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Fix, Related, TextEdit
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import (
    generic_op_rule,
    is_generic,
    node_at,
    op_rule,
    signature_spans,
)
from affine_lsp.ir import (
    INDEX,
    AffineAccessOp,
    AffineDmaOp,
    AffineForOp,
    AffineParallelOp,
    AliasType,
    FloatType,
    IntegerType,
    MemRefAccessOp,
    MemRefDimOp,
    OpaqueType,
    Operation,
    Type,
    Use,
    element_type,
)
from affine_lsp.syntax import Span

TYPE_MISMATCH = register(
    "ssa-type-mismatch",
    "the type written for an operand differs from the type of the value",
    "types",
)
REDUCTION_TYPE = register(
    "affine-reduction-type",
    "affine.parallel: a reduction kind that does not fit its result's type (addf, mulf, "
    "maximumf, minimumf: a float; addi, muli, ori, andi: an integer; maxs, mins: a signed and "
    "maxu, minu: an unsigned integer such as si32/ui32; MLIR 22 takes no type for maxnumf, "
    "minnumf and xori)",
    "types",
)
RESULT_TYPE = register(
    "affine-result-type",
    "a result type written in the generic form differs from what the op produces (index for "
    "affine.apply/min/max, the memref element type for affine.load)",
    "types",
)


def check_declared(ctx: CheckContext, use: Use | None, declared: Type | None) -> None:
    """Report `use` if its value's type is known and differs from `declared`."""
    if use is None or declared is None or use.value is None:
        return
    actual = use.value.type
    if actual is None or actual == declared:
        return
    if isinstance(actual, AliasType | OpaqueType) or isinstance(declared, AliasType | OpaqueType):
        return  # aliases and dialect types are compared only once resolved
    ctx.report(
        TYPE_MISMATCH,
        use.span,
        f"use of value '{use.name}' expects different type than prior uses: '{declared}' vs "
        f"'{actual}'",
        related=(Related(use.value.span, f"{use.value.display_name} is defined here as {actual}"),),
    )


@generic_op_rule
def generic_operand_types(op: Operation, ctx: CheckContext) -> None:
    """The generic form declares every operand's type: it must be the value's."""
    for use, declared in zip(op.operands, op.operand_types, strict=False):
        check_declared(ctx, use, declared)


@op_rule("affine.apply", "affine.min", "affine.max", "affine.load")
def generic_result_types(op: Operation, ctx: CheckContext) -> None:
    if not is_generic(op) or not op.result_types:
        return  # the custom forms cannot spell another result type
    declared = op.result_types[0]
    if isinstance(declared, AliasType | OpaqueType):
        return
    if op.name == "affine.load":
        expected = element_type(op.memref_type) if isinstance(op, AffineAccessOp) else None
        if expected is None or declared == expected:
            return
        message = (
            f"result type must match element type of memref: the result is declared {declared}, "
            f"the memref holds {expected}"
        )
    else:
        if declared == INDEX:
            return
        message = (
            f"'{op.name}' op result #0 must be index, but got '{declared}': {op.name} computes "
            "an index"
        )
    spans = signature_spans(op, "results")
    right = expected if op.name == "affine.load" else INDEX
    fixes = (
        (Fix(f"Declare the result as {right}", (TextEdit(spans[0], str(right)),), True),)
        if spans
        else ()
    )
    ctx.report(RESULT_TYPE, spans[0] if spans else op.name_span, message, fixes=fixes)


@op_rule(
    "affine.load", "affine.store", "affine.vector_load", "affine.vector_store", "affine.prefetch"
)
def affine_access_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineAccessOp):
        return  # not modelled
    check_declared(ctx, op.memref, op.memref_type)
    if op.name == "affine.vector_store":
        check_declared(ctx, op.stored_value, op.vector_type)


@op_rule("memref.load", "memref.store")
def memref_access_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, MemRefAccessOp):
        return  # not modelled
    check_declared(ctx, op.memref, op.memref_type)
    if op.is_write:
        check_declared(ctx, op.stored_value, element_type(op.memref_type))


@op_rule("memref.dim")
def dim_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, MemRefDimOp):
        return  # not modelled
    check_declared(ctx, op.source, op.source_type)


@op_rule("affine.dma_start", "affine.dma_wait")
def dma_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineDmaOp):
        return  # not modelled
    for (memref, _, _), declared in zip(op.accesses, op.memref_types, strict=False):
        check_declared(ctx, memref, declared)


@op_rule("affine.for")
def iter_arg_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineForOp):
        return  # not modelled
    for (_, init), declared in zip(op.iter_args, op.result_types, strict=False):
        check_declared(ctx, init, declared)


# What each reduction kind of affine.parallel accepts as its result type (MLIR 22's
# isResultTypeMatchAtomicRMWKind): the words for the message, and the test.
_REDUCTION_TYPES: dict[str, tuple[str, Callable[[Type], bool]]] = {
    **dict.fromkeys(
        ("addf", "mulf", "maximumf", "minimumf"),
        ("a float type", lambda t: isinstance(t, FloatType)),
    ),
    **dict.fromkeys(
        ("addi", "muli", "ori", "andi"),
        ("an integer type", lambda t: isinstance(t, IntegerType)),
    ),
    **dict.fromkeys(
        ("maxs", "mins"),
        (
            "a signed integer type (si32, ...; i32 is signless)",
            lambda t: isinstance(t, IntegerType) and t.signedness == "s",
        ),
    ),
    **dict.fromkeys(
        ("maxu", "minu"),
        (
            "an unsigned integer type (ui32, ...; i32 is signless)",
            lambda t: isinstance(t, IntegerType) and t.signedness == "u",
        ),
    ),
    **dict.fromkeys(
        ("maxnumf", "minnumf", "xori"),
        ("no type at all (MLIR 22's verifier accepts none for it)", lambda t: False),
    ),
}


@op_rule("affine.parallel")
def reduction_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineParallelOp) or len(op.reductions) != len(op.result_types):
        return  # not modelled, or affine-parallel-reductions reports the counts
    spans = _reduction_spans(op)
    for index, (kind, result) in enumerate(zip(op.reductions, op.result_types, strict=True)):
        rule = _REDUCTION_TYPES.get(kind)
        if rule is None or result is None or isinstance(result, AliasType | OpaqueType):
            continue  # assign, an invalid kind (reported elsewhere), or a type we cannot see
        wanted, fits = rule
        if fits(result):
            continue
        ctx.report(
            REDUCTION_TYPE,
            spans[index] if index < len(spans) else op.reductions_span or op.name_span,
            f'result type cannot match reduction attribute: "{kind}" takes {wanted}, result '
            f"#{index} is {result}",
        )


def _reduction_spans(op: AffineParallelOp) -> list[Span]:
    """The span of each reduction kind written (a string, or an integer in the generic
    form); [] when they cannot be told apart."""
    node = node_at(op, op.reductions_span) if op.reductions_span is not None else None
    if node is None:
        return []
    items = [c for c in node.named_children if c.type in ("string", "integer")]
    return [Span.of(c) for c in items] if len(items) == len(op.reductions) else []
