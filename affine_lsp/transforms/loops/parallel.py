"""Parallelize: `affine.for` -> `affine.parallel` when the loop carries no
dependence; a loop whose only carried values are `iter_args` reductions becomes
`affine.parallel ... reduce ("addf", ...)`, its results combined with the inits
after it.

A reduction is an iter_arg used by exactly one op of the body, an associative
and commutative `arith` op (`addf`, `mulf`, `addi`, `muli`, `maximumf`,
`minimumf`, `maxnumf`, `minnumf`, `andi`, `ori`; MLIR 22 takes the integer
`maxs`/`mins`/`maxu`/`minu` reductions only for signed or unsigned integer types,
which arith does not compute with), whose other operand does not depend on any
iter_arg and whose result is only yielded, in the same position. affine.parallel
reduces scalars only: floats for the float kinds, integers (not `index`) for the
others; a reduction of a tensor, vector or index value is refused. The parallel
loop yields that other operand. As with MLIR's parallel reductions,
floating-point sums are reassociated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from affine_lsp.checks import TextEdit
from affine_lsp.ir import AffineBound, AffineForOp, Operation, Value, format_expr
from affine_lsp.syntax import Span
from affine_lsp.transforms.loops.core import Context, Refused, Spec, check_layout
from affine_lsp.transforms.loops.nest import body_block, body_ops, iv, iv_name, yield_of
from affine_lsp.transforms.loops.proof import Rewrite
from affine_lsp.transforms.loops.text import Renames, indent_of, loop_rewrite

REDUCTIONS = {
    "arith.addf": "addf",
    "arith.mulf": "mulf",
    "arith.addi": "addi",
    "arith.muli": "muli",
    "arith.maximumf": "maximumf",
    "arith.minimumf": "minimumf",
    "arith.maxnumf": "maxnumf",
    "arith.minnumf": "minnumf",
    "arith.andi": "andi",
    "arith.ori": "ori",
}

_FLOAT = re.compile(r"^(f\d+|bf16|tf32|f8\w*|f6\w*|f4\w*)$")
_INTEGER = re.compile(r"^i\d+$")


@dataclass
class Reduction:
    position: int
    argument: Value
    combine: Operation  # the op of the body that accumulates
    operand: Value  # what each iteration contributes
    kind: str


@dataclass
class ParallelPlan:
    loop: AffineForOp
    reductions: list[Reduction]


def title(spec: Spec, loop: AffineForOp) -> str:
    return f"Parallelize {iv_name(loop)}"


def _uses_iter_args(value: Value, loop: AffineForOp) -> bool:
    """Whether `value` depends on one of the loop's iter_args (iteratively)."""
    arguments = {id(argument) for argument, _ in loop.iter_args}
    stack = [value]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in arguments:
            return True
        if id(current) in seen:
            continue
        seen.add(id(current))
        op = current.defining_op
        if op is None or not _inside(op, loop):
            continue
        for nested in op.walk():
            stack.extend(u.value for u in nested.operands if u.value is not None)
    return False


def _inside(op: Operation, loop: AffineForOp) -> bool:
    current = op.parent_op
    while current is not None:
        if current is loop:
            return True
        current = current.parent_op
    return False


def _reductions(loop: AffineForOp) -> list[Reduction]:
    yielded = yield_of(loop)
    found = []
    for position, (argument, _) in enumerate(loop.iter_args):
        name = argument.name
        why = f"{iv_name(loop)} carries {name} through iter_args, not as a reduction"
        if len(argument.uses) != 1 or argument.uses[0].user is None:
            raise Refused(why)
        combine = argument.uses[0].user
        kind = REDUCTIONS.get(combine.name)
        if kind is None or combine.parent_block is not body_block(loop):
            raise Refused(why)
        if len(combine.operands) != 2 or len(combine.results) != 1:
            raise Refused(why)
        others = [u.value for u in combine.operands if u.value is not argument]
        if len(others) != 1 or others[0] is None or _uses_iter_args(others[0], loop):
            raise Refused(why)
        result = combine.results[0]
        if (
            yielded is None
            or len(result.uses) != 1
            or result.uses[0].user is not yielded
            or yielded.operands[position].value is not result
        ):
            raise Refused(why)
        kind_type = _FLOAT if kind.endswith("f") else _INTEGER
        if not kind_type.match(str(argument.type)):
            raise Refused(
                f"{iv_name(loop)} carries {name} through iter_args as a reduction ({kind}) of "
                f"{argument.type} values: affine.parallel reduces only "
                f"{'floats' if kind.endswith('f') else 'integers (not index)'}"
            )
        found.append(Reduction(position, argument, combine, others[0], kind))
    return found


