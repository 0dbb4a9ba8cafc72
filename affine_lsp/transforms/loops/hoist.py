"""Hoist loop-invariant code out of a loop: ops of its body whose operands are all
defined outside it (or by ops hoisted before them) move, in order, just before
the loop.

What moves: `affine.apply`/`affine.min`/`affine.max`, pure `arith`/`math` ops
that cannot fault (divisions and remainders only by a non-zero constant), and
`affine.load`s of a memref that no iteration of the loop writes at the element
loaded (exact, from the access relations), when the loop runs at least once (a
load before a loop that may not run would read what the original never read).
"""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.ir import AffineAccessOp, AffineForOp, Operation
from affine_lsp.poly import Level, NotAffine, Statement, integer_constant, is_under
from affine_lsp.transforms.edits import line_start, next_line_start
from affine_lsp.transforms.loops.core import Context, Refused, Spec, check_layout
from affine_lsp.transforms.loops.nest import body_ops, defined_under, iv_name
from affine_lsp.transforms.loops.proof import Rewrite
from affine_lsp.transforms.loops.text import Renames, loop_rewrite, step_indent
from affine_lsp.transforms.naming import names_in

_FAULTING = frozenset(
    {
        "arith.divsi",
        "arith.divui",
        "arith.remsi",
        "arith.remui",
        "arith.ceildivsi",
        "arith.ceildivui",
        "arith.floordivsi",
    }
)
_INDEX = frozenset({"affine.apply", "affine.min", "affine.max"})


@dataclass
class HoistPlan:
    loop: AffineForOp
    moved: list[Operation]


def title(spec: Spec, loop: AffineForOp) -> str:
    return f"Hoist invariant code out of {iv_name(loop)}"


def is_pure(op: Operation) -> bool:
    """A scalar op without effects that cannot fault (a division only by a non-zero constant)."""
    if op.regions or not op.results:
        return False
    if op.name in _INDEX:
        return True
    if not op.name.startswith(("arith.", "math.")):
        return False
    if op.name in _FAULTING:
        divisor = op.operands[1].value if len(op.operands) == 2 else None
        definer = divisor.defining_op if divisor is not None else None
        constant = integer_constant(definer) if definer is not None else None
        return constant is not None and constant != 0
    return True


def runs_at_least_once(context: Context, loop: AffineForOp) -> bool:
    """Whether the loop runs at least once whenever the code around it runs."""
    analysis = context.analysis(loop)
    window = analysis.window
    builder = window.builder
    try:
        domain = builder.build([Level(loop)])
    except NotAffine:
        return False
    domain_set = domain.set
    assert domain_set is not None

    def check() -> bool:
        ran = domain_set.params().intersect(window.context)
        return window.context.is_subset(ran)

    return bool(context.session.run(check, "the loop's trip count"))


def _written_at(context: Context, loop: AffineForOp, load: AffineAccessOp) -> bool:
    """Whether an iteration of the loop writes an element `load` reads."""
    analysis = context.analysis(loop)
    statements = analysis.window.statements
    mine = next((s for s in statements if s.op is load), None)
    if mine is None:
        return True
    for other in statements:
        if not other.is_write or other.array != mine.array or not is_under(other.op, loop):
            continue

        def clash(other: Statement = other) -> bool:
            cells = mine.access.range()
            written = other.access.range()
            return not cells.intersect(written).is_empty()

        if context.session.run(clash, "an invariant load"):
            return True
    return False


def plan(context: Context, spec: Spec, check: bool = True) -> HoistPlan:
    loop = context.loop
    check_layout(context, loop, header=False)
    moved: list[Operation] = []
    moved_values: set[int] = set()
    loads_refused = ""
    runs: bool | None = None
    for op in body_ops(loop):
        invariant = all(
            use.value is not None
            and (not defined_under(use.value, loop) or id(use.value) in moved_values)
            for use in op.operands
        )
        if not invariant:
            continue
        if isinstance(op, AffineAccessOp) and op.name == "affine.load":
            if runs is None:
                runs = runs_at_least_once(context, loop)
            if not runs:
                loads_refused = f"; {iv_name(loop)} may run zero times, so its invariant loads stay"
                continue
            if check and _written_at(context, loop, op):
                continue
        elif not is_pure(op):
            continue
        moved.append(op)
        moved_values.update(id(v) for v in op.results)
    if not moved:
        raise Refused(f"nothing in {iv_name(loop)} is loop-invariant{loads_refused}")
    return HoistPlan(loop, moved)


def rewrite(context: Context, plan: HoistPlan) -> Rewrite:
    data = context.data
    loop = plan.loop
    start, end, builder = loop_rewrite(data, loop)
    ops = body_ops(loop)
    unit = step_indent(data, loop, ops[0]) if ops else 2
    # A hoisted value must not clash with a name used elsewhere in the function
    # (MLIR forbids shadowing): it gets a fresh name then.
    renames = Renames()
    elsewhere = names_in(context.function, excluding=loop)
    for op in plan.moved:
        for value in op.results:
            if value.index == 0 and value.name in elsewhere:
                name = context.fresh(value.name)
                for member in op.results:
                    renames.set(member, name)
    for op in plan.moved:
        builder.copy_lines([op], renames, -unit)
    position = start
    for op in plan.moved:
        line = line_start(data, op.span.start_byte)
        builder.copy(position, line, [loop], renames)
        position = next_line_start(data, op.span.end_byte)
    builder.copy(position, end, [loop], renames)
    return Rewrite(start, end, builder.text(), builder.origins)


def summary(context: Context, plan: HoistPlan) -> str:
    count = len(plan.moved)
    return f"hoisted {count} op{'s' if count != 1 else ''} out of {iv_name(plan.loop)}"
