"""memref.dma_start and memref.dma_wait: their operands in order and types.

memref.dma_start takes one flat operand list: source memref, its indices,
destination memref, its indices, the number of elements, tag memref, its
indices, and optionally a stride and the number of elements per stride. MLIR
splits the list with the ranks of the memrefs it meets, in that order; so do
we, in both forms. In the custom form the indices must be index values (the
parser resolves them so), and the memref types are the three listed after `:`.
"""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, field_span, is_generic, join, op_rule, plural
from affine_lsp.checks.rules.types import check_declared
from affine_lsp.ir import INDEX, IndexType, MemRefType, Operation, Type, Use, types_from_list
from affine_lsp.syntax import FIELD, Span

DMA_OPERANDS = register(
    "memref-dma-operands",
    "memref.dma_start/dma_wait: operands missing or extra, memrefs that are not memrefs, "
    "indices or counts that are not index values, tag indices that do not match the tag's rank",
    "memref",
)

_START_MEMREFS = ("source", "destination", "tag")


def _custom_operands(op: Operation, ctx: CheckContext) -> list[tuple[Use, Type | None]] | None:
    """The flat operand list of the custom form with the types the op sees (None if an
    index operand has another type: a parse error in MLIR, reported here)."""
    body = body_node(op)
    if body is None:
        return None
    start = op.name == "memref.dma_start"
    types_node = body.child_by_field_id(FIELD["types" if start else "type"])
    declared = types_from_list(types_node)
    memref_fields = _START_MEMREFS if start else ("tag",)
    if len(declared) != len(memref_fields):
        ctx.report(
            DMA_OPERANDS,
            Span.of(types_node) if types_node is not None else op.name_span,
            f"fewer/more types expected: {op.name} lists the type of each memref it uses "
            f"({', '.join(memref_fields)}), {len(memref_fields)} in all",
        )
        return None
    by_node = {u.span.start_byte: u for u in op.operands}
    flat: list[tuple[Use, Type | None]] = []
    ok = True
    for index, child in enumerate(body.children):
        field = body.field_name_for_child(index)
        if child.type == "value_use" and field in memref_fields:
            use = by_node.get(child.start_byte)
            if use is not None:
                declared_type = declared[memref_fields.index(field)]
                check_declared(ctx, use, declared_type)
                flat.append((use, declared_type))
            continue
        nodes = child.named_children if child.type == "subscript_list" else [child]
        for node in nodes:
            use = by_node.get(node.start_byte) if node.type == "value_use" else None
            if use is None:
                continue
            before = len(ctx.found)
            check_declared(ctx, use, INDEX)  # the parser resolves them as index values
            ok = ok and len(ctx.found) == before
            flat.append((use, INDEX))
    return flat if ok else None


def _flat_operands(op: Operation, ctx: CheckContext) -> list[tuple[Use, Type | None]] | None:
    if is_generic(op):
        if len(op.operand_types) != len(op.operands):
            return None
        return list(zip(op.operands, op.operand_types, strict=True))
    return _custom_operands(op, ctx)


def _rank(type_: Type | None) -> int:
    return len(type_.shape) if isinstance(type_, MemRefType) and type_.shape is not None else 0


def _is_index(type_: Type | None) -> bool:
    return type_ is None or isinstance(type_, IndexType)


@op_rule("memref.dma_start")
def dma_start(op: Operation, ctx: CheckContext) -> None:
    operands = _flat_operands(op, ctx)
    if operands is None:
        return
    message = _dma_start_problem(operands)
    if message is None:
        return
    text, span = message
    hint = "" if is_generic(op) else _index_count_hint(op)
    ctx.report(DMA_OPERANDS, span or field_span(op, "operands") or op.name_span, text + hint)


def _index_count_hint(op: Operation) -> str:
    """In the custom form, a wrong number of indices shifts every later operand; name the
    first list whose length is not its memref's rank."""
    body = body_node(op)
    declared = types_from_list(body.child_by_field_id(FIELD["types"])) if body is not None else []
    for position, role in enumerate(_START_MEMREFS):
        indices = body.child_by_field_id(FIELD[f"{role}_indices"]) if body is not None else None
        memref = declared[position] if position < len(declared) else None
        if indices is None or not isinstance(memref, MemRefType) or memref.shape is None:
            continue
        count = sum(1 for c in indices.named_children if c.type == "value_use")
        if count != len(memref.shape):
            return (
                f" (the {role} {memref} has rank {len(memref.shape)} but "
                f"{plural(count, 'index')} {'is' if count == 1 else 'are'} given, which shifts "
                "the operands after them)"
            )
    return ""


def _dma_start_problem(
    operands: list[tuple[Use, Type | None]],
) -> tuple[str, Span | None] | None:
    """MLIR's DmaStartOp::verify, in its order: the first problem and where it is."""
    count = len(operands)
    if count < 4:
        return f"expected at least 4 operands, but got {count}", None
    position = 0  # of the next memref
    ranks = 0
    for role in _START_MEMREFS:
        if role == "tag":
            use, type_ = operands[position]
            if not _is_index(type_):
                return f"expected num elements to be of index type: {use.name} is {type_}", use.span
            position += 1
        use, type_ = operands[position]
        if not isinstance(type_, MemRefType):
            return f"expected {role} to be of memref type: {use.name} is {type_}", use.span
        rank = _rank(type_)
        ranks += rank
        if count < ranks + 4:
            return (
                f"expected at least {ranks + 4} operands: the {role} {type_} has rank {rank}, "
                f"and the op has {count}",
                None,
            )
        indices = operands[position + 1 : position + 1 + rank]
        bad = next((u for u, t in indices if not _is_index(t)), None)
        if bad is not None:
            return f"expected {role} indices to be of index type: {bad.name} is not", bad.span
        position += 1 + rank
    if count not in (position, position + 2):
        surplus = [u.span for u, _ in operands[position:]]
        return (
            f"incorrect number of operands: {count - position} after the tag indices, where "
            "none or two (a stride and a number of elements per stride) may follow",
            join(surplus),
        )
    for use, type_ in operands[position:]:
        if not _is_index(type_):
            return (
                "expected stride and num elements per stride to be of type index: "
                f"{use.name} is {type_}",
                use.span,
            )
    return None


@op_rule("memref.dma_wait")
def dma_wait(op: Operation, ctx: CheckContext) -> None:
    operands = _flat_operands(op, ctx)
    if not operands or len(operands) < 2:
        return
    tag, tag_type = operands[0]
    if not isinstance(tag_type, MemRefType):
        ctx.report(
            DMA_OPERANDS,
            tag.span,
            f"'memref.dma_wait' op operand #0 must be memref of any type values, but got "
            f"'{tag_type}': the tag is the memref the DMA signals through",
        )
        return
    for number, (use, type_) in enumerate(operands[1:], start=1):
        if not _is_index(type_):
            ctx.report(
                DMA_OPERANDS,
                use.span,
                f"'memref.dma_wait' op operand #{number} must be index, but got '{type_}': tag "
                "indices and the element count are index values",
            )
            return
    indices = operands[1:-1]
    rank = _rank(tag_type)
    if len(indices) != rank:
        span = (
            join([u.span for u, _ in indices[rank:]])
            if len(indices) > rank
            else field_span(op, "tag_indices") or tag.span
        )
        ctx.report(
            DMA_OPERANDS,
            span,
            "expected tagIndices to have the same number of elements as the tagMemRef rank, "
            f"expected {rank}, but got {len(indices)}: one index per dimension of {tag_type}",
        )
