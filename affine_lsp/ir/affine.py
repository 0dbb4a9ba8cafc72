"""Affine expressions, maps and integer sets as trees, as written in the source.

The tree keeps the operators the user wrote (`-` and unary minus are not
rewritten into multiplications), so diagnostics can point at any
sub-expression. Every node carries an optional source span that does not take
part in equality.

Dimensions and symbols are referred to by position (`AffineDim(0)` is `d0` of
its map, whatever the user named it). Identifiers that are not declared stay as
`AffineUnknown(name)` so that a broken map still has a tree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from affine_lsp.syntax import Span

BinaryOp = Literal["+", "-", "*", "floordiv", "ceildiv", "mod"]
ConstraintKind = Literal[">=", "<=", "=="]

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "floordiv": 2, "ceildiv": 2, "mod": 2}


@dataclass(frozen=True, eq=False, repr=False)
class AffineExpr:
    """Base of all affine expression nodes.

    Equality, hashing and repr are structural but iterative (expressions from
    real input can be tens of thousands of levels deep).
    """

    span: Span | None = field(default=None, kw_only=True)

    def children(self) -> tuple[AffineExpr, ...]:
        return ()

    def _key(self) -> tuple:
        """A flat post-order encoding of the tree (cached)."""
        cached: tuple | None = self.__dict__.get("_cached_key")
        if cached is not None:
            return cached
        out: list = []
        for node in self.walk():
            out.append(type(node).__name__)
            out.extend(node._payload())
        key = tuple(out)
        object.__setattr__(self, "_cached_key", key)
        return key

    def _payload(self) -> tuple:
        return ()

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, AffineExpr):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({format_expr(self)})"

    def walk(self) -> Iterator[AffineExpr]:
        """This node and all nodes below it, parents first (iterative)."""
        stack: list[AffineExpr] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children()))

    def __str__(self) -> str:
        return format_expr(self)


@dataclass(frozen=True, eq=False, repr=False)
class AffineConst(AffineExpr):
    value: int

    def _payload(self) -> tuple:
        return (self.value,)


@dataclass(frozen=True, eq=False, repr=False)
class AffineDim(AffineExpr):
    position: int

    def _payload(self) -> tuple:
        return (self.position,)


@dataclass(frozen=True, eq=False, repr=False)
class AffineSymbol(AffineExpr):
    position: int

    def _payload(self) -> tuple:
        return (self.position,)


@dataclass(frozen=True, eq=False, repr=False)
class AffineUnknown(AffineExpr):
    """An identifier that is neither a declared dimension nor a symbol."""

    name: str

    def _payload(self) -> tuple:
        return (self.name,)


@dataclass(frozen=True, eq=False, repr=False)
class AffineNeg(AffineExpr):
    operand: AffineExpr

    def children(self) -> tuple[AffineExpr, ...]:
        return (self.operand,)


@dataclass(frozen=True, eq=False, repr=False)
class AffineBinary(AffineExpr):
    op: BinaryOp
    lhs: AffineExpr
    rhs: AffineExpr

    def children(self) -> tuple[AffineExpr, ...]:
        return (self.lhs, self.rhs)

    def _payload(self) -> tuple:
        return (self.op,)


@dataclass(frozen=True)
class AffineMap:
    """`(dims)[symbols] -> (results)`."""

    num_dims: int
    num_symbols: int
    results: tuple[AffineExpr, ...]
    dim_names: tuple[str, ...] = field(default=(), compare=False)
    symbol_names: tuple[str, ...] = field(default=(), compare=False)
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def num_inputs(self) -> int:
        return self.num_dims + self.num_symbols

    @property
    def is_identity(self) -> bool:
        """Each dimension maps to itself, whatever the symbols (MLIR's test: a memref
        type with such a layout has no layout, `affine_map<(i)[M] -> (i)>` included)."""
        return self.results == tuple(AffineDim(i) for i in range(self.num_dims))

    def __str__(self) -> str:
        header = _header(self.num_dims, self.num_symbols, self.dim_names, self.symbol_names)
        results = ", ".join(format_expr(r, self.dim_names, self.symbol_names) for r in self.results)
        return f"{header} -> ({results})"


@dataclass(frozen=True)
class Constraint:
    """`lhs >= rhs`, `lhs <= rhs` or `lhs == rhs`."""

    lhs: AffineExpr
    kind: ConstraintKind
    rhs: AffineExpr
    span: Span | None = field(default=None, compare=False, repr=False)

    def normalized(self) -> tuple[AffineExpr, bool]:
        """(e, is_equality) with the constraint meaning `e >= 0` or `e == 0`."""
        if self.kind == "<=":
            return _subtract(self.rhs, self.lhs), False
        return _subtract(self.lhs, self.rhs), self.kind == "=="


@dataclass(frozen=True)
class IntegerSet:
    """`(dims)[symbols] : (constraints)`."""

    num_dims: int
    num_symbols: int
    constraints: tuple[Constraint, ...]
    dim_names: tuple[str, ...] = field(default=(), compare=False)
    symbol_names: tuple[str, ...] = field(default=(), compare=False)
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def num_inputs(self) -> int:
        return self.num_dims + self.num_symbols

    def __str__(self) -> str:
        parts = []
        for c in self.constraints:
            lhs = format_expr(c.lhs, self.dim_names, self.symbol_names)
            rhs = format_expr(c.rhs, self.dim_names, self.symbol_names)
            parts.append(f"{lhs} {c.kind} {rhs}")
        header = _header(self.num_dims, self.num_symbols, self.dim_names, self.symbol_names)
        return f"{header} : ({', '.join(parts)})"


def _header(num_dims: int, num_symbols: int, dims: tuple[str, ...], syms: tuple[str, ...]) -> str:
    dim_names = dims if len(dims) == num_dims else tuple(f"d{i}" for i in range(num_dims))
    sym_names = syms if len(syms) == num_symbols else tuple(f"s{i}" for i in range(num_symbols))
    text = f"({', '.join(dim_names)})"
    if num_symbols:
        text += f"[{', '.join(sym_names)}]"
    return text


def _subtract(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    if isinstance(rhs, AffineConst) and rhs.value == 0:
        return lhs
    return AffineBinary("-", lhs, rhs)


# -- printing -------------------------------------------------------------------


def format_expr(
    expr: AffineExpr,
    dim_names: tuple[str, ...] = (),
    symbol_names: tuple[str, ...] = (),
    *,
    dim_namer: Callable[[int], str] | None = None,
    symbol_namer: Callable[[int], str] | None = None,
) -> str:
    """Print an expression with minimal parentheses (iteratively)."""

    def leaf(node: AffineExpr) -> str:
        if isinstance(node, AffineConst):
            return str(node.value)
        if isinstance(node, AffineDim):
            if dim_namer is not None:
                return dim_namer(node.position)
            if node.position < len(dim_names):
                return dim_names[node.position]
            return f"d{node.position}"
        if isinstance(node, AffineSymbol):
            if symbol_namer is not None:
                return symbol_namer(node.position)
            if node.position < len(symbol_names):
                return symbol_names[node.position]
            return f"s{node.position}"
        if isinstance(node, AffineUnknown):
            return node.name
        raise TypeError(node)

    # Post-order evaluation with an explicit stack: (node, visited).
    out: list[tuple[str, int]] = []  # (text, precedence of its top operator; 9 = atom)
    stack: list[tuple[AffineExpr, bool]] = [(expr, False)]
    while stack:
        node, visited = stack.pop()
        if isinstance(node, AffineNeg):
            if not visited:
                stack.append((node, True))
                stack.append((node.operand, False))
                continue
            text, prec = out.pop()
            out.append((f"-{text}" if prec >= 3 else f"-({text})", 3))
        elif isinstance(node, AffineBinary):
            if not visited:
                stack.append((node, True))
                stack.append((node.rhs, False))
                stack.append((node.lhs, False))
                continue
            rhs, rhs_prec = out.pop()
            lhs, lhs_prec = out.pop()
            prec = _PRECEDENCE[node.op]
            if lhs_prec < prec:
                lhs = f"({lhs})"
            if rhs_prec <= prec:
                rhs = f"({rhs})"
            out.append((f"{lhs} {node.op} {rhs}", prec))
        else:
            out.append((leaf(node), 9))
    return out[0][0]


# -- classification ----------------------------------------------------------------


def is_constant(expr: AffineExpr) -> bool:
    return all(not isinstance(n, AffineDim | AffineSymbol | AffineUnknown) for n in expr.walk())


def constant_value(expr: AffineExpr) -> int | None:
    """Fold an expression without identifiers to its value (None if it has any)."""
    values: list[int] = []
    stack: list[tuple[AffineExpr, bool]] = [(expr, False)]
    while stack:
        node, visited = stack.pop()
        if isinstance(node, AffineConst):
            values.append(node.value)
        elif isinstance(node, AffineNeg):
            if not visited:
                stack += [(node, True), (node.operand, False)]
                continue
            values.append(-values.pop())
        elif isinstance(node, AffineBinary):
            if not visited:
                stack += [(node, True), (node.rhs, False), (node.lhs, False)]
                continue
            rhs = values.pop()
            lhs = values.pop()
            result = _apply_binary(node.op, lhs, rhs)
            if result is None:
                return None
            values.append(result)
        else:
            return None
    return values[0]


def _apply_binary(op: str, lhs: int, rhs: int) -> int | None:
    if op == "+":
        return lhs + rhs
    if op == "-":
        return lhs - rhs
    if op == "*":
        return lhs * rhs
    if rhs <= 0:
        return None
    if op == "floordiv":
        return lhs // rhs
    if op == "ceildiv":
        return -((-lhs) // rhs)
    return lhs % rhs


def evaluate(expr: AffineExpr, dims: list[int], symbols: list[int]) -> int | None:
    """Value of an expression for concrete dims/symbols (None if undefined)."""

    def substitute(node: AffineExpr) -> AffineExpr:
        if isinstance(node, AffineDim) and node.position < len(dims):
            return AffineConst(dims[node.position])
        if isinstance(node, AffineSymbol) and node.position < len(symbols):
            return AffineConst(symbols[node.position])
        return node

    return constant_value(transform(expr, substitute))


def transform(expr: AffineExpr, leaf: Callable[[AffineExpr], AffineExpr]) -> AffineExpr:
    """Rebuild an expression, replacing each leaf by `leaf(node)` (iterative)."""
    built: list[AffineExpr] = []
    stack: list[tuple[AffineExpr, bool]] = [(expr, False)]
    while stack:
        node, visited = stack.pop()
        if isinstance(node, AffineNeg):
            if not visited:
                stack += [(node, True), (node.operand, False)]
                continue
            built.append(AffineNeg(built.pop(), span=node.span))
        elif isinstance(node, AffineBinary):
            if not visited:
                stack += [(node, True), (node.rhs, False), (node.lhs, False)]
                continue
            rhs = built.pop()
            lhs = built.pop()
            built.append(AffineBinary(node.op, lhs, rhs, span=node.span))
        else:
            built.append(leaf(node))
    return built[0]


def uses_dims(expr: AffineExpr) -> bool:
    return any(isinstance(n, AffineDim) for n in expr.walk())


def is_symbolic_or_constant(expr: AffineExpr) -> bool:
    """True if the expression has no dimensions (only symbols and constants)."""
    return not any(isinstance(n, AffineDim | AffineUnknown) for n in expr.walk())


def is_pure_affine(expr: AffineExpr) -> bool:
    """MLIR's definition: products have a constant side, divisors are positive constants."""
    for node in expr.walk():
        if isinstance(node, AffineBinary):
            if node.op == "*" and not (is_constant(node.lhs) or is_constant(node.rhs)):
                return False
            if node.op in ("floordiv", "ceildiv", "mod"):
                value = constant_value(node.rhs)
                if value is None or value <= 0:
                    return False
    return True
