"""MLIR types as small value objects, built from type nodes of the syntax tree.

Two types are equal when their canonical spelling is equal (`memref<4 x f32>`
equals `memref<4xf32>`; as in MLIR, so do `memref<4xf32, 0>` and
`memref<4xf32, affine_map<(d0) -> (d0)>>`). Type aliases (`!name`) stay as
`AliasType` until a module resolves them; dialect types keep their text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from affine_lsp.ir.affine import AffineDim, AffineMap
from affine_lsp.ir.affine_syntax import map_from_node
from affine_lsp.syntax import FIELD, Node, text

DYNAMIC = None
"""A `?` dimension in a shape."""


@dataclass(frozen=True)
class Type:
    """Base class; `str(t)` is the canonical spelling."""

    def __str__(self) -> str:  # pragma: no cover - every subclass overrides
        raise NotImplementedError


@dataclass(frozen=True)
class IntegerType(Type):
    width: int
    signedness: str = ""  # "", "s" or "u"

    def __str__(self) -> str:
        return f"{self.signedness}i{self.width}"


@dataclass(frozen=True)
class FloatType(Type):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class IndexType(Type):
    def __str__(self) -> str:
        return "index"


@dataclass(frozen=True)
class NoneType(Type):
    def __str__(self) -> str:
        return "none"


def _shape_text(shape: tuple[int | None, ...]) -> str:
    return "".join(("?" if d is None else str(d)) + "x" for d in shape)


@dataclass(frozen=True)
class MemRefType(Type):
    """`memref<shape x element, layout, memory_space>`; `shape` is None if unranked."""

    shape: tuple[int | None, ...] | None
    element: Type
    layout: str | None = None  # canonical text of the layout attribute
    memory_space: str | None = None

    @property
    def ranked(self) -> bool:
        return self.shape is not None

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def dynamic_dims(self) -> int:
        return 0 if self.shape is None else sum(1 for d in self.shape if d is None)

    def __str__(self) -> str:
        shape = "*x" if self.shape is None else _shape_text(self.shape)
        extras = "".join(f", {e}" for e in (self.layout, self.memory_space) if e is not None)
        return f"memref<{shape}{self.element}{extras}>"


@dataclass(frozen=True)
class TensorType(Type):
    shape: tuple[int | None, ...] | None
    element: Type
    encoding: str | None = None

    def __str__(self) -> str:
        shape = "*x" if self.shape is None else _shape_text(self.shape)
        extra = f", {self.encoding}" if self.encoding is not None else ""
        return f"tensor<{shape}{self.element}{extra}>"


@dataclass(frozen=True)
class VectorType(Type):
    shape: tuple[int, ...]
    element: Type
    scalable: tuple[bool, ...] = ()

    def __str__(self) -> str:
        dims = "".join(
            (f"[{d}]" if (self.scalable and self.scalable[i]) else str(d)) + "x"
            for i, d in enumerate(self.shape)
        )
        return f"vector<{dims}{self.element}>"


@dataclass(frozen=True)
class ComplexType(Type):
    element: Type

    def __str__(self) -> str:
        return f"complex<{self.element}>"


@dataclass(frozen=True)
class TupleType(Type):
    types: tuple[Type, ...]

    def __str__(self) -> str:
        return f"tuple<{', '.join(map(str, self.types))}>"


@dataclass(frozen=True)
class FunctionType(Type):
    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __str__(self) -> str:
        results = ", ".join(map(str, self.results))
        if len(self.results) != 1 or isinstance(self.results[0], FunctionType):
            results = f"({results})"
        return f"({', '.join(map(str, self.inputs))}) -> {results}"


@dataclass(frozen=True)
class AliasType(Type):
    """A `!name` type alias, resolved by the module."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class OpaqueType(Type):
    """A dialect type (`!llvm.ptr`, `!foo.t<...>`) or anything we do not model."""

    spelling: str

    def __str__(self) -> str:
        return self.spelling


INDEX = IndexType()


def element_type(type_: Type | None) -> Type | None:
    if isinstance(type_, MemRefType | TensorType | VectorType | ComplexType):
        return type_.element
    return None


def _parse_shape(spelling: str) -> tuple[tuple[int | None, ...] | None, tuple[bool, ...]]:
    """`4x?x` -> ((4, None), ...); `*x` -> None (unranked); `[4]x8x` marks scalable dims."""
    parts = [p.strip() for p in spelling.split("x")[:-1]]
    if parts == ["*"]:
        return None, ()
    dims: list[int | None] = []
    scalable: list[bool] = []
    for part in parts:
        is_scalable = part.startswith("[")
        part = part.strip("[]")
        dims.append(None if part == "?" else int(part) if part.isdigit() else None)
        scalable.append(is_scalable)
    return tuple(dims), tuple(scalable)


def _normalize(spelling: str) -> str:
    return " ".join(spelling.split())


# Shaped, function and scalar types by spelling: a document repeats the same few many times,
# and types are immutable values, so one parse per spelling is enough.
_CACHED_KINDS = frozenset(
    {"memref_type", "tensor_type", "vector_type", "function_type", "float_type", "integer_type"}
)
_CACHE: dict[bytes, Type | None] = {}
_CACHE_LIMIT = 4096


def type_from_node(node: Node | None) -> Type | None:
    """Build a Type from a type node of the syntax tree (None if absent/broken)."""
    if node is None or node.has_error:
        return None if node is None else OpaqueType(_normalize(text(node)))
    if node.type not in _CACHED_KINDS:
        return _type_from_node(node)
    key = node.text or b""
    if key in _CACHE:
        return _CACHE[key]
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    built = _CACHE[key] = _type_from_node(node)
    return built


