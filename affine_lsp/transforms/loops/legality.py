"""Legality from dependences: the fast path every transformation takes first.

`NestAnalysis` models one loop (the window is that loop alone; loops around it
are parameters: a transformation inside it never changes the order of their
iterations) and lists every dependence between its accesses: pairs of instances
touching the same element, one of them writing, the source running first. A
transformation that reorders instances gives each statement a new schedule
(`Schedules`: time vectors as isl expressions of the statement's iteration); it
is legal when every dependence keeps its source first. A violated dependence
becomes a sentence: "iteration (i, j) reads %A[i - 1, j + 1], written by
iteration (i - 1, j + 1); after interchange it would run first".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import islpy as isl

from affine_lsp.ir import AffineForOp, ModuleModel, Operation
from affine_lsp.poly import (
    IslSession,
    NotAffine,
    Statement,
    Window,
    exact_to_source,
    form_of_aff,
    fraction,
    is_under,
    minmax,
    pretty_identifier,
    render_math,
)


@dataclass
class Dependence:
    """Instances of `source` and later instances of `target` touching one element."""

    source: Statement
    target: Statement
    relation: isl.Map  # source instance -> target instance

    @property
    def kind(self) -> str:
        if self.source.is_write and self.target.is_write:
            return "WAW"
        return "RAW" if self.source.is_write else "WAR"


Entry = str  # an isl expression of the statement's dims (or a constant)
Piece = tuple[str, list[Entry]]  # (condition on the dims, "" for always; time vector)


class NestAnalysis:
    """The accesses and dependences of one loop nest (the loop `root`)."""

    def __init__(self, session: IslSession, root: AffineForOp, model: ModuleModel) -> None:
        block = root.parent_block
        if block is None:
            raise NotAffine("the loop is not in a block")
        self.session = session
        self.root = root
        position = block.operations.index(root)
        self.window = Window(session, block, position, position, model.alias_table())
        self._dependences: list[Dependence] | None = None

    @property
    def statements(self) -> list[Statement]:
        return self.window.statements

    def dependences(self) -> list[Dependence]:
        if self._dependences is None:
            found = []
            statements = self.window.statements
            for index, a in enumerate(statements):
                for b in statements[index:]:
                    found += self.session.run(lambda a=a, b=b: _pair(a, b), "a dependence")
            order = {"RAW": 0, "WAR": 1, "WAW": 2}
            found.sort(key=lambda d: order[d.kind])
            self._dependences = found
        return self._dependences

    # -- schedules --------------------------------------------------------------------

    def entries(self, statement: Statement) -> list[Entry]:
        """The statement's original time vector (positions and iv dims)."""
        dims = {
            id(iv): name
            for iv, name in zip(statement.domain.ivs, statement.domain.dims, strict=True)
        }
        return [str(e) if isinstance(e, int) else dims[id(e)] for e in statement.path]

    def dim_of(self, statement: Statement, loop: Operation) -> str | None:
        for level, name in zip(
            [lv for lv in statement.domain.levels if isinstance(lv.op, AffineForOp)],
            statement.domain.dims,
            strict=False,
        ):
            if level.op is loop:
                return name
        return None

    def lower_bound(self, statement: Statement, loop: AffineForOp) -> Entry:
        """The loop's start as an expression of the statement's outer dims."""
        terms = self.window.builder.bound_terms(loop.lower, statement.domain.scope)
        return minmax("max", terms).text

    def upper_bound(self, statement: Statement, loop: AffineForOp) -> Entry:
        terms = self.window.builder.bound_terms(loop.upper, statement.domain.scope)
        return minmax("min", terms).text

    def schedule(self, statement: Statement, entries: list[Entry], length: int) -> isl.Map:
        padded = entries + ["0"] * (length - len(entries))
        lanes = [f"_l{k}" for k in range(statement.lanes)]
        text = statement.domain.text(f" -> [{', '.join(padded + lanes)}]", statement.name, lanes)
        schedule = self.session.map(text)
        return self.session.run(lambda: schedule.intersect_domain(statement.instances))

    def violation(
        self, new_entries: Callable[[Statement], list[Entry] | list[Piece]]
    ) -> tuple[Dependence, isl.Map] | None:
        """The first dependence whose source would no longer run first (and the
        instances concerned), or None when the new schedules keep them all.
        `new_entries` gives a statement's new time vector, or pieces of it
        (a condition on the statement's dims, the vector where it holds)."""
        dependences = self.dependences()
        if not dependences:
            return None
        involved: dict[str, Statement] = {}
        for dependence in dependences:
            involved[dependence.source.name] = dependence.source
            involved[dependence.target.name] = dependence.target
        pieces: dict[str, list[Piece]] = {}
        for statement in involved.values():
            found = new_entries(statement)
            if found and isinstance(found[0], tuple):
                pieces[statement.name] = [p for p in found if isinstance(p, tuple)]
            else:
                pieces[statement.name] = [("", [e for e in found if isinstance(e, str)])]
        length = max((len(e) for p in pieces.values() for _, e in p), default=1)
        lanes = max((s.lanes for s in involved.values()), default=0)
        # A time may name a parameter its statement's domain does not (a piece a
        # fusion peeled, placed by the band's symbolic bound `%n - 1`).
        params = frozenset().union(*(s.domain.params for s in involved.values()))
        schedules: dict[str, isl.Map] = {}
        for statement in involved.values():
            lane_names = [f"_l{k}" for k in range(statement.lanes)]
            lane_entries = lane_names + ["0"] * (lanes - statement.lanes)
            schedule: isl.Map | None = None
            for condition, entries in pieces[statement.name]:
                padded = entries + ["0"] * (length - len(entries))
                where = f" : {condition}" if condition else ""
                text = statement.domain.text(
                    f" -> [{', '.join(padded + lane_entries)}]{where}",
                    statement.name,
                    lane_names,
                    params,
                )
                part = self.session.map(text)
                schedule = part if schedule is None else schedule.union(part)
            assert schedule is not None
            schedules[statement.name] = schedule
        for dependence in dependences:
            source = schedules[dependence.source.name]
            target = schedules[dependence.target.name]

            def broken(
                source: isl.Map = source,
                target: isl.Map = target,
                dependence: Dependence = dependence,
            ) -> isl.Map | None:
                times = dependence.relation.apply_domain(source).apply_range(target)
                backwards = times.intersect(isl.Map.lex_ge(times.get_space().domain()))
                if backwards.is_empty():
                    return None
                late = source.lex_ge_map(target)
                return dependence.relation.intersect(late)

            bad = self.session.run(broken, "a dependence check")
            if bad is not None:
                return dependence, bad
        return None

    def carried_by(self, loop: Operation, under: Operation | None = None) -> Dependence | None:
        """A dependence between two different iterations of `loop` (same iterations of
        the loops around it), between accesses under `under` (default: the loop)."""
        scope = under or loop
        for dependence in self.dependences():
            a, b = dependence.source, dependence.target
            if not (is_under(a.op, scope) and is_under(b.op, scope)):
                continue
            relation = _same_outer_different(dependence.relation, a, loop)
            if relation is not None and not self.session.run(relation.is_empty):
                return Dependence(a, b, relation)
        return None

    # -- words -----------------------------------------------------------------------------

    def explain(self, dependence: Dependence, relation: isl.Map, after: str) -> str:
        """'iteration (i, j) reads %A[i - 1, j + 1], written by iteration (i - 1, j + 1);
        after {after} it would run first'."""
        return f"{self.describe(dependence, relation)}; after {after} it would run first"

    def describe(self, dependence: Dependence, relation: isl.Map) -> str:
        source, target = dependence.source, dependence.target
        backward = relation.reverse()
        try:  # the latest source of each target: a function for uniform dependences
            backward = backward.lexmax()
        except isl.Error:
            pass
        rendered = _render(backward, target, source)
        cells = _cells(target)
        target_names = _names(target)
        if rendered is not None and target_names:
            # The source's iteration as expressions of the target's, one per loop
            # around the source (in other loops too, as fusion's sentences do).
            target_text = f"iteration {_tuple(target_names)}"
            source_text = f"iteration {_tuple(rendered)}"
        else:
            point = relation.wrap().sample_point()
            if point.is_void():
                return f"{target.op.name} depends on {source.op.name}"
            count = relation.dim(isl.dim_type.in_)
            total = count + relation.dim(isl.dim_type.out)
            values = [
                int(fraction(point.get_coordinate_val(isl.dim_type.set, k))) for k in range(total)
            ]
            source_text = _concrete(source, values[:count])
            target_text = _concrete(target, values[count:])
        if dependence.kind == "RAW":
            return f"{target_text} reads {cells}, written by {source_text}"
        if dependence.kind == "WAR":
            return f"{target_text} writes {cells}, read by {source_text} before it"
        return f"{target_text} writes {cells}, also written by {source_text} before it"


