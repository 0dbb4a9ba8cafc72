"""isl's scheduler over the statements of a nest, its answer as plain data.

The constraints (`isl.ScheduleConstraints` on the statements' domains):
- validity: every dependence (read after write, write after read, write after
  write, memory-based: each pair of instances touching one element, the source
  first), so any schedule isl returns computes what the original computes;
- proximity: the same read-after-write pairs and the reads of one element by
  two instances (reuse), which isl brings close in time (locality);
- coincidence: every dependence, so a band member marked coincident carries none
  (its loop can run in parallel).

The scheduler sees value-based dependences (each read and its last write, each
write after the reads and the write of the value it overwrites: they imply every
memory-based one) on domains cut to a few iterations per loop
(`SCHEDULED_EXTENT`): its search does not depend on sizes but grows with them.
It does not count isl operations either, so it runs in a child process stopped
after its time (`bounded`).

Options (measured on the PolyBench shapes, see `docs/optimize.md`):
`schedule_outer_coincidence` off (on, isl keeps the time loop of a stencil out
of the band to make the first member parallel, and gives up the skews that
time tiling needs), `schedule_serialize_sccs` off, `schedule_maximize_band_depth`
on, and coefficients bounded (`MAX_COEFFICIENT`), which keeps the search small.
All within the session's isl operation cap.

The answer (`Schedule`) is a list of bands in the tree's order: for each, the
statements it schedules, whether its members may be permuted (and so tiled), which
are coincident, and each statement's row per member: integer coefficients of the
statement's loops and a constant (`2t + i + 1` for the shifted second sweep of a
jacobi step). isl's own tree (text) goes along for code generation.
"""

from __future__ import annotations

import math
import os
import resource
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

import islpy as isl

from affine_lsp.poly import BudgetExceeded, IslSession, NotAffine, fraction, single_aff
from affine_lsp.transforms.optimize.nest import Nest, Statement

MAX_COEFFICIENT = 4
"""The largest schedule coefficient isl may choose (skews beyond 4 do not pay)."""