def _type_from_node(node: Node) -> Type | None:
    kind = node.type
    if kind == "integer_type":
        spelling = text(node)
        sign = spelling[0] if spelling[0] in "su" else ""
        return IntegerType(int(spelling[len(sign) + 1 :]), sign)
    if kind == "float_type":
        return FloatType(text(node))
    if kind == "index_type":
        return INDEX
    if kind == "none_type":
        return NoneType()
    if kind in ("memref_type", "tensor_type", "vector_type"):
        shape_node = node.child_by_field_id(FIELD["shape"])
        shape, scalable = _parse_shape(text(shape_node)) if shape_node else ((), ())
        element = type_from_node(node.child_by_field_id(FIELD["element_type"])) or OpaqueType("?")
        if kind == "vector_type":
            return VectorType(tuple(d or 0 for d in (shape or ())), element, scalable)
        if kind == "tensor_type":
            encoding = node.child_by_field_id(FIELD["encoding"])
            return TensorType(shape, element, _normalize(text(encoding)) if encoding else None)
        layout = node.child_by_field_id(FIELD["layout"])
        space = node.child_by_field_id(FIELD["memory_space"])
        if layout is not None and space is None and _is_memory_space(layout):
            layout, space = None, layout
        rank = len(shape) if shape is not None else None
        layout_spelling = layout_text(layout, rank) if layout is not None else None
        space_text = _memory_space_text(space) if space is not None else None
        return MemRefType(shape, element, layout_spelling, space_text)
    if kind == "complex_type":
        return ComplexType(
            type_from_node(node.child_by_field_id(FIELD["element_type"])) or OpaqueType("?")
        )
    if kind == "tuple_type":
        return TupleType(tuple(_types(node.named_children)))
    if kind == "function_type":
        inputs = node.child_by_field_id(FIELD["inputs"])
        results = node.child_by_field_id(FIELD["results"])
        input_types = tuple(_types(inputs.named_children)) if inputs else ()
        if results is None:
            result_types: tuple[Type, ...] = ()
        elif results.type == "type_list_parens":
            result_types = tuple(_types(results.named_children))
        else:
            single = type_from_node(results)
            result_types = (single,) if single else ()
        return FunctionType(input_types, result_types)
    if kind == "type_alias":
        return AliasType(text(node))
    return OpaqueType(_normalize(text(node)))


def layout_text(layout: Node, rank: int | None) -> str | None:
    """MLIR's spelling of a layout: an identity map is no layout at all, strided
    layouts and maps are printed canonically (`strided<[4, 1], offset: ?>`,
    `affine_map<(d0)[s0] -> (d0 + s0)>`), anything else is kept as written."""
    if layout.type == "strided_layout" and not layout.has_error:
        return canonical_strided(text(layout))
    if layout.type == "affine_map" and not layout.has_error:
        layout_map = map_from_node(layout)
        canonical = AffineMap(layout_map.num_dims, layout_map.num_symbols, layout_map.results)
        if canonical.is_identity and canonical.num_dims == (rank if rank is not None else -1):
            return None  # MLIR drops it (symbols or not)
        return f"affine_map<{canonical}>"
    return _normalize(text(layout))


def identity_map(rank: int) -> AffineMap:
    return AffineMap(rank, 0, tuple(AffineDim(i) for i in range(max(rank, 0))))


_STRIDED = re.compile(r"^strided\s*<\s*\[([^\]]*)\]\s*(?:,\s*offset\s*:\s*([-\w?]+)\s*)?>$")


def parse_strided(spelling: str) -> tuple[tuple[int | None, ...], int | None] | None:
    """(strides, offset) of `strided<[...], offset: ...>`; None marks `?`; None if malformed."""
    match = _STRIDED.match(spelling.strip())
    if match is None:
        return None
    entries = [e.strip() for e in match.group(1).split(",") if e.strip()]
    values: list[int | None] = []
    for entry in [*entries, match.group(2) or "0"]:
        if entry == "?":
            values.append(None)
            continue
        try:
            values.append(int(entry))
        except ValueError:
            return None
    return tuple(values[:-1]), values[-1]


def format_strided(strides: tuple[int | None, ...], offset: int | None) -> str:
    """MLIR's spelling: `strided<[4, ?]>`, `strided<[1], offset: 8>` (offset 0 omitted)."""
    listed = ", ".join("?" if s is None else str(s) for s in strides)
    suffix = "" if offset == 0 else f", offset: {'?' if offset is None else offset}"
    return f"strided<[{listed}]{suffix}>"


def canonical_strided(spelling: str) -> str:
    parsed = parse_strided(spelling)
    return format_strided(*parsed) if parsed is not None else _normalize(spelling)


def _memory_space_text(space: Node) -> str | None:
    """The default memory space (`0`, `0 : i64`) is no memory space, as in MLIR."""
    spelling = _normalize(text(space))
    literal = spelling.split(":")[0].strip()
    return None if literal == "0" else spelling


def _is_memory_space(node: Node) -> bool:
    """A single trailing memref attribute is a memory space unless it is a layout."""
    return node.type not in ("affine_map", "strided_layout", "attribute_alias", "legacy_affine_map")


def _types(nodes: list[Node]) -> list[Type]:
    out = []
    for child in nodes:
        built = type_from_node(child)
        if built is not None:
            out.append(built)
    return out


def types_from_list(node: Node | None) -> list[Type]:
    """Types of a `type_list` / `type_list_parens` node, or of a single type node."""
    if node is None:
        return []
    if node.type in ("type_list", "type_list_parens"):
        return _types(node.named_children)
    single = type_from_node(node)
    return [single] if single else []
