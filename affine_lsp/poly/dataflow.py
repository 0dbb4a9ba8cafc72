"""Exact dataflow: the write each read sees, asked of isl in two ways.

Every proof (fusion's and the loop transformations') compares dataflows, so a
wrong answer from isl could make a proof accept a rewrite it should refuse. isl's
dataflow analysis (`compute_flow`) and its parametric `lexmax` have been seen to
name a wrong last write: in a strided reduction under a symbolic bound, tiled
3x3, the read at the first iteration of the third tile got the first tile's last
write, skipping the second (islpy 2025.2.5 and 2026.2.2; the same lexmax over the
relation coalesced first is right). So an answer a proof accepts on is asked
twice, in ways that hold the relations differently (`confirm`), and used only when
both agree; when they differ, `DataflowDisagrees` stops the proof. A proof that
finds a difference needs no second answer: it refuses either way.
"""

from __future__ import annotations

import islpy as isl

from affine_lsp.poly.session import IslSession, PolyError


class DataflowDisagrees(PolyError):
    """isl's two ways of finding the last write of some reads gave different writes."""

    def __init__(self) -> None:
        super().__init__(
            "isl gave two different last writes for the same read (its two dataflow "
            "analyses disagree), so no proof rests on either"
        )


class Dataflow:
    """The last write before each read of the same element, in the order of the
    schedule (injective, every statement into one time space), by isl's
    `compute_flow`. `dependence`: last write instance -> read instance; `fresh`: the
    read instances no write precedes (they see the initial contents). Before a proof
    accepts anything on these answers, `confirm()` asks isl the second way."""

    def __init__(
        self,
        session: IslSession,
        reads: isl.UnionMap,
        writes: isl.UnionMap,
        schedule: isl.UnionMap,
    ) -> None:
        self.session = session
        self._question = (reads, writes, schedule)
        self._confirmed = False
        session.check_time()
        with session.errors("the dataflow"):
            flow = _flow_info(reads, writes, schedule).compute_flow()
            self.dependence: isl.UnionMap = flow.get_must_dependence()
            self.fresh: isl.UnionSet = flow.get_must_no_source().domain()

    def confirm(self) -> None:
        """Raise `DataflowDisagrees` unless the latest earlier write of the same
        element, found by `lexmax` over the coalesced relation, is the same write."""
        if self._confirmed:
            return
        reads, writes, schedule = self._question
        self.session.check_time()
        with self.session.errors("the dataflow"):
            same_element = reads.apply_range(writes.reverse())
            times = same_element.apply_domain(schedule).apply_range(schedule)
            if not times.is_empty():
                time = isl.Set.from_union_set(schedule.range()).get_space()
                times = times.intersect(isl.UnionMap.from_map(isl.Map.lex_gt(time)))
            earlier = times.apply_domain(schedule.reverse())  # read -> earlier write times
            latest = earlier.coalesce().lexmax()
            found = latest.apply_range(schedule.reverse()).intersect(same_element).reverse()
            fresh = reads.domain().subtract(found.range())
            if not (found.is_equal(self.dependence) and fresh.is_equal(self.fresh)):
                raise DataflowDisagrees()
        self._confirmed = True


class Latest:
    """`relation.lexmax()` (`found`); `confirm()` checks it against the lexmax of the
    relation coalesced."""

    def __init__(self, session: IslSession, relation: isl.UnionMap) -> None:
        self.session = session
        self._relation = relation
        self._confirmed = False
        session.check_time()
        with session.errors("the last writes"):
            self.found: isl.UnionMap = relation.lexmax()

    def confirm(self) -> None:
        """Raise `DataflowDisagrees` unless the relation coalesced has the same lexmax."""
        if self._confirmed:
            return
        self.session.check_time()
        with self.session.errors("the last writes"):
            if not self.found.is_equal(self._relation.coalesce().lexmax()):
                raise DataflowDisagrees()
        self._confirmed = True


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
