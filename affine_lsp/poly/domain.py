"""Iteration domains: the affine loops and conditions around an operation as an isl set.

`enclosing_levels` lists the `affine.for`, `affine.parallel` and `affine.if`
ops around an op (outermost first); `build_domain` turns them into an isl set
whose dimensions are the loop ivs, with bounds (max/min lists, steps),
`affine.if` conditions (the else branch as the complement) and every symbol as
a parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.ir import (
    AffineBound,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    Block,
    Operation,
    ParallelBound,
    Value,
)
from affine_lsp.poly.exprs import Resolver, Scope, Term, minmax
from affine_lsp.poly.session import IslSession, NotAffine

AFFINE_LEVEL_OPS = (AffineForOp, AffineParallelOp, AffineIfOp)


@dataclass(frozen=True)
class Level:
    """One affine op around a statement; `branch` is 0 (then) or 1 (else) for `affine.if`."""

    op: Operation
    branch: int = 0

    @property
    def ivs(self) -> list[Value]:
        if isinstance(self.op, AffineForOp):
            if self.op.induction_variable is None:
                raise NotAffine("affine.for without an induction variable")
            return [self.op.induction_variable]
        if isinstance(self.op, AffineParallelOp):
            return list(self.op.induction_variables)
        return []


def enclosing_levels(
    op: Operation, stop: Block | None = None
) -> tuple[list[Level], Operation | None]:
    """The affine loops/ifs around `op`, outermost first, up to block `stop` (or the
    function). Also returns the first non-affine op met on the way (None if none)."""
    levels: list[Level] = []
    child = op
    while child.parent_block is not None and child.parent_block is not stop:
        parent = child.parent_op
        if parent is None:
            break
        if isinstance(parent, AffineIfOp):
            region = child.parent_block.parent_region
            branch = 1 if len(parent.regions) > 1 and region is parent.regions[1] else 0
            levels.append(Level(parent, branch))
        elif isinstance(parent, AffineForOp | AffineParallelOp):
            levels.append(Level(parent))
        else:
            levels.reverse()
            return levels, None if parent.name == "func.func" and stop is None else parent
        child = parent
    levels.reverse()
    return levels, None


@dataclass
class Domain:
    """An iteration domain: dims (isl names) for `ivs`, the set, and how terms resolve."""

    levels: list[Level]
    ivs: list[Value]
    dims: list[str]
    scope: Scope
    constraints: list[str] = field(default_factory=list)
    negated: list[list[str]] = field(default_factory=list)
    params: frozenset[str] = frozenset()
    set: isl.Set | None = None

    def text(
        self,
        body: str,
        tuple_name: str = "",
        extra_dims: list[str] | None = None,
        extra_params: frozenset[str] = frozenset(),
    ) -> str:
        """`[params] -> { name[dims] ... body }` over this domain's parameters (and
        `extra_params`, which `body` may name though the domain does not)."""
        dims = ", ".join(self.dims + (extra_dims or []))
        params = ", ".join(sorted(self.params | extra_params))
        return f"[{params}] -> {{ {tuple_name}[{dims}]{body} }}"


class DomainBuilder:
    """Builds domains in one isl session with one resolver (shared parameter names)."""

    def __init__(self, session: IslSession, resolver: Resolver) -> None:
        self.session = session
        self.resolver = resolver

    def bound_terms(self, bound: AffineBound | None, scope: Scope) -> list[Term]:
        if bound is None:
            raise NotAffine("missing loop bound")
        if bound.shorthand_value is not None:
            return [self.resolver.use(bound.shorthand_value, scope)]
        if bound.shorthand_constant is not None:
            return [Term.const(bound.shorthand_constant)]
        affine_map = self.resolver.affine_map(bound.map_ref)
        terms = self.resolver.map_results(affine_map, bound.dims, bound.symbols, scope)
        if not terms:
            raise NotAffine("loop bound map without results")
        return terms

    def parallel_terms(self, bound: ParallelBound, scope: Scope) -> list[Term]:
        terms = []
        for subscripts in bound.exprs:
            terms += self.resolver.map_results(
                subscripts.map, subscripts.dims, subscripts.symbols, scope
            )
        if not terms:
            raise NotAffine("empty affine.parallel bound")
        return terms

    def build(
        self,
        levels: list[Level],
        tuple_name: str = "",
        scope: Scope | None = None,
        extra_inside: frozenset[int] = frozenset(),
        lanes: list[tuple[str, int]] | None = None,
    ) -> Domain:
        """The domain of a statement nested in `levels`; `lanes` (name, extent) add
        trailing dimensions `0 <= lane < extent` (the elements of a vector access)."""
        scope = scope or Scope()
        scope.inside = scope.inside | extra_inside | frozenset(id(lv.op) for lv in levels)
        domain = Domain(levels, [], [], scope)
        params: set[str] = set()
        names = self.resolver.names
        for level in levels:
            op = level.op
            if isinstance(op, AffineIfOp):
                integer_set = self.resolver.integer_set(op.condition)
                parts = self.resolver.set_constraints(integer_set, op.dims, op.symbols, scope)
                texts = [f"{t.text} {'=' if eq else '>='} 0" for t, eq in parts]
                for term, _ in parts:
                    params |= term.params
                if level.branch == 0:
                    domain.constraints += texts
                else:
                    domain.negated.append(texts or ["true"])
                continue
            if isinstance(op, AffineForOp):
                lower = [self.bound_terms(op.lower, scope)]
                upper = [self.bound_terms(op.upper, scope)]
                steps = [op.step]
            elif isinstance(op, AffineParallelOp):
                if len(op.lower) != len(op.induction_variables) or len(op.upper) != len(
                    op.induction_variables
                ):
                    raise NotAffine("affine.parallel bounds do not match its ivs")
                lower = [self.parallel_terms(b, scope) for b in op.lower]
                upper = [self.parallel_terms(b, scope) for b in op.upper]
                steps = list(op.steps) or [1] * len(op.induction_variables)
                if len(steps) != len(op.induction_variables):
                    raise NotAffine("affine.parallel steps do not match its ivs")
            else:
                raise NotAffine(f"{op.name} is not an affine loop")
            for iv, lows, highs, step in zip(level.ivs, lower, upper, steps, strict=True):
                if step is None or step < 1:
                    raise NotAffine("loop step must be a positive integer")
                name = names.dimension(iv, len(domain.dims))
                domain.dims.append(name)
                domain.ivs.append(iv)
                for term in lows + highs:
                    params |= term.params
                domain.constraints += [f"{name} >= {t.text}" for t in lows]
                domain.constraints += [f"{name} < {t.text}" for t in highs]
                if step > 1:
                    start = minmax("max", lows)
                    domain.constraints.append(f"({name} - ({start.text})) mod {step} = 0")
                scope.bind(iv, Term.name(name))
        domain.params = frozenset(params)
        lane_dims = [name for name, _ in lanes or []]
        lane_bounds = [f"0 <= {name} < {extent}" for name, extent in lanes or []]
        condition = " and ".join(domain.constraints + lane_bounds) or "true"
        result = self.session.set(domain.text(f" : {condition}", tuple_name, lane_dims))
        for texts in domain.negated:
            excluded = self.session.set(
                domain.text(f" : {' and '.join(texts)}", tuple_name, lane_dims)
            )
            result = self.session.run(lambda r=result, e=excluded: r.subtract(e))
        domain.set = result
        return domain
