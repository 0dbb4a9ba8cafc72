"""What the cost model needs to know about a perfect band of a nest: its body as
model data (`cost.Body`), which of its loops carry no dependence, and which
orders of its loops keep every dependence.

Dependences are the scheduler's (memory-based, `scheduler.dependences`); for a
band made of the nest's outermost loops, the distance of a dependence along the
band is the difference of the first coordinates of its two instances, and:
- a loop is parallel when no dependence has distance 0 along the loops outside
  it and a non-zero distance along it, and alone (its iterations independent when
  it runs innermost) when none has distance 0 along every other loop of the band
  and a non-zero one along it;
- an order of the band is legal when every distance, read in that order, is
  lexicographically non-negative (equal band coordinates keep the original
  order of what is inside);
- the band is fully permutable (tileable) when every distance is non-negative
  along every loop.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import permutations

import islpy as isl

from affine_lsp.ir import AffineAccessOp, AffineForOp, Block, IndexType, MemRefAccessOp
from affine_lsp.poly import IslSession
from affine_lsp.transforms.loops import iv_name
from affine_lsp.transforms.optimize.nest import Nest, Statement
from affine_lsp.transforms.performance import Body, Loop, Ref

MAX_ORDERS_DEPTH = 4
"""Bands deeper than this keep their order (4! orders are tried at most)."""


class BandDependences:
    """The distances of the nest's dependences along the band's `depth` loops."""

    def __init__(self, session: IslSession, dependences: isl.UnionMap, depth: int) -> None:
        self.session = session
        self.depth = depth
        self.deltas: list[isl.Set] = []
        found: list[isl.Map] = []
        dependences.foreach_map(found.append)
        for relation in found:
            if relation.is_empty():
                continue
            if relation.dim(isl.dim_type.in_) < depth or relation.dim(isl.dim_type.out) < depth:
                continue
            self.deltas.append(session.run(lambda r=relation: _band_deltas(r, depth)))

    def _any(self, condition: str) -> bool:
        """Whether some distance satisfies `condition` (over d0, d1, ...)."""
        names = ", ".join(f"d{k}" for k in range(self.depth))
        for deltas in self.deltas:
            params = [
                deltas.get_dim_name(isl.dim_type.param, k) or ""
                for k in range(deltas.dim(isl.dim_type.param))
            ]
            text = f"[{', '.join(params)}] -> {{ [{names}] : {condition} }}"
            shape = self.session.set(text)
            if not self.session.run(lambda d=deltas, s=shape: d.intersect(s).is_empty()):
                return True
        return False

    def parallel(self, position: int) -> bool:
        outer = [f"d{k} = 0" for k in range(position)]
        return not self._any(" and ".join([*outer, f"d{position} != 0"]))

    def alone(self, position: int) -> bool:
        """No dependence between iterations of this loop with every other loop of the
        band fixed (its iterations may run as vector lanes, innermost)."""
        others = [f"d{k} = 0" for k in range(self.depth) if k != position]
        return not self._any(" and ".join([*others, f"d{position} != 0"]))

    def carried_innermost(self, skews: tuple[tuple[int, ...], ...]) -> bool:
        """Some distance, in the band skewed by `skews` (row k - 1: the factors of
        loops 0..k-1 added to loop k), is 0 along every loop but the innermost."""
        skewed = [f"d{k}" for k in range(self.depth)]
        for k, row in enumerate(skews, start=1):
            skewed[k] += "".join(f" + {f} * d{m}" for m, f in enumerate(row) if f)
        last = self.depth - 1
        return self._any(
            " and ".join([*(f"{d} = 0" for d in skewed[:last]), f"{skewed[last]} != 0"])
        )

    def legal(self, order: tuple[int, ...]) -> bool:
        if not self.deltas:
            return True
        backwards = []
        for k, loop in enumerate(order):
            equal = [f"d{order[j]} = 0" for j in range(k)]
            backwards.append("(" + " and ".join([*equal, f"d{loop} < 0"]) + ")")
        return not self._any(" or ".join(backwards))

    def permutable(self) -> bool:
        if not self.deltas:
            return True
        return not self._any(" or ".join(f"d{k} < 0" for k in range(self.depth)))

    def orders(self) -> list[tuple[int, ...]]:
        """The legal orders of the band (only its own order when it is deep)."""
        identity = tuple(range(self.depth))
        if self.depth > MAX_ORDERS_DEPTH:
            return [identity]
        return [order for order in permutations(identity) if self.legal(order)]


def recurrences(dependences: isl.UnionMap) -> isl.UnionMap:
    """The dependences of a statement on itself (a value it wrote, read again)."""
    found: list[isl.Map] = []
    dependences.foreach_map(found.append)
    kept = isl.UnionMap.empty(dependences.get_space())
    for relation in found:
        if relation.get_tuple_name(isl.dim_type.in_) == relation.get_tuple_name(isl.dim_type.out):
            kept = kept.add_map(relation)
    return kept


def _band_deltas(relation: isl.Map, depth: int) -> isl.Set:
    inputs = relation.dim(isl.dim_type.in_)
    outputs = relation.dim(isl.dim_type.out)
    band = relation.project_out(isl.dim_type.in_, depth, inputs - depth)
    band = band.project_out(isl.dim_type.out, depth, outputs - depth)
    band = band.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
    return band.deltas()


def body_of(
    nest: Nest,
    band: list[AffineForOp],
    parallel: list[bool],
    alone: list[bool] | None = None,
    statements: list[Statement] | None = None,
) -> Body:
    """The cost model's view of `band` (a perfect band from the nest's root, or one
    that will be once the loop above is distributed: `statements` then says which)."""
    innermost = band[-1]
    if statements is None:
        statements = [s for s in nest.statements if any(loop is innermost for loop in s.loops)]
    inner: list[AffineForOp] = []
    for statement in statements:
        for loop in statement.loops[len(band) :]:
            if not any(loop is x for x in inner):
                inner.append(loop)
    order = band + inner

    def positions(statement: Statement) -> list[int]:
        return [next(k for k, x in enumerate(order) if x is loop) for loop in statement.loops]

    alone = alone or [True] * len(band)
    loops = tuple(
        Loop(iv_name(loop), nest.trip(loop), flag, free, _ragged(loop, band))
        for loop, flag, free in zip(band, parallel, alone, strict=True)
    )
    inner_loops = tuple(Loop(iv_name(loop), nest.trip(loop)) for loop in inner)
    refs = _refs(statements, positions, len(order))
    return Body(loops, inner_loops, refs, _operations(statements))


def fused_body(nest: Nest, loop: AffineForOp, statements: list[Statement]) -> Body:
    """The cost model's view of `loop` holding several loops or statements as it
    is: the loops below it walked as one loop per depth (siblings of one depth range
    over the same values: `A[i, j]` read by two sibling `j` loops is one row)."""
    depth = next(k for k, x in enumerate(statements[0].loops) if x is loop)
    deepest = max(s.depth for s in statements) - depth - 1
    trips = [1] * deepest
    for statement in statements:
        for k, inner in enumerate(statement.loops[depth + 1 :]):
            trips[k] = max(trips[k], nest.trip(inner))

    def positions(statement: Statement) -> list[int]:
        return [max(0, k - depth) for k in range(statement.depth)]

    refs = _refs(statements, positions, 1 + deepest)
    band = (Loop(iv_name(loop), nest.trip(loop)),)
    inner = tuple(Loop(f"depth {k + 1}", trip) for k, trip in enumerate(trips))
    return Body(band, inner, refs, _operations(statements))


def _refs(
    statements: list[Statement], positions: Callable[[Statement], list[int]], count: int
) -> tuple[Ref, ...]:
    """The statements' accesses as references over `count` model loops (`positions`:
    each of a statement's loops' model loop), those with the same coefficients one."""
    groups: dict[tuple, list[tuple[Statement, int]]] = {}
    for statement in statements:
        where = positions(statement)
        for index, access in enumerate(statement.accesses):
            rows = []
            for row in access.coefficients:
                full = [0] * count
                for position, coefficient in zip(where, row, strict=False):
                    full[position] += coefficient
                rows.append(tuple(full))
            key = (access.memref, tuple(rows), access.is_write, access.affine)
            groups.setdefault(key, []).append((statement, index))
    refs = []
    for (memref, rows, writes, affine), members in groups.items():
        first = members[0][0].accesses[members[0][1]]
        constants = [s.accesses[i].constants for s, i in members]
        spread = []
        for dim in range(len(rows)):
            values = [v for c in constants if dim < len(c) and (v := c[dim]) is not None]
            spread.append(max(values) - min(values) if values else 0)
        shape = first.shape if affine else tuple(None for _ in first.shape)
        refs.append(
            Ref(memref, rows, tuple(spread), shape, first.element_bytes, writes, len(members))
        )
    return tuple(refs)


def restricted(dependences: isl.UnionMap, names: set[str]) -> isl.UnionMap:
    """The dependences between the statements named."""
    kept = [
        relation
        for relation in _maps(dependences)
        if relation.get_tuple_name(isl.dim_type.in_) in names
        and relation.get_tuple_name(isl.dim_type.out) in names
    ]
    result = isl.UnionMap.empty(dependences.get_space())
    for relation in kept:
        result = result.union(isl.UnionMap.from_map(relation))
    return result


def _ragged(loop: AffineForOp, band: list[AffineForOp]) -> bool:
    """Whether `loop`'s bounds depend on another loop of `band` (a triangle)."""
    ivs = {id(other.induction_variable) for other in band if other is not loop}
    bounds = [bound for bound in (loop.lower, loop.upper) if bound is not None]
    return any(
        use.value is not None and id(use.value) in ivs for bound in bounds for use in bound.operands
    )


def _maps(union: isl.UnionMap) -> list[isl.Map]:
    found: list[isl.Map] = []
    union.foreach_map(found.append)
    return found


def _operations(statements: list[Statement]) -> int:
    """Arithmetic ops (not on indices) in the blocks of the statements' accesses."""
    blocks: dict[int, Block] = {}
    for statement in statements:
        for access in statement.accesses:
            block = access.op.parent_block
            if block is not None:
                blocks[id(block)] = block
    count = 0
    for block in blocks.values():
        for op in block.operations:
            if isinstance(op, AffineForOp | AffineAccessOp | MemRefAccessOp):
                continue
            if op.name.startswith(("arith.", "math.")) and not all(
                isinstance(result.type, IndexType) for result in op.results
            ):
                count += 1
    return max(1, count)
