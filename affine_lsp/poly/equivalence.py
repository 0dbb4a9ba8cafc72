"""Is a rewritten window equivalent to the original? An exact dataflow argument.

Every statement instance of the transformed window has an origin: the instance
of the original window it repeats (`origin`, an isl relation built by the
rewrite). The rewrite is equivalent when
  1. every transformed instance has an origin (nothing new is computed) and
     touches the same elements of live memrefs as its origin, and
  2. every transformed read (and the final contents of every live memref, as a
     read at the end) sees the value written by the instance whose origin is
     the write the original read saw — or the initial value in both.
By induction over execution order, every transformed instance then computes
what its origin computed, and every live memref ends with the same contents.
Only the values the parameters take where the window runs count (the original
window's `context`: the iterations of the loops around it, strides included).
Reads and last writers come from isl's exact dataflow analysis
(`isl_union_access_info_compute_flow`), checked exactly before they are used
(`dataflow`). Recomputation (an origin repeated) and a kept producer are fine as
long as 2 holds; in-place updates repeated, writes moved past reads (WAR),
reordered writes (WAW), reads moved before their producers (RAW) all break it.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from affine_lsp.poly.dataflow import last_images
from affine_lsp.poly.isl_util import sets_of, union_of_maps, union_of_sets
from affine_lsp.poly.program import Window
from affine_lsp.poly.session import IslSession


@dataclass
class Mismatch:
    """Transformed instances that would not see what the original saw.

    kind: "outside" (instances the original never ran), "cells" (instances that
    touch other elements of a live memref than their origin), "bounds" (accesses
    outside a memref), "read" (a read sees a different write) or "final" (the
    final contents come from a different write).
    `seen` and `expected` map those instances to the origin of the write they
    see and to the write the original saw (empty: the initial value).
    """

    kind: str
    statement: str
    instances: isl.Set
    seen: isl.UnionMap | None = None
    expected: isl.UnionMap | None = None


def _final_name(array: str) -> str:
    return "F_" + array[2:]


def _footprints(window: Window, arrays: set[str]) -> dict[str, isl.Set]:
    found: dict[str, isl.Set] = {}
    for statement in window.statements:
        if statement.is_write and statement.array in arrays:
            cells = statement.access.range()
            previous = found.get(statement.array)
            found[statement.array] = cells if previous is None else previous.union(cells)
    return found


def _final_reads(footprints: dict[str, isl.Set], window: Window) -> isl.UnionMap:
    """A read of every possibly written element of each live array, after the window
    (`F_<array>[cell] -> M_<array>[cell]`)."""
    accesses = [
        cells.identity().set_tuple_name(isl.dim_type.in_, _final_name(array))
        for array, cells in footprints.items()
    ]
    return union_of_maps(accesses, window.session.ctx)


def _last_writes(window: Window, finals: isl.UnionMap) -> tuple[isl.UnionMap, isl.UnionSet]:
    """What the final reads see: (last write instance -> final read, final reads of
    cells the window never writes). A final read comes after every write, so its
    source is the write of its cell with the latest schedule time (the schedule is
    injective); computed directly, as isl's dataflow analysis would but faster."""
    writes = window.writes()
    schedule = window.schedule()
    latest = last_images(window.session, writes.reverse().apply_range(schedule))
    writer = latest.apply_range(schedule.reverse()).intersect(writes.reverse())
    dependence = finals.apply_range(writer).reverse()
    return dependence, finals.domain().subtract(dependence.range())


Flow = tuple[isl.UnionMap, isl.UnionSet, isl.UnionSet]


def _flow(window: Window, finals: isl.UnionMap) -> Flow:
    """(must dependences write -> read, reads with no source, all reads) of the
    window's reads and the final reads `finals`."""
    reads = window.reads()
    flow = window.dataflow(reads, window.writes())
    final_dependence, final_fresh = _last_writes(window, finals)
    dependence = flow.dependence.union(final_dependence)
    fresh = flow.fresh.union(final_fresh)
    return dependence, fresh, reads.domain().union(finals.domain())


def _accesses(window: Window, arrays: set[str]) -> isl.UnionMap:
    return union_of_maps(
        [s.access for s in window.statements if s.array in arrays], window.session.ctx
    )


def _original_flow(original: Window, live: set[str]) -> tuple[dict[str, isl.Set], Flow]:
    """The original's dataflow (cached on the window: it is the same for every candidate)."""
    cache: dict[frozenset[str], tuple[dict[str, isl.Set], Flow]]
    cache = original.__dict__.setdefault("_flows", {})
    key = frozenset(live)
    if key not in cache:
        footprints = _footprints(original, live)
        cache[key] = (footprints, _flow(original, _final_reads(footprints, original)))
    return cache[key]


def original_flow(original: Window, live: set[str]) -> tuple[isl.UnionMap, isl.UnionSet]:
    """The original window's dataflow as `compare` uses it (and keeps, on the window):
    last write -> read, the reads and the final reads (`F_<array>[cell]`) of the
    `live` memrefs; and the reads no write precedes."""
    _, (dependence, fresh, _) = _original_flow(original, live)
    return dependence, fresh


