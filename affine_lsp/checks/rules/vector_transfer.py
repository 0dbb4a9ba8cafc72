"""vector.transfer_read / transfer_write: the permutation map against the source
and the vector, in MLIR 22's order (the first that fails is reported, on the op):
operand segments (generic form), the number of indices, a memref or ranked
tensor source, the map's results against the vector's rank, no symbols, its
inputs against the source's rank, in_bounds of the map's rank, a projected
permutation (each result a dim or 0), each dim once; a write has no broadcast
(0) result. In the custom form a missing map is the minor identity, which needs
a source of at least the vector's rank."""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, op_rule
from affine_lsp.ir import (
    AffineConst,
    AffineDim,
    AffineMap,
    AliasType,
    FloatType,
    IntegerType,
    MemRefType,
    Operation,
    TensorType,
    Type,
    VectorType,
    attribute_entries,
    integer_array,
    map_from_node,
    type_from_node,
)
from affine_lsp.syntax import Node, Span, text

TRANSFER_MAP = register(
    "vector-transfer-map",
    "vector.transfer_read/write: a permutation_map whose inputs differ from the source's rank "
    "or whose results differ from the vector's rank, with symbols, that is not a projected "
    "permutation (each result one dim or 0, each dim once), or with a broadcast (0) in a write",
    "maps",
)
TRANSFER_OPERANDS = register(
    "vector-transfer-operands",
    "vector.transfer_read/write: as many indices as the source's rank, a memref or ranked "
    "tensor source, in_bounds of the map's rank, operandSegmentSizes that add up to the "
    "operands (generic form)",
    "maps",
)

_READ = "vector.transfer_read"
_WRITE = "vector.transfer_write"
_PROJECTED = (
    "requires a projected permutation_map (at most one dim or the zero constant can appear "
    "in each result)"
)


@dataclass
class _Transfer:
    """What the checks read of a transfer op, in either form."""

    source: Type | None
    vector: Type | None
    indices: int | None
    map: AffineMap | None
    in_bounds: int | None  # its length (None: not written)
    segments: list[int] | None = None
    operands: int = 0
    types_span: Span | None = None  # where the custom form's types start


@op_rule(_READ, _WRITE)
def transfer(op: Operation, ctx: CheckContext) -> None:
    body = body_node(op)
    if body is None:
        return
    found = _generic(op, body, ctx) if op.kind == "generic_operation" else _custom(op, body, ctx)
    if found is None:
        return
    message = _first_error(op, found)
    if message is None:
        return
    code, words = message
    if code == "custom":  # (a parse error of the custom form, where the types start)
        span = found.types_span or op.name_span
        ctx.report(TRANSFER_MAP, span, f"custom op '{op.name}' {words}")
        return
    ctx.report(code, op.name_span, f"'{op.name}' op {words}")


def _first_error(op: Operation, found: _Transfer) -> tuple[str, str] | None:
    """(code, MLIR's words) of the first check that fails, as MLIR verifies."""
    if found.segments is not None and sum(found.segments) != found.operands:
        return TRANSFER_OPERANDS, (
            f"operand count ({found.operands}) does not match with the total size "
            f"({sum(found.segments)}) specified in attribute 'operandSegmentSizes'"
        )
    source, vector = found.source, found.vector
    if not isinstance(vector, VectorType) or source is None or isinstance(source, AliasType):
        return None
    rank = _rank(source)
    if found.map is None:  # the custom form without a map: the minor identity
        # (of the vector's rank less that of the source's vector elements, if any)
        element = source.element if isinstance(source, MemRefType | TensorType) else None
        effective = len(vector.shape) - (
            len(element.shape) if isinstance(element, VectorType) else 0
        )
        if rank is not None and rank < effective:
            return "custom", (
                "expected a custom permutation_map when rank(source) != rank(destination)"
            )
        return None
    if rank is not None and found.indices is not None and found.indices != rank:
        return TRANSFER_OPERANDS, f"requires {rank} indices"
    permutation = found.map
    if op.name == _WRITE and any(_is_zero(r) for r in permutation.results):
        return TRANSFER_MAP, "should not have broadcast dimensions"
    if not isinstance(source, MemRefType | TensorType) or rank is None:
        return TRANSFER_OPERANDS, "requires source to be a memref or ranked tensor type"
    if not _comparable_elements(source, vector):
        return None  # (vector elements, or bit widths MLIR checks first: not judged)
    if len(permutation.results) != len(vector.shape):
        return TRANSFER_MAP, (
            "requires a permutation_map with result dims of the same rank as the vector type"
        )
    if permutation.num_symbols:
        return TRANSFER_MAP, "requires permutation_map without symbols"
    if permutation.num_dims != rank:
        return TRANSFER_MAP, (
            "requires a permutation_map with input dims of the same rank as the source type"
        )
    if found.in_bounds is not None and found.in_bounds != len(permutation.results):
        canonical = AffineMap(permutation.num_dims, permutation.num_symbols, permutation.results)
        return TRANSFER_OPERANDS, (
            "expects the in_bounds attr of same rank as permutation_map results: "
            f"affine_map<{canonical}> vs inBounds of size: {found.in_bounds}"
        )
    seen: set[int] = set()
    for result in permutation.results:
        if isinstance(result, AffineConst) and result.value == 0:
            continue
        if not isinstance(result, AffineDim):
            return TRANSFER_MAP, _PROJECTED
        if result.position in seen:
            return TRANSFER_MAP, (
                "requires a permutation_map that is a permutation (found one dim used more "
                "than once)"
            )
        seen.add(result.position)
    return None


