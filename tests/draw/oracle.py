"""A brute-force oracle for the arrows of a picture: every instance of every memory
access of the nest is enumerated point by point, dependences are found by comparing
elements and execution times in Python, and the first later target of each source
is kept, as `poly.space` promises (loop-carried only, per pair of accesses)."""

from __future__ import annotations

from collections import defaultdict

import islpy as isl

from affine_lsp.ir.model import AffineForOp, AffineParallelOp, ModuleModel, Operation
from affine_lsp.poly.budgets import Budget
from affine_lsp.poly.domain import enclosing_levels
from affine_lsp.poly.names import exact_to_source
from affine_lsp.poly.program import Window, is_under
from affine_lsp.poly.session import IslSession
from affine_lsp.poly.space import DEFAULT_VALUE, chain_of

SET = isl.dim_type.set
PARAM = isl.dim_type.param


def _fixed(value, values: dict[str, int]):
    for position in range(value.dim(PARAM)):
        source = exact_to_source(value.get_dim_name(PARAM, position))
        number = values.get(source, DEFAULT_VALUE)
        value = value.fix_val(PARAM, position, isl.Val.int_from_si(value.get_ctx(), number))
    return value.project_out(PARAM, 0, value.dim(PARAM))


def _coordinates(point: isl.Point, dims: int) -> tuple[int, ...]:
    return tuple(int(str(point.get_coordinate_val(SET, d))) for d in range(dims))


def _only(value: isl.Set) -> tuple[int, ...]:
    return _coordinates(value.sample_point(), value.dim(SET))


def brute_force_arrows(
    op: Operation, model: ModuleModel, values: dict[str, int], points: list[tuple[int, ...]]
) -> set[tuple[tuple[int, ...], tuple[int, ...], str, str]]:
    chain, _ = chain_of(op)
    levels, _ = enclosing_levels(chain[-1])
    loops: list[Operation] = [
        level.op for level in levels if isinstance(level.op, AffineForOp | AffineParallelOp)
    ]
    loops.append(chain[-1])
    dims_of = [
        len(loop.induction_variables) if isinstance(loop, AffineParallelOp) else 1 for loop in loops
    ]
    k = sum(dims_of)
    top = levels[0].op if levels else chain[-1]
    block = top.parent_block
    assert block is not None
    position = block.operations.index(top)
    window = Window(
        IslSession(Budget(None, None)),
        block,
        position,
        position,
        model.alias_table(),
        allow_parallel=True,
    )
    statements = [s for s in window.statements if is_under(s.op, op)]
    drawn = sorted(points)

    def place(statement, instance):
        depth = len(statement.domain.ivs)
        if depth >= k:
            return instance[:k]
        row = [p for p in drawn if p[:depth] == instance[:depth]]
        if not row:
            return None
        # The next drawn loop below the statement's depth: before it -> first point.
        total, next_loop = 0, None
        for loop, count in zip(loops, dims_of, strict=True):
            total += count
            if total > depth:
                next_loop = loop
                break
        assert next_loop is not None
        if (
            is_under(next_loop, statement.op)
            or statement.op.span.start_byte < next_loop.span.start_byte
        ):
            return row[0]
        return row[-1]

    accesses = defaultdict(list)  # (array, element) -> [(time, index, instance, point)]
    for index, statement in enumerate(statements):
        instances = _fixed(statement.instances, values)
        access = _fixed(statement.access, values)
        schedule = _fixed(statement.schedule, values)
        found: list[isl.Point] = []
        instances.foreach_point(found.append)
        for point in found:
            instance = _coordinates(point, instances.dim(SET))
            single = isl.Set.from_point(point)
            element = _only(single.apply(access))
            time = _only(single.apply(schedule))
            accesses[(statement.array, element)].append((time, index, instance))
    nearest: dict[tuple, tuple[int, ...]] = {}
    for group in accesses.values():
        group.sort()
        for x in range(len(group)):
            time_a, a, instance_a = group[x]
            for y in range(x + 1, len(group)):
                time_b, b, instance_b = group[y]
                if time_b == time_a:
                    continue
                source, target = statements[a], statements[b]
                if not (source.is_write or target.is_write):
                    continue
                common = min(len(source.domain.ivs), len(target.domain.ivs), k)
                if instance_a[:common] == instance_b[:common]:
                    continue
                start, end = place(source, instance_a), place(target, instance_b)
                if start is None or end is None:
                    continue
                kind = (
                    "WAW"
                    if source.is_write and target.is_write
                    else "RAW"
                    if source.is_write
                    else "WAR"
                )
                key = (kind, source.memref.display_name, a, b, start)
                if key not in nearest or end < nearest[key]:
                    nearest[key] = end
    return {(key[4], end, key[0], key[1]) for key, end in nearest.items()}
