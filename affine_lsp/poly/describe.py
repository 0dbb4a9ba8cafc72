"""Hover data: a loop's iteration domain and trip count, an access's relation and
footprint, an `affine.if` condition and where it holds. Every answer is plain
strings, or `Unknown(reason)` when the code is not affine or the budget runs out."""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from affine_lsp.ir import (
    AffineAccessOp,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    MemRefAccessOp,
    MemRefType,
    ModuleModel,
    Operation,
    VectorType,
)
from affine_lsp.poly.budgets import HOVER, Budget
from affine_lsp.poly.domain import Domain, DomainBuilder, Level, enclosing_levels
from affine_lsp.poly.exprs import Resolver, Term, minmax
from affine_lsp.poly.forms import form_of_aff, render_math
from affine_lsp.poly.names import NameTable, pretty_identifier
from affine_lsp.poly.session import IslSession, NotAffine, PolyError, Unknown


@dataclass(frozen=True)
class LoopDescription:
    domain: str
    trip_count: str
    step: str


@dataclass(frozen=True)
class AccessDescription:
    relation: str
    footprint: str


@dataclass(frozen=True)
class ConditionDescription:
    condition: str
    holds_on: str


class _Context:
    def __init__(self, model: ModuleModel, budget: Budget | None) -> None:
        self.session = IslSession(budget or HOVER)
        self.resolver = Resolver(NameTable("pretty"), model.alias_table())
        self.builder = DomainBuilder(self.session, self.resolver)


def _clean(value: isl.Set | isl.Map) -> str:
    return str(value.coalesce())


def describe_loop(
    op: Operation, model: ModuleModel, budget: Budget | None = None
) -> LoopDescription | Unknown:
    """The iteration domain of the nest down to `op` (an affine.for or affine.parallel)."""
    if not isinstance(op, AffineForOp | AffineParallelOp):
        return Unknown("not an affine loop")
    context = _Context(model, budget)
    try:
        outer_levels, _ = enclosing_levels(op)
        outer = context.builder.build(outer_levels)
        full = context.builder.build([*outer_levels, Level(op)])
        full_set = full.set
        assert full_set is not None
        domain = context.session.run(lambda: _clean(full_set))
        builder, scope = context.builder, outer.scope
        if isinstance(op, AffineForOp):
            lows, highs = builder.bound_terms(op.lower, scope), builder.bound_terms(op.upper, scope)
            counts = [_trip_count(context, outer, lows, highs, op.step)]
            step = str(op.step)
        else:
            counts = [
                _trip_count(
                    context,
                    outer,
                    builder.parallel_terms(lower, scope),
                    builder.parallel_terms(upper, scope),
                    step,
                )
                for lower, upper, step in zip(
                    op.lower, op.upper, op.steps or [1] * len(op.lower), strict=False
                )
            ]
            step = ", ".join(str(s) for s in (op.steps or [1] * len(op.lower)))
        return LoopDescription(domain, ", ".join(counts), step)
    except PolyError as error:
        return Unknown(error.reason)
    except isl.Error as error:  # (isl called directly: a cap run out on the way)
        return Unknown(context.session.failure(error, "the description").reason)


