"""Unroll a loop by a factor (or fully), and unroll-and-jam.

Unroll by F: the loop steps `F` times further and its body is written F times,
copy k computing the iteration `%i + k * step` (`%i_k = affine.apply ...`), with
fresh names for what it defines; a copy uses the values the previous copy yields
where the body used its `iter_args`. When the trip count is not a constant
multiple of F, the iterations left over run in a remainder loop after the
unrolled one (it takes the unrolled loop's results as inits), or, for a tile
whose bounds are a max and a min, the unrolled loop runs the full tiles only
(`split.py` says which form applies where). Fully: the copies replace the loop
(constant trip count), `%i_k` is a constant (or the lower bound plus k steps),
and later uses of the loop's results use the last copy's values. Order is
unchanged, so unrolling is always legal.

Unroll-and-jam by F: the outer loop is unrolled and the copies of each loop
directly in its body are fused into one loop (their bounds must not depend on
the outer iv), and so are the copies of the loops nested in those, at every depth
(as MLIR's pass does), where their bounds allow and the dependences do (else one
level only); other ops are written F times in place. Legal when no dependence
from an iteration of the group to a later one runs backwards in the jammed loops
(checked on the exact schedule, remainder and partial tiles included).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from affine_lsp.checks import TextEdit
from affine_lsp.ir import AffineForOp, Operation, Use
from affine_lsp.poly import NotAffine, Statement
from affine_lsp.syntax import Span, decode
from affine_lsp.transforms.bounds import map_text
from affine_lsp.transforms.edits import line_start, next_line_start
from affine_lsp.transforms.loops.core import UNROLL_JAM, Context, Refused, Spec, check_layout
from affine_lsp.transforms.loops.legality import Piece
from affine_lsp.transforms.loops.nest import (
    body_block,
    body_ops,
    constant_trip_count,
    defined_under,
    iv,
    iv_name,
    yield_of,
)
from affine_lsp.transforms.loops.proof import Rewrite
from affine_lsp.transforms.loops.ragged import Ragged, plan_ragged, ragged_pieces
from affine_lsp.transforms.loops.split import (
    FULL_TILE,
    Split,
    bounds_of,
    main_condition,
    plan_split,
    plus,
    trip_count,
)
from affine_lsp.transforms.loops.text import (
    Builder,
    Origin,
    Renames,
    indent_of,
    loop_rewrite,
    step_indent,
)
from affine_lsp.transforms.naming import names_in

FULL_UNROLL_LIMIT = 256
"""Largest trip count unrolled fully."""


@dataclass
class UnrollPlan:
    loop: AffineForOp
    factor: int | None  # None: fully
    jam: bool
    trips: int | None  # constant trip count
    split: Split | None  # None: the trip count is a multiple of the factor
    jammed: list[AffineForOp] = field(default_factory=list)
    interleaved: bool = False  # the innermost jammed bodies written op by op
    ragged: dict[int, Ragged] = field(default_factory=dict)  # by id of a jammed loop
    carries: dict[int, list[tuple[int, Origin]]] = field(default_factory=dict)  # Rewrite's

    @property
    def remainder(self) -> bool:
        return self.split is not None and self.split.remainder


def title(spec: Spec, loop: AffineForOp) -> str:
    if spec.kind == UNROLL_JAM:
        return f"Unroll and jam {iv_name(loop)} by {spec.factor}"
    if spec.factor is None:
        return f"Unroll {iv_name(loop)} fully"
    return f"Unroll {iv_name(loop)} by {spec.factor}"


def plan(context: Context, spec: Spec, check: bool = True) -> UnrollPlan:
    loop = context.loop
    check_layout(context, loop, header=spec.factor is not None)
    jam = spec.kind == UNROLL_JAM
    factor = spec.factor
    if factor is not None and factor < 2:
        raise Refused("the factor must be at least 2")
    trips = constant_trip_count(loop)
    if trips is None:
        try:
            trips = trip_count(bounds_of(context, loop), loop.step or 1)
        except NotAffine:  # (bounds isl holds piecewise: no constant trip count)
            trips = None
    if factor is None:
        if jam:
            raise Refused("unroll-and-jam needs a factor")
        if trips is None:
            raise Refused(
                f"{iv_name(loop)} has no constant trip count: it cannot be unrolled fully"
            )
        if trips == 0:
            raise Refused(f"{iv_name(loop)} never runs")
        if trips > FULL_UNROLL_LIMIT:
            raise Refused(f"{iv_name(loop)} runs {trips} times (more than {FULL_UNROLL_LIMIT})")
        return UnrollPlan(loop, None, False, trips, None)
    if trips is not None and trips < factor:
        raise Refused(f"{iv_name(loop)} runs only {trips} times: unroll it fully instead")
    split = None
    if trips is None or trips % factor != 0:
        split = plan_split(context, loop, factor)
        if split.kind == FULL_TILE and split.condition and loop.iter_args:
            raise Refused(
                f"{iv_name(loop)} carries values through iter_args: its partial tiles cannot "
                "be run apart from its full ones"
            )
    result = UnrollPlan(loop, factor, jam, trips, split)
    if jam:
        _plan_jam(context, result, check)
        if spec.interleave and check:
            result.interleaved = True
            try:
                _check_jam(context, result)
            except Refused:  # (copies that touch one element: one after the other)
                result.interleaved = False
    return result


def _plan_jam(context: Context, plan: UnrollPlan, check: bool) -> None:
    loop = plan.loop
    if loop.iter_args:
        raise Refused(f"{iv_name(loop)} carries values through iter_args")
    direct = [op for op in body_ops(loop) if isinstance(op, AffineForOp)]
    if not direct:
        raise Refused(f"no loop in {iv_name(loop)}'s body to jam")
    for inner in direct:
        check_layout(context, inner)
        for bound in (inner.lower, inner.upper):
            for use in bound.operands if bound is not None else []:
                if use.value is not None and defined_under(use.value, loop):
                    if inner.iter_args:
                        raise Refused(
                            f"the bounds of {iv_name(inner)} depend on {iv_name(loop)} and it "
                            "carries values through iter_args"
                        )
                    plan.ragged[id(inner)] = plan_ragged(context, loop, inner, plan.factor or 1)
    nested = _nested_jams(context, loop, direct)
    plan.jammed = direct + nested
    if not check:
        return
    try:
        _check_jam(context, plan)
    except Refused:
        if not nested:
            raise
        plan.jammed = direct  # the copies of deeper loops written one after the other
        _check_jam(context, plan)


def _nested_jams(
    context: Context, loop: AffineForOp, direct: list[AffineForOp]
) -> list[AffineForOp]:
    """The loops nested in the jammed loops that are jammed too: those without
    iter_args, on lines of their own, whose bounds use nothing a copy renames."""
    found: list[AffineForOp] = []
    jammed_ivs = {id(iv(j)) for j in direct}
    stack = list(direct)
    while stack:
        outer = stack.pop()
        for op in body_ops(outer):
            if not isinstance(op, AffineForOp) or op.iter_args:
                continue
            operands = [u for b in (op.lower, op.upper) if b is not None for u in b.operands]
            if any(
                u.value is None or (defined_under(u.value, loop) and id(u.value) not in jammed_ivs)
                for u in operands
            ):
                continue
            try:
                check_layout(context, op)
            except Refused:
                continue
            found.append(op)
            jammed_ivs.add(id(iv(op)))
            stack.append(op)
    return found


# -- legality of unroll-and-jam --------------------------------------------------------


def _check_jam(context: Context, plan: UnrollPlan) -> None:
    analysis = context.analysis(plan.loop)
    loop = plan.loop
    step = loop.step or 1
    width = step * (plan.factor or 1)

    def entries(statement: Statement) -> list[str] | list[Piece]:
        old = analysis.entries(statement)
        x = analysis.dim_of(statement, loop)
        if x is None:
            return old
        at = old.index(x)
        lower = analysis.lower_bound(statement, loop)
        group = f"floor(({x} - ({lower}))/{width})"
        copy = f"(floor(({x} - ({lower}))/{step}) - {plan.factor}*{group})"
        rest = old[at + 1 :]  # [q, (j, p, rest...)]
        # The copies run one after the other in the body of the deepest jammed loop
        # around the statement when no jammed loop is inside that one, else op by op
        # (as in the unrolled loop's own body).
        around = [(rest.index(d), j) for j in plan.jammed if (d := analysis.dim_of(statement, j))]
        at_copy = 1
        if around:
            deepest, inner = max(around, key=lambda found: found[0])
            leaf = not any(op in plan.jammed for op in body_ops(inner))
            at_copy = deepest + 1 if leaf and not plan.interleaved else deepest + 2
        jammed = rest[:at_copy] + [copy] + rest[at_copy:]
        main = old[:at] + [group] + jammed
        condition = main_condition(context, statement, loop, plan.split, x)
        pieces: list[Piece] = [("", main)]
        ragged = next(
            (r for r in plan.ragged.values() if analysis.dim_of(statement, r.inner)), None
        )
        if ragged is not None:  # prologue, jammed loop, epilogue (`ragged.py`)
            start = f"({lower}) + {width}*{group}"
            before, after, _ = ragged_pieces(context, statement, ragged, loop, x, start, step)
            around_loop = old[:at] + [group, rest[0]]
            pieces = [
                (before, around_loop + ["0", copy] + rest[1:]),
                (after, around_loop + ["2", copy] + rest[1:]),
                (f"not ({before}) and not ({after})", around_loop + ["1"] + jammed[1:]),
            ]
        if not condition:
            return pieces[0][1] if len(pieces) == 1 else pieces
        sequential = old[:at] + [group, copy] + rest
        both = [(_both(condition, where), entries) for where, entries in pieces]
        return [*both, (f"not ({condition})", sequential)]

    found = analysis.violation(entries)
    if found is not None:
        dependence, relation = found
        raise Refused(analysis.explain(dependence, relation, f"unroll-and-jam by {plan.factor}"))


def _both(first: str, second: str) -> str:
    return f"({first}) and ({second})" if second else first


# -- text ---------------------------------------------------------------------------


def _text(data: bytes, start: int, end: int) -> str:
    return decode(data[start:end])


def _header(
    context: Context,
    loop: AffineForOp,
    *,
    results: str | None = None,
    lower: str | None = None,
    upper: str | None = None,
    step: int | None = None,
    inits: list[str] | None = None,
) -> str:
    """The loop's header (results to before `{`) with some parts replaced."""
    data = context.data
    start = loop.span.start_byte
    end = loop.body.span.start_byte  # type: ignore[union-attr]
    edits: list[tuple[int, int, str]] = []
    if results is not None:
        edits.append((start, loop.name_span.start_byte, results))
    if lower is not None:
        edits.append((loop.lower.span.start_byte, loop.lower.span.end_byte, lower))  # type: ignore[union-attr]
    if upper is not None:
        upper_end = loop.upper.span.end_byte  # type: ignore[union-attr]
        text = upper
        if step is not None and loop.step_span is None:
            text += f" step {step}"
        edits.append((loop.upper.span.start_byte, upper_end, text))  # type: ignore[union-attr]
    elif step is not None and loop.step_span is None:
        upper_end = loop.upper.span.end_byte  # type: ignore[union-attr]
        edits.append((upper_end, upper_end, f" step {step}"))
    if step is not None and loop.step_span is not None:
        edits.append((loop.step_span.start_byte, loop.step_span.end_byte, str(step)))
    if inits is not None:
        for (_, use), text in zip(loop.iter_args, inits, strict=True):
            edits.append((use.span.start_byte, use.span.end_byte, text))
    edits.sort()
    out = []
    position = start
    for edit_start, edit_end, text in edits:
        out.append(_text(data, position, edit_start))
        out.append(text)
        position = edit_end
    out.append(_text(data, position, end))
    return "".join(out).rstrip()