def _is_zero(result: object) -> bool:
    return isinstance(result, AffineConst) and result.value == 0


def _rank(source: Type) -> int | None:
    if isinstance(source, MemRefType | TensorType):
        return len(source.shape) if source.shape is not None else None
    if isinstance(source, VectorType):
        return len(source.shape)
    return None


def _comparable_elements(source: MemRefType | TensorType, vector: VectorType) -> bool:
    """Whether the source has scalar elements whose width divides the vector's minor
    dimension's (MLIR checks the widths before the map)."""
    element = source.element
    if isinstance(element, VectorType):
        return False
    widths = (_width(element), _width(vector.element))
    if None in widths:
        return isinstance(element, type(vector.element)) or element == vector.element
    source_width, vector_width = widths
    minor = vector.shape[-1] if vector.shape else 1
    assert source_width is not None and vector_width is not None
    return (vector_width * minor) % source_width == 0


_FLOAT_WIDTHS = {"f16": 16, "bf16": 16, "f32": 32, "tf32": 19, "f64": 64, "f80": 80, "f128": 128}


def _width(element: Type) -> int | None:
    if isinstance(element, IntegerType):
        return element.width
    if isinstance(element, FloatType):
        return _FLOAT_WIDTHS.get(element.name)
    return None


# -- the two forms -------------------------------------------------------------------------


def _generic(op: Operation, body: Node, ctx: CheckContext) -> _Transfer | None:
    entries = attribute_entries(body)
    types = op.operand_types
    reading = op.name == _READ
    source = types[0] if reading and types else (types[1] if len(types) > 1 else None)
    vector = (
        (op.result_types[0] if op.result_types else None)
        if reading
        else (types[0] if types else None)
    )
    segments = integer_array(entries.get("operandSegmentSizes"))
    indices = None
    if segments is not None and len(segments) == 4:
        indices = segments[1] if reading else segments[2]
    return _Transfer(
        source,
        vector,
        indices,
        _map_of(entries.get("permutation_map"), ctx),
        _array_length(entries.get("in_bounds")),
        segments,
        len(op.operands),
    )


def _custom(op: Operation, body: Node, ctx: CheckContext) -> _Transfer | None:
    """`read %src[%i, ...], %pad (, %mask)? {attrs}? : SOURCE, VECTOR` and
    `write %vec, %dst[%i, ...] (, %mask)? {attrs}? : VECTOR, DEST (-> RESULT)?`."""
    children = body.children
    colon = next((i for i, c in enumerate(children) if c.type == ":"), None)
    if colon is None:
        return None
    before = [c for c in children[:colon] if c.is_named]
    types = [c for c in children[colon + 1 :] if c.is_named and c.type != "comment"]
    group = next((c for c in before if c.type == "custom_group" and text(c)[:1] == "["), None)
    dictionary = next((c for c in before if c.type == "dictionary"), None)
    if group is None or len(types) < 2:
        return None
    indices = sum(1 for c in group.named_children if c.type == "value_use")
    first, second = type_from_node(types[0]), type_from_node(types[1])
    source, vector = (first, second) if op.name == _READ else (second, first)
    entries = _entries(dictionary)
    return _Transfer(
        _resolved(source, ctx),
        _resolved(vector, ctx),
        indices,
        _map_of(entries.get("permutation_map"), ctx),
        _array_length(entries.get("in_bounds")),
        types_span=Span.of(children[colon]),
    )


def _entries(dictionary: Node | None) -> dict[str, Node]:
    found: dict[str, Node] = {}
    for entry in dictionary.named_children if dictionary is not None else []:
        name = entry.child_by_field_name("name")
        value = entry.child_by_field_name("value")
        if entry.type == "dictionary_entry" and name is not None and value is not None:
            found.setdefault(text(name).strip('"'), value)
    return found


def _map_of(node: Node | None, ctx: CheckContext) -> AffineMap | None:
    if node is None:
        return None
    if node.type == "affine_map":
        return map_from_node(node)
    if node.type == "attribute_alias":
        alias = ctx.module.aliases.get(text(node))
        return alias.map if alias is not None else None
    return None


def _array_length(node: Node | None) -> int | None:
    if node is None or node.type not in ("array_attribute", "dense_array_attribute"):
        return None
    element = node.child_by_field_name("element_type")
    return sum(1 for c in node.named_children if c != element and c.type != "comment")


def _resolved(found: Type | None, ctx: CheckContext) -> Type | None:
    for _ in range(16):
        if not isinstance(found, AliasType):
            return found
        alias = ctx.module.aliases.get(found.name)
        found = alias.type if alias is not None else None
    return None
