"""Affine expressions of the source as isl expression text.

`compile_expr` turns an `AffineExpr` whose dimensions and symbols are bound to
`Term`s into a `Term` (isl syntax, or a folded integer). `Resolver` gives the
`Term` of an SSA value: a loop iv in scope, a composed `affine.apply`,
`affine.min`/`affine.max`, an index constant or `arith.addi/subi/muli`, or a
parameter when the value is fixed over the analysed code. Anything else inside
the analysed code is not affine (`NotAffine`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from affine_lsp.ir import (
    AffineApplyOp,
    AffineBinary,
    AffineConst,
    AffineDim,
    AffineExpr,
    AffineMap,
    AffineNeg,
    AffineSymbol,
    AliasDef,
    IntegerSet,
    MapRef,
    Operation,
    Use,
    Value,
    parse_integer,
)
from affine_lsp.poly.names import NameTable
from affine_lsp.poly.session import NotAffine


@dataclass(frozen=True)
class Term:
    """An isl expression: its text, its value if constant, and the parameters it uses."""

    text: str
    value: int | None = None
    params: frozenset[str] = frozenset()
    atomic: bool = False  # a name, a call like floor(...), or a non-negative constant

    @staticmethod
    def const(value: int) -> Term:
        return Term(str(value), value, atomic=value >= 0)

    @staticmethod
    def name(name: str, is_param: bool = False) -> Term:
        return Term(name, None, frozenset({name}) if is_param else frozenset(), atomic=True)

    def paren(self) -> str:
        return self.text if self.atomic else f"({self.text})"


def _combine(*terms: Term) -> frozenset[str]:
    out: frozenset[str] = frozenset()
    for term in terms:
        out |= term.params
    return out


def _binary(op: str, lhs: Term, rhs: Term) -> Term:
    params = _combine(lhs, rhs)
    if op in ("+", "-"):
        if lhs.value is not None and rhs.value is not None:
            return Term.const(lhs.value + rhs.value if op == "+" else lhs.value - rhs.value)
        if rhs.value == 0:
            return lhs
        return Term(f"{lhs.paren()} {op} {rhs.paren()}", None, params)
    if op == "*":
        if lhs.value is not None and rhs.value is not None:
            return Term.const(lhs.value * rhs.value)
        if lhs.value is None and rhs.value is None:
            raise NotAffine("product of two non-constant expressions")
        constant, other = (lhs, rhs) if lhs.value is not None else (rhs, lhs)
        # isl reads `-1*x` but not `(-1)*x`.
        return Term(f"{constant.value}*{other.paren()}", None, params)
    if rhs.value is None or rhs.value <= 0:
        raise NotAffine(f"'{op}' by a non-constant or non-positive divisor")
    divisor = rhs.value
    if lhs.value is not None:
        if op == "floordiv":
            return Term.const(lhs.value // divisor)
        if op == "ceildiv":
            return Term.const(-((-lhs.value) // divisor))
        return Term.const(lhs.value % divisor)
    if op == "floordiv":
        return Term(f"floor(({lhs.text})/{divisor})", None, params, atomic=True)
    if op == "ceildiv":
        return Term(f"ceil(({lhs.text})/{divisor})", None, params, atomic=True)
    return Term(f"(({lhs.text}) mod {divisor})", None, params, atomic=True)


def compile_expr(expr: AffineExpr, dims: Sequence[Term], symbols: Sequence[Term]) -> Term:
    """The isl text of `expr` with `d_k` bound to `dims[k]` and `s_k` to `symbols[k]`."""
    out: list[Term] = []
    stack: list[tuple[AffineExpr, bool]] = [(expr, False)]
    while stack:
        node, visited = stack.pop()
        if isinstance(node, AffineConst):
            out.append(Term.const(node.value))
        elif isinstance(node, AffineDim):
            if node.position >= len(dims):
                raise NotAffine(f"d{node.position} has no operand")
            out.append(dims[node.position])
        elif isinstance(node, AffineSymbol):
            if node.position >= len(symbols):
                raise NotAffine(f"s{node.position} has no operand")
            out.append(symbols[node.position])
        elif isinstance(node, AffineNeg):
            if not visited:
                stack += [(node, True), (node.operand, False)]
                continue
            inner = out.pop()
            out.append(
                Term.const(-inner.value)
                if inner.value is not None
                else Term(f"-{inner.paren()}", None, inner.params)
            )
        elif isinstance(node, AffineBinary):
            if not visited:
                stack += [(node, True), (node.rhs, False), (node.lhs, False)]
                continue
            rhs = out.pop()
            lhs = out.pop()
            out.append(_binary(node.op, lhs, rhs))
        else:
            raise NotAffine(f"unknown identifier '{node}'")
    return out[0]


def minmax(kind: str, terms: Sequence[Term]) -> Term:
    """`min(...)`/`max(...)` of terms (a single term stays as it is)."""
    if not terms:
        raise NotAffine("empty bound")
    if len(terms) == 1:
        return terms[0]
    values = [t.value for t in terms if t.value is not None]
    if len(values) == len(terms):
        return Term.const(min(values) if kind == "min" else max(values))
    return Term(f"{kind}({', '.join(t.text for t in terms)})", None, _combine(*terms), atomic=True)


# -- values ------------------------------------------------------------------------


def integer_constant(op: Operation) -> int | None:
    """The value of `arith.constant <int> : index|iN` (None for anything else)."""
    if op.name != "arith.constant" or op.node is None:
        return None
    body = op.node.child_by_field_name("body")
    literal = body.child_by_field_name("value") if body is not None else None
    if literal is not None and literal.type == "typed_literal":
        literal = literal.child_by_field_name("value")
    if literal is None or literal.type != "integer":
        return None
    return parse_integer(literal)


def _definer(value: Value) -> Operation | None:
    if value.defining_op is not None:
        return value.defining_op
    return value.owner_block.parent_op if value.owner_block is not None else None


@dataclass
class Scope:
    """What the analysed code is: loop ivs bound to terms, and the ops whose
    values are not fixed (values defined inside them must be affine in the ivs)."""

    dims: dict[int, Term] = field(default_factory=dict)
    inside: frozenset[int] = frozenset()  # ids of ops

    def bind(self, value: Value, term: Term) -> None:
        self.dims[id(value)] = term

    def is_inside(self, value: Value) -> bool:
        op = _definer(value)
        while op is not None:
            if id(op) in self.inside:
                return True
            op = op.parent_op
        return False


_ARITH = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*"}


class Resolver:
    """SSA values and maps as isl terms (parameters named by a `NameTable`)."""

    def __init__(self, names: NameTable, aliases: dict[str, AliasDef]) -> None:
        self.names = names
        self.aliases = aliases

    # -- maps and sets ------------------------------------------------------

    def affine_map(self, ref: MapRef | None) -> AffineMap:
        if ref is None:
            raise NotAffine("missing affine map")
        if isinstance(ref.inline, AffineMap):
            return ref.inline
        alias = self.aliases.get(ref.alias or "")
        if alias is None or alias.map is None:
            raise NotAffine(f"'{ref.alias}' is not a known affine map")
        return alias.map

    def integer_set(self, ref: MapRef | None) -> IntegerSet:
        if ref is None:
            raise NotAffine("missing integer set")
        if isinstance(ref.inline, IntegerSet):
            return ref.inline
        alias = self.aliases.get(ref.alias or "")
        if alias is None or alias.set is None:
            raise NotAffine(f"'{ref.alias}' is not a known integer set")
        return alias.set

    def map_results(
        self, affine_map: AffineMap, dims: list[Use], symbols: list[Use], scope: Scope
    ) -> list[Term]:
        if len(dims) != affine_map.num_dims or len(symbols) != affine_map.num_symbols:
            raise NotAffine("operand count does not match the map")
        dim_terms = [self.use(u, scope) for u in dims]
        symbol_terms = [self.use(u, scope) for u in symbols]
        return [compile_expr(r, dim_terms, symbol_terms) for r in affine_map.results]

    def set_constraints(
        self, integer_set: IntegerSet, dims: list[Use], symbols: list[Use], scope: Scope
    ) -> list[tuple[Term, bool]]:
        """(e, is_equality) for each constraint `e >= 0` / `e == 0`."""
        if len(dims) != integer_set.num_dims or len(symbols) != integer_set.num_symbols:
            raise NotAffine("operand count does not match the set")
        dim_terms = [self.use(u, scope) for u in dims]
        symbol_terms = [self.use(u, scope) for u in symbols]
        out = []
        for constraint in integer_set.constraints:
            expr, is_equality = constraint.normalized()
            out.append((compile_expr(expr, dim_terms, symbol_terms), is_equality))
        return out

    # -- values -----------------------------------------------------------------

    def use(self, use: Use, scope: Scope) -> Term:
        if use.value is None:
            raise NotAffine(f"'{use.name}' is not defined")
        return self.value(use.value, scope)

    def value(self, root: Value, scope: Scope) -> Term:
        """The term of `root`, resolving the values it is computed from first (iteratively)."""
        memo: dict[int, Term] = {}
        stack: list[tuple[Value, bool]] = [(root, False)]
        pending: set[int] = set()
        while stack:
            value, ready = stack.pop()
            key = id(value)
            if key in memo:
                continue
            if key in scope.dims:
                memo[key] = scope.dims[key]
                continue
            inputs = self._inputs(value, scope)
            if not ready and inputs:
                if key in pending:
                    raise NotAffine(f"'{value.display_name}' depends on itself")
                pending.add(key)
                stack.append((value, True))
                stack.extend((v, False) for v in inputs if id(v) not in memo)
                continue
            memo[key] = self._compute(value, scope, memo)
        return memo[id(root)]

    def _inputs(self, value: Value, scope: Scope) -> list[Value]:
        op = value.defining_op
        if op is None:
            return []
        if isinstance(op, AffineApplyOp) or (op.name in _ARITH and scope.is_inside(value)):
            return [u.value for u in op.operands if u.value is not None]
        return []

    def _compute(self, value: Value, scope: Scope, memo: dict[int, Term]) -> Term:
        op = value.defining_op
        inside = scope.is_inside(value)
        if op is not None:
            constant = integer_constant(op)
            if constant is not None:
                return Term.const(constant)
            if isinstance(op, AffineApplyOp):
                return self._apply(op, memo)
            if inside and op.name in _ARITH:
                operands = [u.value for u in op.operands]
                if len(operands) != 2 or any(v is None for v in operands):
                    raise NotAffine(f"'{value.display_name}' has unexpected operands")
                lhs, rhs = (memo[id(v)] for v in operands)
                return _binary(_ARITH[op.name], lhs, rhs)
        if inside:
            what = "a loop-carried value" if value.role == "iter_arg" else "not affine"
            raise NotAffine(f"'{value.display_name}' is {what} in the loop ivs")
        name = self.names.symbol(value)
        return Term.name(name, is_param=True)

    def _apply(self, op: AffineApplyOp, memo: dict[int, Term]) -> Term:
        affine_map = self.affine_map(op.map_ref)
        if any(u.value is None for u in op.operands):
            raise NotAffine(f"{op.name} has an undefined operand")
        if len(op.dims) != affine_map.num_dims or len(op.symbols) != affine_map.num_symbols:
            raise NotAffine(f"{op.name}: operand count does not match the map")
        dims = [memo[id(u.value)] for u in op.dims]
        symbols = [memo[id(u.value)] for u in op.symbols]
        results = [compile_expr(r, dims, symbols) for r in affine_map.results]
        if op.name == "affine.apply":
            if len(results) != 1:
                raise NotAffine("affine.apply needs a single-result map")
            return results[0]
        return minmax("min" if op.name == "affine.min" else "max", results)