@dataclass(frozen=True)
class Row:
    """One band member for one statement: Σ coefficients[k] * loop_k + constant."""

    coefficients: tuple[int, ...]
    constant: int

    def text(self, names: list[str]) -> str:
        """'2t + i + 1' over the statement's loop names."""
        parts: list[str] = []
        for coefficient, name in zip(self.coefficients, names, strict=False):
            if coefficient == 0:
                continue
            sign = "-" if coefficient < 0 else "+"
            size = abs(coefficient)
            term = name if size == 1 else f"{size}{name}"
            parts.append(f"{sign} {term}")
        if self.constant or not parts:
            parts.append(f"{'-' if self.constant < 0 else '+'} {abs(self.constant)}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]

    @property
    def loop(self) -> int | None:
        """The one loop this member follows (coefficient 1 alone), else None."""
        nonzero = [k for k, c in enumerate(self.coefficients) if c]
        if len(nonzero) == 1 and self.coefficients[nonzero[0]] == 1:
            return nonzero[0]
        return None


@dataclass(frozen=True)
class Band:
    """A band of the schedule tree: `members` schedule dimensions shared by
    `statements`; `outer` dimensions come before it on the path from the root."""

    statements: tuple[str, ...]
    permutable: bool
    coincident: tuple[bool, ...]
    rows: tuple[tuple[Row, ...], ...]  # per statement (as in `statements`), per member
    outer: int

    @property
    def members(self) -> int:
        return len(self.coincident)

    def rows_of(self, statement: str) -> tuple[Row, ...]:
        return self.rows[self.statements.index(statement)]

    def is_permutation(self) -> bool:
        """Every member of every statement follows one loop, with no constant: the
        band is a reordering of the original loops."""
        return all(row.loop is not None and row.constant == 0 for rows in self.rows for row in rows)

    def skewed(self) -> bool:
        return any(
            sum(1 for c in row.coefficients if c) > 1 or any(abs(c) > 1 for c in row.coefficients)
            for rows in self.rows
            for row in rows
        )

    def shifted(self) -> bool:
        return any(row.constant for rows in self.rows for row in rows)


@dataclass(frozen=True)
class Schedule:
    bands: tuple[Band, ...]
    tree: str  # isl's schedule tree (YAML-like text)
    schedule_map: str  # the flattened schedule, statement -> time

    def outermost(self) -> Band | None:
        return next((b for b in self.bands if b.outer == 0), None)

    def describe(self, nest: Nest) -> list[str]:
        """One line per band: '(t, 2t + i, 2t + j) permutable, parallel: -'."""
        lines = []
        by_name = {s.name: s for s in nest.statements}
        for band in self.bands:
            shown = []
            for name, rows in zip(band.statements, band.rows, strict=True):
                names = [n.lstrip("%") for n in by_name[name].loop_names()]
                shown.append(f"{name}: (" + ", ".join(r.text(names) for r in rows) + ")")
            parallel = [k for k, c in enumerate(band.coincident) if c]
            words = "permutable" if band.permutable else "not permutable"
            lines.append(
                f"band at depth {band.outer}: {'; '.join(shown)}; {words}; parallel members: "
                + (", ".join(str(k) for k in parallel) or "none")
            )
        return lines


def dependences(nest: Nest) -> tuple[isl.UnionMap, isl.UnionMap]:
    """(every dependence, the read-after-write ones), memory-based: instance pairs
    of the nest touching one element, the source first, one of them writing."""
    session = nest.session
    reads = nest.accesses(writes=False)
    writes = nest.accesses(writes=True)
    schedule = nest.original_schedule()

    def flow(sinks: isl.UnionMap, sources: isl.UnionMap) -> isl.UnionMap:
        info = isl.UnionAccessInfo.from_sink(sinks).set_may_source(sources)
        return info.set_schedule_map(schedule).compute_flow().get_may_dependence()

    raw = session.run(lambda: flow(reads, writes), "the dependences")
    war = session.run(lambda: flow(writes, reads), "the dependences")
    waw = session.run(lambda: flow(writes, writes), "the dependences")
    every = session.run(lambda: raw.union(war).union(waw).coalesce(), "the dependences")
    return every, raw


def reuse(nest: Nest) -> isl.UnionMap:
    """Pairs of instances reading one element, the first one first."""
    reads = nest.accesses(writes=False)
    schedule = nest.original_schedule()

    def flow() -> isl.UnionMap:
        info = isl.UnionAccessInfo.from_sink(reads).set_may_source(reads)
        return info.set_schedule_map(schedule).compute_flow().get_may_dependence()

    return nest.session.run(flow, "the reuse")


def compute(nest: Nest, seconds: float | None = None) -> Schedule:
    """isl's schedule of the nest's statements (NotAffine when the nest cannot be
    scheduled: `nest.reason`; BudgetExceeded when isl's scheduler takes more than
    `seconds`: its search does not count isl operations, so it runs in a child
    process that is stopped then)."""
    if not nest.schedulable:
        raise NotAffine(f"the nest cannot be scheduled: {nest.reason}")
    session = nest.session
    domains = session.run(lambda: _shrunk(nest), "the schedule")
    validity, flow, reads = session.run(lambda: _value_based(nest, domains), "the dependences")
    proximity = session.run(lambda: flow.union(reads).coalesce(), "the reuse")
    ctx = session.ctx
    ctx.set_schedule_outer_coincidence(0)
    ctx.set_schedule_serialize_sccs(0)
    ctx.set_schedule_maximize_band_depth(1)
    ctx.set_schedule_max_coefficient(MAX_COEFFICIENT)

    def schedule() -> str:
        constraints = isl.ScheduleConstraints.on_domain(domains)
        constraints = constraints.set_validity(validity).set_proximity(proximity)
        constraints = constraints.set_coincidence(validity)
        return str(constraints.compute_schedule())

    text = session.run(lambda: bounded(schedule, seconds), "the schedule")
    if text is None:
        raise BudgetExceeded(f"isl's scheduler took more than {seconds:g} s of CPU time")
    found = session.run(lambda: isl.Schedule.read_from_str(ctx, text), "the schedule")
    bands = _bands(session, found.get_root(), nest)
    flat = session.run(lambda: found.get_map().coalesce(), "the schedule")
    return Schedule(tuple(bands), str(found), str(flat))


SCHEDULED_EXTENT = 24
"""Loops of constant bounds are cut to this many iterations for isl's scheduler: the
skews and shifts of a nest's band do not depend on its sizes (and the realised
schedule is proven on the whole nest), while the scheduler's search grows with
the constants."""


def _shrunk(nest: Nest) -> isl.UnionSet:
    """The statements' domains, each loop of constant bounds cut to its first
    `SCHEDULED_EXTENT` iterations."""
    found = None
    for statement in nest.statements:
        domain = statement.domain
        for position, loop in enumerate(statement.loops):
            trip = nest.trips.get(id(loop))
            if trip is None or trip <= SCHEDULED_EXTENT:
                continue
            low = single_aff(domain.dim_min(position))
            if low is None or not low.is_cst():
                continue
            start = int(fraction(low.get_constant_val()))
            names = ", ".join(f"x{k}" for k in range(statement.depth))
            cut = isl.Set.read_from_str(
                domain.get_ctx(),
                f"{{ {statement.name}[{names}] : x{position} < {start + SCHEDULED_EXTENT} }}",
            )
            cut = cut.align_params(domain.get_space())
            domain = domain.intersect(cut)
        part = isl.UnionSet.from_set(domain)
        found = part if found is None else found.union(part)
    assert found is not None
    return found


def _value_based(
    nest: Nest, domains: isl.UnionSet
) -> tuple[isl.UnionMap, isl.UnionMap, isl.UnionMap]:
    """(validity, flow, reuse) on `domains`: value-based dependences (each read from
    its last write, each write after the reads and the write of the value it
    overwrites), which imply every memory-based one and keep isl's problem small,
    and pairs of reads of one element (reuse)."""
    reads = nest.accesses(writes=False).intersect_domain(domains)
    writes = nest.accesses(writes=True).intersect_domain(domains)
    order = nest.original_schedule().intersect_domain(domains)

    def flow(
        sinks: isl.UnionMap, must: isl.UnionMap | None, may: isl.UnionMap | None
    ) -> isl.UnionMap:
        info = isl.UnionAccessInfo.from_sink(sinks)
        if must is not None:
            info = info.set_must_source(must)
        if may is not None:
            info = info.set_may_source(may)
        return info.set_schedule_map(order).compute_flow().get_may_dependence()

    raw = flow(reads, writes, None)
    waw = flow(writes, writes, None)
    war = flow(writes, writes, reads)
    rar = flow(reads, None, reads)
    return raw.union(waw).union(war).coalesce(), raw, rar


WALL_FACTOR = 10
"""How much longer than its CPU limit the scheduler's child may take in wall-clock
time (on a loaded machine it gets a share of a core)."""


def bounded(thunk: Callable[[], str], seconds: float | None) -> str | None:
    """`thunk()` in a forked child process, its text back through a pipe; None when
    it takes more than `seconds` of CPU time (the child is stopped by its CPU limit,
    so that a loaded machine does not change the answer; a wall-clock limit of
    `WALL_FACTOR` times as much stops a child that waits). Without `seconds`, or
    where processes cannot fork, in this process."""
    if seconds is None or not hasattr(os, "fork"):
        return thunk()
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's side
        os.close(reader)
        limit = max(1, math.ceil(seconds))
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
        try:
            payload = b"+" + thunk().encode()
        except BaseException:  # (reported to the parent as a failure)
            payload = b"-"
        view = memoryview(payload)
        while view:
            written = os.write(writer, view)
            view = view[written:]
        os._exit(0)
    os.close(writer)
    deadline = time.monotonic() + seconds * WALL_FACTOR
    chunks: list[bytes] = []
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([reader], [], [], max(0.0, left))
            if not ready:
                os.kill(child, signal.SIGKILL)
                return None
            chunk = os.read(reader, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(reader)
        _, status = os.waitpid(child, 0)
    payload = b"".join(chunks)
    if not payload and os.WIFSIGNALED(status):
        return None  # (stopped by its CPU limit)
    if not payload.startswith(b"+"):
        raise NotAffine("isl's scheduler failed")
    return payload[1:].decode()


def _bands(session: IslSession, root: isl.ScheduleNode, nest: Nest) -> list[Band]:
    """Every band of the tree under `root`, outer first (depth-first)."""
    found: list[Band] = []
    stack: list[tuple[isl.ScheduleNode, int]] = [(root, 0)]
    while stack:
        node, outer = stack.pop()
        inner = outer
        if _is_band(node):
            band = _band(session, node, nest, outer)
            if band is not None:
                found.append(band)
                inner = outer + band.members
        children = [node.child(k) for k in range(node.n_children())]
        stack.extend((child, inner) for child in reversed(children))
    return found


def _is_band(node: isl.ScheduleNode) -> bool:
    kind: object = node.get_type()
    return kind is isl.schedule_node_type.band


def _band(session: IslSession, node: isl.ScheduleNode, nest: Nest, outer: int) -> Band | None:
    members = node.band_n_member()
    if members == 0:
        return None
    partial = node.band_get_partial_schedule_union_map()
    by_name = {s.name: s for s in nest.statements}
    statements: list[str] = []
    rows: list[tuple[Row, ...]] = []
    for relation in _maps(partial):
        name = relation.get_tuple_name(isl.dim_type.in_)
        statement = by_name.get(name)
        if statement is None:
            continue
        statements.append(name)
        rows.append(_rows(relation, statement))
    order = sorted(range(len(statements)), key=lambda k: int(statements[k][1:]))
    return Band(
        tuple(statements[k] for k in order),
        bool(node.band_get_permutable()),
        tuple(bool(node.band_member_get_coincident(k)) for k in range(members)),
        tuple(rows[k] for k in order),
        outer,
    )


def _rows(relation: isl.Map, statement: Statement) -> tuple[Row, ...]:
    pieces: list[isl.MultiAff] = []
    relation.as_pw_multi_aff().foreach_piece(lambda _s, ma: pieces.append(ma))
    if len(pieces) != 1:
        raise NotAffine("a piecewise schedule")
    multi = pieces[0]
    rows = []
    for member in range(multi.dim(isl.dim_type.out)):
        aff = multi.get_aff(member)
        coefficients = []
        for k in range(statement.depth):
            value = fraction(aff.get_coefficient_val(isl.dim_type.in_, k))
            coefficients.append(int(value))
        constant = fraction(aff.get_constant_val())
        rows.append(Row(tuple(coefficients), int(constant)))
    return tuple(rows)


def _maps(union: isl.UnionMap) -> list[isl.Map]:
    found: list[isl.Map] = []
    union.foreach_map(found.append)
    return found
