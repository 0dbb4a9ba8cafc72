"""Reshaping memref ops: memref.reshape, memref.expand_shape and
memref.collapse_shape. Reassociation groups must partition the dimensions of
the larger shape in order and multiply up to the sizes of the smaller one, and
the declared result type must be the one MLIR computes (the layout of a
non-contiguous source carries over, with strides derived from the groups)."""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Fix, TextEdit
from affine_lsp.checks.layouts import Strided, layout_of, saturated_mul, strided_type
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, is_generic, op_rule
from affine_lsp.checks.rules.memref_common import (
    LAYOUT,
    Declared,
    declared_result,
    declared_source,
    mixed_list,
    report_result,
    source_anchor,
)
from affine_lsp.ir import (
    AliasDef,
    FunctionType,
    MemRefType,
    Operation,
    layout_text,
    parse_integer,
    type_from_node,
)
from affine_lsp.syntax import FIELD, Node, Span

REASSOCIATION = register(
    "memref-reassociation",
    "expand_shape/collapse_shape: reassociation groups that are not contiguous, out of "
    "bounds, too many or too few, or whose sizes do not multiply to the collapsed size",
    "memref",
)
OUTPUT_SHAPE = register(
    "memref-output-shape",
    "memref.expand_shape: output_shape has another length than the result rank, or a "
    "constant that differs from the result type",
    "memref",
)
OUTPUT_SHAPE_MISSING = register(
    "memref-output-shape-missing",
    "memref.expand_shape in the custom form without `output_shape` (MLIR 22's syntax "
    "requires it, the sizes of the result)",
    "memref",
)
RESHAPE_SHAPE = register(
    "memref-reshape-shape",
    "memref.reshape: the shape operand's length is dynamic, or differs from the result rank",
    "memref",
)


# -- memref.reshape ----------------------------------------------------------------------


@op_rule("memref.reshape")
def reshape(op: Operation, ctx: CheckContext) -> None:
    types = _reshape_types(op)
    if types is None or len(op.operands) < 2:
        return
    source, shape, result = types
    if not isinstance(source.type, MemRefType) or not isinstance(result.type, MemRefType):
        return
    if source.type.element != result.type.element:
        report_result(
            ctx,
            op,
            result,
            "element types of source and destination memref types should be the same: "
            f"{source.type.element} vs {result.type.element}",
        )
        return
    if source.type.shape is not None and not _identity(source.type, ctx):
        span, related = source_anchor(op, source)
        ctx.report(
            LAYOUT,
            span,
            f"source memref type should have identity affine map: {source.type} has a layout",
            related=related,
        )
        return
    if result.type.shape is None or not isinstance(shape.type, MemRefType):
        return
    if not _identity(result.type, ctx):
        report_result(
            ctx,
            op,
            result,
            f"result memref type should have identity affine map: {result.type} has a layout",
            LAYOUT,
        )
        return
    length = shape.type.shape[0] if shape.type.shape else None
    shape_use = op.operands[1]
    if shape.type.shape and length is None:
        ctx.report(
            RESHAPE_SHAPE,
            shape_use.span,
            "cannot use shape operand with dynamic length to reshape to statically-ranked "
            f"memref type: {shape_use.name} is {shape.type}, the result has rank "
            f"{len(result.type.shape)}",
        )
    elif length is not None and length != len(result.type.shape):
        ctx.report(
            RESHAPE_SHAPE,
            shape_use.span,
            "length of shape operand differs from the result's memref rank: "
            f"{shape_use.name} holds {length} sizes, {result.type} has rank "
            f"{len(result.type.shape)}",
        )


def _reshape_types(op: Operation) -> tuple[Declared, Declared, Declared] | None:
    if is_generic(op):
        if len(op.operand_types) < 2 or not op.result_types:
            return None
        return (
            Declared(op.operand_types[0], None),
            Declared(op.operand_types[1], None),
            declared_result(op),
        )
    body = body_node(op)
    signature = body.child_by_field_id(FIELD["from"]) if body is not None else None
    function_type = type_from_node(signature)
    if not isinstance(function_type, FunctionType) or signature is None:
        return None
    if len(function_type.inputs) != 2 or len(function_type.results) != 1:
        return None
    inputs = signature.child_by_field_id(FIELD["inputs"])
    input_nodes = [c for c in inputs.named_children if c.type != "comment"] if inputs else []
    results = signature.child_by_field_id(FIELD["results"])
    return (
        Declared(function_type.inputs[0], Span.of(input_nodes[0]) if input_nodes else None),
        Declared(function_type.inputs[1], None),
        Declared(function_type.results[0], Span.of(results) if results is not None else None),
    )


