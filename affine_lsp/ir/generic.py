"""Affine ops written in the generic form, modelled like their custom forms.

`"affine.load"(%A, %i) <{map = #map}> : (memref<10xf32>, index) -> f32` is the
same op as `affine.load %A[%i + 1] : memref<10xf32>`; MLIR prints the generic
form with `--mlir-print-op-generic` and tests use it to reach verifiers the
custom parsers guard. Here such an op becomes the same model class with the
same fields (map references, dimension and symbol operands, memref and value
operands, bounds, induction variables), so that every rule and analysis treats
both forms alike.

The split of a map's operands into dimensions and symbols needs the map: an
inline map is always known; an alias (`#map`) is looked up in the alias table
given to the builder. Without it the split is unknown: `dims` and `symbols`
stay empty, and the operands are only in `operands`.

Modelled: affine.apply/min/max, affine.load/store/vector_load/vector_store/
prefetch, affine.dma_start/dma_wait, affine.for, affine.parallel, affine.if,
affine.yield and affine.delinearize_index/linearize_index.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from affine_lsp.ir.affine import AffineMap, IntegerSet
from affine_lsp.ir.attributes import (
    DYNAMIC_INDEX,
    attribute_entries,
    integer_array,
    integer_elements,
    integer_value,
)
from affine_lsp.ir.model import (
    AffineAccessOp,
    AffineApplyOp,
    AffineBound,
    AffineDmaOp,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    AffineYieldOp,
    IndexBasisOp,
    MapRef,
    Operation,
    ParallelBound,
    Subscripts,
    Use,
)
from affine_lsp.ir.types import INDEX, VectorType
from affine_lsp.syntax import FIELD, Node, Span


class Builder(Protocol):
    """What the specialisers need of the builder of the item (`ir.build`)."""

    def map_ref(self, node: Node | None) -> MapRef | None: ...

    def resolve(self, ref: MapRef | None) -> AffineMap | IntegerSet | None: ...

    def after_regions(self, action: Callable[[], None]) -> None: ...


GENERIC_CLASSES: dict[str, type[Operation]] = {
    "affine.apply": AffineApplyOp,
    "affine.min": AffineApplyOp,
    "affine.max": AffineApplyOp,
    "affine.load": AffineAccessOp,
    "affine.store": AffineAccessOp,
    "affine.vector_load": AffineAccessOp,
    "affine.vector_store": AffineAccessOp,
    "affine.prefetch": AffineAccessOp,
    "affine.dma_start": AffineDmaOp,
    "affine.dma_wait": AffineDmaOp,
    "affine.for": AffineForOp,
    "affine.parallel": AffineParallelOp,
    "affine.if": AffineIfOp,
    "affine.yield": AffineYieldOp,
    "affine.delinearize_index": IndexBasisOp,
    "affine.linearize_index": IndexBasisOp,
}

# AtomicRMWKind values, as the generic form of affine.parallel lists its reductions.
REDUCTION_NAMES = (
    "addf", "addi", "andi", "assign", "maximumf", "maxnumf", "maxs", "maxu", "minimumf",
    "minnumf", "mins", "minu", "mulf", "muli", "ori", "xori",
)  # fmt: skip


def _split(uses: list[Use], inputs: AffineMap | IntegerSet | None) -> tuple[list[Use], list[Use]]:
    """(dims, symbols) of a map's operands; both empty when the map is unknown."""
    if inputs is None:
        return [], []
    dims, symbols = uses[: inputs.num_dims], uses[inputs.num_dims :]
    for use in dims:
        use.role = "dim"
    for use in symbols:
        use.role = "symbol"
    return dims, symbols


def _map(builder: Builder, node: Node | None) -> tuple[MapRef | None, AffineMap | None]:
    ref = builder.map_ref(node)
    resolved = builder.resolve(ref)
    return ref, resolved if isinstance(resolved, AffineMap) else None


def _apply(builder: Builder, op: Operation, attributes: dict[str, Node]) -> None:
    assert isinstance(op, AffineApplyOp)
    op.map_ref, affine_map = _map(builder, attributes.get("map"))
    op.dims, op.symbols = _split(op.operands, affine_map)


# (position of the stored value or None, position of the memref) per access op
_ACCESS_LAYOUT = {
    "affine.load": (None, 0),
    "affine.vector_load": (None, 0),
    "affine.prefetch": (None, 0),
    "affine.store": (0, 1),
    "affine.vector_store": (0, 1),
}


