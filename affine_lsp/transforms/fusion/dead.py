"""Nests whose results nobody reads, removed when that is proven.

A nest is removed when it writes memory and every value it writes is overwritten
by a later op before anything reads it (MLIR's fusion leaves such a producer
behind, or fuses it where it computes nothing that matters). Only overwritten
results make a nest dead: a nest that only reads, or that writes a buffer
nothing reads and nothing overwrites, is left alone (fusion is no dead-code
elimination). Removing it is checked like a fusion: the window from the nest to the
block's last op that touches memory is modelled with and without it, and the
exact dataflow comparison must show that every read, and the final contents of
every memref that outlives the window, see the same writes as before. Most nests
tried are alive (a zeroing nest before the sum that reads it): `_observed` shows that
first, with no last-write search, and only a nest it cannot show alive is proven dead.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from affine_lsp.checks import TextEdit
from affine_lsp.ir import AffineForOp, FuncOp, ModuleModel, Operation
from affine_lsp.poly import IslSession, PolyError, Window, is_under, union_of_maps
from affine_lsp.poly.budgets import Budget
from affine_lsp.syntax import Span
from affine_lsp.transforms.fusion.copy import CannotEdit, nest_lines
from affine_lsp.transforms.fusion.nests import memrefs_touched
from affine_lsp.transforms.fusion.verify import check_removal, live_arrays


@dataclass
class Removal:
    """A dead nest and the proven edit that removes it."""

    nest: AffineForOp
    edits: list[TextEdit]
    new_text: bytes
    function: FuncOp  # the function after the removal, modelled from `new_text`


def _may_be_dead(nest: AffineForOp, later: list[Operation]) -> bool:
    """The policy, checked cheaply before the proof: the nest writes memory, and
    every memref it writes is written again by a later op."""
    if any(value.uses for value in nest.results):
        return False
    _, writes = memrefs_touched(nest)
    if not writes:
        return False  # a nest that only reads is not a producer: it is left alone
    rewritten: set[int] = set()
    for op in later:
        rewritten |= memrefs_touched(op)[1]
    return writes <= rewritten


def removal(
    data: bytes,
    model: ModuleModel,
    function: FuncOp,
    nest: AffineForOp,
    budget: Budget,
    session: IslSession | None = None,
) -> Removal | None:
    """The proven removal of `nest` if it is dead, else None.

    The window runs from the nest to the last op that reads or writes a memref the
    nest writes: ops after it cannot see the difference, and what outlives the
    window (function arguments, memrefs used further on) must end with the same
    contents. The isl work runs in `session` if given (else one with `budget`)."""
    block = nest.parent_block
    if block is None:
        return None
    operations = block.operations
    index = operations.index(nest)
    later = operations[index + 1 :]
    if not _may_be_dead(nest, later):
        return None
    _, writes = memrefs_touched(nest)
    touching = [
        k
        for k, op in enumerate(later, index + 1)
        if any(writes & touched for touched in memrefs_touched(op))
    ]
    try:
        start, end = nest_lines(data, nest, True)
    except CannotEdit:
        return None
    edits = [TextEdit(Span(start, end), "")]
    session = session or IslSession(budget)
    try:
        window = Window(session, block, index, touching[-1], model.alias_table())
        if _observed(window, nest):
            return None
        checked = check_removal(session, window, data, model, function, edits)
    except PolyError:
        return None
    if not checked.legal:
        return None
    return Removal(nest, edits, checked.new_text, checked.function)


def _observed(window: Window, nest: AffineForOp) -> bool:
    """Whether some value `nest` (the window's first op) writes is observed: a later
    read of an element it writes that no later write of that element precedes (the
    read sees the nest's last write of it), or an element of a memref that outlives
    the window that no later op writes (its final contents are the nest's). Either is
    a mismatch the exact comparison of the removal would report; relations and
    emptiness only, no last-write search."""
    session = window.session

    def run() -> bool:
        ctx = session.ctx
        inside = [s for s in window.statements if is_under(s.op, nest)]
        later = [s for s in window.statements if not is_under(s.op, nest)]
        written = union_of_maps([s.access for s in inside if s.is_write], ctx).range()
        writes = union_of_maps([s.access for s in later if s.is_write], ctx)
        reads = union_of_maps([s.access for s in later if not s.is_write], ctx)
        reads = reads.intersect_range(written)
        if not reads.is_empty():
            schedule = window.schedule()
            times = reads.apply_range(writes.reverse()).apply_domain(schedule)
            times = times.apply_range(schedule)  # read time -> write time, same element
            space = isl.Set.from_union_set(schedule.range()).get_space()
            earlier = times.intersect(isl.UnionMap.from_map(isl.Map.lex_gt(space)))
            unwritten = reads.domain().apply(schedule).subtract(earlier.domain())
            if not unwritten.intersect_params(window.context).is_empty():
                return True
        live = live_arrays(window)
        left = union_of_maps(
            [s.access for s in inside if s.is_write and s.array in live], ctx
        ).range()
        left = left.subtract(writes.range()).intersect_params(window.context)
        return not left.is_empty()

    return bool(session.run(run, "whether the nest's results are read"))