def _identity(memref: MemRefType, ctx: CheckContext) -> bool:
    layout = layout_of(memref, ctx.module.aliases)
    return not layout.known or layout.is_identity


# -- expand_shape / collapse_shape ----------------------------------------------------------


@dataclass(frozen=True)
class Group:
    dims: tuple[int, ...]
    spans: tuple[Span, ...]
    span: Span


def _reassociation(node: Node | None) -> list[Group] | None:
    """`[[0, 1], [2]]` as groups, each with the spans of its indices and of itself."""
    if node is None or node.has_error:
        return None
    groups: list[Group] = []
    depth = 0
    start = 0
    dims: list[int] = []
    spans: list[Span] = []
    for child in node.children:
        if child.type == "[":
            depth += 1
            if depth == 2:
                start, dims, spans = child.start_byte, [], []
        elif child.type == "]":
            if depth == 2:
                groups.append(Group(tuple(dims), tuple(spans), Span(start, child.end_byte)))
            depth -= 1
        elif child.type == "integer":
            dims.append(parse_integer(child) or 0)
            spans.append(Span.of(child))
    return groups


@dataclass(frozen=True)
class _Reshape:
    op: Operation
    source: Declared
    result: Declared
    groups: list[Group]
    reassociation_span: Span


def _reshape_op(op: Operation) -> _Reshape | None:
    if is_generic(op):
        return None  # not modelled
    body = body_node(op)
    node = body.child_by_field_id(FIELD["reassociation"]) if body is not None else None
    groups = _reassociation(node)
    if groups is None or node is None:
        return None
    return _Reshape(op, declared_source(op), declared_result(op), groups, Span.of(node))


@op_rule("memref.expand_shape")
def expand_shape(op: Operation, ctx: CheckContext) -> None:
    reshape_op = _reshape_op(op)
    if reshape_op is None:
        return
    if _lacks_output_shape(op, reshape_op, ctx):
        return
    source, result = reshape_op.source.memref, reshape_op.result.memref
    if source is None or result is None or source.shape is None or result.shape is None:
        return
    if len(source.shape) > len(result.shape):
        r0, r1 = len(source.shape), len(result.shape)
        report_result(
            ctx,
            op,
            reshape_op.result,
            f"'memref.expand_shape' op has source rank {r0} and result rank {r1}. This is not "
            f"an expansion ({r0} > {r1}).",
            REASSOCIATION,
        )
        return
    if not _check_groups(ctx, reshape_op, source.shape, result.shape):
        return
    layout = layout_of(source, ctx.module.aliases)
    if not layout.known:
        return
    if layout.is_identity:
        expected = MemRefType(result.shape, source.element, None, source.memory_space)
    elif layout.strided is None:
        span, related = source_anchor(op, reshape_op.source)
        message = f"invalid source layout map: {source} has no strides"
        ctx.report(LAYOUT, span, message, related=related)
        return
    else:
        strided = _expanded_strides(layout.strided, result.shape, reshape_op.groups)
        expected = strided_type(result.shape, source, strided)
    if not _same_type(expected, result, ctx.module.aliases):
        report_result(
            ctx,
            op,
            reshape_op.result,
            f"expected expanded type to be '{expected}' but found '{result}'",
            expected=expected,
        )
        return
    _check_output_shape(ctx, op, result)


def _lacks_output_shape(op: Operation, reshape_op: _Reshape, ctx: CheckContext) -> bool:
    """MLIR 22 parses `output_shape` right after the reassociation: report its absence
    at the token that comes instead (with the sizes as a fix where the result type
    gives them all)."""
    body = body_node(op)
    if body is None or body.child_by_field_id(FIELD["output_shape"]) is not None:
        return False
    reassociation = body.child_by_field_id(FIELD["reassociation"])
    following = reassociation.next_sibling if reassociation is not None else None
    if reassociation is None or following is None:
        return False
    fixes: tuple[Fix, ...] = ()
    result = reshape_op.result.memref
    if result is not None and result.shape is not None and None not in result.shape:
        sizes = ", ".join(str(size) for size in result.shape)
        edit = TextEdit(
            Span(reassociation.end_byte, reassociation.end_byte), f" output_shape [{sizes}]"
        )
        fixes = (Fix(f"Add output_shape [{sizes}]", (edit,), preferred=True),)
    ctx.report(
        OUTPUT_SHAPE_MISSING,
        Span.of(following),
        "custom op 'memref.expand_shape' expected 'output_shape': MLIR 22 writes the sizes of "
        "the result after the reassociation (`output_shape [...]`)",
        fixes=fixes,
    )
    return True


