"""A quick refutation of a rewrite, before the exact dataflow comparison.

The exact comparison (`poly.equivalence.compare`) computes the dataflow of the
rewritten window (every read's last write), which is most of a proof's cost.
Most fusions tried and refused fail in a way that needs no last-write search.
Given the original's dataflow (which the comparison computes once per pair and
keeps), the rewrite's schedule and the origin of each new instance, a new read
cannot see the write the original read saw when

1. no copy of that write runs before it (`source_missing`), or
2. some other write of the same element runs before it with no copy of that
   write in between (`source_overwritten`), including a read of an initial value
   that now comes after a write; or
3. for the final contents of a live memref: some other write of the element
   runs after every copy of the original's last write (`final_overwritten`).

Each condition is checked with relations, emptiness and differences only (no
optimum searched), so it costs a fraction of the exact comparison; each one
found is a mismatch the exact comparison would report too (the read would see
another write's origin), so a refuted rewrite is refused without it. A rewrite
that passes still gets the exact comparison.
"""

from __future__ import annotations

import islpy as isl

from affine_lsp.poly import (
    IslSession,
    Window,
    maps_of,
    original_flow,
    union_of_maps,
    union_of_sets,
)


def refutation(
    session: IslSession,
    original: Window,
    new: Window,
    origin: isl.UnionMap,
    live: set[str],
    undefined: set[str],
) -> str | None:
    """Which condition (module docstring) shows `new` is not equivalent, or None."""

    def run() -> str | None:
        dependence, fresh = original_flow(original, live)
        schedule = new.schedule()
        times = schedule.range()
        if times.is_empty():
            return None
        space = isl.Set.from_union_set(times).get_space()
        earlier = isl.UnionMap.from_map(isl.Map.lex_gt(space))  # time -> earlier times
        reads, writes = new.reads(), new.writes()
        source = dependence.reverse()  # original read -> the write it saw
        with_source = origin.intersect_domain(reads.domain()).apply_range(source)
        copies = with_source.apply_range(origin.reverse())  # new read -> copies of its write
        copy_times = copies.apply_domain(schedule).apply_range(schedule)
        before = copy_times.intersect(earlier)
        needed = with_source.domain().apply(schedule)
        if not needed.subtract(before.domain()).is_empty():
            return "source_missing"
        same = reads.apply_range(writes.reverse())  # new read -> writes of its element
        same = same.apply_domain(schedule).apply_range(schedule).intersect(earlier)
        if undefined:
            garbage = union_of_sets(
                [s.access.domain() for s in original.statements if s.array in undefined],
                session.ctx,
            )
            dont_care = origin.intersect_range(fresh.intersect(garbage)).domain()
            same = same.subtract_domain(dont_care.apply(schedule))
        shadowed = before.apply_range(earlier)  # writes before a copy that is before the read
        if not same.subtract(shadowed).subtract(copy_times).is_empty():
            return "source_overwritten"
        finals = [
            m
            for m in maps_of(source)
            if (m.get_tuple_name(isl.dim_type.in_) or "").startswith("F_")
        ]
        if not finals:
            return None
        last = union_of_maps(finals, session.ctx)  # F_<array>[cell] -> its last write
        last_copies = last.apply_range(origin.reverse()).apply_range(schedule)
        others = union_of_maps(
            [
                m.reverse().set_tuple_name(
                    isl.dim_type.in_, "F_" + (m.get_tuple_name(isl.dim_type.out) or "")[2:]
                )
                for m in maps_of(writes)
            ],
            session.ctx,
        )
        others = others.intersect_domain(last.domain()).apply_range(schedule)
        later = others.subtract(last_copies.apply_range(earlier)).subtract(last_copies)
        return None if later.is_empty() else "final_overwritten"

    return session.run(run, "a quick check of the rewrite")