def _pair(a: Statement, b: Statement) -> list[Dependence]:
    if a.array != b.array or not (a.is_write or b.is_write):
        return []
    assert a.schedule is not None and b.schedule is not None
    same = a.access.apply_range(b.access.reverse())
    found = []
    forward = same.intersect(a.schedule.lex_lt_map(b.schedule))
    if not forward.is_empty():
        found.append(Dependence(a, b, forward))
    if a is not b:
        backward = same.reverse().intersect(b.schedule.lex_lt_map(a.schedule))
        if not backward.is_empty():
            found.append(Dependence(b, a, backward))
    return found


def _loop_position(statement: Statement, loop: Operation) -> int | None:
    position = 0
    for level in statement.domain.levels:
        if level.op is loop:
            return position
        if isinstance(level.op, AffineForOp):
            position += 1
        elif hasattr(level.op, "induction_variables"):
            position += len(level.ivs)
    return None


def _same_outer_different(relation: isl.Map, a: Statement, loop: Operation) -> isl.Map | None:
    position = _loop_position(a, loop)
    if position is None:
        return None
    space = relation.get_space()
    same = isl.Map.universe(space)
    for k in range(position):
        same = same.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
    differ = isl.Map.universe(space).order_lt(
        isl.dim_type.in_, position, isl.dim_type.out, position
    )
    differ = differ.union(
        isl.Map.universe(space).order_gt(isl.dim_type.in_, position, isl.dim_type.out, position)
    )
    return relation.intersect(same).intersect(differ)


