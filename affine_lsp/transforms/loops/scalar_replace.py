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

The proof models the carried value as the memory element itself
(`scalars.Promotion`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from affine_lsp.ir import AffineAccessOp, AffineForOp, Operation, Value
from affine_lsp.poly import NotAffine, Statement, is_under
from affine_lsp.syntax import decode
from affine_lsp.transforms.edits import line_start, next_line_start
from affine_lsp.transforms.loops.core import Context, Refused, Spec, check_layout
from affine_lsp.transforms.loops.hoist import runs_at_least_once
from affine_lsp.transforms.loops.nest import body_ops, defined_under, iv_name, yield_of
from affine_lsp.transforms.loops.proof import Rewrite
from affine_lsp.transforms.loops.scalars import Promotion
from affine_lsp.transforms.loops.split import bounds_of, runs_condition
from affine_lsp.transforms.loops.text import Builder, Origin, Renames, indent_of, step_indent
from affine_lsp.transforms.naming import names_in


@dataclass
class Element:
    """The accesses of one invariant element: its load, and its store (None: only read,
    by `load` and the `others`, which the one load before the loop replaces)."""

    load: AffineAccessOp
    store: AffineAccessOp | None = None
    others: list[AffineAccessOp] = field(default_factory=list)


@dataclass
class ScalarPlan:
    loop: AffineForOp
    elements: list[Element]
    left: list[str] = field(default_factory=list)  # why other invariant accesses stay
    guard: str = ""  # the affine.if condition 'the loop runs' ("": it always does)

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
    groups: dict[tuple, list[AffineAccessOp]] = {}
    for op in body_ops(loop):
        if (
            isinstance(op, AffineAccessOp)
            and op.name in ("affine.load", "affine.store")
            and _invariant(op, loop)
        ):
            groups.setdefault(_key(context.data, op), []).append(op)
    if not groups:
        raise Refused(
            f"no access in {iv_name(loop)}'s body is to an element {iv_name(loop)} does not move"
        )
    found = ScalarPlan(loop, [])
    if not runs_at_least_once(context, loop):
        try:  # the elements are accessed only where the loop runs
            found.guard = runs_condition(bounds_of(context, loop))
        except NotAffine:
            raise Refused(
                f"{iv_name(loop)} may run zero times: its invariant elements would be "
                "accessed where the original never accesses them"
            ) from None
    for ops in groups.values():
        reason = _element(context, loop, ops, found, check)
        if reason:
            found.left.append(reason)
    if not found.elements:
        raise Refused(found.left[0])
    return found


def _element(
    context: Context, loop: AffineForOp, ops: list[AffineAccessOp], plan: ScalarPlan, check: bool
) -> str:
    """Add the element `ops` access to the plan, or say why it stays."""
    text = access_text(context.data, ops[0])
    loads = [op for op in ops if not op.is_write]
    stores = [op for op in ops if op.is_write]
    if stores:
        if len(loads) != 1 or len(stores) != 1 or ops[0] is not loads[0]:
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
    data = context.data
    loop = plan.loop
    start = line_start(data, loop.span.start_byte)
    end = next_line_start(data, loop.span.end_byte)
    builder = Builder(data, start)
    indent = indent_of(data, loop)
    ops = body_ops(loop)
    unit = step_indent(data, loop, ops[0]) if ops else 2
    delta = unit if plan.guard else 0  # everything inside the affine.if
    if plan.guard:
        builder.line(indent, f"affine.if {plan.guard} {{")
    moved = {id(e.load) for e in plan.elements} | {id(e.store) for e in plan.carried}
    moved |= {id(other) for e in plan.elements for other in e.others}
    body_renames = Renames()
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
    carried = [access_text(context.data, e.load) for e in plan.carried]
    hoisted = [access_text(context.data, e.load) for e in plan.elements if e.store is None]
    parts = []
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
