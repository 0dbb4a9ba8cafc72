"""Unroll a loop by a factor (or fully), and unroll-and-jam.

Unroll by F: the loop steps `F` times further and its body is written F times,
copy k computing the iteration `%i + k * step` (`%i_k = affine.apply ...`), with
fresh names for what it defines; a copy uses the values the previous copy yields
where the body used its `iter_args`. When the trip count is unknown or not a
multiple of F, the unrolled loop stops at
`lb + F*step * floor((ub - lb + step - 1) / (F*step))` and the original loop,
starting there, runs the rest (it takes the unrolled loop's results as inits).
Fully: the copies replace the loop (constant trip count), `%i_k` is a constant,
and later uses of the loop's results use the last copy's values. Order is
unchanged, so unrolling is always legal.

Unroll-and-jam by F: the outer loop is unrolled and the copies of each loop
directly in its body are fused into one loop (their bounds must not depend on
the outer iv); other ops of the body are written F times in place. Legal when
no dependence from an iteration of the group to a later one runs backwards in
the jammed loop (checked on the exact schedule, remainder included).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from affine_lsp.checks import TextEdit
from affine_lsp.ir import AffineForOp, Use
from affine_lsp.poly import AffineForm, Level, Statement, Term
from affine_lsp.syntax import Span, decode
from affine_lsp.transforms.bounds import forms_of, map_text, operand_namer
from affine_lsp.transforms.edits import line_start, next_line_start
from affine_lsp.transforms.loops.bounds import loops_between
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
from affine_lsp.transforms.loops.text import Builder, Renames, indent_of, step_indent
from affine_lsp.transforms.naming import names_in

FULL_UNROLL_LIMIT = 256
"""Largest trip count unrolled fully."""


@dataclass
class UnrollPlan:
    loop: AffineForOp
    factor: int | None  # None: fully
    jam: bool
    trips: int | None  # constant trip count
    remainder: bool
    jammed: list[AffineForOp] = field(default_factory=list)


def title(spec: Spec, loop: AffineForOp) -> str:
    if spec.kind == UNROLL_JAM:
        return f"Unroll and jam {iv_name(loop)} by {spec.factor}"
    if spec.factor is None:
        return f"Unroll {iv_name(loop)} fully"
    return f"Unroll {iv_name(loop)} by {spec.factor}"


def plan(context: Context, spec: Spec, check: bool = True) -> UnrollPlan:
    loop = context.loop
    check_layout(context, loop)
    trips = constant_trip_count(loop)
    jam = spec.kind == UNROLL_JAM
    factor = spec.factor
    if factor is not None and factor < 2:
        raise Refused("the factor must be at least 2")
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
        return UnrollPlan(loop, None, False, trips, False)
    if trips is not None and trips < factor:
        raise Refused(f"{iv_name(loop)} runs only {trips} times: unroll it fully instead")
    remainder = trips is None or trips % factor != 0
    if remainder and trips is None:
        _single_bounds(loop)
    result = UnrollPlan(loop, factor, jam, trips, remainder)
    if jam:
        if loop.iter_args:
            raise Refused(f"{iv_name(loop)} carries values through iter_args")
        result.jammed = [op for op in body_ops(loop) if isinstance(op, AffineForOp)]
        if not result.jammed:
            raise Refused(f"no loop in {iv_name(loop)}'s body to jam")
        for inner in result.jammed:
            if inner.iter_args:
                raise Refused(f"{iv_name(inner)} carries values through iter_args")
            for bound in (inner.lower, inner.upper):
                for use in bound.operands if bound is not None else []:
                    if use.value is not None and defined_under(use.value, loop):
                        raise Refused(f"the bounds of {iv_name(inner)} depend on {iv_name(loop)}")
            check_layout(context, inner)
        if check:
            _check_jam(context, result)
    return result


def _constant_lower(loop: AffineForOp) -> int:
    bound = loop.lower
    if bound is None or bound.shorthand_constant is None:
        raise Refused(f"{iv_name(loop)} does not start at a constant")
    return bound.shorthand_constant


def _single_bounds(loop: AffineForOp) -> None:
    lower = loop.lower
    if lower is None or lower.minmax:
        raise Refused(
            f"{iv_name(loop)} starts at a max of several bounds and has no constant trip "
            "count: the remainder loop's start cannot be written"
        )


# -- legality of unroll-and-jam --------------------------------------------------------


def _split(context: Context, statement: Statement, plan: UnrollPlan, x: str) -> tuple[str, str]:
    """(group index, condition 'in the unrolled loop') of dim `x` of `plan.loop`."""
    analysis = context.analysis(plan.loop)
    loop = plan.loop
    step = loop.step or 1
    width = step * (plan.factor or 1)
    lower = analysis.lower_bound(statement, loop)
    group = f"floor(({x} - ({lower}))/{width})"
    if not plan.remainder:
        return group, ""
    uppers = analysis.window.builder.bound_terms(loop.upper, statement.domain.scope)
    splits = [
        f"({lower}) + {width}*floor((({u.text}) - ({lower}) + {step - 1})/{width})" for u in uppers
    ]
    condition = " and ".join(f"{x} < {s}" for s in splits)
    return group, condition


def _check_jam(context: Context, plan: UnrollPlan) -> None:
    analysis = context.analysis(plan.loop)
    loop = plan.loop
    step = loop.step or 1

    def entries(statement: Statement) -> list[str] | list[Piece]:
        old = analysis.entries(statement)
        x = analysis.dim_of(statement, loop)
        if x is None:
            return old
        at = old.index(x)
        group, condition = _split(context, statement, plan, x)
        lower = analysis.lower_bound(statement, loop)
        copy = f"(floor(({x} - ({lower}))/{step}) - {plan.factor}*{group})"
        rest = old[at + 1 :]  # [q, (j, rest...)]
        inner = next((j for j in plan.jammed if analysis.dim_of(statement, j) is not None), None)
        if inner is not None:
            j = analysis.dim_of(statement, inner)
            assert j is not None
            j_at = rest.index(j)
            jammed = rest[: j_at + 1] + [copy] + rest[j_at + 1 :]
        else:
            jammed = rest[:1] + [copy] + rest[1:]
        main = old[:at] + [group] + jammed
        if not condition:
            return main
        sequential = old[:at] + [group, copy] + rest
        otherwise = " or ".join(
            f"{x} >= {part.split(' < ', 1)[1]}" for part in condition.split(" and ")
        )
        return [(condition, main), (otherwise, sequential)]

    found = analysis.violation(entries)
    if found is not None:
        dependence, relation = found
        raise Refused(analysis.explain(dependence, relation, f"unroll-and-jam by {plan.factor}"))


# -- text ---------------------------------------------------------------------------


def _bound_forms(
    context: Context, loop: AffineForOp, which: str
) -> tuple[list[AffineForm], Callable[[str], tuple[str, bool]], list[Term]]:
    """(forms of the lower or upper bound results, operand namer)."""
    analysis = context.analysis(loop)
    builder = analysis.window.builder
    levels = [Level(op) for op in loops_between(loop, loop)]
    domain = builder.build(levels)
    bound = loop.lower if which == "lower" else loop.upper
    terms = builder.bound_terms(bound, domain.scope)
    params = sorted(set(domain.params).union(*(t.params for t in terms)))
    forms = forms_of(context.session, params, [], [t.text for t in terms])
    return forms, operand_namer(analysis.window, {}), terms


def _split_text(context: Context, plan: UnrollPlan) -> tuple[str, str]:
    """(upper bound of the unrolled loop, lower bound of the remainder loop)."""
    loop = plan.loop
    step = loop.step or 1
    width = step * (plan.factor or 1)
    if plan.trips is not None:
        low = _constant_lower(loop)
        split = low + width * (plan.trips // (plan.factor or 1))
        return str(split), str(split)
    lowers, operand, _ = _bound_forms(context, loop, "lower")
    uppers, _, _ = _bound_forms(context, loop, "upper")
    lower = lowers[0]
    splits = []
    for upper in uppers:
        inner = upper.minus(lower)
        inner = AffineForm(inner.terms, inner.floors, inner.constant + step - 1)
        groups = AffineForm((), ((inner, width, width),), 0)
        splits.append(_plus(lower, groups))
    upper_text = map_text(splits, operand, "min" if len(splits) > 1 else "")
    if len(splits) > 1:
        remainder = _min_max_text(lower, splits, operand)
    else:
        remainder = map_text([lower, splits[0]], operand, "max")
    return upper_text, remainder


def _min_max_text(
    lower: AffineForm, splits: list[AffineForm], operand: Callable[[str], tuple[str, bool]]
) -> str:
    raise Refused(
        "the loop ends at a min of several bounds and has no constant trip count: the "
        "remainder loop's start cannot be written"
    )


def _plus(a: AffineForm, b: AffineForm) -> AffineForm:
    negated = AffineForm(
        tuple((n, -c) for n, c in b.terms),
        tuple((f, d, -c) for f, d, c in b.floors),
        -b.constant,
    )
    return a.minus(negated)


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
    start = line_start(data, loop.span.start_byte)
    end = next_line_start(data, loop.span.end_byte)
    builder = Builder(data, start)
    indent = indent_of(data, loop)
    ops = body_ops(loop)
    unit = step_indent(data, loop, ops[0]) if ops else 2
    inner_indent = indent + " " * unit
    step = loop.step or 1
    iv_value = iv(loop)
    extra: list[TextEdit] = []
    if plan.factor is None:
        _full(context, plan, builder, indent, extra)
        return Rewrite(start, end, builder.text(), builder.origins, extra)
    factor = plan.factor
    width = step * factor
    main_results = None
    if loop.results:
        base = context.fresh(loop.results[0].name)
        count = len(loop.results)
        main_results = f"{base}:{count} = " if count > 1 else f"{base} = "
    if plan.remainder:
        upper, remainder_lower = _split_text(context, plan)
    else:
        upper, remainder_lower = None, None
    header = _header(
        context,
        loop,
        results=main_results if plan.remainder else None,
        upper=upper,
        step=width,
    )
    builder.line(indent, header + " {", loop)
    renames_by_copy: list[Renames] = []
    previous: Renames | None = None
    keep = {id(j.induction_variable) for j in plan.jammed}
    iv_names = [iv_value.name]
    for copy in range(factor):
        renames = _copy_renames(context, plan, copy, previous, keep)
        if copy:
            name = context.fresh(iv_value.name)
            renames.set(iv_value, name)
            iv_names.append(name)
            builder.line(
                inner_indent,
                f"{name} = affine.apply affine_map<(d0) -> (d0 + {copy * step})>({iv_value.name})",
            )
        renames_by_copy.append(renames)
        previous = renames
    if plan.jam:
        _jammed_body(context, plan, builder, renames_by_copy, inner_indent)
    else:
        for copy, renames in enumerate(renames_by_copy):
            builder.copy_lines(ops, renames, copy=copy)
    yielded = yield_of(loop)
    if yielded is not None and loop.iter_args:
        builder.copy_lines([yielded], renames_by_copy[-1], copy=factor - 1)
    elif yielded is not None:
        builder.copy_lines([yielded], Renames())
    builder.line(indent, "}")
    if plan.remainder:
        inits = None
        if loop.results:
            base = main_results.split(":")[0].split(" ")[0]  # type: ignore[union-attr]
            inits = [
                f"{base}#{k}" if len(loop.results) > 1 else base for k in range(len(loop.results))
            ]
        builder.line(
            indent, _header(context, loop, lower=remainder_lower, inits=inits) + " {", loop
        )
        body = loop.body
        assert body is not None
        body_start = next_line_start(data, body.span.start_byte)
        body_end = line_start(data, body.span.end_byte - 1)
        builder.copy(body_start, body_end, body_block(loop).operations, Renames())  # type: ignore[union-attr]
        builder.line(indent, "}")
    return Rewrite(start, end, builder.text(), builder.origins, extra)


def _jammed_body(
    context: Context,
    plan: UnrollPlan,
    builder: Builder,
    renames_by_copy: list[Renames],
    inner_indent: str,
) -> None:
    for op in body_ops(plan.loop):
        if op in plan.jammed:
            inner = op
            assert isinstance(inner, AffineForOp)
            builder.line(inner_indent, _header(context, inner) + " {")
            inner_ops = body_ops(inner)
            for copy, renames in enumerate(renames_by_copy):
                builder.copy_lines(inner_ops, renames, copy=copy)
            yielded = yield_of(inner)
            if yielded is not None:
                builder.copy_lines([yielded], Renames())
            builder.line(inner_indent, "}")
        else:
            for copy, renames in enumerate(renames_by_copy):
                builder.copy_lines([op], renames, copy=copy)


def _full(
    context: Context, plan: UnrollPlan, builder: Builder, indent: str, extra: list[TextEdit]
) -> None:
    loop = plan.loop
    iv_value = iv(loop)
    low = _constant_lower(loop)
    step = loop.step or 1
    ops = body_ops(loop)
    unit = step_indent(context.data, loop, ops[0]) if ops else 2
    previous: Renames | None = None
    for copy in range(plan.trips or 0):
        renames = _copy_renames(context, plan, copy, previous, set())
        name = context.fresh(iv_value.name)
        renames.set(iv_value, name)
        builder.line(indent, f"{name} = arith.constant {low + copy * step} : index")
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
    return f"{what} {iv_name(plan.loop)} by {plan.factor}{rest}"