def _defined_in(loop: AffineForOp, skip: set[int]) -> list:
    """Every value defined under `loop`'s body (results, block arguments), except ids
    in `skip`."""
    values = []
    for op in loop.walk():
        if op is loop:
            continue
        values += [v for v in op.results if id(v) not in skip]
        for region in op.regions:
            for block in region.blocks:
                values += [a for a in block.arguments if id(a) not in skip]
    return values


def _copy_renames(
    context: Context, plan: UnrollPlan, copy: int, previous: Renames | None, keep: set[int]
) -> Renames:
    """Names of copy `copy`: fresh names for what the body defines (copy 0 keeps its
    own unless they clash), iter_args replaced by what the previous copy yields."""
    loop = plan.loop
    renames = Renames()
    taken_elsewhere = names_in(context.function, excluding=loop) if copy == 0 else set()
    for value in _defined_in(loop, keep):
        if copy == 0 and (plan.factor is not None or value.name not in taken_elsewhere):
            continue
        if id(value) in renames.names:
            continue
        renames.set(value, context.fresh(value.name))
    # group results share a name: make every member of a group agree
    _align_groups(loop, renames)
    yielded = yield_of(loop)
    for position, (argument, init) in enumerate(loop.iter_args):
        if copy == 0:
            if plan.factor is None and init.value is not None:
                renames.set(argument, init.name)
            continue
        assert previous is not None
        if yielded is None or position >= len(yielded.operands):
            raise Refused("the loop's body does not yield a value for each of its iter_args")
        operand = yielded.operands[position]
        if operand.value is None:
            raise Refused("the loop yields an undefined value")
        renames.set(argument, _use_text(previous, operand))
    return renames


