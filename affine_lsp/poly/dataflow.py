"""Exact dataflow: the write each read sees, checked before a proof rests on it.

Every proof (fusion's and the loop transformations') compares dataflows, so a
wrong answer from isl could make a proof accept a rewrite it should refuse (or
refuse a legal one). isl's dataflow analysis (`compute_flow`) and its parametric
`lexmax` have been seen to name a wrong last write: in a strided reduction under a
symbolic bound, tiled 3x3, the read at the first iteration of the third tile got
the first tile's last write, skipping the second (islpy 2025.2.5 and 2026.2.2; the
same lexmax over the relation coalesced first is right). So an answer is checked
exactly before it is used, with operations that never search for an optimum
(inclusion, emptiness, single-valuedness): the write each read is given accesses
the same element earlier, every read with such a write has one, and no write of
that element comes between them (for the final contents: none after it). An
answer that fails is replaced by the lexmax over the coalesced relation, if that
one passes; otherwise `WrongDataflow` stops the proof. Instances of strided loops are
counted without existential variables for the question (`strides`), which is far
cheaper for isl, and the answer mapped back. Within `answers_kept()` the checked
answers of the last questions are kept by their text: a proof asks again about the
same original (each pair of `fuse --all` with another window of the same code), and
the same question has the same answer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import islpy as isl

from affine_lsp.poly.session import IslSession, PolyError
from affine_lsp.poly.strides import compressions

_KEPT = 32
_LOCAL = threading.local()  # .answers: the answers kept in this thread, if any


@contextmanager
def answers_kept() -> Iterator[None]:
    """Within this stretch (in this thread), keep the checked answers of the last
    `_KEPT` dataflow questions by their text: (reads, writes, schedule) -> (dependence,
    fresh), read back into the session that asks again. Only for a stretch, so that a
    question's cost (what a cap of isl operations counts) never depends on what
    other requests asked before it."""
    previous = getattr(_LOCAL, "answers", None)
    if previous is None:
        _LOCAL.answers = OrderedDict()
    try:
        yield
    finally:
        _LOCAL.answers = previous


class WrongDataflow(PolyError):
    """Neither of isl's answers for the last writes passed the exact check."""

    def __init__(self) -> None:
        super().__init__(
            "isl named a wrong last write for some read (its answers failed the exact "
            "check), so no proof rests on them"
        )


class Dataflow:
    """The last write before each read of the same element, in the order of the
    schedule (injective, every statement into one time space), checked exactly.
    `dependence`: last write instance -> read instance; `fresh`: the read instances
    no write precedes (they see the initial contents)."""

    def __init__(
        self,
        session: IslSession,
        reads: isl.UnionMap,
        writes: isl.UnionMap,
        schedule: isl.UnionMap,
    ) -> None:
        session.check_time()
        with session.errors("the dataflow"):
            kept: OrderedDict[tuple[str, str, str], tuple[str, str]] | None
            kept = getattr(_LOCAL, "answers", None)
            key = (reads.to_str(), writes.to_str(), schedule.to_str()) if kept is not None else None
            known = kept.get(key) if kept is not None and key is not None else None
            if known is not None:
                self.dependence = isl.UnionMap.read_from_str(session.ctx, known[0])
                self.fresh = isl.UnionSet.read_from_str(session.ctx, known[1])
                return
            bijection = compressions(schedule.domain())
            if bijection is None:
                self.dependence, self.fresh = _checked_flow(reads, writes, schedule)
            else:  # asked of the instances counted without existentials, mapped back
                inverse = bijection.reverse()
                dependence, fresh = _checked_flow(
                    reads.apply_domain(inverse),
                    writes.apply_domain(inverse),
                    schedule.apply_domain(inverse),
                )
                self.dependence = dependence.apply_domain(bijection).apply_range(bijection)
                self.fresh = fresh.apply(bijection)
            if kept is not None and key is not None:
                kept[key] = (self.dependence.to_str(), self.fresh.to_str())
                if len(kept) > _KEPT:
                    kept.popitem(last=False)


def _checked_flow(
    reads: isl.UnionMap, writes: isl.UnionMap, schedule: isl.UnionMap
) -> tuple[isl.UnionMap, isl.UnionSet]:
    """isl's answer (last write instance -> read instance, the reads no write
    precedes), checked exactly, or the lexmax over the coalesced relation if that one
    passes; else `WrongDataflow`."""
    flow = _flow_info(reads, writes, schedule).compute_flow()
    dependence: isl.UnionMap = flow.get_must_dependence()
    fresh: isl.UnionSet = flow.get_must_no_source().domain()
    # read -> the times of the earlier writes of its element
    times = reads.apply_range(writes.reverse()).apply_domain(schedule)
    times = times.apply_range(schedule)  # read time -> write time, same element
    earlier = times.intersect(_lex_order(times, isl.Map.lex_gt))
    earlier = earlier.apply_domain(schedule.reverse())
    unwritten = reads.domain().subtract(earlier.domain())
    given = dependence.reverse().apply_range(schedule)
    if not (fresh.is_equal(unwritten) and _is_latest(given, earlier)):
        latest = earlier.coalesce().lexmax()
        if not _is_latest(latest, earlier):
            raise WrongDataflow()
        dependence = latest.apply_range(schedule.reverse()).reverse()
        fresh = unwritten
    return dependence, fresh


def last_images(session: IslSession, relation: isl.UnionMap) -> isl.UnionMap:
    """The lexicographically largest image of each element of `relation` (one
    range space), by `lexmax`, checked exactly; if it fails, the lexmax of the
    relation coalesced, if that passes."""
    session.check_time()
    with session.errors("the last writes"):
        found = relation.lexmax()
        if not _is_latest(found, relation):
            found = relation.coalesce().lexmax()
            if not _is_latest(found, relation):
                raise WrongDataflow()
        return found


def _is_latest(found: isl.UnionMap, relation: isl.UnionMap) -> bool:
    """Whether `found` gives each element of `relation` one of its images, and no
    image of it in `relation` is lexicographically larger (no optimum searched)."""
    larger = found.apply_range(_lex_order(found, isl.Map.lex_lt)).intersect(relation)
    return bool(
        found.is_subset(relation)
        and found.is_single_valued()
        and found.domain().is_equal(relation.domain())
        and larger.is_empty()
    )


def _lex_order(relation: isl.UnionMap, order: Callable[[isl.Space], isl.Map]) -> isl.UnionMap:
    """`order` (`isl.Map.lex_gt`, `isl.Map.lex_lt`) on the one space `relation` maps
    into (nothing, when `relation` is empty)."""
    if relation.is_empty():
        return isl.UnionMap.empty(relation.get_space())
    space = isl.Set.from_union_set(relation.range()).get_space()
    return isl.UnionMap.from_map(order(space))


def _flow_info(
    reads: isl.UnionMap, writes: isl.UnionMap, schedule: isl.UnionMap
) -> isl.UnionAccessInfo:
    """isl's dataflow question, with the schedule given as a tree (one band of the
    `2d+1` schedule). Given as a map (`set_schedule_map`), isl takes another path,
    which found the wrong last write of a read in a loop unrolled by 3 with a
    symbolic bound: its answer changed with how isl held the same sets."""
    info = isl.UnionAccessInfo.from_sink(reads).set_must_source(writes)
    if schedule.is_empty():
        return info.set_schedule_map(schedule)  # (no statements: nothing to order)
    band = isl.MultiUnionPwAff.from_union_map(schedule)
    tree = isl.Schedule.from_domain(schedule.domain()).insert_partial_schedule(band)
    return info.set_schedule(tree)