def _access(builder: Builder, op: Operation, attributes: dict[str, Node]) -> None:
    assert isinstance(op, AffineAccessOp)
    value_at, memref_at = _ACCESS_LAYOUT[op.name]
    uses = op.operands
    if value_at is not None and value_at < len(uses):
        op.stored_value = uses[value_at]
        op.stored_value.role = "value"
    if memref_at < len(uses):
        op.memref = uses[memref_at]
        op.memref.role = "memref"
    if memref_at < len(op.operand_types):
        op.memref_type = op.operand_types[memref_at]
        op.memref_type_span = _input_type_span(op, memref_at)
    if op.name == "affine.vector_load" and op.result_types:
        op.vector_type = op.result_types[0]
    elif op.name == "affine.vector_store" and op.operand_types:
        op.vector_type = op.operand_types[0]
    if not isinstance(op.vector_type, VectorType):
        op.vector_type = None
    op.is_write = op.name in ("affine.store", "affine.vector_store") or (
        op.name == "affine.prefetch" and _is_true(attributes.get("isWrite"))
    )
    op.map_ref, affine_map = _map(builder, attributes.get("map"))
    map_ref = op.map_ref
    if map_ref is None or affine_map is None:
        return
    op.subscripts = _subscripts(uses[memref_at + 1 :], map_ref, affine_map)


def _subscripts(indices: list[Use], map_ref: MapRef, affine_map: AffineMap) -> Subscripts:
    """The map attribute and its operands as the subscripts of an access."""
    dims, symbols = _split(indices, affine_map)
    span = Span(indices[0].span.start_byte, indices[-1].span.end_byte) if indices else map_ref.span
    return Subscripts(span, affine_map, dims, symbols, [map_ref.span] * len(affine_map.results))


def _is_true(node: Node | None) -> bool:
    return node is not None and node.type == "boolean" and node.text == b"true"


def _input_type_span(op: Operation, position: int) -> Span | None:
    """Span of the `position`-th input type of a generic op's function type."""
    body = op.node.child_by_field_id(FIELD["body"]) if op.node is not None else None
    function_type = body.child_by_field_id(FIELD["type"]) if body is not None else None
    inputs = function_type.child_by_field_id(FIELD["inputs"]) if function_type is not None else None
    types = [c for c in inputs.named_children if c.type != "comment"] if inputs else []
    return Span.of(types[position]) if position < len(types) else None


def _segments(attributes: dict[str, Node], count: int, total: int) -> list[int]:
    """`operandSegmentSizes`, or everything in the first segment when absent/invalid."""
    sizes = integer_array(attributes.get("operandSegmentSizes"))
    if sizes is None or len(sizes) != count or sum(sizes) != total or min(sizes) < 0:
        return [total] + [0] * (count - 1)
    return sizes


def _for(builder: Builder, op: Operation, attributes: dict[str, Node]) -> None:
    assert isinstance(op, AffineForOp)
    lower_count, upper_count, init_count = _segments(attributes, 3, len(op.operands))
    groups = (
        op.operands[:lower_count],
        op.operands[lower_count : lower_count + upper_count],
        op.operands[lower_count + upper_count :],
    )
    bounds = []
    for key, uses in (("lowerBoundMap", groups[0]), ("upperBoundMap", groups[1])):
        map_ref, affine_map = _map(builder, attributes.get(key))
        span = map_ref.span if map_ref is not None else op.name_span
        bound = AffineBound(span, map_ref=map_ref)
        bound.dims, bound.symbols = _split(uses, affine_map)
        bound.minmax = affine_map is not None and len(affine_map.results) > 1
        bounds.append(bound)
    op.lower, op.upper = bounds
    step = attributes.get("step")
    op.step = integer_value(step) if step is not None else 1
    op.step_span = Span.of(step) if step is not None else None
    inits = groups[2]
    for use in inits:
        use.role = "init"
    builder.after_regions(lambda: _for_region_arguments(op, inits))


def _for_region_arguments(op: AffineForOp, inits: list[Use]) -> None:
    """The entry block's arguments: the induction variable, then the iter_args."""
    body = op.body
    if body is None or not body.blocks:
        return
    arguments = body.blocks[0].arguments
    if arguments:
        op.induction_variable = arguments[0]
        arguments[0].role = "induction_variable"
        if arguments[0].type is None:
            arguments[0].type = INDEX
    for argument, init in zip(arguments[1:], inits, strict=False):
        argument.role = "iter_arg"
        op.iter_args.append((argument, init))


def _if(builder: Builder, op: Operation, attributes: dict[str, Node]) -> None:
    assert isinstance(op, AffineIfOp)
    op.condition = builder.map_ref(attributes.get("condition"))
    resolved = builder.resolve(op.condition)
    condition = resolved if isinstance(resolved, IntegerSet) else None
    op.dims, op.symbols = _split(op.operands, condition)


