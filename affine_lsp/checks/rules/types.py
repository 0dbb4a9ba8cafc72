"""Types written on an op that contradict the types of the values it uses."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Related
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import op_rule
from affine_lsp.ir.model import (
    AffineAccessOp,
    AffineDmaOp,
    AffineForOp,
    MemRefAccessOp,
    MemRefDimOp,
    Operation,
    Use,
)
from affine_lsp.ir.types import AliasType, OpaqueType, Type, element_type

TYPE_MISMATCH = register(
    "ssa-type-mismatch",
    "the type written for an operand differs from the type of the value",
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


@op_rule(
    "affine.load", "affine.store", "affine.vector_load", "affine.vector_store", "affine.prefetch"
)
def affine_access_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineAccessOp):
        return  # the generic form: not modelled
    check_declared(ctx, op.memref, op.memref_type)
    if op.name == "affine.vector_store":
        check_declared(ctx, op.stored_value, op.vector_type)


@op_rule("memref.load", "memref.store")
def memref_access_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, MemRefAccessOp):
        return  # the generic form: not modelled
    check_declared(ctx, op.memref, op.memref_type)
    if op.is_write:
        check_declared(ctx, op.stored_value, element_type(op.memref_type))


@op_rule("memref.dim")
def dim_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, MemRefDimOp):
        return  # the generic form: not modelled
    check_declared(ctx, op.source, op.source_type)


@op_rule("affine.dma_start", "affine.dma_wait")
def dma_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineDmaOp):
        return  # the generic form: not modelled
    for (memref, _, _), declared in zip(op.accesses, op.memref_types, strict=False):
        check_declared(ctx, memref, declared)


@op_rule("affine.for")
def iter_arg_types(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineForOp):
        return  # the generic form: not modelled
    for (_, init), declared in zip(op.iter_args, op.result_types, strict=False):
        check_declared(ctx, init, declared)
