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

from itertools import permutations

import islpy as isl

from affine_lsp.ir import AffineAccessOp, AffineForOp, IndexType, MemRefAccessOp
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


def _band_deltas(relation: isl.Map, depth: int) -> isl.Set:
    inputs = relation.dim(isl.dim_type.in_)
    outputs = relation.dim(isl.dim_type.out)
    band = relation.project_out(isl.dim_type.in_, depth, inputs - depth)
    band = band.project_out(isl.dim_type.out, depth, outputs - depth)
    band = band.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
    return band.deltas()


def body_of(
    nest: Nest, band: list[AffineForOp], parallel: list[bool], alone: list[bool] | None = None
) -> Body:
    """The cost model's view of `band` (a perfect band from the nest's root)."""
    innermost = band[-1]
    statements = [s for s in nest.statements if any(loop is innermost for loop in s.loops)]
    inner: list[AffineForOp] = []
    for statement in statements:
        for loop in statement.loops[len(band) :]:
            if not any(loop is x for x in inner):
                inner.append(loop)
    order = band + inner
    groups: dict[tuple, list[tuple[Statement, int]]] = {}
    for statement in statements:
        positions = [next(k for k, x in enumerate(order) if x is loop) for loop in statement.loops]
        for index, access in enumerate(statement.accesses):
            rows = []
            for row in access.coefficients:
                full = [0] * len(order)
                for position, coefficient in zip(positions, row, strict=False):
                    full[position] = coefficient
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
    alone = alone or [True] * len(band)
    loops = tuple(
        Loop(iv_name(loop), nest.trip(loop), flag, free)
        for loop, flag, free in zip(band, parallel, alone, strict=True)
    )
    inner_loops = tuple(Loop(iv_name(loop), nest.trip(loop)) for loop in inner)
    return Body(loops, inner_loops, tuple(refs), _operations(innermost))


def _operations(loop: AffineForOp) -> int:
    """Arithmetic ops (not on indices) under `loop`."""
    count = 0
    for op in loop.walk():
        if isinstance(op, AffineForOp | AffineAccessOp | MemRefAccessOp):
            continue
        if op.name.startswith(("arith.", "math.")) and not all(
            isinstance(result.type, IndexType) for result in op.results
        ):
            count += 1
    return max(1, count)
