"""Dependences (RAW, WAR, WAW) between the memory accesses of two ops or nests.

A dependence from access `a` to access `b` relates the instances of `a` to the
later instances of `b` that touch the same element, at least one of them
writing. For the loops both accesses share, the distance (target iteration
minus source iteration) is reported when it is a constant, and the direction
(`<`, `=`, `>`, `<=`, `>=`, `*`) always.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from affine_lsp.ir import AffineForOp, AffineParallelOp, Block, ModuleModel, Operation
from affine_lsp.poly.budgets import DEPENDENCE, Budget
from affine_lsp.poly.forms import fraction
from affine_lsp.poly.names import exact_to_source, pretty_identifier
from affine_lsp.poly.program import Statement, Window, is_under
from affine_lsp.poly.session import IslSession, PolyError, Unknown


@dataclass(frozen=True)
class Dependence:
    kind: str  # "RAW" | "WAR" | "WAW"
    source: Operation
    target: Operation
    memref: str
    relation: str  # source iteration -> target iteration, source names
    common_loops: int
    distance: tuple[int | None, ...]
    direction: tuple[str, ...]


def _block_path(op: Operation) -> list[tuple[Block, Operation]]:
    """(block, op or its ancestor in that block), innermost first."""
    path = []
    current: Operation | None = op
    while current is not None and current.parent_block is not None:
        path.append((current.parent_block, current))
        current = current.parent_op
    return path


def common_block(first: Operation, second: Operation) -> tuple[Block, int, int] | None:
    """The innermost block holding both ops (or their ancestors) and their positions."""
    second_path = {id(block): (block, op) for block, op in _block_path(second)}
    for block, op in _block_path(first):
        match = second_path.get(id(block))
        if match is not None:
            position_a = block.operations.index(op)
            position_b = block.operations.index(match[1])
            return block, position_a, position_b
    return None


def _common_loops(a: Statement, b: Statement) -> int:
    count = 0
    for level_a, level_b in zip(a.domain.levels, b.domain.levels, strict=False):
        if level_a.op is not level_b.op or level_a.branch != level_b.branch:
            break
        if isinstance(level_a.op, AffineForOp | AffineParallelOp):
            count += len(level_a.ivs)
    return count


def _pretty(relation: isl.Map, a: Statement, b: Statement) -> str:
    renamed = relation
    for kind, statement in ((isl.dim_type.in_, a), (isl.dim_type.out, b)):
        names = [pretty_identifier(iv.display_name) for iv in statement.domain.ivs]
        names += [f"lane{k}" for k in range(statement.lanes)]
        for position, name in enumerate(names):
            renamed = renamed.set_dim_name(kind, position, name)
        renamed = renamed.reset_tuple_id(kind)
    for position in range(renamed.dim(isl.dim_type.param)):
        name = renamed.get_dim_name(isl.dim_type.param, position) or ""
        renamed = renamed.set_dim_name(isl.dim_type.param, position, exact_to_source(name))
    return str(renamed.coalesce())


def _direction(deltas: isl.Set, position: int) -> tuple[int | None, str]:
    """(constant distance or None, direction) of one common loop."""
    dims = deltas.dim(isl.dim_type.set)
    alone = deltas.project_out(isl.dim_type.set, position + 1, dims - position - 1)
    alone = alone.project_out(isl.dim_type.set, 0, position)
    ctx = deltas.get_ctx()
    one, zero, minus_one = (isl.Val.int_from_si(ctx, v) for v in (1, 0, -1))
    signs = tuple(
        text
        for text, part in (
            ("+", alone.lower_bound_val(isl.dim_type.set, 0, one)),
            ("0", alone.fix_val(isl.dim_type.set, 0, zero)),
            ("-", alone.upper_bound_val(isl.dim_type.set, 0, minus_one)),
        )
        if not part.is_empty()
    )
    # A positive distance means the source runs in an earlier iteration: "<".
    names = {("+",): "<", ("0",): "=", ("-",): ">", ("+", "0"): "<=", ("0", "-"): ">="}
    distance = None
    point = alone.sample_point()
    if not point.is_void():
        value = int(fraction(point.get_coordinate_val(isl.dim_type.set, 0)))
        fixed = isl.Set.universe(alone.get_space()).fix_val(
            isl.dim_type.set, 0, isl.Val.int_from_si(ctx, value)
        )
        if alone.is_equal(fixed.intersect_params(alone.params())):
            distance = value
    return distance, names.get(signs, "*")


def relations(
    a: Statement, b: Statement, context: isl.Set | None = None
) -> list[tuple[str, Statement, Statement, isl.Map]]:
    """(kind, source, target, relation) for two statements of one window, both ways:
    the relation takes each instance of `source` to the later instances of `target`
    that touch the same element (at least one of the two writing). Empty relations
    are left out. `context` (a parameter set) restricts the symbols first."""
    if a.array != b.array or not (a.is_write or b.is_write):
        return []
    access_a, access_b = a.access, b.access
    if context is not None:
        access_a = access_a.intersect_params(context)
        access_b = access_b.intersect_params(context)
    same = access_a.apply_range(access_b.reverse())
    assert a.schedule is not None and b.schedule is not None
    directions = [(a, b, same.intersect(a.schedule.lex_lt_map(b.schedule)))]
    if a is not b:
        directions.append((b, a, same.reverse().intersect(b.schedule.lex_lt_map(a.schedule))))
    found: list[tuple[str, Statement, Statement, isl.Map]] = []
    for source, target, relation in directions:
        if relation.is_empty():
            continue
        kind = "WAW" if source.is_write and target.is_write else "RAW" if source.is_write else "WAR"
        found.append((kind, source, target, relation))
    return found


def _pair(a: Statement, b: Statement, window: Window) -> list[Dependence]:
    found: list[Dependence] = []
    for kind, source, target, relation in relations(a, b):
        loops = _common_loops(source, target)
        deltas_map = relation
        deltas_map = deltas_map.project_out(
            isl.dim_type.in_, loops, deltas_map.dim(isl.dim_type.in_) - loops
        )
        deltas_map = deltas_map.project_out(
            isl.dim_type.out, loops, deltas_map.dim(isl.dim_type.out) - loops
        )
        deltas = deltas_map.deltas()
        distances, signs = [], []
        for position in range(loops):
            distance, direction = _direction(deltas, position)
            distances.append(distance)
            signs.append(direction)
        found.append(
            Dependence(
                kind,
                source.op,
                target.op,
                source.memref.display_name,
                _pretty(relation, source, target),
                loops,
                tuple(distances),
                tuple(signs),
            )
        )
    return found


def dependences(
    first: Operation, second: Operation, model: ModuleModel, budget: Budget | None = None
) -> list[Dependence] | Unknown:
    """Every dependence between the accesses in `first` and those in `second` (ops or
    nests; the same op for dependences inside one nest), in both directions."""
    common = common_block(first, second)
    if common is None:
        return Unknown("the two ops are not in the same function")
    block, position_a, position_b = common
    try:
        session = IslSession(budget or DEPENDENCE)
        window = Window(
            session,
            block,
            min(position_a, position_b),
            max(position_a, position_b),
            model.alias_table(),
            allow_parallel=True,
        )
        in_first = [s for s in window.statements if is_under(s.op, first)]
        in_second = [s for s in window.statements if is_under(s.op, second)]
        found: list[Dependence] = []
        seen: set[tuple[int, int]] = set()
        for a in in_first:
            for b in in_second:
                key = (min(id(a), id(b)), max(id(a), id(b)))
                if key in seen:
                    continue
                seen.add(key)
                found += session.run(lambda a=a, b=b: _pair(a, b, window), "a dependence")
        return found
    except PolyError as error:
        return Unknown(error.reason)