def compare(
    session: IslSession,
    original: Window,
    transformed: Window,
    origin: isl.UnionMap,
    live: set[str],
    bounds: dict[str, tuple[int, ...]] | None = None,
    undefined: set[str] | None = None,
) -> list[Mismatch]:
    """The ways `transformed` differs from `original` (empty: equivalent).

    `bounds` gives the static shapes of memrefs whose accesses may have moved
    (private buffers): every transformed access to them must stay inside.
    `undefined` names memrefs whose contents are undefined when the window starts
    (fresh allocations): an original read of such an undefined element may read
    anything after the rewrite too."""

    def run() -> list[Mismatch]:
        mismatches: list[Mismatch] = []
        originals = original.instances()
        covered = origin.intersect_range(originals).domain()
        outside = transformed.instances().subtract(covered).intersect_params(original.context)
        for piece in sets_of(outside):
            if not piece.is_empty():
                mismatches.append(Mismatch("outside", piece.get_tuple_name(), piece))
        if mismatches:
            return mismatches
        # Live memrefs keep their elements: every instance touches what its origin touched.
        touched = _accesses(transformed, live)
        expected_cells = origin.apply_range(_accesses(original, live))
        moved = touched.subtract(expected_cells).domain()
        moved = moved.union(
            expected_cells.intersect_domain(touched.domain()).subtract(touched).domain()
        )
        moved = moved.intersect_params(original.context)
        for piece in sets_of(moved):
            if not piece.is_empty():
                mismatches.append(Mismatch("cells", piece.get_tuple_name(), piece))
        for statement in transformed.statements:
            shape = (bounds or {}).get(statement.array)
            if shape is None:
                continue
            ranges = " and ".join(f"0 <= o{k} < {n}" for k, n in enumerate(shape)) or "true"
            cells = ", ".join(f"o{k}" for k in range(len(shape)))
            box = isl.Set.read_from_str(session.ctx, f"{{ {statement.array}[{cells}] : {ranges} }}")
            inside = statement.access.intersect_params(transformed.context)
            outside_box = inside.subtract_range(box).domain()
            if not outside_box.is_empty():
                mismatches.append(Mismatch("bounds", statement.name, outside_box))
        if mismatches:
            return mismatches
        footprints, (o_dep, o_fresh, _) = _original_flow(original, live)
        n_finals = _final_reads(footprints, transformed)
        n_dep, n_fresh, n_reads = _flow(transformed, n_finals)
        final_identity = n_finals.domain().identity()
        full_origin = origin.union(final_identity)
        seen = n_dep.reverse().apply_range(full_origin)
        expected = full_origin.intersect_domain(n_reads).apply_range(o_dep.reverse())
        should_be_fresh = full_origin.intersect_range(o_fresh).domain().intersect(n_reads)
        bad = seen.subtract(expected).domain().union(expected.subtract(seen).domain())
        bad = bad.union(n_fresh.subtract(should_be_fresh))
        bad = bad.union(should_be_fresh.subtract(n_fresh))
        if undefined:
            garbage = [s.access.domain() for s in original.statements if s.array in undefined]
            dont_care = full_origin.intersect_range(
                o_fresh.intersect(union_of_sets(garbage, session.ctx))
            ).domain()
            bad = bad.subtract(dont_care)
        for piece in sets_of(bad.intersect_params(original.context).coalesce()):
            if piece.is_empty():
                continue
            name = piece.get_tuple_name()
            kind = "final" if name.startswith("F_") else "read"
            mismatches.append(
                Mismatch(
                    kind,
                    name,
                    piece,
                    seen.intersect_domain(isl.UnionSet.from_set(piece)),
                    expected.intersect_domain(isl.UnionSet.from_set(piece)),
                )
            )
        return mismatches

    return session.run(run, "the dataflow comparison")


def keeps_every_dependence(
    session: IslSession, original: Window, transformed: Window, origin: isl.UnionMap
) -> bool:
    """A sufficient condition for equivalence, far cheaper than the dataflow
    comparison when a rewrite only reorders: `origin` is a bijection from the
    transformed instances onto the original ones, every instance touches the
    elements its origin touched, and every two original instances touching one
    element (one of them writing) run in the same order in the transformed window.
    Then every read sees the write its origin saw (an earlier write of its element
    would break a WAR or WAW pair, a later source a RAW one) and the final contents
    agree. Only the values of the parameters the window runs for count (its
    context: the iterations of the loops around it). False when not shown
    (`compare` decides then)."""

    def run() -> bool:
        # The values the loops around the window take (its code runs only for those).
        context = original.context.intersect(transformed.context)
        originals = original.instances().intersect_params(context)
        instances = transformed.instances().intersect_params(context)
        relation = origin.intersect_domain(instances).intersect_range(originals)
        if not (relation.is_single_valued() and relation.is_injective()):
            return False
        if not (relation.domain().is_equal(instances) and relation.range().is_equal(originals)):
            return False
        # Every original instance, through its copy, touches what it touched: both
        # sides are functions of the original instances (the origins are a bijection).
        touched = union_of_maps([s.access for s in transformed.statements], session.ctx)
        accesses = union_of_maps([s.access for s in original.statements], session.ctx)
        if not relation.reverse().apply_range(touched).is_subset(accesses):
            return False
        old = original.schedule().intersect_params(context)
        new = relation.reverse().apply_range(transformed.schedule())
        writes, reads = original.writes(), original.reads()
        same = writes.apply_range(writes.union(reads).reverse())
        same = same.union(reads.apply_range(writes.reverse()))
        if same.is_empty():
            return True
        before = old.apply_range(_lex(old, isl.Map.lex_lt)).apply_range(old.reverse())
        times = same.intersect(before).apply_domain(new).apply_range(new)
        return bool(times.intersect(_lex(new, isl.Map.lex_ge)).is_empty())

    return bool(session.run(run, "the order of the dependences"))


def _lex(schedule: isl.UnionMap, order: object) -> isl.UnionMap:
    """`order` (lex_lt, lex_ge) on the time space of `schedule`."""
    space = isl.Set.from_union_set(schedule.range()).get_space()
    return isl.UnionMap.from_map(order(space))  # type: ignore[operator]
