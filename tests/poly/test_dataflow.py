"""The dataflow every proof rests on: isl's answers, checked exactly."""

from __future__ import annotations

import islpy as isl
import pytest

from affine_lsp.poly import Budget, IslSession, dataflow
from affine_lsp.poly.dataflow import Dataflow, _is_latest, last_images
from affine_lsp.transforms.loops import INTERCHANGE, TILE, Spec, proof
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


def _question(session: IslSession, reads: str, writes: str, schedule: str):
    return tuple(session.union_map(text) for text in (reads, writes, schedule))


def test_isl_s_wrong_last_write_is_caught_and_replaced_by_one_that_checks():
    """isl's compute_flow gives this read the wrong write from n = 15 on."""
    session = IslSession(UNBOUNDED)  # (enumerating the points takes many operations)
    question = _question(session, TILED_READS, TILED_WRITES, TILED_SCHEDULE)
    flow = Dataflow(session, *question)
    for n in range(2, 22):
        fixed = [_fixed(relation, n) for relation in question]
        assert _pairs(_fixed(flow.dependence, n)) == _last_writes_by_enumeration(*fixed)


FIRST_ROW_TWICE = (
    "[n] -> { R[i, j] -> A[i - 1, j + 1] : 1 <= i < 6 and 0 <= j < n; "
    "F[i] -> A[i, 0] : 0 <= i < 6 }",
    "[n] -> { W[i, j] -> A[i, j] : 1 <= i < 6 and 0 <= j < n }",
    "[n] -> { R[i, j] -> [0, i, j, 0] : 1 <= i < 6 and 0 <= j < n; "
    "W[i, j] -> [0, i, j, 1] : 1 <= i < 6 and 0 <= j < n; F[i] -> [1, i, 0, 0] : 0 <= i < 6 }",
)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_a_right_answer_is_kept(n):
    session = IslSession(UNBOUNDED)
    question = _question(session, *FIRST_ROW_TWICE)
    flow = Dataflow(session, *question)
    fixed = [_fixed(relation, n) for relation in question]
    assert _pairs(_fixed(flow.dependence, n)) == _last_writes_by_enumeration(*fixed)
    reads = fixed[0]
    sourced = {(name, at) for _, _, name, at in _pairs(_fixed(flow.dependence, n))}
    unwritten = {(name, at) for name, at, _, _ in _pairs(reads)} - sourced
    assert _pairs(_fixed(flow.fresh.identity(), n)) == {
        (name, at, name, at) for name, at in unwritten
    }


@pytest.mark.parametrize(
    "found, latest",
    [
        ("{ A[i] -> [i] : 0 <= i < 9 }", True),
        ("{ A[i] -> [i - 1] : 0 <= i < 9 }", False),  # a larger image exists
        ("{ A[i] -> [i] : 0 <= i < 8 }", False),  # A[8] has no image
        ("{ A[i] -> [i + 1] : 0 <= i < 9 }", False),  # not an image of A[i]
        ("{ A[i] -> [t] : 0 <= i < 9 and i - 1 <= t <= i }", False),  # two images
    ],
)
def test_is_latest_checks_without_searching(found, latest):
    session = IslSession(UNBOUNDED)
    relation = session.union_map("{ A[i] -> [t] : 0 <= t <= i < 9 }")
    assert _is_latest(session.union_map(found), relation) is latest


def test_last_images_of_a_relation():
    session = IslSession(UNBOUNDED)
    relation = session.union_map("{ A[i] -> [t] : 0 <= t <= i < 9; B[i] -> [t] : i <= t < 5 }")
    expected = session.union_map("{ A[i] -> [i] : 0 <= i < 9; B[i] -> [4] : i < 5 }")
    assert last_images(session, relation).is_equal(expected)


def test_proofs_rest_on_no_unchecked_dataflow(monkeypatch):
    """A transformation or a fusion whose dataflow fails the check is refused. (A
    reordering is first shown without isl's dataflow, by the order of its dependent
    pairs: that path is switched off here so that the comparison runs.)"""
    monkeypatch.setattr(dataflow, "_is_latest", lambda found, relation: False)
    monkeypatch.setattr(proof, "keeps_every_dependence", lambda *arguments: False)
    for text, needle, spec in (
        (MATMUL, "affine.for %i", Spec(TILE, sizes=(32, 32))),
        (STENCIL, "affine.for %i", Spec(INTERCHANGE, skew=1)),
    ):
        assert "isl named a wrong last write" in refused(text, needle, spec)
    fusion = pair(SHIFTED, "@shifted")
    assert fusion.best() is None
    for depth in fusion.depths():
        assert "isl named a wrong last write" in (fusion.candidate(depth).reason or "")


def test_an_answer_is_kept_for_the_same_question_in_another_session(monkeypatch):
    with dataflow.answers_kept():
        first = Dataflow(IslSession(UNBOUNDED), *_question(IslSession(UNBOUNDED), *FIRST_ROW_TWICE))
        asked: list[int] = []
        checked_flow = dataflow._checked_flow

        def counted(*arguments):
            asked.append(1)
            return checked_flow(*arguments)

        monkeypatch.setattr(dataflow, "_checked_flow", counted)
        session = IslSession(UNBOUNDED)
        again = Dataflow(session, *_question(session, *FIRST_ROW_TWICE))
        assert not asked
        assert again.dependence.is_equal(session.union_map(first.dependence.to_str()))
        assert again.fresh.is_equal(isl.UnionSet.read_from_str(session.ctx, first.fresh.to_str()))
    Dataflow(session, *_question(session, *FIRST_ROW_TWICE))
    assert asked  # (outside the stretch, nothing is kept)
