"""Atomic read-modify-write: memref.atomic_rmw (one index per dimension, a value of
the element type, and a value kind that suits the operation), and
memref.generic_atomic_rmw with its body (one argument of the element type, no
side effects, an atomic_yield of the element type)."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Related
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, is_generic, join, op_rule
from affine_lsp.checks.rules.memref import INDEX_COUNT
from affine_lsp.checks.rules.memref_common import RESULT_TYPE
from affine_lsp.ir import (
    Dialects,
    FloatType,
    FunctionType,
    IntegerType,
    MemRefType,
    Operation,
    Type,
    element_type,
    type_from_node,
)
from affine_lsp.syntax import FIELD, Span, text

ATOMIC_KIND = register(
    "memref-atomic-kind",
    "memref.atomic_rmw: the value is not of the memref's element type, or not a float for a "
    "floating-point kind (addf, mulf, ...) or an integer for an integer kind (addi, ori, ...)",
    "memref",
)
ATOMIC_BODY = register(
    "memref-atomic-body",
    "memref.generic_atomic_rmw: its body takes one argument of the element type, has no side "
    "effects and yields a value of the element type",
    "memref",
)

_FLOAT_KINDS = frozenset({"addf", "maximumf", "minimumf", "mulf"})
_INTEGER_KINDS = frozenset({"addi", "maxs", "maxu", "mins", "minu", "muli", "ori", "xori", "andi"})

# Ops known to read or write memory (or allocate): not allowed in an atomic body.
_SIDE_EFFECTS = frozenset(
    {
        "memref.alloc", "memref.alloca", "memref.dealloc", "memref.load", "memref.store",
        "memref.copy", "memref.realloc", "memref.dma_start", "memref.dma_wait",
        "memref.atomic_rmw", "memref.generic_atomic_rmw", "memref.prefetch",
        "affine.load", "affine.store", "affine.vector_load", "affine.vector_store",
        "affine.prefetch", "affine.dma_start", "affine.dma_wait", "func.call",
    }
)  # fmt: skip


@op_rule("memref.atomic_rmw")
def atomic_rmw(op: Operation, ctx: CheckContext) -> None:
    body = body_node(op)
    if body is None or is_generic(op):
        return  # the generic form is not modelled
    signature = type_from_node(body.child_by_field_id(FIELD["type"]))
    if not isinstance(signature, FunctionType) or len(signature.inputs) != 2:
        return
    value_type, memref = signature.inputs
    if not isinstance(memref, MemRefType) or memref.shape is None:
        return
    value_node = body.child_by_field_id(FIELD["value"])
    value_span = Span.of(value_node) if value_node is not None else op.name_span
    if value_type != memref.element:
        ctx.report(
            ATOMIC_KIND,
            value_span,
            "'memref.atomic_rmw' op failed to verify that value type matches element type of "
            f"memref: the value is {value_type}, {memref} holds {memref.element}",
        )
        return
    indices = body.child_by_field_id(FIELD["indices"])
    index_nodes = [c for c in indices.named_children if c.is_named] if indices else []
    if len(index_nodes) != len(memref.shape):
        surplus = index_nodes[len(memref.shape) :]
        ctx.report(
            INDEX_COUNT,
            join([Span.of(n) for n in surplus]) if surplus else Span.of(indices or body),
            "expects the number of subscripts to be equal to memref rank: "
            f"{len(index_nodes)} for {memref} of rank {len(memref.shape)}",
        )
        return
    kind_node = body.child_by_field_id(FIELD["kind"])
    kind = text(kind_node).strip('"') if kind_node is not None else ""
    wanted = (
        (FloatType, "a floating-point type")
        if kind in _FLOAT_KINDS
        else (IntegerType, "an integer type")
        if kind in _INTEGER_KINDS
        else None
    )
    if wanted is not None and not isinstance(value_type, wanted[0]):
        ctx.report(
            ATOMIC_KIND,
            Span.of(kind_node) if kind_node is not None else value_span,
            f"'memref.atomic_rmw' op with kind '{kind}' expects {wanted[1]}, but the value is "
            f"{value_type}",
        )


@op_rule("memref.generic_atomic_rmw")
def generic_atomic_rmw(op: Operation, ctx: CheckContext) -> None:
    memref = _memref_type(op)
    element = element_type(memref)
    if element is None:
        return
    if is_generic(op) and op.result_types and op.result_types[0] != element:
        ctx.report(
            RESULT_TYPE,
            op.results[0].span if op.results else op.name_span,
            "'memref.generic_atomic_rmw' op failed to verify that result type matches element "
            f"type of memref: the result is declared {op.result_types[0]}, {memref} holds "
            f"{element}",
        )
        return
    region = op.regions[0] if op.regions else None
    entry = region.entry if region is not None else None
    if region is None or entry is None:
        return
    if len(entry.arguments) != 1:
        ctx.report(
            ATOMIC_BODY,
            Span(entry.span.start_byte, entry.arguments[-1].span.end_byte)
            if entry.arguments
            else region.span,
            f"expected single number of entry block arguments: the body receives the current "
            f"value ({element}) as its only argument, not {len(entry.arguments)}",
        )
        return
    argument = entry.arguments[0]
    if argument.type is not None and argument.type != element:
        ctx.report(
            ATOMIC_BODY,
            argument.span,
            "expected block argument of the same type result type: "
            f"{argument.display_name} is {argument.type}, the result is {element}",
        )
        return
    for nested in op.walk():
        if nested is not op and _has_side_effects(nested, ctx.options.dialects):
            ctx.report(
                ATOMIC_BODY,
                nested.name_span,
                f"body of 'memref.generic_atomic_rmw' should contain only operations with no "
                f"side effects: {nested.name} may read or write memory",
            )
            return


def _memref_type(op: Operation) -> Type | None:
    if is_generic(op):
        return op.operand_types[0] if op.operand_types else None
    body = body_node(op)
    return type_from_node(body.child_by_field_id(FIELD["type"]) if body is not None else None)


def _has_side_effects(op: Operation, dialects: Dialects) -> bool:
    """Known effects, or an unregistered op (MLIR assumes the worst of those)."""
    if op.name in _SIDE_EFFECTS:
        return True
    dialect = op.name.split(".", 1)[0] if "." in op.name else ""
    if op.name in dialects.pure or op.name in dialects.constant:
        return False
    return dialect not in dialects.registered


@op_rule("memref.atomic_yield")
def atomic_yield(op: Operation, ctx: CheckContext) -> None:
    parent = op.parent_op
    if parent is None or parent.name != "memref.generic_atomic_rmw" or not op.operands:
        return
    expected = element_type(_memref_type(parent))
    use = op.operands[0]
    actual = use.value.type if use.value is not None else None
    if expected is None or actual is None or actual == expected:
        return
    ctx.report(
        ATOMIC_BODY,
        use.span,
        f"'memref.atomic_yield' op types mismatch between yield op: '{actual}' and its parent: "
        f"'{expected}': the body yields the new value of the element",
        related=(Related(parent.name_span, "the parent memref.generic_atomic_rmw"),),
    )