def _use_text(renames: Renames, use: Use) -> str:
    """How a use of `use.value` reads in a copy with `renames` (`%r#1` kept as a
    group member)."""
    value = use.value
    if value is None:
        raise Refused(f"{use.name} is not defined")
    new = renames.get(value)
    if value.group_size > 1 and new == value.name:
        return use.name
    if value.group_size > 1:
        return f"{new}#{value.index}"
    return new


def _align_groups(loop: AffineForOp, renames: Renames) -> None:
    for op in loop.walk():
        if len(op.results) > 1:
            name = renames.get(op.results[0])
            for value in op.results:
                renames.set(value, name)


def rewrite(context: Context, plan: UnrollPlan) -> Rewrite:
    data = context.data
    loop = plan.loop
    start, end, builder = loop_rewrite(data, loop)
    extra: list[TextEdit] = []
    if plan.factor is None:
        _full(context, plan, builder, indent_of(data, loop), extra)
        return Rewrite(start, end, builder.text(), builder.origins, extra)
    plan.carries = {}
    split = plan.split
    indent = indent_of(data, loop)
    ops = body_ops(loop)
    unit = step_indent(data, loop, ops[0]) if ops else 2
    if split is not None and split.kind == FULL_TILE and split.condition:
        builder.line(indent, f"affine.if {split.condition} {{")
        _unrolled(context, plan, builder, unit)
        builder.line(indent, "} else {")
        builder.copy(start, end, [loop], Renames(), unit)
        builder.line(indent, "}")
    else:
        _unrolled(context, plan, builder, 0)
    return Rewrite(start, end, builder.text(), builder.origins, extra, carries=plan.carries)


