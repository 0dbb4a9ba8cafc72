"""memref dialect ops (seed `memref-dialect.txt`): operand counts and types
that MLIR's verifiers check. View-like, reshaping, DMA, atomic, allocation and
global ops have modules of their own (`memref_*.py`)."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Related
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, join, op_rule, plural
from affine_lsp.ir import (
    AffineMap,
    AliasType,
    MemRefAccessOp,
    MemRefAllocOp,
    MemRefDimOp,
    MemRefType,
    OpaqueType,
    Operation,
    map_from_node,
    type_from_node,
)
from affine_lsp.syntax import FIELD, Node, Span, text

DYNAMIC_SIZES = register(
    "memref-dynamic-size-count",
    "memref.alloc/alloca/view: dynamic size operands differ from the `?` dimensions of the type",
    "memref",
)
LAYOUT_SYMBOLS = register(
    "memref-symbol-count",
    "memref.alloc/alloca: `[symbols]` differ from the symbols of the layout map",
    "memref",
)
INDEX_COUNT = register(
    "memref-index-count",
    "memref.load/store/atomic_rmw: index count differs from the memref rank",
    "memref",
)
INDEX_EXPRESSION = register(
    "memref-index-expression",
    "memref.load/store indices must be SSA values, not expressions (use affine.load/store)",
    "memref",
)
LAYOUT_RANK = register(
    "memref-layout-rank",
    "a memref type's affine-map layout has a different number of dimensions than its rank",
    "memref",
)
ZERO_RESULTS = register(
    "op-zero-results", "an op that defines no results is given results", "memref"
)
DIM_RANK = register(
    "memref-dim-rank",
    "memref.dim of a 0-ranked memref, or of a dimension it does not have",
    "memref",
)


def _layout_symbol_count(layout: AffineMap) -> int:
    """MLIR drops an identity layout from a memref type, symbols and all."""
    return 0 if layout.is_identity else layout.num_symbols


def layout_symbols(ctx: CheckContext, type_node: Node | None) -> int | None:
    """How many symbols a memref type's layout has (None if unknown)."""
    if type_node is None or type_node.type != "memref_type":
        return None
    layout = type_node.child_by_field_id(FIELD["layout"])
    if layout is None:
        return 0
    if layout.type in ("affine_map", "legacy_affine_map"):
        return _layout_symbol_count(map_from_node(layout))
    if layout.type == "attribute_alias":
        alias = ctx.module.aliases.get(text(layout))
        return _layout_symbol_count(alias.map) if alias is not None and alias.map else None
    if layout.type == "strided_layout":
        return text(layout).count("?")  # one symbol per dynamic stride or offset
    return 0  # a memory space


@op_rule("memref.alloc", "memref.alloca")
def alloc_counts(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, MemRefAllocOp):
        return  # not modelled
    memref_type = op.memref_type
    if not isinstance(memref_type, MemRefType) or memref_type.shape is None:
        return
    expected = memref_type.dynamic_dims
    sizes = op.dynamic_sizes
    type_related = (
        (Related(op.type_span, f"{memref_type} has {plural(expected, 'dynamic dimension')}"),)
        if op.type_span
        else ()
    )
    if len(sizes) != expected:
        body = body_node(op)
        sizes_node = body.child_by_field_id(FIELD["dynamic_sizes"]) if body is not None else None
        span = (
            join([u.span for u in sizes[expected:]])
            if len(sizes) > expected
            else Span.of(sizes_node)
            if sizes_node is not None
            else op.type_span or op.name_span
        )
        ctx.report(
            DYNAMIC_SIZES,
            span,
            f"incorrect number of dynamic sizes, has {len(sizes)}, expected {expected}: one "
            "size operand is needed for each '?' of the type",
            related=type_related,
        )
    # (a layout of another rank: `memref_types`, for every memref type)
    body = body_node(op)
    type_node = body.child_by_field_id(FIELD["type"]) if body is not None else None
    symbols_expected = layout_symbols(ctx, type_node)
    if symbols_expected is not None and len(op.symbol_operands) != symbols_expected:
        symbols = op.symbol_operands
        ctx.report(
            LAYOUT_SYMBOLS,
            join([u.span for u in symbols]) if symbols else op.type_span or op.name_span,
            "symbol operand count does not equal memref symbol count: expected "
            f"{symbols_expected}, got {len(symbols)}",
        )


@op_rule("memref.load", "memref.store")
def access_indices(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, MemRefAccessOp):
        return  # not modelled
    plain = {id(n) for n in op.index_nodes if n.type == "value_use"}
    for node in op.index_nodes:
        if id(node) not in plain:
            ctx.report(
                INDEX_EXPRESSION,
                Span.of(node),
                f"expected SSA operand: {op.name} takes SSA values as indices, not the "
                f"expression '{text(node)}'; compute it with affine.apply, or use "
                f"{'affine.store' if op.is_write else 'affine.load'}",
            )
    memref_type = op.memref_type
    if not isinstance(memref_type, MemRefType) or memref_type.rank is None:
        return
    count = len(op.index_nodes)
    if count != memref_type.rank:
        kind = "store" if op.is_write else "load"
        span = (
            join([Span.of(n) for n in op.index_nodes[memref_type.rank :]])
            if count > memref_type.rank
            else op.indices_span or op.name_span
        )
        ctx.report(
            INDEX_COUNT,
            span,
            f"incorrect number of indices for {kind}, expected {memref_type.rank} but got {count}",
        )


