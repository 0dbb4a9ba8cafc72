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
prefetch, affine.for, affine.if and affine.yield. The generic forms of
affine.parallel, affine.dma_start/dma_wait and delinearize/linearize_index are
plain operations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from affine_lsp.ir.affine import AffineMap, IntegerSet
from affine_lsp.ir.attributes import attribute_entries, integer_array, integer_value
from affine_lsp.ir.model import (
    AffineAccessOp,
    AffineApplyOp,
    AffineBound,
    AffineForOp,
    AffineIfOp,
    AffineYieldOp,
    MapRef,
    Operation,
    Subscripts,
    Use,
)
from affine_lsp.ir.types import INDEX, VectorType
from affine_lsp.syntax.nodes import Node, Span

if TYPE_CHECKING:
    from affine_lsp.ir.build import _ItemBuilder

GENERIC_CLASSES: dict[str, type[Operation]] = {
    "affine.apply": AffineApplyOp,
    "affine.min": AffineApplyOp,
    "affine.max": AffineApplyOp,
    "affine.load": AffineAccessOp,
    "affine.store": AffineAccessOp,
    "affine.vector_load": AffineAccessOp,
    "affine.vector_store": AffineAccessOp,
    "affine.prefetch": AffineAccessOp,
    "affine.for": AffineForOp,
    "affine.if": AffineIfOp,
    "affine.yield": AffineYieldOp,
}


def _split(
    uses: list[Use], inputs: AffineMap | IntegerSet | None
) -> tuple[list[Use], list[Use]]:
    """(dims, symbols) of a map's operands; both empty when the map is unknown."""
    if inputs is None:
        return [], []
    dims, symbols = uses[: inputs.num_dims], uses[inputs.num_dims :]
    for use in dims:
        use.role = "dim"
    for use in symbols:
        use.role = "symbol"
    return dims, symbols


def _map(builder: _ItemBuilder, node: Node | None) -> tuple[MapRef | None, AffineMap | None]:
    ref = builder.map_ref(node)
    resolved = builder.resolve(ref)
    return ref, resolved if isinstance(resolved, AffineMap) else None


def _apply(builder: _ItemBuilder, op: Operation, attributes: dict[str, Node]) -> None:
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


def _access(builder: _ItemBuilder, op: Operation, attributes: dict[str, Node]) -> None:
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
    indices = uses[memref_at + 1 :]
    dims, symbols = _split(indices, affine_map)
    span = Span(indices[0].span.start_byte, indices[-1].span.end_byte) if indices else map_ref.span
    op.subscripts = Subscripts(
        span, affine_map, dims, symbols, [map_ref.span] * len(affine_map.results)
    )


def _is_true(node: Node | None) -> bool:
    return node is not None and node.type == "boolean" and node.text == b"true"


def _input_type_span(op: Operation, position: int) -> Span | None:
    """Span of the `position`-th input type of a generic op's function type."""
    body = op.node.child_by_field_name("body") if op.node is not None else None
    function_type = body.child_by_field_name("type") if body is not None else None
    inputs = function_type.child_by_field_name("inputs") if function_type is not None else None
    types = [c for c in inputs.named_children if c.type != "comment"] if inputs else []
    return Span.of(types[position]) if position < len(types) else None


def _segments(attributes: dict[str, Node], count: int, total: int) -> list[int]:
    """`operandSegmentSizes`, or everything in the first segment when absent/invalid."""
    sizes = integer_array(attributes.get("operandSegmentSizes"))
    if sizes is None or len(sizes) != count or sum(sizes) != total or min(sizes) < 0:
        return [total] + [0] * (count - 1)
    return sizes


def _for(builder: _ItemBuilder, op: Operation, attributes: dict[str, Node]) -> None:
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


def _if(builder: _ItemBuilder, op: Operation, attributes: dict[str, Node]) -> None:
    assert isinstance(op, AffineIfOp)
    op.condition = builder.map_ref(attributes.get("condition"))
    resolved = builder.resolve(op.condition)
    condition = resolved if isinstance(resolved, IntegerSet) else None
    op.dims, op.symbols = _split(op.operands, condition)


def _nothing(builder: _ItemBuilder, op: Operation, attributes: dict[str, Node]) -> None:
    return None


_SPECIALISERS: dict[str, Callable[[_ItemBuilder, Operation, dict[str, Node]], None]] = {
    "affine.apply": _apply,
    "affine.min": _apply,
    "affine.max": _apply,
    **dict.fromkeys(_ACCESS_LAYOUT, _access),
    "affine.for": _for,
    "affine.if": _if,
    "affine.yield": _nothing,
}


def specialise(builder: _ItemBuilder, op: Operation, body: Node) -> None:
    """Fill the model fields of a generic-form affine op (no-op for other ops)."""
    specialiser = _SPECIALISERS.get(op.name)
    if specialiser is not None:
        specialiser(builder, op, attribute_entries(body))
