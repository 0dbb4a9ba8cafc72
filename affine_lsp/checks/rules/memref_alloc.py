"""Allocation: memref.alloca needs an automatic allocation scope around it,
memref.realloc contiguous memrefs of one element type and memory space, and
alignments (of loads, stores, allocations and globals, and
memref.assume_alignment) are positive powers of two."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Fix, TextEdit
from affine_lsp.checks.layouts import layout_of
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, op_rule
from affine_lsp.checks.rules.memref_common import (
    LAYOUT,
    RESULT_TYPE,
    Declared,
    declared_result,
    declared_source,
    report_result,
    result_anchor,
    source_anchor,
)
from affine_lsp.checks.symbols import global_view
from affine_lsp.ir import (
    IntegerType,
    MemRefType,
    Operation,
    attribute_entries,
    parse_integer,
    type_from_node,
)
from affine_lsp.syntax import FIELD, Node, Span

ALLOCA_SCOPE = register(
    "memref-alloca-scope",
    "memref.alloca outside any op with an automatic allocation scope (func.func, affine.for, "
    "memref.alloca_scope, ...), so nothing would free it",
    "memref",
)
ALIGNMENT = register(
    "memref-alignment",
    "an alignment that is not a positive power of two",
    "memref",
)
REALLOC_SIZE = register(
    "memref-realloc-size",
    "memref.realloc: a dynamic size operand is missing for a dynamic result, or given for a "
    "static one",
    "memref",
)


@op_rule("memref.alloca")
def alloca_scope(op: Operation, ctx: CheckContext) -> None:
    """Report only when every enclosing op is known to lack the trait: ops we do not know
    of a registered dialect might have it."""
    dialects = ctx.options.dialects
    for ancestor in op.ancestors():
        if ancestor.name in dialects.allocation_scope:
            return
        if ancestor.name not in dialects.no_allocation_scope and dialects.is_registered(
            ancestor.name
        ):
            return
    ctx.report(
        ALLOCA_SCOPE,
        op.name_span,
        "'memref.alloca' op requires an ancestor op with AutomaticAllocationScope trait: "
        "stack memory is freed when such an op (func.func, affine.for, memref.alloca_scope, "
        "...) exits, and none encloses this one",
    )


# -- alignment ---------------------------------------------------------------------------


def _is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _alignment_value(node: Node) -> int | None:
    """An alignment written as a 64-bit signless integer (None for anything else)."""
    if node.type == "typed_literal":
        declared = type_from_node(node.child_by_field_id(FIELD["type"]))
        if declared != IntegerType(64):
            return None
        node = node.child_by_field_id(FIELD["value"]) or node
    return parse_integer(node) if node.type == "integer" else None


def _check_alignment(ctx: CheckContext, op: Operation, node: Node | None) -> None:
    if node is None:
        return
    value = _alignment_value(node)
    if value is not None and _is_power_of_two(value):
        return
    ctx.report(
        ALIGNMENT,
        Span.of(node),
        f"'{op.name}' op attribute 'alignment' failed to satisfy constraint: 64-bit signless "
        "integer attribute whose value is positive and whose value is a power of two > 0: an "
        "alignment is a number of bytes such as 8, 16 or 64",
    )


@op_rule("memref.load", "memref.store", "memref.alloc", "memref.alloca", "memref.realloc")
def alignment_attribute(op: Operation, ctx: CheckContext) -> None:
    if op.attributes_node is None and op.kind != "generic_operation":
        return
    _check_alignment(ctx, op, attribute_entries(body_node(op)).get("alignment"))


@op_rule("memref.global")
def global_alignment(op: Operation, ctx: CheckContext) -> None:
    view = global_view(op)
    if view is not None:
        _check_alignment(ctx, op, view.alignment)


@op_rule("memref.assume_alignment")
def assume_alignment(op: Operation, ctx: CheckContext) -> None:
    body = body_node(op)
    node = body.child_by_field_id(FIELD["alignment"]) if body is not None else None
    value = parse_integer(node) if node is not None and node.type == "integer" else None
    if node is None or value is None:
        return
    if value <= 0:
        ctx.report(
            ALIGNMENT,
            Span.of(node),
            "'memref.assume_alignment' op attribute 'alignment' failed to satisfy constraint: "
            "32-bit signless integer attribute whose value is positive: an alignment is a "
            "positive power of two",
        )
    elif not _is_power_of_two(value):
        ctx.report(
            ALIGNMENT,
            Span.of(node),
            f"alignment must be power of 2: {value} is not",
        )


# -- memref.realloc --------------------------------------------------------------------------


@op_rule("memref.realloc")
def realloc(op: Operation, ctx: CheckContext) -> None:
    if op.kind == "generic_operation":
        return  # not modelled
    source, result = declared_source(op), declared_result(op)
    old, new = source.memref, result.memref
    if old is None or new is None or new.shape is None:
        return
    if not _contiguous(old, ctx):
        span, related = source_anchor(op, source)
        ctx.report(
            LAYOUT,
            span,
            f"unsupported layout for source memref type '{old}': realloc copies a contiguous "
            "buffer",
            related=related,
        )
        return
    if not _contiguous(new, ctx):
        report_result(
            ctx,
            op,
            result,
            f"unsupported layout for result memref type '{new}': realloc returns a contiguous "
            "buffer",
            LAYOUT,
        )
        return
    for what, differs in (
        ("memory spaces", old.memory_space != new.memory_space),
        ("element types", old.element != new.element),
    ):
        if differs:
            report_result(
                ctx,
                op,
                result,
                f"different {what} specified for source memref type '{old}' and result memref "
                f"type '{new}'",
                RESULT_TYPE,
            )
            return
    _check_realloc_size(ctx, op, result, new)


def _contiguous(memref: MemRefType, ctx: CheckContext) -> bool:
    layout = layout_of(memref, ctx.module.aliases)
    return not layout.known or layout.is_identity


def _check_realloc_size(
    ctx: CheckContext, op: Operation, result: Declared, new: MemRefType
) -> None:
    body = body_node(op)
    sizes_node = body.child_by_field_id(FIELD["operands"]) if body is not None else None
    sizes = [c for c in sizes_node.named_children if c.type == "value_use"] if sizes_node else []
    if new.dynamic_dims and not sizes:
        span, related = result_anchor(op, result)
        ctx.report(
            REALLOC_SIZE,
            span,
            f"missing dimension operand for result type '{new}': write the new size as "
            "`memref.realloc %src(%size)`",
            related=related,
        )
    elif not new.dynamic_dims and sizes:
        assert sizes_node is not None
        opening, closing = sizes_node.prev_sibling, sizes_node.next_sibling
        removal = (
            (Fix("Remove the size operand", (TextEdit(Span.between(opening, closing), ""),)),)
            if opening is not None and closing is not None and closing.type == ")"
            else ()
        )
        ctx.report(
            REALLOC_SIZE,
            Span(sizes[0].start_byte, sizes[-1].end_byte),
            f"unnecessary dimension operand for result type '{new}': its size is static",
            fixes=removal,
        )