def _unrolled(context: Context, plan: UnrollPlan, builder: Builder, delta: int) -> None:
    """The unrolled loop and its remainder loop, `delta` spaces deeper than the loop."""
    data = context.data
    loop = plan.loop
    split = plan.split
    factor = plan.factor or 1
    indent = indent_of(data, loop) + " " * delta
    ops = body_ops(loop)
    unit = step_indent(data, loop, ops[0]) if ops else 2
    inner_indent = indent + " " * unit
    step = loop.step or 1
    iv_value = iv(loop)
    main_results = None
    if loop.results and plan.remainder:
        base = context.fresh(loop.results[0].name)
        count = len(loop.results)
        main_results = f"{base}:{count} = " if count > 1 else f"{base} = "
    header = _header(
        context,
        loop,
        results=main_results,
        lower=split.main_lower if split is not None else None,
        upper=split.main_upper if split is not None else None,
        step=step * factor,
    )
    builder.line(indent, header + " {", loop)
    renames_by_copy: list[Renames] = []
    previous: Renames | None = None
    keep = {id(iv(j)) for j in plan.jammed}
    for copy in range(factor):
        renames = _copy_renames(context, plan, copy, previous, keep)
        if copy:
            name = context.fresh(iv_value.name)
            renames.set(iv_value, name)
            builder.line(
                inner_indent,
                f"{name} = affine.apply affine_map<(d0) -> (d0 + {copy * step})>({iv_value.name})",
            )
        renames_by_copy.append(renames)
        previous = renames
    if plan.jam:
        _jammed(context, plan, builder, ops, renames_by_copy, delta)
    else:
        for copy, renames in enumerate(renames_by_copy):
            builder.copy_lines(ops, renames, delta, copy=copy)
    yielded = yield_of(loop)
    if yielded is not None and loop.iter_args:
        builder.copy_lines([yielded], renames_by_copy[-1], delta, copy=factor - 1)
    elif yielded is not None:
        builder.copy_lines([yielded], Renames(), delta)
    builder.line(indent, "}")
    if not plan.remainder or split is None:
        return
    inits = None
    if main_results is not None:
        base = main_results.split(":")[0].split(" ")[0]
        count = len(loop.results)
        inits = [f"{base}#{k}" if count > 1 else base for k in range(count)]
    header = _header(context, loop, lower=split.rest_lower, upper=split.rest_upper, inits=inits)
    builder.line(indent, header + " {", loop)
    body = loop.body
    assert body is not None
    body_start = next_line_start(data, body.span.start_byte)
    body_end = line_start(data, body.span.end_byte - 1)
    builder.copy(body_start, body_end, body_block(loop).operations, Renames(), delta)  # type: ignore[union-attr]
    builder.line(indent, "}")