def _expanded_strides(
    source: Strided, shape: tuple[int | None, ...], groups: list[Group]
) -> Strided:
    """MLIR's computeExpandedLayoutMap: each source stride expands over its group."""
    reversed_strides: list[int | None] = []
    index = len(shape) - 1
    for group, stride in reversed(list(zip(groups, source.strides, strict=False))):
        current = stride
        for _ in group.dims:
            reversed_strides.append(current)
            current = saturated_mul(current, shape[index])
            index -= 1
    strides = list(reversed(reversed_strides))
    strides += [1] * (len(shape) - len(strides))
    return Strided(tuple(strides[: len(shape)]), source.offset)


def _check_output_shape(ctx: CheckContext, op: Operation, result: MemRefType) -> None:
    assert result.shape is not None
    body = body_node(op)
    listed = mixed_list(body.child_by_field_id(FIELD["output_shape"]) if body is not None else None)
    if listed is None:
        return
    if len(listed.entries) != len(result.shape):
        ctx.report(
            OUTPUT_SHAPE,
            listed.span,
            "expected number of static shape bounds to be equal to the output rank "
            f"({len(result.shape)}) but found {len(listed.entries)} inputs instead: one size per "
            "dimension of the result",
        )
        return
    for position, (entry, size) in enumerate(zip(listed.entries, result.shape, strict=True)):
        if size is not None and entry.value != size:
            given = "a value" if entry.value is None else str(entry.value)
            ctx.report(
                OUTPUT_SHAPE,
                entry.span,
                f"invalid output shape provided at pos {position}: {given}, where the result "
                f"type has {size}",
            )
            return


@op_rule("memref.collapse_shape")
def collapse_shape(op: Operation, ctx: CheckContext) -> None:
    reshape_op = _reshape_op(op)
    if reshape_op is None:
        return
    source, result = reshape_op.source.memref, reshape_op.result.memref
    if source is None or result is None or source.shape is None or result.shape is None:
        return
    if len(source.shape) < len(result.shape):
        r0, r1 = len(source.shape), len(result.shape)
        report_result(
            ctx,
            op,
            reshape_op.result,
            f"'memref.collapse_shape' op has source rank {r0} and result rank {r1}. This is "
            f"not a collapse ({r0} < {r1}).",
            REASSOCIATION,
        )
        return
    if not _check_groups(ctx, reshape_op, result.shape, source.shape):
        return
    layout = layout_of(source, ctx.module.aliases)
    if not layout.known:
        return
    if layout.is_identity:
        expected = MemRefType(result.shape, source.element, None, source.memory_space)
    else:
        strided = (
            _collapsed_strides(layout.strided, source.shape, reshape_op.groups)
            if layout.strided is not None
            else None
        )
        if strided is None:
            culprit = _non_contiguous_group(layout.strided, source.shape, reshape_op.groups)
            ctx.report(
                REASSOCIATION,
                culprit.span if culprit is not None else reshape_op.reassociation_span,
                f"invalid source layout map or collapsing non-contiguous dims: in {source}, "
                "the dimensions of this group are not contiguous in memory"
                if culprit is not None
                else f"invalid source layout map or collapsing non-contiguous dims: {source} "
                "has no strides",
            )
            return
        expected = strided_type(result.shape, source, strided)
    if not _same_type(expected, result, ctx.module.aliases):
        report_result(
            ctx,
            op,
            reshape_op.result,
            f"expected collapsed type to be '{expected}' but found '{result}'",
            expected=expected,
        )


def _collapsed_strides(
    source: Strided, shape: tuple[int | None, ...], groups: list[Group]
) -> Strided | None:
    """MLIR's computeCollapsedLayoutMap (None: the groups are not contiguous)."""
    strides = _group_strides(source, shape, groups)
    if _non_contiguous_group(source, shape, groups) is not None:
        return None
    return Strided(tuple(strides), source.offset)


