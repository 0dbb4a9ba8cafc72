"""Layouts of memref types: identity, strides and offset, as MLIR computes them.

A ranked memref's layout is the identity (row-major and contiguous: no layout
written, or an identity map), a `strided<[...], offset: ...>` attribute, or an
affine map. MLIR reads strides off an affine map whose single result is a
linear combination of the dimensions: each dimension's coefficient is its
stride and the rest is the offset; a coefficient or offset involving symbols is
dynamic (`?`, None here). Divisions and modulos are simplified first when they
divide exactly (`(d0 * 6 + 4) floordiv 3` is `d0 * 2 + 1`); any other one, or a
map with several results, makes the layout not strided. Rank-1 `strided<[1]>`
is the identity too (its map is `(d0) -> (d0)`).

A layout we cannot read (an alias we do not know, a dialect attribute) is
`UNKNOWN`: rules then say nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from affine_lsp.ir import (
    AffineBinary,
    AffineConst,
    AffineDim,
    AffineExpr,
    AffineMap,
    AffineNeg,
    AffineSymbol,
    AliasDef,
    MemRefType,
    format_strided,
    identity_map,
    map_from_node,
    parse_strided,
)
from affine_lsp.syntax import FIELD, SourceDocument, text


@dataclass(frozen=True)
class Strided:
    """Strides and offset of a strided layout; None marks a dynamic (`?`) entry."""

    strides: tuple[int | None, ...]
    offset: int | None

    def __str__(self) -> str:
        return format_strided(self.strides, self.offset)


@dataclass(frozen=True)
class Layout:
    """What a memref type's layout is: kind `identity`, `strided` (a strided
    attribute), `map` (an affine map, `strided` filled when the map is strided) or
    `unknown`. `strided` is set for every strided layout, the identity included."""

    kind: str
    strided: Strided | None = None
    map: AffineMap | None = None

    @property
    def known(self) -> bool:
        return self.kind != "unknown"

    @property
    def is_identity(self) -> bool:
        return self.kind == "identity"


UNKNOWN = Layout("unknown")


def saturated_mul(a: int | None, b: int | None) -> int | None:
    """MLIR's saturated product of sizes and strides: 0 times anything is 0, otherwise
    dynamic (None) wins."""
    if a == 0 or b == 0:
        return 0
    return None if a is None or b is None else a * b


def saturated_add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def canonical_strides(shape: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """Row-major strides of a contiguous shape; dynamic once a later size is dynamic
    or 0."""
    strides: list[int | None] = []
    running: int | None = 1
    for size in reversed(shape):
        strides.append(running)
        if running is not None and size is not None and size > 0:
            running *= size
        else:
            running = None
    return tuple(reversed(strides))


def layout_of(memref: MemRefType, aliases: dict[str, AliasDef]) -> Layout:
    """The layout of a ranked memref type (UNKNOWN for unranked ones)."""
    if memref.shape is None:
        return UNKNOWN
    rank = len(memref.shape)
    spelling = memref.layout
    if spelling is None:
        return Layout("identity", Strided(canonical_strides(memref.shape), 0))
    if spelling.startswith("#"):
        alias = aliases.get(spelling)
        if alias is None:
            return UNKNOWN
        if alias.map is not None:
            return _map_layout(alias.map, memref.shape)
        value = alias.node.child_by_field_id(FIELD["value"]) if alias.node is not None else None
        if value is None or value.type != "strided_layout":
            return UNKNOWN
        spelling = text(value)
    if spelling.startswith("strided"):
        parsed = parse_strided(spelling)
        if parsed is None or len(parsed[0]) != rank:
            return UNKNOWN
        strided = Strided(*parsed)
        if rank == 1 and strided == Strided((1,), 0):
            return Layout("identity", strided)
        return Layout("strided", strided)
    if spelling.startswith("affine_map<"):
        affine_map = _parse_map(spelling)
        return _map_layout(affine_map, memref.shape) if affine_map is not None else UNKNOWN
    return UNKNOWN


def _map_layout(affine_map: AffineMap, shape: tuple[int | None, ...]) -> Layout:
    if affine_map.num_dims != len(shape):
        return UNKNOWN  # memref-layout-rank reports it
    if AffineMap(affine_map.num_dims, affine_map.num_symbols, affine_map.results) == identity_map(
        len(shape)
    ):
        return Layout("identity", Strided(canonical_strides(shape), 0))
    return Layout("map", strides_of_map(affine_map), affine_map)


@lru_cache(maxsize=256)
def _parse_map(spelling: str) -> AffineMap | None:
    """An `affine_map<...>` spelling (as the IR prints layouts) back to a map."""
    document = SourceDocument(f"#layout = {spelling}\n")
    root = document.tree.root_node
    definition = root.named_children[0] if root.named_children else None
    value = definition.child_by_field_id(FIELD["value"]) if definition is not None else None
    if value is None or value.type != "affine_map" or value.has_error:
        return None
    return map_from_node(value)


# -- linear forms ------------------------------------------------------------------
#
# A linear form maps a dimension position (or None for the part without
# dimensions) to a polynomial in the symbols: {monomial: coefficient}, where a
# monomial is the sorted tuple of the symbol positions multiplied together
# (() is the constant term).

Poly = dict[tuple[int, ...], int]
Linear = dict[int | None, Poly]


def strides_of_map(affine_map: AffineMap) -> Strided | None:
    """MLIR's strides and offset of a single-result layout map (None: not strided)."""
    if len(affine_map.results) != 1:
        return None
    linear = linear_form(affine_map.results[0])
    if linear is None:
        return None
    strides = tuple(_static(linear.get(d, {})) for d in range(affine_map.num_dims))
    return Strided(strides, _static(linear.get(None, {})))