def _dma(builder: Builder, op: Operation, attributes: dict[str, Node]) -> None:
    """`(src, src operands..., dst, dst operands..., tag, tag operands..., count[, stride,
    per stride])` for dma_start, `(tag, tag operands..., count)` for dma_wait, each group
    as long as its map has inputs."""
    assert isinstance(op, AffineDmaOp)
    roles = ("source", "destination", "tag") if op.name == "affine.dma_start" else ("tag",)
    keys = {"source": "src_map", "destination": "dst_map", "tag": "tag_map"}
    position = 0
    for role in roles:
        map_ref, affine_map = _map(builder, attributes.get(keys[role]))
        if map_ref is None or affine_map is None or position >= len(op.operands):
            return
        memref = op.operands[position]
        memref.role = "memref"
        indices = op.operands[position + 1 : position + 1 + affine_map.num_inputs]
        op.accesses.append((memref, _subscripts(indices, map_ref, affine_map), role))
        if position < len(op.operand_types):
            op.memref_types.append(op.operand_types[position])
        position += 1 + affine_map.num_inputs
    if position < len(op.operands):
        op.num_elements = op.operands[position]
        op.num_elements.role = "num_elements"


def _parallel(builder: Builder, op: Operation, attributes: dict[str, Node]) -> None:
    assert isinstance(op, AffineParallelOp)
    position = 0
    for side in ("lower", "upper"):
        map_ref, affine_map = _map(builder, attributes.get(f"{side}BoundsMap"))
        groups = integer_elements(attributes.get(f"{side}BoundsGroups"))
        if map_ref is None or affine_map is None or groups is None:
            return
        operands = op.operands[position : position + affine_map.num_inputs]
        position += affine_map.num_inputs
        dims, symbols = _split(operands, affine_map)
        bounds, first = [], 0
        for size in groups:
            results = affine_map.results[first : first + max(size, 0)]
            first += max(size, 0)
            exprs = [
                Subscripts(map_ref.span, AffineMap(len(dims), len(symbols), (result,)), dims,
                           symbols, [map_ref.span])
                for result in results
            ]  # fmt: skip
            kind = ("max" if side == "lower" else "min") if len(exprs) > 1 else None
            bounds.append(ParallelBound(map_ref.span, exprs, kind))
        setattr(op, side, bounds)
        setattr(op, f"{side}_span", map_ref.span)
    steps = attributes.get("steps")
    op.steps = integer_array(steps) or []
    op.steps_span = Span.of(steps) if steps is not None else None
    reductions = attributes.get("reductions")
    kinds = integer_array(reductions) or []
    op.reductions = [REDUCTION_NAMES[k] if 0 <= k < len(REDUCTION_NAMES) else str(k) for k in kinds]
    op.reductions_span = Span.of(reductions) if reductions is not None else None
    builder.after_regions(lambda: _parallel_region_arguments(op))


def _parallel_region_arguments(op: AffineParallelOp) -> None:
    body = op.body
    if body is None or not body.blocks:
        return
    for argument in body.blocks[0].arguments:
        argument.role = "induction_variable"
        op.induction_variables.append(argument)


def _basis(builder: Builder, op: Operation, attributes: dict[str, Node]) -> None:
    """`static_basis` with its dynamic entries given by the trailing operands."""
    assert isinstance(op, IndexBasisOp)
    static = attributes.get("static_basis")
    values = integer_array(static)
    if values is None or static is None:
        return
    if op.name == "affine.delinearize_index":
        index_count = min(1, len(op.operands))
    else:
        segments = integer_array(attributes.get("operandSegmentSizes"))
        index_count = segments[0] if segments and len(segments) == 2 else len(op.operands)
        op.disjoint = "disjoint" in attributes
    op.indices = op.operands[:index_count]
    for use in op.indices:
        use.role = "index"
    dynamic = iter(op.operands[index_count:])
    for value in values:
        if value != DYNAMIC_INDEX:
            op.basis.append(value)
            continue
        use = next(dynamic, None)
        if use is not None:
            use.role = "basis"
            op.basis.append(use)
    op.basis_span = Span.of(static)


def _nothing(builder: Builder, op: Operation, attributes: dict[str, Node]) -> None:
    return None


_SPECIALISERS: dict[str, Callable[[Builder, Operation, dict[str, Node]], None]] = {
    "affine.apply": _apply,
    "affine.min": _apply,
    "affine.max": _apply,
    **dict.fromkeys(_ACCESS_LAYOUT, _access),
    "affine.dma_start": _dma,
    "affine.dma_wait": _dma,
    "affine.for": _for,
    "affine.parallel": _parallel,
    "affine.if": _if,
    "affine.yield": _nothing,
    "affine.delinearize_index": _basis,
    "affine.linearize_index": _basis,
}


def specialise(builder: Builder, op: Operation, body: Node) -> None:
    """Fill the model fields of a generic-form affine op (no-op for other ops)."""
    specialiser = _SPECIALISERS.get(op.name)
    if specialiser is not None:
        specialiser(builder, op, attribute_entries(body))