def _jammed(
    context: Context,
    plan: UnrollPlan,
    builder: Builder,
    ops: list[Operation],
    renames_by_copy: list[Renames],
    delta: int,
) -> None:
    """`ops` (of the unrolled loop's body or of a jammed loop's) with the copies of
    every jammed loop fused into one: the ops around jammed loops written F times in
    place, one after the other; the body of a jammed loop with no jammed loop inside
    written F times whole (the order `_check_jam` checks)."""
    if not any(op in plan.jammed for op in ops) and not (plan.interleaved and _leaf(plan, ops)):
        for copy, renames in enumerate(renames_by_copy):
            builder.copy_lines(ops, renames, delta, copy=copy)
        return
    for op in ops:
        if op in plan.jammed:
            assert isinstance(op, AffineForOp)
            indent = indent_of(context.data, op) + " " * delta
            ragged = plan.ragged.get(id(op))
            if ragged is None:
                header = _header(context, op)
            else:
                _ragged_copies(builder, ragged, renames_by_copy, indent, delta, first=True)
                lower, upper = ragged.jammed_bounds()
                header = _header(context, op, lower=lower, upper=upper)
            yielded = yield_of(op)
            if op.iter_args and yielded is not None:
                _jammed_carries(context, plan, builder, op, renames_by_copy, indent, delta)
            else:
                builder.line(indent, header + " {")
                _jammed(context, plan, builder, body_ops(op), renames_by_copy, delta)
                if yielded is not None:
                    builder.copy_lines([yielded], Renames(), delta)
            builder.line(indent, "}")
            if ragged is not None:
                _ragged_copies(builder, ragged, renames_by_copy, indent, delta, first=False)
        elif _same_in_every_copy(op, renames_by_copy):
            builder.copy_lines([op], renames_by_copy[0], delta)
            for renames in renames_by_copy[1:]:
                for value in op.results:
                    renames.set(value, renames_by_copy[0].get(value))
        else:
            for copy, renames in enumerate(renames_by_copy):
                builder.copy_lines([op], renames, delta, copy=copy)


def _leaf(plan: UnrollPlan, ops: list[Operation]) -> bool:
    """Whether `ops` are the body of an innermost jammed loop (written op by op when
    the plan interleaves)."""
    parent = ops[0].parent_op if ops else None
    return parent is not None and parent in plan.jammed


def _jammed_carries(
    context: Context,
    plan: UnrollPlan,
    builder: Builder,
    op: AffineForOp,
    renames_by_copy: list[Renames],
    indent: str,
    delta: int,
) -> None:
    """A jammed loop that carries values through iter_args: it carries each copy's
    (`%sum = %zero, %sum_1 = %zero`), yields each copy's, and copy c's uses of its
    result k read `%r#(c*n + k)` (n values carried)."""
    yielded = yield_of(op)
    assert yielded is not None
    base = renames_by_copy[0].get(op.results[0])
    count = len(renames_by_copy) * len(op.results)
    header = _header(context, op, results=f"{base}:{count} = " if count > 1 else None)
    pairs = [
        f"{renames.get(argument)} = {_use_text(renames, init)}"
        for renames in renames_by_copy
        for argument, init in op.iter_args
    ]
    types = ", ".join(str(result.type) for _ in renames_by_copy for result in op.results)
    at = header.index("iter_args(")
    header = f"{header[:at]}iter_args({', '.join(pairs)}) -> ({types})"
    plan.carries[builder.base + builder.length + len(indent.encode())] = [
        (position, Origin(op, renames, copy))
        for copy, renames in enumerate(renames_by_copy)
        for position in range(len(op.iter_args))
    ]
    builder.line(indent, header + " {", op)
    _jammed(context, plan, builder, body_ops(op), renames_by_copy, delta)
    operands = ", ".join(
        _use_text(renames, use) for renames in renames_by_copy for use in yielded.operands
    )
    yield_indent = indent_of(context.data, yielded) + " " * delta
    builder.line(yield_indent, f"affine.yield {operands} : {types}", yielded)
    for copy, renames in enumerate(renames_by_copy):
        for position, result in enumerate(op.results):
            at = copy * len(op.results) + position
            renames.set(result, f"{base}#{at}" if count > 1 else base)