def _non_contiguous_group(
    source: Strided | None, shape: tuple[int | None, ...], groups: list[Group]
) -> Group | None:
    """The first group (from the last) whose dimensions are not contiguous in memory;
    dimensions of size 1 and dynamic strides are given the benefit of the doubt."""
    if source is None:
        return None
    strides = _group_strides(source, shape, groups)
    for group, result_stride in reversed(list(zip(groups, strides, strict=False))):
        stride: int | None = result_stride
        for index in reversed(group.dims[1:]):
            stride = saturated_mul(stride, shape[index])
            if shape[index - 1] == 1:
                continue
            source_stride = source.strides[index - 1]
            if stride is not None and source_stride is not None and stride != source_stride:
                return group
    return None


def _group_strides(
    source: Strided, shape: tuple[int | None, ...], groups: list[Group]
) -> list[int | None]:
    """The stride of each collapsed dimension: that of the group's last dimension not of
    size 1, dynamic when that dimension is dynamic (it may turn out to be of size 1)."""
    strides: list[int | None] = []
    for group in groups:
        dims = list(group.dims)
        while len(dims) > 1 and shape[dims[-1]] == 1:
            dims.pop()
        if not dims:
            strides.append(1)
        elif shape[dims[-1]] is not None or len(dims) == 1:
            strides.append(source.strides[dims[-1]])
        else:
            strides.append(None)
    return strides


def _check_groups(
    ctx: CheckContext,
    reshape_op: _Reshape,
    collapsed: tuple[int | None, ...],
    expanded: tuple[int | None, ...],
) -> bool:
    """MLIR's verifyCollapsedShape; whether the groups are valid."""
    groups = reshape_op.groups
    if len(collapsed) != len(groups):
        ctx.report(
            REASSOCIATION,
            reshape_op.reassociation_span,
            f"invalid number of reassociation groups: found {len(groups)}, expected "
            f"{len(collapsed)}: one group per dimension of the collapsed shape",
        )
        return False
    next_dim = 0
    for collapsed_dim, group in enumerate(groups):
        dynamic = False
        for dim, span in zip(group.dims, group.spans, strict=True):
            if dim != next_dim:
                ctx.report(
                    REASSOCIATION,
                    span,
                    f"reassociation indices must be contiguous: {next_dim} is expected here, "
                    f"not {dim}",
                )
                return False
            next_dim += 1
            if dim >= len(expanded):
                ctx.report(
                    REASSOCIATION,
                    span,
                    f"'{reshape_op.op.name}' op reassociation index {dim} is out of bounds: the "
                    f"expanded shape has rank {len(expanded)}",
                )
                return False
            dynamic = dynamic or expanded[dim] is None
        if (collapsed[collapsed_dim] is None) != dynamic:
            ctx.report(
                REASSOCIATION,
                group.span,
                f"collapsed dim ({collapsed_dim}) must be dynamic if and only if reassociation "
                "group is dynamic: its size is known exactly when the sizes it groups are",
            )
            return False
        if not dynamic:
            size = 1
            for dim in group.dims:
                size *= expanded[dim] or 0
            if size != collapsed[collapsed_dim]:
                ctx.report(
                    REASSOCIATION,
                    group.span,
                    f"collapsed dim size ({collapsed[collapsed_dim]}) must equal reassociation "
                    f"group size ({size}): the grouped sizes multiply to the collapsed one",
                )
                return False
    if not collapsed:
        if any(size != 1 for size in expanded):
            ctx.report(
                REASSOCIATION,
                reshape_op.reassociation_span,
                "rank 0 memrefs can only be extended/collapsed with/from ones: a rank-0 memref "
                "holds one element",
            )
            return False
    elif next_dim != len(expanded):
        ctx.report(
            REASSOCIATION,
            reshape_op.reassociation_span,
            f"expanded rank ({len(expanded)}) inconsistent with number of reassociation indices "
            f"({next_dim}): the groups must cover every dimension of the expanded shape",
        )
        return False
    return True


def _same_type(expected: MemRefType, declared: MemRefType, aliases: dict[str, AliasDef]) -> bool:
    """Type equality as MLIR sees it, with an aliased layout replaced by its value (an
    unknown alias: equal, so nothing is reported)."""
    layout = declared.layout
    if layout is None or not layout.startswith("#"):
        return expected == declared
    alias = aliases.get(layout)
    value = alias.node.child_by_field_id(FIELD["value"]) if alias and alias.node else None
    if value is None:
        return True
    shape = declared.shape
    rank = len(shape) if shape is not None else None
    resolved = MemRefType(shape, declared.element, layout_text(value, rank), declared.memory_space)
    return expected == resolved