def _trip_count(
    context: _Context, outer: Domain, lows: list[Term], highs: list[Term], step: int | None
) -> str:
    """The trip count of a loop (or of one dimension of an affine.parallel) over `outer`."""
    if not step or step < 1:
        raise NotAffine("loop step must be a positive integer")
    start, end = minmax("max", lows), minmax("min", highs)
    if start.value is not None and end.value is not None:
        return str(max(0, -((start.value - end.value) // step)))
    count = f"({end.text}) - ({start.text})"
    if step > 1:
        count = f"ceil(({count})/{step})"
    params = start.params | end.params | outer.params
    text = f"[{', '.join(sorted(params))}] -> {{ [{', '.join(outer.dims)}] -> [({count})] }}"
    session = context.session
    piecewise = session.run(lambda: isl.PwAff.read_from_str(session.ctx, text))
    outer_set = outer.set
    assert outer_set is not None
    piecewise = session.run(lambda: piecewise.gist(outer_set).coalesce())
    pieces: list[isl.Aff] = []
    session.run(lambda: piecewise.foreach_piece(lambda _s, aff: pieces.append(aff)))
    if len(pieces) == 1:
        form = form_of_aff(pieces[0])
        if form is not None:
            return render_math(form)
    fallback = f"{end.text} - {start.text}"
    return fallback if step == 1 else f"({fallback}) ceildiv {step}"


def describe_access(
    op: Operation, model: ModuleModel, budget: Budget | None = None
) -> AccessDescription | Unknown:
    """The access relation of a load/store and the region it touches over its domain."""
    if not isinstance(op, AffineAccessOp | MemRefAccessOp):
        return Unknown("not a memory access")
    context = _Context(model, budget)
    try:
        levels, _ = enclosing_levels(op)
        domain = context.builder.build(levels)
        relation = access_relation(context.session, context.resolver, domain, op)
        domain_set = domain.set
        assert domain_set is not None
        footprint = context.session.run(
            lambda: _clean(relation.intersect_domain(domain_set).range())
        )
        return AccessDescription(_pretty_relation(relation), footprint)
    except PolyError as error:
        return Unknown(error.reason)
    except isl.Error as error:  # (isl called directly: a cap run out on the way)
        return Unknown(context.session.failure(error, "the description").reason)


def access_terms(resolver: Resolver, domain: Domain, op: Operation) -> list[Term]:
    """The subscripts of a load/store as terms over the domain's dims."""
    if isinstance(op, AffineAccessOp):
        subscripts = op.subscripts
        if subscripts is None:
            raise NotAffine("access without subscripts")
        return resolver.map_results(
            subscripts.map, subscripts.dims, subscripts.symbols, domain.scope
        )
    if isinstance(op, MemRefAccessOp):
        return [resolver.use(use, domain.scope) for use in op.indices]
    raise NotAffine(f"{op.name} is not an analysable access")


def vector_shape(op: Operation) -> tuple[int, ...]:
    """The vector shape of affine.vector_load/store (empty for scalar accesses)."""
    if isinstance(op, AffineAccessOp) and isinstance(op.vector_type, VectorType):
        return tuple(op.vector_type.shape)
    return ()


def access_relation(
    session: IslSession,
    resolver: Resolver,
    domain: Domain,
    op: Operation,
    array: str | None = None,
    tuple_name: str = "",
    lanes: list[str] | None = None,
) -> isl.Map:
    """`[params] -> { [dims] -> A[subscripts] }` (no domain constraints).

    A vector access touches `subscript + lane` in its last dimensions. With
    `lanes` (names), the lanes become extra input dimensions, so that every
    instance touches exactly one element; otherwise the relation is one-to-many.
    """
    memref = op.memref  # type: ignore[attr-defined]
    if memref is None or memref.value is None:
        raise NotAffine("access to an undefined memref")
    terms = access_terms(resolver, domain, op)
    declared = getattr(op, "memref_type", None)
    if isinstance(declared, MemRefType) and declared.rank is not None:
        if declared.rank != len(terms):
            raise NotAffine("subscript count does not match the memref rank")
    shape = vector_shape(op)
    if len(shape) > len(terms):
        raise NotAffine("vector rank exceeds the memref rank")
    name = array or pretty_identifier(memref.value.display_name)
    params = set(domain.params)
    outputs: list[str] = []
    constraints: list[str] = []
    lane_names = lanes if lanes is not None else [f"o{k}" for k in range(len(shape))]
    first_lane = len(terms) - len(shape)
    for position, term in enumerate(terms):
        params |= term.params
        if position < first_lane:
            outputs.append(term.text)
            continue
        lane = lane_names[position - first_lane]
        extent = shape[position - first_lane]
        if lanes is not None:
            outputs.append(f"{term.paren()} + {lane}")
            constraints.append(f"0 <= {lane} < {extent}")
        else:
            outputs.append(lane)
            constraints.append(f"{term.paren()} <= {lane} < {term.paren()} + {extent}")
    in_dims = domain.dims + (lanes or [])
    condition = f" : {' and '.join(constraints)}" if constraints else ""
    text = (
        f"[{', '.join(sorted(params))}] -> {{ {tuple_name}[{', '.join(in_dims)}] -> "
        f"{name}[{', '.join(outputs)}]{condition} }}"
    )
    return session.map(text)


def _pretty_relation(relation: isl.Map) -> str:
    """`[N] -> { [i, j] -> A[i, j + 1] }` when the relation is a function; isl's text otherwise."""
    try:
        multi = relation.as_pw_multi_aff()
        if multi.n_piece() != 1 or not relation.domain().plain_is_universe():
            return _clean(relation)
        affine = multi.as_multi_aff()
        outputs = []
        for position in range(affine.dim(isl.dim_type.out)):
            form = form_of_aff(affine.get_aff(position))
            if form is None:
                return _clean(relation)
            outputs.append(render_math(form))
    except isl.Error:
        return str(relation)
    space = relation.get_space()
    params = [
        space.get_dim_name(isl.dim_type.param, k) or ""
        for k in range(space.dim(isl.dim_type.param))
    ]
    dims = [
        space.get_dim_name(isl.dim_type.in_, k) or "" for k in range(space.dim(isl.dim_type.in_))
    ]
    array = relation.get_tuple_name(isl.dim_type.out) or ""
    prefix = f"[{', '.join(params)}] -> " if params else ""
    return f"{prefix}{{ [{', '.join(dims)}] -> {array}[{', '.join(outputs)}] }}"


def describe_condition(
    op: Operation, model: ModuleModel, budget: Budget | None = None
) -> ConditionDescription | Unknown:
    """An affine.if condition over the enclosing ivs, and where in the domain it holds."""
    if not isinstance(op, AffineIfOp):
        return Unknown("not an affine.if")
    context = _Context(model, budget)
    try:
        levels, _ = enclosing_levels(op)
        outer = context.builder.build(levels)
        then_set = context.builder.build([*levels, Level(op, 0)]).set
        assert then_set is not None
        integer_set = context.resolver.integer_set(op.condition)
        parts = context.resolver.set_constraints(integer_set, op.dims, op.symbols, outer.scope)
        params = set(outer.params)
        texts = []
        for term, is_equality in parts:
            params |= term.params
            texts.append(f"{term.text} {'=' if is_equality else '>='} 0")
        raw = context.session.set(
            f"[{', '.join(sorted(params))}] -> {{ [{', '.join(outer.dims)}] : "
            f"{' and '.join(texts) or 'true'} }}"
        )
        return ConditionDescription(
            context.session.run(lambda: _clean(raw)),
            context.session.run(lambda: _clean(then_set)),
        )
    except PolyError as error:
        return Unknown(error.reason)
    except isl.Error as error:  # (isl called directly: a cap run out on the way)
        return Unknown(context.session.failure(error, "the description").reason)