def _ragged_copies(
    builder: Builder,
    ragged: Ragged,
    renames_by_copy: list[Renames],
    indent: str,
    delta: int,
    first: bool,
) -> None:
    """The prologues (`first`) or epilogues of the copies of a ragged loop: each copy's
    iterations outside the jammed range, in a loop of their own."""
    inner = ragged.inner
    for copy, renames in enumerate(renames_by_copy):
        bounds = ragged.prologue(copy) if first else ragged.epilogue(copy)
        if bounds is None:
            continue
        builder.line(indent, f"affine.for {renames.get(iv(inner))} = {bounds[0]} to {bounds[1]} {{")
        builder.copy_lines(body_ops(inner), renames, delta, copy=copy)
        builder.line(indent, "}")


def _same_in_every_copy(op: Operation, renames_by_copy: list[Renames]) -> bool:
    """An index computation whose operands are the same in every copy (an offset of a
    jammed loop's iv): written once."""
    if op.name not in ("affine.apply", "affine.min", "affine.max") or op.regions:
        return False
    return all(
        use.value is not None
        and all(r.get(use.value) == renames_by_copy[0].get(use.value) for r in renames_by_copy)
        for use in op.operands
    )


def _full(
    context: Context, plan: UnrollPlan, builder: Builder, indent: str, extra: list[TextEdit]
) -> None:
    loop = plan.loop
    iv_value = iv(loop)
    step = loop.step or 1
    ops = body_ops(loop)
    unit = step_indent(context.data, loop, ops[0]) if ops else 2
    lower = loop.lower
    constant = lower.shorthand_constant if lower is not None else None
    bounds = bounds_of(context, loop) if constant is None else None
    previous: Renames | None = None
    for copy in range(plan.trips or 0):
        renames = _copy_renames(context, plan, copy, previous, set())
        name = context.fresh(iv_value.name)
        renames.set(iv_value, name)
        if bounds is None:
            builder.line(indent, f"{name} = arith.constant {(constant or 0) + copy * step} : index")
        else:
            at = map_text([plus(bounds.lowers[0], copy * step)], bounds.operand)
            builder.line(indent, f"{name} = affine.apply {at}")
        builder.copy_lines(ops, renames, -unit, copy=copy)
        previous = renames
    if loop.results:
        yielded = yield_of(loop)
        assert previous is not None
        if yielded is None or len(yielded.operands) != len(loop.results):
            raise Refused("the loop's body does not yield a value for each of its results")
        replacements = [_use_text(previous, use) for use in yielded.operands]
        for op in context.function.walk():
            if op.span.start_byte < loop.span.end_byte:
                continue
            for use in op.operands:
                value = use.value
                if value is not None and value.defining_op is loop:
                    extra.append(
                        TextEdit(
                            Span(use.span.start_byte, use.span.end_byte), replacements[value.index]
                        )
                    )


def summary(context: Context, plan: UnrollPlan) -> str:
    if plan.factor is None:
        return f"unrolled {iv_name(plan.loop)} fully ({plan.trips} copies)"
    what = "unrolled and jammed" if plan.jam else "unrolled"
    rest = " with a remainder loop" if plan.remainder else ""
    if plan.split is not None and plan.split.kind == FULL_TILE and plan.split.condition:
        rest = f" in full tiles{rest} (partial tiles run the original loop)"
    for inner in plan.jammed:
        if inner.iter_args and yield_of(inner) is not None:
            rest += f"; each copy's values carried through {iv_name(inner)}'s iter_args"
    for ragged in plan.ragged.values():
        rest += (
            f"; the copies of {iv_name(ragged.inner)} jammed where they all run, the rest of "
            "the triangle in loops of their own"
        )
    return f"{what} {iv_name(plan.loop)} by {plan.factor}{rest}"