def _static(poly: Poly) -> int | None:
    if not poly:
        return 0
    if set(poly) == {()}:
        return poly[()]
    return None  # dynamic


def linear_form(expr: AffineExpr) -> Linear | None:
    """The expression as a linear combination of dimensions (None if it is not one)."""
    built: list[Linear | None] = []
    stack: list[tuple[AffineExpr, bool]] = [(expr, False)]
    while stack:
        node, visited = stack.pop()
        if isinstance(node, AffineBinary | AffineNeg) and not visited:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children()))
            continue
        if isinstance(node, AffineConst):
            built.append({None: {(): node.value}} if node.value else {})
        elif isinstance(node, AffineDim):
            built.append({node.position: {(): 1}})
        elif isinstance(node, AffineSymbol):
            built.append({None: {(node.position,): 1}})
        elif isinstance(node, AffineNeg):
            operand = built.pop()
            built.append(_scale(operand, {(): -1}) if operand is not None else None)
        elif isinstance(node, AffineBinary):
            rhs, lhs = built.pop(), built.pop()
            both = lhs is not None and rhs is not None
            built.append(_combine(node.op, lhs, rhs) if both else None)  # type: ignore[arg-type]
        else:
            return None  # an undeclared identifier
    return built[0]


def _combine(op: str, lhs: Linear, rhs: Linear) -> Linear | None:
    if op == "+":
        return _add(lhs, rhs)
    if op == "-":
        return _add(lhs, _scale(rhs, {(): -1}))
    if op == "*":
        if _has_dims(lhs) and _has_dims(rhs):
            return None
        factor, other = (lhs, rhs) if not _has_dims(lhs) else (rhs, lhs)
        return _scale(other, factor.get(None, {}))
    divisor = _constant(rhs)
    if divisor is None or divisor <= 0:
        return None
    return _divide(op, lhs, divisor)


def _divide(op: str, lhs: Linear, divisor: int) -> Linear | None:
    """floordiv/ceildiv/mod by a positive constant, when the non-constant terms are
    multiples of it (otherwise the result is not linear)."""
    constant = lhs.get(None, {}).get((), 0)
    terms = {
        key: {m: c for m, c in poly.items() if key is not None or m != ()}
        for key, poly in lhs.items()
    }
    if any(c % divisor for poly in terms.values() for c in poly.values()):
        return None
    if op == "mod":
        return {None: {(): constant % divisor}} if constant % divisor else {}
    quotient = constant // divisor if op == "floordiv" else -((-constant) // divisor)
    result: Linear = {
        key: {m: c // divisor for m, c in poly.items()} for key, poly in terms.items() if poly
    }
    return _add(result, {None: {(): quotient}} if quotient else {})


def _has_dims(linear: Linear) -> bool:
    return any(key is not None for key in linear)


def _constant(linear: Linear) -> int | None:
    if _has_dims(linear):
        return None
    poly = linear.get(None, {})
    if set(poly) - {()}:
        return None
    return poly.get((), 0)


def _add(lhs: Linear, rhs: Linear) -> Linear:
    result = {key: dict(poly) for key, poly in lhs.items()}
    for key, poly in rhs.items():
        target = result.setdefault(key, {})
        for monomial, coefficient in poly.items():
            target[monomial] = target.get(monomial, 0) + coefficient
            if target[monomial] == 0:
                del target[monomial]
        if not target:
            del result[key]
    return result


def _scale(linear: Linear, factor: Poly) -> Linear:
    result: Linear = {}
    for key, poly in linear.items():
        product: Poly = {}
        for monomial, coefficient in poly.items():
            for factor_monomial, factor_coefficient in factor.items():
                merged = tuple(sorted(monomial + factor_monomial))
                product[merged] = product.get(merged, 0) + coefficient * factor_coefficient
        product = {m: c for m, c in product.items() if c}
        if product:
            result[key] = product
    return result


def strided_type(
    shape: tuple[int | None, ...], like: MemRefType, strided: Strided | None
) -> MemRefType:
    """A memref type of `shape` with `like`'s element type and memory space, and the
    given strided layout (no layout for None)."""
    layout = str(strided) if strided is not None else None
    return MemRefType(shape, like.element, layout, like.memory_space)
