"""Scalar replacement: the accesses in a loop's body to an element that does not
change with the loop's iterations (`%C[%i, %j]` in gemm's `%k` loop) leave the loop.

An element read and then written in each iteration (a reduction kept in memory)
is loaded once before the loop, carried through it as an `iter_args` value (named
as the load's result was, so the body reads as before), and stored once after it:
the arithmetic is the same, in the same order (bit-identical results). An element
only read is loaded once before the loop. Legal when no other access in the loop
may touch that element (exact, from the access relations: the reason names the
access that may). When the loop may run zero times, all of it goes in an
`affine.if` the loop runs at all (else the element would be loaded and stored
where the original never touches it). The accesses must be in
the loop's body itself, the element read by one load before its one store.

Where no element is invariant, the loads of one memref that the next iterations
read again (`%A[%i + 1]`, then `%A[%i]` one iteration later, then `%A[%i - 1]`) are
carried instead: the load reaching furthest ahead stays in the body, and each of the
others becomes an `iter_args` value (named as its load's result was) that starts as
its element at the first iteration (loaded before the loop, at `%i_first`, the
loop's lower bound) and takes the next one's value at each yield. One load per
iteration instead of several: a vectorizing compiler builds the neighbours from
registers. Legal when the loop does not write what they read; the lower bound must
be a single expression and the loop step constant.

With the invariant elements, in the same step, the accesses repeated within one
iteration go (`Forward`): a load of an element the iteration stored before (no write
in between that may touch it) uses the stored value instead, and a store that a later
store of the same element in the iteration overwrites (no read in between that may
see it) is dropped; the invariant elements are then counted without them. What an
unroll-and-jam leaves: the copies of gemm's `k` jammed into the `j` loop each load
and store `%C[%i, %j]`; forwarded, one load and one store per iteration (a compiler
cannot do it itself where the arrays may alias). The operations and their order stay.
Where no element is invariant, loads carried to the next iterations come first, as
written; else the accesses within iterations alone.

The proof models the carried value as the memory element itself
(`scalars.Promotion`), or, for a carried reuse, as a read of the element it holds
at each iteration (`scalars.Rotation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.ir import AffineAccessOp, AffineForOp, Operation, Value
from affine_lsp.poly import NotAffine, Statement, is_pure, is_under
from affine_lsp.syntax import decode
from affine_lsp.transforms.bounds import map_text, render_bound
from affine_lsp.transforms.edits import line_start, next_line_start
from affine_lsp.transforms.loops.core import Context, Refused, Spec, check_layout
from affine_lsp.transforms.loops.hoist import runs_at_least_once
from affine_lsp.transforms.loops.nest import body_ops, defined_under, iv_name, yield_of
from affine_lsp.transforms.loops.proof import Rewrite
from affine_lsp.transforms.loops.scalars import Promotion, Rotation
from affine_lsp.transforms.loops.split import bounds_of, plus, runs_condition, set_text
from affine_lsp.transforms.loops.text import (
    Builder,
    Origin,
    Renames,
    indent_of,
    loop_rewrite,
    step_indent,
)
from affine_lsp.transforms.naming import names_in


@dataclass
class Element:
    """The accesses of one invariant element: its load, and its store (None: only read,
    by `load` and the `others`, which the one load before the loop replaces)."""

    load: AffineAccessOp
    store: AffineAccessOp | None = None
    others: list[AffineAccessOp] = field(default_factory=list)


@dataclass
class Forward:
    """Within one iteration: `load` reads what `store`, before it, wrote."""

    load: AffineAccessOp
    store: AffineAccessOp


@dataclass
class Reuse:
    """Loads of one memref that read at each iteration what `head` read `lag` iterations
    before: `held[k]` lags `len(held) - k` iterations (held[0] the furthest behind)."""

    head: AffineAccessOp
    held: list[AffineAccessOp]


@dataclass
class Version:
    """The loop where one expression of its lower bound is the largest (`guard`, "" for
    the last or only one): `first`, the op giving `%i_first`; `lower`, the header's
    lower bound there ("": the loop's own)."""

    first: str
    lower: str = ""
    guard: str = ""


@dataclass
class ScalarPlan:
    loop: AffineForOp
    elements: list[Element]
    left: list[str] = field(default_factory=list)  # why other invariant accesses stay
    guard: str = ""  # the affine.if condition 'the loop runs' ("": it always does)
    reuses: list[Reuse] = field(default_factory=list)  # loads carried to the next iterations
    firsts: list[Version] = field(default_factory=list)  # the loop once per lower bound
    forwards: list[Forward] = field(default_factory=list)  # loads reading this iteration's store
    dropped: list[AffineAccessOp] = field(default_factory=list)  # stores overwritten after

    @property
    def carried(self) -> list[Element]:
        return [e for e in self.elements if e.store is not None]


def title(spec: Spec, loop: AffineForOp) -> str:
    return f"Scalar replacement in {iv_name(loop)}"


def access_text(data: bytes, op: AffineAccessOp) -> str:
    """`%C[%i, %j]` as the source writes it."""
    assert op.memref is not None and op.subscripts is not None
    end = data.find(b"]", op.subscripts.span.end_byte - 1)
    return decode(data[op.memref.span.start_byte : end + 1])


def _invariant(op: AffineAccessOp, loop: AffineForOp) -> bool:
    uses = [op.memref, *(op.subscripts.operands if op.subscripts is not None else [])]
    return all(
        use is not None and use.value is not None and not defined_under(use.value, loop)
        for use in uses
    )


def _key(data: bytes, op: AffineAccessOp) -> tuple:
    assert op.memref is not None and op.subscripts is not None
    operands = tuple(id(u.value) for u in op.subscripts.operands)
    subscripts = data[op.subscripts.span.start_byte : op.subscripts.span.end_byte]
    return (id(op.memref.value), operands, " ".join(decode(subscripts).split()))


def plan(context: Context, spec: Spec, check: bool = True) -> ScalarPlan:
    loop = context.loop
    check_layout(context, loop)
    forwards, dropped = _within_iterations(context, loop, check)
    gone = {id(f.load) for f in forwards} | {id(op) for op in dropped}
    groups: dict[tuple, list[AffineAccessOp]] = {}
    for op in body_ops(loop):
        if (
            isinstance(op, AffineAccessOp)
            and op.name in ("affine.load", "affine.store")
            and _invariant(op, loop)
        ):
            groups.setdefault(_key(context.data, op), []).append(op)
    found = ScalarPlan(loop, [], forwards=forwards, dropped=dropped)
    if not groups:
        reuses, reasons = _reuses(context, loop, check)
        if not reuses and gone:
            return found
        found.forwards, found.dropped = [], []  # (the loads carried instead, as written)
        if not reuses:
            raise Refused(
                reasons[0]
                if reasons
                else f"no access in {iv_name(loop)}'s body is to an element {iv_name(loop)} "
                "does not move, nor read again by its next iterations"
            )
        found.reuses, found.left = reuses, reasons
        found.firsts = _versions(context, loop)
    for ops in groups.values():
        reason = _element(context, loop, ops, found, check, gone)
        if reason:
            found.left.append(reason)
    if not found.elements and not found.reuses:
        if gone:
            return found  # (within iterations only)
        raise Refused(found.left[0])
    if not runs_at_least_once(context, loop):
        try:  # the elements are accessed only where the loop runs
            found.guard = runs_condition(bounds_of(context, loop))
        except NotAffine:
            raise Refused(
                f"{iv_name(loop)} may run zero times: its invariant elements would be "
                "accessed where the original never accesses them"
            ) from None
    return found


def stores_repeated(data: bytes, loop: AffineForOp) -> bool:
    """Whether the loop's body stores one element (spelt alike) more than once: what the
    copies of an unroll-and-jam that update one element leave (`_within_iterations`)."""
    keys = [key for op, key in _keyed_accesses(data, loop) if op.is_write]
    return len(keys) != len(set(keys))


def _accessed_after_store(data: bytes, loop: AffineForOp) -> bool:
    """Whether the loop's body accesses an element (spelt alike) after storing it."""
    stored: set[tuple] = set()
    for op, key in _keyed_accesses(data, loop):
        if key in stored:
            return True
        if op.is_write:
            stored.add(key)
    return False


def _keyed_accesses(data: bytes, loop: AffineForOp) -> list[tuple[AffineAccessOp, tuple]]:
    """The `affine.load`s and `affine.store`s of the loop's body, each with its element's
    spelling (`_key`)."""
    return [
        (op, _key(data, op))
        for op in body_ops(loop)
        if isinstance(op, AffineAccessOp)
        and op.name in ("affine.load", "affine.store")
        and op.memref is not None
        and op.subscripts is not None
    ]


def _within_iterations(
    context: Context, loop: AffineForOp, check: bool = True
) -> tuple[list[Forward], list[AffineAccessOp]]:
    """The loads of the loop's body that read a store before them in the same iteration
    (same memref and subscripts, no write in between that may touch the element), and
    the stores a later store of the same element overwrites (no read in between that
    may see them). An op with regions stops both (the window's analysis has already
    refused ops that may touch memory otherwise, and memrefs that may alias). Without
    `check`, only accesses spelt alike are taken to meet (for the proof's tests)."""
    if not _accessed_after_store(context.data, loop):
        return [], []  # (nothing to look at: no analysis, the lightbulb's fast path)
    statements = {id(s.op): s for s in context.analysis(loop).window.statements}
    forwards: list[Forward] = []
    dropped: list[AffineAccessOp] = []
    last: dict[tuple, AffineAccessOp] = {}  # element -> the store whose value it holds
    pending: dict[tuple, AffineAccessOp] = {}  # element -> a store not read since

    def meet(a: AffineAccessOp, b: AffineAccessOp) -> bool:
        return check and _may_meet(context, statements, a, b)

    for op in body_ops(loop):
        if not isinstance(op, AffineAccessOp) or op.name not in ("affine.load", "affine.store"):
            if op.regions or not is_pure(op):
                last.clear()
                pending.clear()
            continue
        key = _key(context.data, op)
        if op.is_write:
            for table in (last, pending):
                for other in [k for k, v in table.items() if k != key and meet(v, op)]:
                    del table[other]  # (this store may change that element)
            earlier = pending.get(key)
            if earlier is not None:
                dropped.append(earlier)
            last[key] = pending[key] = op
            continue
        store = last.get(key)
        if store is not None and op.results and store.stored_value is not None:
            forwards.append(Forward(op, store))
            continue
        for other in [k for k, v in pending.items() if meet(v, op)]:
            del pending[other]  # (read: that store stays)
    return forwards, dropped


def _may_meet(
    context: Context, statements: dict[int, Statement], a: AffineAccessOp, b: AffineAccessOp
) -> bool:
    """Whether two accesses of one body may touch one element in one iteration (exact,
    from their access relations; True where either cannot be analysed)."""
    first, second = statements.get(id(a)), statements.get(id(b))
    if first is None or second is None or first.lanes or second.lanes:
        return True
    if first.array != second.array:
        return False  # (distinct memrefs: the analysis refuses any that may alias)

    def meet() -> bool:
        same = first.access.apply_range(second.access.reverse())
        same = same.set_tuple_name(isl.dim_type.in_, "S").set_tuple_name(isl.dim_type.out, "S")
        deltas = same.deltas()
        zero = isl.Set.universe(deltas.get_space())
        for dim in range(deltas.dim(isl.dim_type.set)):
            zero = zero.fix_val(isl.dim_type.set, dim, isl.Val.zero(deltas.get_ctx()))
        return not deltas.intersect(zero).is_empty()

    return bool(context.session.run(meet, "an element accessed twice in an iteration"))


def _reuses(context: Context, loop: AffineForOp, check: bool) -> tuple[list[Reuse], list[str]]:
    """The loads in the loop's body that its next iterations read again, per memref, and
    why others are left."""
    if loop.iter_args:
        return [], [f"{iv_name(loop)} carries values already"]
    if loop.step is None:
        return [], [f"{iv_name(loop)}'s step is not a constant"]
    statements = {id(s.op): s for s in context.analysis(loop).window.statements}
    loads = [
        op
        for op in body_ops(loop)
        if isinstance(op, AffineAccessOp)
        and op.name == "affine.load"
        and id(op) in statements
        and not statements[id(op)].lanes
    ]
    groups: dict[int, list[AffineAccessOp]] = {}
    for op in loads:
        assert op.memref is not None
        groups.setdefault(id(op.memref.value), []).append(op)
    reuses: list[Reuse] = []
    reasons: list[str] = []
    for group in groups.values():
        for lags in _chains(context, group, statements, loop.step):
            ops = [op for op, _ in lags]
            if check:
                other = _clash(context, loop, ops, False)
                if other is not None:
                    where = (
                        access_text(context.data, other.op)
                        if isinstance(other.op, AffineAccessOp)
                        else other.op.name
                    )
                    reasons.append(
                        f"{access_text(context.data, ops[0])} may also be written as {where} "
                        f"in {iv_name(loop)}'s body"
                    )
                    continue
            order = sorted(lags, key=lambda pair: -pair[1])
            reuses.append(Reuse(order[-1][0], [op for op, _ in order[:-1]]))
    return reuses, reasons


def _chains(
    context: Context, ops: list[AffineAccessOp], statements: dict[int, Statement], step: int
) -> list[list[tuple[AffineAccessOp, int]]]:
    """The loads of one memref that read what another of them read some iterations
    before (`%A[%i, %j - 1]`, `%A[%i, %j]`, `%A[%i, %j + 1]` in `%j`, not `%A[%i - 1, %j]`),
    each with the iterations it lags behind the one reaching furthest ahead (0), where
    they are 0, 1, 2, ... (a load at each)."""
    chains: list[list[tuple[AffineAccessOp, int]]] = []
    for op in ops:
        for chain in chains:
            shift = _shift(context, statements[id(chain[0][0])], statements[id(op)])
            if shift is not None and shift % step == 0:
                chain.append((op, shift // step))  # chain[0] at i reads what op reads at i + shift
                break
        else:
            chains.append([(op, 0)])
    found = []
    for chain in chains:
        lowest = min(d for _, d in chain)
        lags = [(op, d - lowest) for op, d in chain]
        if len(lags) > 1 and sorted(d for _, d in lags) == list(range(len(lags))):
            found.append(lags)
    return found


def _shift(context: Context, first: Statement, other: Statement) -> int | None:
    """The constant d such that `first` at iteration i reads what `other` reads at i + d
    (None: no such constant)."""

    def shift() -> int | None:
        same = first.access.apply_range(other.access.reverse())
        same = same.set_tuple_name(isl.dim_type.in_, "S").set_tuple_name(isl.dim_type.out, "S")
        deltas = same.deltas()
        if deltas.is_empty() or deltas.dim(isl.dim_type.set) != 1:
            return None
        point = deltas.sample_point()
        value = int(point.get_coordinate_val(isl.dim_type.set, 0).to_python())
        only = isl.Set.universe(deltas.get_space()).fix_val(
            isl.dim_type.set, 0, isl.Val.int_from_si(deltas.get_ctx(), value)
        )
        return value if deltas.is_subset(only) else None

    found: int | None = context.session.run(shift, "a reuse between iterations")
    return found


MAX_VERSIONS = 4
"""The most expressions a lower bound's max may have: the loop is written once for
each (where it is the largest), its first iteration's elements loaded before it."""


def _versions(context: Context, loop: AffineForOp) -> list[Version]:
    """The loop's versions: one, or one per expression of a lower bound's max."""
    try:
        bounds = bounds_of(context, loop)
    except NotAffine as error:
        raise Refused(f"{iv_name(loop)}'s lower bound is not affine: {error.reason}") from None
    lowers = bounds.lowers
    if len(lowers) > MAX_VERSIONS:
        raise Refused(
            f"{iv_name(loop)}'s lower bound is a max of {len(lowers)} expressions: its first "
            f"iteration has no one element to load before the loop (at most {MAX_VERSIONS})"
        )
    found = []
    for k, lower in enumerate(lowers):
        if lower.is_constant:
            first = f"arith.constant {lower.constant} : index"
        else:
            first = f"affine.apply {map_text([lower], bounds.operand)}"
        if len(lowers) == 1:
            return [Version(first)]
        others = [  # the largest, the first of equal ones
            plus(lower.minus(other), -1 if m < k else 0) for m, other in enumerate(lowers) if m != k
        ]
        guard = set_text(bounds, others) if k < len(lowers) - 1 else ""
        found.append(Version(first, render_bound([lower], True, bounds.operand), guard))
    return found


def _element(
    context: Context,
    loop: AffineForOp,
    ops: list[AffineAccessOp],
    plan: ScalarPlan,
    check: bool,
    gone: set[int] | frozenset[int] = frozenset(),
) -> str:
    """Add the element `ops` access to the plan, or say why it stays (`gone`: the
    accesses scalar replacement within iterations removes, which count no more)."""
    text = access_text(context.data, ops[0])
    kept = [op for op in ops if id(op) not in gone]
    loads = [op for op in kept if not op.is_write]
    stores = [op for op in kept if op.is_write]
    if stores:
        if len(loads) != 1 or len(stores) != 1 or kept[0] is not loads[0]:
            return (
                f"{text} is accessed in {iv_name(loop)}'s body other than read once, then "
                "written once"
            )
        element = Element(loads[0], stores[0])
    else:
        element = Element(loads[0], others=loads[1:])
    if check:
        other = _clash(context, loop, ops, bool(stores))
        if other is not None:
            what = "written" if other.is_write else "read"
            where = (
                access_text(context.data, other.op)
                if isinstance(other.op, AffineAccessOp)
                else other.op.name
            )
            return f"{text} may also be {what} as {where} in {iv_name(loop)}'s body"
    plan.elements.append(element)
    return ""


def _clash(
    context: Context, loop: AffineForOp, ops: list[AffineAccessOp], written: bool
) -> Statement | None:
    """An access under the loop, other than `ops`, that may touch their element (a
    write, or any access when the loop writes the element)."""
    analysis = context.analysis(loop)
    statements = analysis.window.statements
    mine = next((s for s in statements if s.op is ops[0]), None)
    if mine is None:
        raise Refused(f"{access_text(context.data, ops[0])} cannot be analysed")
    own = {id(op) for op in ops}
    for other in statements:
        if id(other.op) in own or other.array != mine.array or not is_under(other.op, loop):
            continue
        if not (written or other.is_write):
            continue

        def overlaps(other: Statement = other) -> bool:
            cells = mine.access.range().intersect_params(analysis.window.context)
            return not cells.intersect(other.access.range()).is_empty()

        if context.session.run(overlaps, "an invariant element"):
            return other
    return None


# -- text ---------------------------------------------------------------------------------


def rewrite(context: Context, plan: ScalarPlan) -> Rewrite:
    if plan.reuses:
        return _rewrite_reuses(context, plan)
    if not plan.elements:
        return _rewrite_forwards(context, plan)
    data = context.data
    loop = plan.loop
    start, end, builder = loop_rewrite(data, loop)
    indent = indent_of(data, loop)
    ops = body_ops(loop)
    unit = step_indent(data, loop, ops[0]) if ops else 2
    delta = unit if plan.guard else 0  # everything inside the affine.if
    if plan.guard:
        builder.line(indent, f"affine.if {plan.guard} {{")
    moved = {id(e.load) for e in plan.elements} | {id(e.store) for e in plan.carried}
    moved |= {id(other) for e in plan.elements for other in e.others}
    moved |= {id(f.load) for f in plan.forwards} | {id(op) for op in plan.dropped}
    body_renames = _forwarded_names(plan)
    elsewhere = names_in(context.function, excluding=loop)
    inits: dict[int, str] = {}
    for element in plan.elements:
        value = element.load.results[0]
        renames = Renames()
        if element.store is not None:
            inits[id(element)] = context.fresh(value.name, "init")
            renames.set(value, inits[id(element)])
        elif value.name in elsewhere:
            renames.set(value, context.fresh(value.name))
            body_renames.set(value, renames.get(value))
        for other in element.others:  # the one load stands for them
            body_renames.set(other.results[0], renames.get(value))
        builder.copy_lines([element.load], renames, delta - unit)
    carried = plan.carried
    finals = [context.fresh(e.load.results[0].name, "final") for e in carried]
    builder.line(indent + " " * delta, _header(context, plan, inits, finals) + " {", loop)
    body = loop.body
    assert body is not None
    position = next_line_start(data, body.span.start_byte)
    for op in ops:
        if id(op) in moved:
            start_of_op = line_start(data, op.span.start_byte)
            builder.copy(position, start_of_op, [loop], body_renames, delta)
            position = next_line_start(data, op.span.end_byte)
    yielded = yield_of(loop)
    last = line_start(data, yielded.span.start_byte) if yielded is not None else None
    if last is None:
        last = line_start(data, body.span.end_byte - 1)
    builder.copy(position, last, [loop], body_renames, delta)
    inner = indent + " " * (unit + delta)
    if yielded is not None or carried:
        builder.line(inner, _yield(context, plan, body_renames), yielded)
    builder.line(indent + " " * delta, "}")
    promotions = []
    for position_in_loop, (element, final) in enumerate(zip(carried, finals, strict=True)):
        store = element.store
        assert store is not None and store.stored_value is not None
        renames = Renames()
        if store.stored_value.value is not None:
            renames.set(store.stored_value.value, final)
        builder.copy_lines([store], renames, delta - unit)
        promotions.append(
            Promotion(
                _offset(builder, loop),
                len(loop.iter_args) + position_in_loop,
                _offset(builder, element.load),
                _offset(builder, store),
                Origin(element.load, Renames(), 0),
                Origin(store, Renames(), 0),
            )
        )
    if plan.guard:
        builder.line(indent, "}")
    return Rewrite(
        start,
        end,
        builder.text(),
        builder.origins,
        promotions=promotions,
        first_iteration={_offset(builder, e.load) for e in plan.elements if e.store is not None},
        also={
            _offset(builder, e.load): [Origin(other, Renames(), 0) for other in e.others]
            for e in plan.elements
            if e.others
        },
    )


def _rewrite_forwards(context: Context, plan: ScalarPlan) -> Rewrite:
    """The loop without its forwarded loads (their uses take the stored value) and its
    overwritten stores; the rest as it was."""
    data = context.data
    loop = plan.loop
    start, end, builder = loop_rewrite(data, loop)
    body = loop.body
    assert body is not None
    renames = _forwarded_names(plan)
    header = decode(data[loop.span.start_byte : body.span.start_byte]).rstrip()
    builder.line(indent_of(data, loop), header + " {", loop)
    gone = {id(f.load) for f in plan.forwards} | {id(op) for op in plan.dropped}
    position = next_line_start(data, body.span.start_byte)
    for op in body_ops(loop):
        if id(op) in gone:
            builder.copy(position, line_start(data, op.span.start_byte), [loop], renames)
            position = next_line_start(data, op.span.end_byte)
    builder.copy(position, end, [loop], renames)
    return Rewrite(start, end, builder.text(), builder.origins)


def _forwarded_names(plan: ScalarPlan) -> Renames:
    """Each forwarded load's result named as the value its store stored."""
    renames = Renames()
    for forward in plan.forwards:
        stored = forward.store.stored_value
        assert stored is not None
        renames.set(forward.load.results[0], _use(stored.name, stored.value, renames))
    return renames


def _rewrite_reuses(context: Context, plan: ScalarPlan) -> Rewrite:
    """The loop carrying its reused loads' values (once per version, in an `affine.if`
    chain where its lower bound is a max)."""
    data = context.data
    loop = plan.loop
    start, end, builder = loop_rewrite(data, loop)
    indent = indent_of(data, loop)
    ops = body_ops(loop)
    unit = step_indent(data, loop, ops[0]) if ops else 2
    depth = unit if plan.guard else 0
    if plan.guard:
        builder.line(indent, f"affine.if {plan.guard} {{")
    rotations: list[Rotation] = []
    for k, version in enumerate(plan.firsts):
        if k:  # the else branch of the version before
            builder.line(indent + " " * depth, "} else {")
        if version.guard:
            depth += unit if k else 0
            builder.line(indent + " " * depth, f"affine.if {version.guard} {{")
        inner = depth + unit if len(plan.firsts) > 1 else depth
        rotations += _version(context, plan, version, builder, inner, unit)
    for k in range(len(plan.firsts) - 1):  # close the chain, innermost first
        builder.line(indent + " " * (depth - k * unit), "}")
    if plan.guard:
        builder.line(indent, "}")
    return Rewrite(start, end, builder.text(), builder.origins, rotations=rotations)


def _version(
    context: Context, plan: ScalarPlan, version: Version, builder: Builder, delta: int, unit: int
) -> list[Rotation]:
    """One copy of the loop, `delta` deeper: `%i_first`, the held loads at the first
    iteration, the loop with them as iter_args, each yielding the next one's."""
    data = context.data
    loop = plan.loop
    indent = indent_of(data, loop)
    ops = body_ops(loop)
    iv = loop.induction_variable
    assert iv is not None
    first = context.fresh(iv.name, "first")
    builder.line(indent + " " * delta, f"{first} = {version.first}")
    held = [op for reuse in plan.reuses for op in reuse.held]
    inits: list[str] = []
    for op in held:
        value = op.results[0]
        inits.append(context.fresh(value.name, "init"))
        renames = Renames()
        renames.set(value, inits[-1])
        renames.set(iv, first)
        builder.copy_lines([op], renames, delta - unit)
    init_loads = [_offset(builder, op) for op in held]
    lasts = [context.fresh(op.results[0].name, "last") for op in held]
    arguments = ", ".join(
        f"{op.results[0].name} = {init}" for op, init in zip(held, inits, strict=True)
    )
    types = ", ".join(_type(op.results[0]) for op in held)
    body = loop.body
    assert body is not None
    head = decode(data[loop.name_span.start_byte : body.span.start_byte]).rstrip()
    if version.lower:
        assert loop.upper is not None
        upper = decode(data[loop.upper.span.start_byte : body.span.start_byte]).rstrip()
        head = f"affine.for {iv.name} = {version.lower} to {upper}"
    header = f"{', '.join(lasts)} = {head} iter_args({arguments}) -> ({types}) {{"
    builder.line(indent + " " * delta, header, loop)
    loop_at = max(
        offset
        for offset, origin in builder.origins.items()
        if origin.op is loop and offset >= init_loads[-1]
    )
    position = next_line_start(data, body.span.start_byte)
    moved = {id(op) for op in held}
    for op in ops:
        if id(op) in moved:
            builder.copy(position, line_start(data, op.span.start_byte), [loop], Renames(), delta)
            position = next_line_start(data, op.span.end_byte)
    last = line_start(data, body.span.end_byte - 1)
    builder.copy(position, last, [loop], Renames(), delta)
    yielded = []
    for reuse in plan.reuses:
        chain = [*reuse.held[1:], reuse.head]
        yielded += [op.results[0].name for op in chain]
    builder.line(indent + " " * (unit + delta), f"affine.yield {', '.join(yielded)} : {types}")
    builder.line(indent + " " * delta, "}")
    return [
        Rotation(loop_at, k, offset, Origin(op, Renames(), 0))
        for k, (op, offset) in enumerate(zip(held, init_loads, strict=True))
    ]


def _offset(builder: Builder, op: Operation) -> int:
    """Where the copy of `op` written last starts in the new document."""
    found = [offset for offset, origin in builder.origins.items() if origin.op is op]
    return max(found)


def _header(context: Context, plan: ScalarPlan, inits: dict[int, str], finals: list[str]) -> str:
    """The loop's header with the carried elements added to its results and iter_args."""
    data = context.data
    loop = plan.loop
    body = loop.body
    assert body is not None
    carried = plan.carried
    if not carried:  # only loads hoisted: the header stays
        return decode(data[loop.span.start_byte : body.span.start_byte]).rstrip()
    names = [e.load.results[0].name for e in carried]
    types = [_type(e.load.results[0]) for e in carried]
    results = ", ".join(finals)
    prefix = decode(data[loop.span.start_byte : loop.name_span.start_byte]).strip()
    if prefix:
        results = prefix.removesuffix("=").strip() + ", " + results
    arguments = [f"{n} = {inits[id(e)]}" for n, e in zip(names, carried, strict=True)]
    old_types = [_type(r) for r in loop.results]
    if loop.iter_args:
        last_init = loop.iter_args[-1][1]
        head = decode(data[loop.name_span.start_byte : last_init.span.end_byte])
        text = f"{head}, {', '.join(arguments)}) -> ({', '.join(old_types + types)})"
    else:
        head = decode(data[loop.name_span.start_byte : body.span.start_byte]).rstrip()
        text = f"{head} iter_args({', '.join(arguments)}) -> ({', '.join(types)})"
    return f"{results} = {text}"


def _yield(context: Context, plan: ScalarPlan, renames: Renames) -> str:
    loop = plan.loop
    yielded = yield_of(loop)
    operands = [
        _use(u.name, u.value, renames) for u in (yielded.operands if yielded is not None else [])
    ]
    types = [_type(r) for r in loop.results]
    for element in plan.carried:
        stored = element.store.stored_value  # type: ignore[union-attr]
        assert stored is not None
        operands.append(_use(stored.name, stored.value, renames))
        types.append(_type(element.load.results[0]))
    return f"affine.yield {', '.join(operands)} : {', '.join(types)}"


def _use(name: str, value: Value | None, renames: Renames) -> str:
    if value is None:
        return name
    new = renames.get(value)
    if new == value.name:
        return name
    return f"{new}#{value.index}" if value.group_size > 1 else new


def _type(value: Value) -> str:
    if value.type is None:
        raise Refused(f"the type of {value.display_name} is unknown")
    return str(value.type)


def summary(context: Context, plan: ScalarPlan) -> str:
    if plan.reuses:
        held = [access_text(context.data, op) for r in plan.reuses for op in r.held]
        heads = [access_text(context.data, r.head) for r in plan.reuses]
        text = (
            f"scalar replacement: {', '.join(held)} carried to the next iterations of "
            f"{iv_name(plan.loop)} in registers (loaded once as {', '.join(heads)})"
        )
        if plan.guard:
            text += f" (where {iv_name(plan.loop)} runs at all)"
        return text
    carried = [access_text(context.data, e.load) for e in plan.carried]
    hoisted = [access_text(context.data, e.load) for e in plan.elements if e.store is None]
    parts = []
    if plan.forwards or plan.dropped:
        parts.append(_within_summary(context, plan))
    if carried:
        parts.append(f"{', '.join(carried)} carried through {iv_name(plan.loop)} in registers")
    if hoisted:
        parts.append(f"{', '.join(hoisted)} loaded once before {iv_name(plan.loop)}")
    text = "scalar replacement: " + "; ".join(parts)
    if plan.guard:
        text += f" (where {iv_name(plan.loop)} runs at all)"
    if plan.left:
        text += " (left: " + "; ".join(plan.left) + ")"
    return text


def _within_summary(context: Context, plan: ScalarPlan) -> str:
    elements = list(dict.fromkeys(access_text(context.data, f.load) for f in plan.forwards))
    elements += [
        text
        for text in dict.fromkeys(access_text(context.data, op) for op in plan.dropped)
        if text not in elements
    ]
    loads, stores = len(plan.forwards), len(plan.dropped)
    return (
        f"{', '.join(elements)} kept in registers within each iteration of "
        f"{iv_name(plan.loop)} ({loads} load{'s' * (loads != 1)} and {stores} "
        f"store{'s' * (stores != 1)} fewer)"
    )
