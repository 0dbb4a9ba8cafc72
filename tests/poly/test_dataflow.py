"""The dataflow every proof rests on: isl's answer, confirmed by asking a second way."""

from __future__ import annotations

import islpy as isl
import pytest

from affine_lsp.poly import Budget, IslSession
from affine_lsp.poly.dataflow import Dataflow, DataflowDisagrees, Latest
from affine_lsp.transforms.loops import INTERCHANGE, TILE, Spec
from tests.fusion.helpers import pair
from tests.fusion.test_engine import SHIFTED
from tests.loops.fixtures import MATMUL, STENCIL
from tests.loops.helpers import refused

# The tiled code of tests/loops/test_band.py's REDUCE_INTO_ROW (3x3 tiles of `%i` and
# of `%j = 2 to %n step 2`), as the proof models it: S1 reads and S2 writes
# %B0[2, i] at every (i tile, j tile, i, j), one after the other.
DOMAIN = (
    "(_d0 + 1) mod 3 = 0 and (_d1 - 2) mod 6 = 0 and _d3 mod 2 = 0 and 2 <= _d0 <= 7 "
    "and _d1 >= 2 and _d0 <= _d2 <= _d0 + 2 and _d1 <= _d3 <= _d1 + 5 and _d3 < n"
)
TILED_READS = f"[n] -> {{ S1[_d0, _d1, _d2, _d3] -> M_B0[2, _d2] : {DOMAIN} }}"
TILED_WRITES = f"[n] -> {{ S2[_d0, _d1, _d2, _d3] -> M_B0[2, _d2] : {DOMAIN} }}"
TILED_SCHEDULE = (
    f"[n] -> {{ S1[_d0, _d1, _d2, _d3] -> [1, _d0, 1, _d1, 1, _d2, 1, _d3, 3] : {DOMAIN}; "
    f"S2[_d0, _d1, _d2, _d3] -> [1, _d0, 1, _d1, 1, _d2, 1, _d3, 7] : {DOMAIN} }}"
)

UNBOUNDED = Budget(max_operations=None, time_limit=None)


def _pairs(relation: isl.UnionMap) -> set[tuple[str, tuple[int, ...], str, tuple[int, ...]]]:
    """Every pair of a bounded relation, as (name, point, name, point)."""
    found = set()

    def each(relation: isl.Map) -> None:
        source = relation.dim(isl.dim_type.in_)
        names = relation.get_tuple_name(isl.dim_type.in_), relation.get_tuple_name(isl.dim_type.out)

        def point(p: isl.Point) -> None:
            values = [
                p.get_coordinate_val(isl.dim_type.set, k).to_python()
                for k in range(relation.wrap().dim(isl.dim_type.set))
            ]
            found.add((names[0], tuple(values[:source]), names[1], tuple(values[source:])))

        relation.wrap().foreach_point(point)

    relation.foreach_map(each)
    return found


def _last_writes_by_enumeration(reads, writes, schedule) -> set:
    """write -> read of the last earlier write of the same element, point by point."""
    time = {(a, p): t for a, p, _, t in _pairs(schedule)}
    found = set()
    for read, at, array, element in _pairs(reads):
        earlier = [
            (time[(write, when)], write, when)
            for write, when, other, cell in _pairs(writes)
            if (other, cell) == (array, element) and time[(write, when)] < time[(read, at)]
        ]
        if earlier:
            _, write, when = max(earlier)
            found.add((write, when, read, at))
    return found


def _fixed(relation: isl.UnionMap, n: int) -> isl.UnionMap:
    context = isl.Set.read_from_str(relation.get_ctx(), f"[n] -> {{ : n = {n} }}")
    return relation.intersect_params(context)


def test_confirm_refuses_isl_s_answer_exactly_when_it_is_wrong():
    session = IslSession(UNBOUNDED)  # (enumerating the points takes many operations)
    reads, writes, schedule = (
        session.union_map(text) for text in (TILED_READS, TILED_WRITES, TILED_SCHEDULE)
    )
    flow = Dataflow(session, reads, writes, schedule)
    right = all(
        _pairs(_fixed(flow.dependence, n))
        == _last_writes_by_enumeration(*(_fixed(r, n) for r in (reads, writes, schedule)))
        for n in range(2, 22)
    )
    if right:  # (an isl that no longer has the fault: nothing to refuse)
        flow.confirm()
    else:
        with pytest.raises(DataflowDisagrees):
            flow.confirm()


@pytest.mark.parametrize("n", [0, 1, 5])
def test_a_right_answer_is_confirmed(n):
    session = IslSession(UNBOUNDED)
    reads = session.union_map(
        "[n] -> { R[i, j] -> A[i - 1, j + 1] : 1 <= i < 6 and 0 <= j < n; "
        "F[i] -> A[i, 0] : 0 <= i < 6 }"
    )
    writes = session.union_map("[n] -> { W[i, j] -> A[i, j] : 1 <= i < 6 and 0 <= j < n }")
    schedule = session.union_map(
        "[n] -> { R[i, j] -> [0, i, j, 0] : 1 <= i < 6 and 0 <= j < n; "
        "W[i, j] -> [0, i, j, 1] : 1 <= i < 6 and 0 <= j < n; F[i] -> [1, i, 0, 0] : 0 <= i < 6 }"
    )
    flow = Dataflow(session, reads, writes, schedule)
    flow.confirm()
    fixed = (_fixed(r, n) for r in (reads, writes, schedule))
    assert _pairs(_fixed(flow.dependence, n)) == _last_writes_by_enumeration(*fixed)
    latest = Latest(session, writes.reverse().apply_range(schedule))
    latest.confirm()


def test_proofs_accept_nothing_unconfirmed(monkeypatch):
    """A transformation or a fusion whose dataflow isl cannot confirm is refused."""

    def disagree(self) -> None:
        raise DataflowDisagrees()

    monkeypatch.setattr(Dataflow, "confirm", disagree)
    for text, needle, spec in (
        (MATMUL, "affine.for %i", Spec(TILE, sizes=(32, 32))),
        (STENCIL, "affine.for %i", Spec(INTERCHANGE, skew=1)),
    ):
        assert "isl gave two different last writes" in refused(text, needle, spec)
    fusion = pair(SHIFTED, "@shifted")
    assert fusion.best() is None
    for depth in fusion.depths():
        assert "isl gave two different last writes" in (fusion.candidate(depth).reason or "")
