"""The ops of a window as statements: the runs of non-loop ops of one block (cut
where no value flows across), with the iteration domain of the loops and
`affine.if`s around them.

Code generation repeats each statement once per instance, in the order a new
schedule gives, so values may flow between statements only through memory (a
constant is copied into the statements that use it): a value defined in one
statement and used in another, values carried by `iter_args`, ops with regions
of their own (other than affine loops and conditions) and `affine.if`s with
results are refused with the reason in the user's terms (`Unschedulable`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.ir import (
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    Block,
    Operation,
    Value,
)
from affine_lsp.poly import Domain, NotAffine, PolyError, Window, enclosing_levels, is_pure

_STRUCTURE = (AffineForOp, AffineIfOp, AffineParallelOp)


class Unschedulable(PolyError):
    """The window cannot be regenerated from statements: `reason` says why."""


@dataclass(eq=False)
class Statement:
    """A run of consecutive ops of one block, repeated as a whole."""

    name: str  # "S0": the isl tuple of its instances
    ops: list[Operation]
    domain: Domain
    path: list[object]  # the original schedule: block positions (int) and ivs (Value)
    constants: list[Operation] = field(default_factory=list)
    """Constants another statement defines and this one uses: copied at its top."""

    @property
    def instances(self) -> isl.Set:
        assert self.domain.set is not None
        return self.domain.set.set_tuple_name(self.name)

    @property
    def dims(self) -> list[str]:
        return self.domain.dims

    @property
    def loops(self) -> list[AffineForOp]:
        return [lv.op for lv in self.domain.levels if isinstance(lv.op, AffineForOp)]

    def original_time(self) -> list[str]:
        """The original schedule (`2d + 1`: positions and ivs) as isl expressions."""
        names = {id(iv): dim for iv, dim in zip(self.domain.ivs, self.domain.dims, strict=True)}
        return [str(e) if isinstance(e, int) else names[id(e)] for e in self.path]

    def dim_of(self, loop: Operation) -> str | None:
        """The statement's dim for one of the loops around it."""
        for level_iv, dim in zip(self.domain.ivs, self.domain.dims, strict=True):
            if isinstance(loop, AffineForOp) and loop.induction_variable is level_iv:
                return dim
        return None


def _loop_name(loop: Operation) -> str:
    if isinstance(loop, AffineForOp) and loop.induction_variable is not None:
        return loop.induction_variable.name
    return loop.name


def _check_structure(op: Operation) -> None:
    if isinstance(op, AffineForOp):
        if op.iter_args or op.results:
            raise Unschedulable(f"{_loop_name(op)} carries values through iter_args")
        if op.body is None or op.body.entry is None:
            raise Unschedulable(f"{_loop_name(op)} has no body")
        if (op.step or 1) < 1:
            raise Unschedulable(f"{_loop_name(op)} has a step that is not positive")
    elif isinstance(op, AffineIfOp):
        if op.results:
            raise Unschedulable("an affine.if yields values")
    elif isinstance(op, AffineParallelOp):
        raise Unschedulable("the code holds an affine.parallel")


def _blocks(op: Operation) -> list[Block]:
    return [block for region in op.regions for block in region.blocks]


def statements_of(window: Window) -> list[Statement]:
    """The statements of `window`'s ops, in execution order."""
    found: list[Statement] = []
    # (ops of one block, the schedule path of that block)
    work: list[tuple[list[Operation], list[object]]] = [(list(window.ops), [])]
    while work:
        ops, prefix = work.pop()
        for start, run in _runs(ops):
            offset = 0
            for part in _segments(run):
                path = [*prefix, start + offset]
                found.append(_statement(window, len(found), part, path))
                offset += len(part)
        for index, op in enumerate(ops):
            if not isinstance(op, _STRUCTURE):
                continue
            _check_structure(op)
            if isinstance(op, AffineForOp):
                body = op.body.entry if op.body is not None else None
                assert body is not None
                work.append((body.operations, [*prefix, index, op.induction_variable]))
            else:
                for branch, block in enumerate(_blocks(op)):
                    work.append((block.operations, [*prefix, index, branch]))
    _order(found)
    _check_flows(found)
    return found