def _names(statement: Statement) -> list[str]:
    return [pretty_identifier(iv.display_name) for iv in statement.domain.ivs]


def _tuple(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"({', '.join(parts)})"


def _render(function: isl.Map, source: Statement, target: Statement) -> list[str] | None:
    """The outputs of `function` (source dims -> target dims) as expressions of
    `source`'s iv names, when it is one affine function."""
    names = dict(zip(source.domain.dims, _names(source), strict=False))
    for position in range(function.dim(isl.dim_type.in_)):
        if position < len(source.domain.dims):
            function = function.set_dim_name(
                isl.dim_type.in_, position, source.domain.dims[position]
            )
    try:
        pieces: list[isl.MultiAff] = []
        function.coalesce().as_pw_multi_aff().foreach_piece(lambda _s, ma: pieces.append(ma))
    except isl.Error:
        return None
    if len(pieces) != 1:
        return None
    outputs = []
    affine = pieces[0]
    for position in range(min(affine.dim(isl.dim_type.out), len(target.domain.dims))):
        form = form_of_aff(affine.get_aff(position))
        if form is None:
            return None
        outputs.append(render_math(form, lambda n: names.get(n, exact_to_source(n))))
    return outputs


def _cells(statement: Statement) -> str:
    access = statement.access
    names = dict(zip(statement.domain.dims, _names(statement), strict=False))
    try:
        pieces: list[isl.MultiAff] = []
        access.as_pw_multi_aff().foreach_piece(lambda _s, ma: pieces.append(ma))
    except isl.Error:
        pieces = []
    memref = statement.memref.display_name
    if len(pieces) != 1:
        return memref
    parts = []
    for position in range(statement.per_iteration, pieces[0].dim(isl.dim_type.out)):
        form = form_of_aff(pieces[0].get_aff(position))
        if form is None:
            return memref
        parts.append(render_math(form, lambda n: names.get(n, exact_to_source(n))))
    return f"{memref}[{', '.join(parts)}]"


def _concrete(statement: Statement, values: list[int]) -> str:
    names = _names(statement)
    pairs = [f"{n} = {v}" for n, v in zip(names, values, strict=False)]
    return f"iteration {_tuple(pairs)}" if pairs else statement.op.name