@op_rule("memref.dim")
def dim_rank(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, MemRefDimOp):
        return  # not modelled
    memref_type = op.source_type
    if not isinstance(memref_type, MemRefType) or memref_type.rank is None:
        return
    if memref_type.rank == 0:
        ctx.report(
            DIM_RANK,
            op.source.span if op.source is not None else op.name_span,
            "'memref.dim' op operand #0 must be unranked.memref of any type values or "
            f"non-0-ranked.memref of any type values, but got '{memref_type}'",
        )
    elif isinstance(op.index, int) and not 0 <= op.index < memref_type.rank:
        ctx.report(
            DIM_RANK,
            op.name_span,
            f"index {op.index} is out of range for {memref_type} of rank {memref_type.rank}",
        )


_NO_RESULTS = (
    "memref.store", "memref.dealloc", "memref.copy", "memref.prefetch", "memref.dma_start",
    "memref.dma_wait", "affine.store", "affine.vector_store", "affine.prefetch",
    "affine.dma_start", "affine.dma_wait", "affine.yield",
)  # fmt: skip


@op_rule(*_NO_RESULTS)
def zero_results(op: Operation, ctx: CheckContext) -> None:
    """Stores, copies, DMAs and terminators define no values (also in the generic form)."""
    if op.results:
        span = Span(op.results[0].span.start_byte, op.results[-1].span.end_byte)
    elif op.kind == "generic_operation" and op.result_types:
        body = body_node(op)
        type_node = body.child_by_field_id(FIELD["type"]) if body is not None else None
        span = Span.of(type_node) if type_node is not None else op.name_span
    else:
        return
    ctx.report(ZERO_RESULTS, span, f"'{op.name}' op requires zero results")


OPERAND_TYPES = register(
    "memref-operand-types",
    "operands whose types the op does not accept together (memref.copy of another shape or "
    "element type, memref.rank of a non-memref, distinct_objects results that differ from "
    "its operands)",
    "memref",
)


@op_rule("memref.copy")
def copy_types(op: Operation, ctx: CheckContext) -> None:
    body = body_node(op)
    if body is None or op.kind == "generic_operation":
        return  # the generic form is not modelled
    source = type_from_node(body.child_by_field_id(FIELD["from"]))
    target_node = body.child_by_field_id(FIELD["to"])
    target = type_from_node(target_node)
    if not isinstance(source, MemRefType) or not isinstance(target, MemRefType):
        return
    span = op.operands[1].span if len(op.operands) > 1 else Span.of(target_node or body)
    if source.element != target.element:
        ctx.report(
            OPERAND_TYPES,
            span,
            f"'memref.copy' op requires the same element type for all operands: {source} and "
            f"{target}",
        )
    elif not _compatible_shapes(source, target):
        ctx.report(
            OPERAND_TYPES,
            span,
            f"'memref.copy' op requires the same shape for all operands: {source} and {target}",
        )


def _compatible_shapes(a: MemRefType, b: MemRefType) -> bool:
    """Unranked memrefs and `?` sizes are compatible with anything."""
    if a.shape is None or b.shape is None:
        return True
    if len(a.shape) != len(b.shape):
        return False
    return all(x is None or y is None or x == y for x, y in zip(a.shape, b.shape, strict=True))


@op_rule("memref.rank")
def rank_operand(op: Operation, ctx: CheckContext) -> None:
    if not op.operands:
        return
    use = op.operands[0]
    declared = op.operand_types[0] if op.operand_types else None
    if declared is None:
        body = body_node(op)
        declared = type_from_node(
            body.child_by_field_id(FIELD["from"]) if body is not None else None
        )
    if declared is None or isinstance(declared, MemRefType | AliasType | OpaqueType):
        return
    ctx.report(
        OPERAND_TYPES,
        use.span,
        "'memref.rank' op operand #0 must be ranked or unranked memref of any type values, but "
        f"got '{declared}'",
    )


@op_rule("memref.distinct_objects")
def distinct_objects(op: Operation, ctx: CheckContext) -> None:
    if op.kind != "generic_operation":
        return  # the custom form declares operand types only: results take them
    if not op.operand_types:
        ctx.report(
            OPERAND_TYPES,
            op.name_span,
            "'memref.distinct_objects' op expected at least one operand: it marks its "
            "operands as distinct memrefs",
        )
    elif op.operand_types != op.result_types:
        ctx.report(
            OPERAND_TYPES,
            op.results[0].span if op.results else op.name_span,
            "'memref.distinct_objects' op operand types and result types must match: each "
            "result is its operand, with the same type",
        )