def _runs(ops: list[Operation]) -> list[tuple[int, list[Operation]]]:
    """(position of its first op, ops): the maximal runs of non-loop ops of a block."""
    runs: list[tuple[int, list[Operation]]] = []
    current: list[Operation] = []
    first = 0
    for index, op in enumerate(ops):
        if isinstance(op, _STRUCTURE) or op.name == "affine.yield":
            if current:
                runs.append((first, current))
            current = []
            continue
        if op.regions:
            raise Unschedulable(f"'{op.name}' holds code of its own")
        if not current:
            first = index
        current.append(op)
    if current:
        runs.append((first, current))
    return runs


def _segments(run: list[Operation]) -> list[list[Operation]]:
    """A run cut wherever no value defined before the cut is used after it: each part
    is a statement of its own (the two sweeps of a fused stencil are two statements)."""
    parts: list[list[Operation]] = []
    current: list[Operation] = []
    live: set[int] = set()  # values defined in `current` and used after it
    uses_after: dict[int, int] = {}  # value -> index of its last use in the run
    for index, op in enumerate(run):
        for use in op.operands:
            if use.value is not None:
                uses_after[id(use.value)] = index
    for index, op in enumerate(run):
        current.append(op)
        for value in op.results:
            if uses_after.get(id(value), -1) > index:
                live.add(id(value))
        live = {v for v in live if uses_after.get(v, -1) > index}
        if not live:
            parts.append(current)
            current = []
    if current:
        parts.append(current)
    return parts


def _order(statements: list[Statement]) -> None:
    """Statements in execution order of the original (their names follow it)."""

    def key(statement: Statement) -> tuple[int, ...]:
        return (statement.ops[0].span.start_byte,)

    statements.sort(key=key)
    for index, statement in enumerate(statements):
        statement.name = f"S{index}"


def _statement(window: Window, index: int, ops: list[Operation], path: list[object]) -> Statement:
    levels, blocker = enclosing_levels(ops[0], window.block)
    if blocker is not None:
        raise Unschedulable(f"'{blocker.name}' around the code is not affine")
    try:
        domain = window.builder.build(levels)
    except NotAffine as error:
        raise Unschedulable(error.reason) from None
    return Statement(f"S{index}", ops, domain, path)


def _defined_in(statement: Statement) -> dict[int, Value]:
    values: dict[int, Value] = {}
    for op in statement.ops:
        for value in op.results:
            values[id(value)] = value
    return values


def _constant(op: Operation | None) -> bool:
    """An op that computes the same value wherever it is copied (a constant)."""
    return op is not None and not op.operands and not op.regions and is_pure(op)


def _check_flows(statements: list[Statement]) -> None:
    """Values defined by a statement are used only by that statement's own ops
    (or loop bounds and conditions, which are read into the domains), but for
    constants, which the statements that use them copy."""
    owner: dict[int, Statement] = {}
    for statement in statements:
        for key in _defined_in(statement):
            owner[key] = statement
    for statement in statements:
        for op in statement.ops:
            for use in op.operands:
                value = use.value
                if value is None:
                    continue
                source = owner.get(id(value))
                definer = value.defining_op
                if source is not None and source is not statement and _constant(definer):
                    assert definer is not None
                    if definer not in statement.constants:
                        statement.constants.append(definer)
                    continue
                if source is not None and source is not statement:
                    raise Unschedulable(
                        f"{value.display_name} is computed in one loop body and used in "
                        "another; only values passed through memory can be reordered"
                    )
                if value.role == "iter_arg":
                    raise Unschedulable(f"{value.display_name} is carried through iter_args")