def plan(context: Context, spec: Spec, check: bool = True) -> ParallelPlan:
    loop = context.loop
    check_layout(context, loop, header=False)
    reductions = _reductions(loop) if loop.iter_args else []
    if check:
        analysis = context.analysis(loop)
        dependence = analysis.carried_by(loop)
        if dependence is not None:
            sentence = analysis.describe(dependence, dependence.relation)
            raise Refused(f"{sentence}: a dependence carried by {iv_name(loop)}")
    return ParallelPlan(loop, reductions)


# -- text ---------------------------------------------------------------------------


def _bound(context: Context, bound: AffineBound | None, kind: str) -> str:
    """A bound as affine.parallel writes it: `e`, or `max(e1, e2)` / `min(...)`."""
    if bound is None:
        raise Refused("a loop bound is missing")
    if bound.shorthand_constant is not None:
        return str(bound.shorthand_constant)
    if bound.shorthand_value is not None:
        return bound.shorthand_value.name
    resolver = context.analysis(context.loop).window.resolver
    affine_map = resolver.affine_map(bound.map_ref)
    dims = [u.name for u in bound.dims]
    symbols = [u.name for u in bound.symbols]
    results = [
        format_expr(
            expr,
            dim_namer=lambda k: dims[k],
            symbol_namer=lambda k: f"symbol({symbols[k]})",
        )
        for expr in affine_map.results
    ]
    if len(results) == 1:
        return results[0]
    return f"{kind}({', '.join(results)})"


def rewrite(context: Context, plan: ParallelPlan) -> Rewrite:
    data = context.data
    loop = plan.loop
    start, end, builder = loop_rewrite(data, loop)
    indent = indent_of(data, loop)
    step = loop.step or 1
    lower = _bound(context, loop.lower, "max")
    upper = _bound(context, loop.upper, "min")
    header = f"affine.parallel ({iv(loop).name}) = ({lower}) to ({upper})"
    if step != 1:
        header += f" step ({step})"
    stands_for: dict[str, Value] = {}
    operand_values: dict[int, list[Value]] = {}
    extra: list[TextEdit] = []
    results = ""
    if plan.reductions:
        kinds = ", ".join(f'"{r.kind}"' for r in plan.reductions)
        types = ", ".join(str(r.argument.type) for r in plan.reductions)
        header += f" reduce ({kinds}) -> ({types})"
        name = context.fresh(loop.results[0].name)
        results = f"{name}:{len(plan.reductions)} = " if len(plan.reductions) > 1 else f"{name} = "
    builder.line(indent, f"{results}{header} {{")
    skipped = {id(r.combine) for r in plan.reductions}
    ops = [op for op in body_ops(loop) if id(op) not in skipped]
    for op in ops:
        builder.copy_lines([op], Renames())
    yielded = yield_of(loop)
    inner = indent_of(data, ops[0]) if ops else indent + "  "
    if plan.reductions:
        operands = ", ".join(
            r.operand.name if r.operand.group_size == 1 else _group(r.operand)
            for r in plan.reductions
        )
        types = ", ".join(str(r.argument.type) for r in plan.reductions)
        yield_at = builder.base + builder.length + len(inner.encode())
        builder.line(inner, f"affine.yield {operands} : {types}", yielded)
        operand_values[yield_at] = [r.operand for r in plan.reductions]
        builder.line(indent, "}")
        parallel = results.split(":")[0].split(" ")[0]
        for k, reduction in enumerate(plan.reductions):
            result = loop.results[reduction.position]
            init = loop.iter_args[reduction.position][1]
            own = parallel if len(plan.reductions) == 1 else f"{parallel}#{k}"
            target = result.name if len(loop.results) == 1 else context.fresh(result.name)
            stands_for[target] = result
            builder.line(
                indent,
                f"{target} = {reduction.combine.name} {init.name}, {own} : {result.type}",
            )
            if len(loop.results) > 1:
                for use in result.uses:
                    extra.append(TextEdit(Span(use.span.start_byte, use.span.end_byte), target))
    else:
        if yielded is not None and yielded.span.start_byte > (ops[-1].span.end_byte if ops else 0):
            builder.copy_lines([yielded], Renames())
        builder.line(indent, "}")
    return Rewrite(start, end, builder.text(), builder.origins, extra, stands_for, operand_values)


def _group(value: Value) -> str:
    return f"{value.name}#{value.index}"


def summary(context: Context, plan: ParallelPlan) -> str:
    if plan.reductions:
        kinds = ", ".join(r.kind for r in plan.reductions)
        return f"parallelized {iv_name(plan.loop)} with reductions ({kinds})"
    return f"parallelized {iv_name(plan.loop)}"
