"""The iteration space of a loop nest as plain data for a picture: its integer
points with the symbols given values, the points where `affine.if` regions run,
and its loop-carried dependences as arrows between points.

The nest drawn is the one headed by the loop asked for: the loops around it,
the loop itself, and the loops below it for as long as a body holds exactly one
loop (looking through `affine.if`). When a body holds several loops, the
iterations of those loops fold onto the points of the last loop drawn
(`folded`). Statements between the drawn loops sit at the first point of their
row when they come before the inner loop and at the last one otherwise.

An arrow goes from a point to the first later point that depends on it, for
each dependence (RAW, WAR, WAW) between two memory accesses of the nest, and
only when the two instances are in different iterations of the loops both
accesses are in (loop-carried); dependences inside one point are not drawn.
When a source has several later targets, only the first is drawn
(`nearest_only`). Arrows are drawn for the kinds asked for (`kinds`); the
distances of every kind are counted, drawn or not. Spaces larger than
`limits.points` are sampled on a lattice (`strides`), never cut; there an arrow
joins a drawn point to the drawn point nearest its target on the lattice in the
direction of its distance (`snapped`), so that a dependence shorter than the
lattice step is still seen (its exact distances are in `distances`). More arrows
than `limits.arrows` are thinned (`arrow_stride`) within each panel of a 3-D or
deeper space, so that every panel drawn shows its dependences.

For a before/after picture of a transformation, a space can also carry where
each point came from (`origin_names`: the values of the original loops' ivs,
read from the transformed code, as its proof reads them) and be *grouped*
(`group_tiles`): loops whose iv is determined by the loops inside them (tile
loops) become outlines around the points they group, and the points whose
position differs from their origin's are `moved` (`mark_moved`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import ceil, prod
from typing import TypeVar

import islpy as isl

from affine_lsp.ir import (
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    AffineYieldOp,
    ModuleModel,
    Operation,
    Value,
)
from affine_lsp.poly import budgets
from affine_lsp.poly.budgets import Budget, PictureLimits
from affine_lsp.poly.dependence import common_block, relations
from affine_lsp.poly.domain import Domain, DomainBuilder, Level, enclosing_levels
from affine_lsp.poly.exprs import Resolver, Term
from affine_lsp.poly.names import NameTable, exact_to_source, pretty_identifier
from affine_lsp.poly.origins import origins_from_writes
from affine_lsp.poly.points import Point, Unbounded, bounding_box, scan
from affine_lsp.poly.program import Statement, Window, is_under
from affine_lsp.poly.session import IslSession, PolyError, Unknown

PARAM = isl.dim_type.param
SET = isl.dim_type.set
IN = isl.dim_type.in_
OUT = isl.dim_type.out

DEFAULT_VALUE = 8
"""The value a symbol takes when none is given (the picture says so)."""

MAX_DIMENSIONS = 12
"""Deeper nests are not drawn."""

LOOPS = (AffineForOp, AffineParallelOp)

KINDS = ("RAW", "WAR", "WAW")
"""Kinds of dependence, in the order pictures list them."""

SetOrMap = TypeVar("SetOrMap", isl.Set, isl.Map)


@dataclass(frozen=True)
class Parameter:
    """A symbol of the nest (source name without `%`) and the value it was drawn with."""

    name: str
    value: int
    assumed: bool  # no value was given: DEFAULT_VALUE


@dataclass(frozen=True)
class Arrow:
    kind: str  # RAW | WAR | WAW
    memref: str  # source name, e.g. "%A"
    source: Point
    target: Point

    @property
    def distance(self) -> tuple[int, ...]:
        return tuple(t - s for s, t in zip(self.source, self.target, strict=True))


@dataclass
class IterationSpace:
    loop: Operation  # the loop asked for
    loops: list[Operation]  # every loop drawn, outermost first (one or more dims each)
    ivs: list[str]  # one source name per dimension
    domain: str  # the isl set, symbols symbolic, source names
    parameters: list[Parameter]
    total: int  # integer points of the domain
    points: list[Point]  # the points drawn: all of them, or the sample
    strides: tuple[int, ...]  # sampling lattice (all 1: every point is drawn)
    box: list[tuple[int, int]]  # min and max of every dimension over the domain
    then_points: frozenset[Point] = frozenset()  # drawn points running an affine.if's then
    else_points: frozenset[Point] = frozenset()  # ... or else region
    guards: list[Operation] = field(default_factory=list)  # the affine.if ops marked
    arrows: list[Arrow] = field(default_factory=list)
    arrow_total: int = 0  # arrows before thinning
    arrow_stride: int = 1  # > 1: only arrows from every n-th drawn point along `thinned` axes
    kinds: tuple[str, ...] = KINDS  # the kinds of dependence arrows are drawn for
    snapped: bool = False  # sampled: some arrows join drawn points nearer than their target
    distances: dict[tuple[str, str], dict[tuple[int, ...], int]] = field(default_factory=dict)
    """(kind, memref) -> distance vector -> arrows over the whole domain (before sampling
    and thinning; for dependences of more than MAX_DISTANCES distances in a sampled
    space, from the drawn points)."""
    nearest_only: bool = False
    carried: set[str] = field(default_factory=set)  # kinds of loop-carried dependences found
    folded: list[Operation] = field(default_factory=list)
    dependences_unavailable: str | None = None
    marks_unavailable: str | None = None  # why some affine.if regions are not marked
    unused_values: list[str] = field(default_factory=list)  # given, but no such symbol
    origins: dict[Point, Point] = field(default_factory=dict)
    """Drawn point -> the values of `origin_names` there (the iteration of the original
    loops it repeats), when asked for."""
    origins_unavailable: str | None = None
    tile_ivs: list[str] = field(default_factory=list)  # loops grouping the points drawn
    tiles: dict[Point, Point] = field(default_factory=dict)  # drawn point -> its tile
    moved: frozenset[Point] = frozenset()  # drawn points not where their origin was
    ghosts: frozenset[Point] = frozenset()  # where the moved points were

    @property
    def sampled(self) -> bool:
        return any(s > 1 for s in self.strides)

    @property
    def thinned(self) -> list[int]:
        """The dimensions along which arrows are thinned: those of each panel (the
        last two) in a 3-D or deeper space, every one otherwise."""
        k = len(self.ivs)
        return list(range(k - 2, k)) if k >= 3 else list(range(k))


def chain_of(op: Operation) -> tuple[list[Operation], list[Operation]]:
    """The loops drawn below `op` (itself first) and the loops folded onto the last."""
    chain = [op]
    while True:
        inner = _loops_in_body(chain[-1])
        if len(inner) != 1:
            return chain, inner
        chain.append(inner[0])


def _loops_in_body(loop: Operation) -> list[Operation]:
    """Loops directly in a loop's body, or in affine.if regions there."""
    found: list[Operation] = []
    stack = [op for region in loop.regions for op in region.operations()]
    stack.reverse()
    while stack:
        op = stack.pop()
        if isinstance(op, LOOPS):
            found.append(op)
        elif isinstance(op, AffineIfOp):
            stack.extend(reversed([o for region in op.regions for o in region.operations()]))
    return found


class _Drawing:
    """One computation of an iteration space in one isl session."""

    def __init__(self, op: Operation, model: ModuleModel, budget: Budget) -> None:
        self.op = op
        self.model = model
        self.session = IslSession(budget)
        self.resolver = Resolver(NameTable("exact"), model.alias_table())
        self.builder = DomainBuilder(self.session, self.resolver)
        self.chain, self.folded = chain_of(op)
        outer, _ = enclosing_levels(self.chain[-1])
        self.levels = [*outer, Level(self.chain[-1])]
        dims = sum(len(level.ivs) for level in self.levels)
        if dims > MAX_DIMENSIONS:
            raise PolyError(f"the nest has {dims} loops, more than the {MAX_DIMENSIONS} drawn")
        if not dims:  # `affine.parallel () = () to ()`, alone: its body runs once
            raise PolyError("the loop has no induction variables: its body runs once")
        with self.session.errors("the nest's domain"):
            self.domain: Domain = self.builder.build(self.levels)
        assert self.domain.set is not None
        self.dims = len(self.domain.ivs)
        self.values: dict[str, int] = {}  # isl name -> value

    # -- symbols --------------------------------------------------------------------

    def assign(self, names: set[str], given: Mapping[str, int]) -> list[Parameter]:
        parameters = []
        wanted = {key.lstrip("%"): value for key, value in given.items()}
        for name in sorted(names, key=exact_to_source):
            source = exact_to_source(name)
            value = wanted.get(source)
            self.values[name] = DEFAULT_VALUE if value is None else value
            parameters.append(Parameter(source, self.values[name], value is None))
        return parameters

    def fix(self, value: SetOrMap) -> SetOrMap:
        """`value` with every symbol replaced by its number (no parameters left)."""
        ctx = self.session.ctx
        for position in range(value.dim(PARAM)):
            name = value.get_dim_name(PARAM, position) or ""
            number = isl.Val.read_from_str(ctx, str(self.values[name]))
            value = value.fix_val(PARAM, position, number)
        return value.project_out(PARAM, 0, value.dim(PARAM))

    def context(self) -> isl.Set:
        names = sorted(self.values)
        equalities = " and ".join(f"{n} = {self.values[n]}" for n in names) or "true"
        return self.session.set(f"[{', '.join(names)}] -> {{ : {equalities} }}")

    # -- placement of ops on the drawn points -----------------------------------------

    def placement(self, op: Operation, depth: int, points: isl.Set) -> isl.Map:
        """[depth dims of `op`'s instances] -> [the point it is drawn at]."""
        k = self.dims
        names = [f"x{d}" for d in range(max(k, depth))]
        if depth >= k:
            text = f"{{ [{', '.join(names[:depth])}] -> [{', '.join(names[:k])}] }}"
            return self.session.map(text)
        prefix = self.session.map(f"{{ [{', '.join(names[:depth])}] -> [{', '.join(names)}] }}")
        prefix = prefix.intersect_range(points)
        if self._encloses_chain(op):
            return prefix
        return prefix.lexmin() if self._before_inner_loop(op, depth) else prefix.lexmax()

    def _encloses_chain(self, op: Operation) -> bool:
        return is_under(self.chain[-1], op)

    def _before_inner_loop(self, op: Operation, depth: int) -> bool:
        """Whether `op` (above the innermost drawn loop) runs before the next drawn loop."""
        dims = 0
        for level in self.levels:
            dims += len(level.ivs)
            if dims > depth and isinstance(level.op, LOOPS):
                common = common_block(op, level.op)
                return common is None or common[1] < common[2]
        return True

    # -- the picture ------------------------------------------------------------------

    def pretty_domain(self) -> str:
        assert self.domain.set is not None
        renamed = self.domain.set
        for position, iv in enumerate(self.domain.ivs):
            renamed = renamed.set_dim_name(SET, position, pretty_identifier(iv.display_name))
        for position in range(renamed.dim(PARAM)):
            name = renamed.get_dim_name(PARAM, position) or ""
            renamed = renamed.set_dim_name(
                PARAM, position, pretty_identifier(exact_to_source(name))
            )
        return str(self.session.run(renamed.coalesce))


Box = list[tuple[int, int]]


def _strides(
    session: IslSession, points: isl.Set, total: int, box: Box, limits: PictureLimits
) -> list[int]:
    k = len(box)
    extents = [high - low + 1 for low, high in box]
    strides = [1] * k
    if k >= 3:
        step = 1
        while prod(ceil(e / step) for e in extents[: k - 2]) > limits.panels:
            step += 1
        strides[: k - 2] = [step] * (k - 2)
    count = total if step_free(strides) else _count(session, points, strides, box)
    while count > limits.points:
        factor = max(2, ceil((count / limits.points) ** (1 / k)))
        strides = [s * factor for s in strides]
        count = _count(session, points, strides, box)
    return strides


def step_free(strides: list[int]) -> bool:
    return all(s == 1 for s in strides)


def lattice_of(session: IslSession, strides: Sequence[int], box: Box) -> isl.Set:
    names = [f"x{d}" for d in range(len(strides))]
    parts = [
        f"({name} - ({low})) mod {stride} = 0"
        for name, stride, (low, _high) in zip(names, strides, box, strict=True)
        if stride > 1
    ]
    return session.set(f"{{ [{', '.join(names)}] : {' and '.join(parts) or 'true'} }}")


def count(session: IslSession, points: isl.Set) -> int:
    """The number of integer points of a bounded set without parameters."""

    def counted() -> int:
        text = points.count_val().to_str()
        if text is None or not text.lstrip("-").isdigit():
            raise isl.Error("no count")  # over budget (see session.failure) or unbounded
        return int(text)

    return session.run(counted, "counting the points")


def _count(session: IslSession, points: isl.Set, strides: Sequence[int], box: Box) -> int:
    sampled = session.run(lambda: points.intersect(lattice_of(session, strides, box)))
    return count(session, sampled)


def iteration_space(
    op: Operation,
    model: ModuleModel,
    values: Mapping[str, int] | None = None,
    *,
    limits: PictureLimits | None = None,
    budget: Budget | None = None,
    origin_names: Sequence[str] = (),
    kinds: Sequence[str] = KINDS,
    origin_nest: tuple[Operation, ModuleModel] | None = None,
) -> IterationSpace | Unknown:
    """The iteration space of the nest headed by the loop `op`; `values` give the
    symbols numbers (source names, with or without `%`; DEFAULT_VALUE otherwise).
    With `origin_names` (source names of values, e.g. the ivs of the loops a
    transformation rewrote), each drawn point's `origins` are their values there;
    names the nest no longer has (substituted into its subscripts) are read from
    the writes of `origin_nest` (the original nest's root and model). Arrows are
    drawn for the dependences of `kinds` (RAW, WAR, WAW)."""
    if not isinstance(op, LOOPS):
        return Unknown("not an affine loop")
    try:
        drawing = _Drawing(op, model, budget or budgets.DRAW)
        with drawing.session.errors("the picture"):
            space = _space(
                drawing,
                dict(values or {}),
                limits or budgets.DRAW_LIMITS,
                origin_names,
                tuple(k for k in KINDS if k in kinds),
                origin_nest,
            )
            return space
    except Unbounded as error:
        return Unknown(f"the domain is unbounded ({error})")
    except PolyError as error:
        return Unknown(error.reason)


def _space(
    drawing: _Drawing,
    values: dict[str, int],
    limits: PictureLimits,
    origin_names: Sequence[str],
    kinds: tuple[str, ...],
    origin_nest: tuple[Operation, ModuleModel] | None = None,
) -> IterationSpace:
    """`iteration_space` of `drawing`'s nest (isl errors and `PolyError`s propagate)."""
    op = drawing.op
    window, statements, unavailable = _window(drawing)
    guards, unmarked = _guards(drawing)
    names = set(drawing.domain.params)
    origin_terms, no_origins = _origin_terms(drawing, origin_names)
    if no_origins and origin_nest is not None and window is not None:
        origin_terms, no_origins = _written_origins(drawing, origin_names, statements, origin_nest)
    for term in origin_terms:
        names |= term.params
    for _guard, _branch, domain in guards:
        names |= domain.params
    for statement in statements:
        names |= {
            statement.access.get_dim_name(PARAM, p) or ""
            for p in range(statement.access.dim(PARAM))
        }
    parameters = drawing.assign(names, values)
    known = {p.name for p in parameters}
    unused = sorted(k.lstrip("%") for k in values if k.lstrip("%") not in known)
    session = drawing.session
    domain_set = drawing.domain.set
    assert domain_set is not None
    points_set: isl.Set = session.run(lambda: drawing.fix(domain_set))
    total = count(session, points_set)
    box = bounding_box(points_set) if total else [(0, 0)] * drawing.dims
    strides = _strides(session, points_set, total, box, limits) if total else [1] * len(box)
    origin = [low for low, _ in box]
    points = scan(points_set, strides, origin, session.check_time) if total else []
    space = IterationSpace(
        loop=op,
        loops=[level.op for level in drawing.levels if isinstance(level.op, LOOPS)],
        ivs=[iv.display_name for iv in drawing.domain.ivs],
        domain=drawing.pretty_domain(),
        parameters=parameters,
        total=total,
        points=points,
        strides=tuple(strides),
        box=box,
        folded=drawing.folded,
        dependences_unavailable=unavailable,
        marks_unavailable=unmarked,
        unused_values=unused,
        origins_unavailable=no_origins,
        kinds=kinds,
    )
    if not total:
        return space
    lattice = lattice_of(session, strides, box) if space.sampled else None
    _marks(drawing, space, guards, points_set, lattice)
    if origin_terms:
        try:
            with session.errors("the points' origins"):
                _origins(drawing, space, origin_terms, points_set)
        except PolyError as error:
            space.origins_unavailable = error.reason
    if window is not None:
        try:
            with session.errors("the dependences"):
                _arrows(drawing, space, statements, points_set, limits)
        except PolyError as error:
            space.arrows = []
            space.dependences_unavailable = error.reason
    return space


def _window(drawing: _Drawing) -> tuple[Window | None, list[Statement], str | None]:
    """The memory accesses of the nest, or why its dependences cannot be known."""
    top = drawing.levels[0].op
    block = top.parent_block
    if block is None:
        return None, [], "the nest is not in a block"
    position = block.operations.index(top)
    try:
        window = Window(
            drawing.session,
            block,
            position,
            position,
            drawing.model.alias_table(),
            allow_parallel=True,
        )
    except PolyError as error:
        return None, [], error.reason
    statements = [s for s in window.statements if is_under(s.op, drawing.op)]
    return window, statements, None


def _named_values(drawing: _Drawing) -> dict[str, Value]:
    """The values a statement in the innermost drawn loop sees, by source name: the
    ivs of the nest and the results of ops in the bodies of the drawn loops (an
    inner definition hides an outer one)."""
    visible: dict[str, Value] = {iv.display_name: iv for iv in drawing.domain.ivs}
    for loop in drawing.chain:
        stack = [op for region in loop.regions for op in region.operations()]
        while stack:
            op = stack.pop()
            if isinstance(op, AffineIfOp):
                stack.extend(o for region in op.regions for o in region.operations())
                continue
            for result in op.results:
                visible[result.display_name] = result
    for iv in drawing.domain.ivs:  # an iv is never hidden by a value of the same name
        visible[iv.display_name] = iv
    return visible


def _origin_terms(drawing: _Drawing, names: Sequence[str]) -> tuple[list[Term], str | None]:
    """The values named `names` as terms in the nest's ivs, or why not."""
    if not names:
        return [], None
    visible = _named_values(drawing)
    terms = []
    for name in names:
        value = visible.get(name)
        if value is None:
            return [], f"{name} is not a value of this nest"
        try:
            terms.append(drawing.resolver.value(value, drawing.domain.scope))
        except PolyError as error:
            return [], f"{name}: {error.reason}"
    return terms, None


def _written_origins(
    drawing: _Drawing,
    names: Sequence[str],
    statements: list[Statement],
    nest: tuple[Operation, ModuleModel],
) -> tuple[list[Term], str | None]:
    """`_origin_terms` for names the nest no longer has: read from its writes."""
    visible = _named_values(drawing)
    known: dict[int, str] = {}
    try:
        for k, name in enumerate(names):
            value = visible.get(name)
            if value is not None:
                known[k] = drawing.resolver.value(value, drawing.domain.scope).text
        root, model = nest
        chain, _ = chain_of(root)
        with drawing.session.errors("the points' origins"):
            texts = origins_from_writes(
                drawing.session,
                drawing.domain,
                drawing.chain[-1],
                statements,
                (root, chain[-1], model),
                known,
            )
    except PolyError as error:
        return [], error.reason
    params = frozenset(drawing.domain.params)
    for statement in statements:
        params |= {
            statement.access.get_dim_name(PARAM, p) or ""
            for p in range(statement.access.dim(PARAM))
        }
    return [Term(f"({text})", None, params) for text in texts], None


def _origins(drawing: _Drawing, space: IterationSpace, terms: list[Term], points: isl.Set) -> None:
    """`space.origins`: the values of `terms` at every drawn point."""
    session = drawing.session
    params: set[str] = set(drawing.domain.params)
    for term in terms:
        params |= term.params
    outputs = ", ".join(term.text for term in terms)
    text = (
        f"[{', '.join(sorted(params))}] -> {{ [{', '.join(drawing.domain.dims)}] -> [{outputs}] }}"
    )
    relation = session.map(text)
    pairs = session.run(lambda: drawing.fix(relation).intersect_domain(points).wrap())
    k, m = len(space.ivs), len(terms)
    strides = [*space.strides, *[1] * m]
    origin = [*(low for low, _ in space.box), *[0] * m]
    drawn = set(space.points)
    for pair in scan(pairs, strides, origin, check=session.check_time):
        if pair[:k] in drawn:
            space.origins[pair[:k]] = pair[k:]


Guard = tuple[AffineIfOp, int, Domain]  # an affine.if, its branch, where that branch runs


def _guards(drawing: _Drawing) -> tuple[list[Guard], str | None]:
    """The affine.if regions with ops in the nest, and why some cannot be marked."""
    found: list[Guard] = []
    for guard in drawing.op.walk():
        if not isinstance(guard, AffineIfOp):
            continue
        for branch, region in enumerate(guard.regions[:2]):
            if not any(not isinstance(o, AffineYieldOp) for o in region.operations()):
                continue
            outer, _ = enclosing_levels(guard)
            try:
                found.append((guard, branch, drawing.builder.build([*outer, Level(guard, branch)])))
            except PolyError as error:
                return found, error.reason
    return found, None


def _marks(
    drawing: _Drawing,
    space: IterationSpace,
    guards: list[Guard],
    points: isl.Set,
    lattice: isl.Set | None,
) -> None:
    """The drawn points where the then or else region of an affine.if runs."""
    drawn = set(space.points)
    then_points: set[Point] = set()
    else_points: set[Point] = set()
    session = drawing.session
    for guard, branch, domain in guards:
        assert domain.set is not None
        instances = session.run(lambda d=domain: drawing.fix(d.set))
        placed = drawing.placement(guard, len(domain.ivs), points)
        on_points = session.run(lambda i=instances, p=placed: i.apply(p).intersect(points))
        if lattice is not None:
            on_points = session.run(lambda o=on_points: o.intersect(lattice))
        found = set(scan(on_points, check=session.check_time)) & drawn
        (then_points if branch == 0 else else_points).update(found)
        if guard not in space.guards:
            space.guards.append(guard)
    space.then_points = frozenset(then_points)
    space.else_points = frozenset(else_points)


def _depth(statement: Statement) -> int:
    return len(statement.domain.ivs)


def _on_points(
    drawing: _Drawing, statement: Statement, relation: isl.Map, kind: isl.dim_type
) -> isl.Map:
    """`relation` with `statement`'s side (in or out) stripped of vector lanes."""
    depth = _depth(statement)
    extra = relation.dim(kind) - depth
    if extra:
        relation = relation.project_out(kind, depth, extra)
    return relation.reset_tuple_id(kind)


MAX_DISTANCES = 64
"""A function with more distinct distances is enumerated pair by pair."""

Key = tuple[str, str, Point]  # kind, memref, distance


class _Sources:
    """The points arrows start from, per (kind, memref, distance): isl sets (one per
    distance of a dependence), or explicit points (dependences with many distances)."""

    def __init__(self, session: IslSession, space: IterationSpace) -> None:
        self.session = session
        self.space = space
        self.sets: dict[Key, isl.Set] = {}
        self.points: dict[Key, set[Point]] = {}

    def add(self, function: isl.Map, kind: str, memref: str) -> None:
        """The arrows of a single-valued relation between points, by distance."""
        session = self.session
        k = len(self.space.ivs)
        deltas = session.run(function.deltas)
        distances = scan(deltas, check=session.check_time) if deltas.dim(SET) == k else []
        if not distances or len(distances) > MAX_DISTANCES:
            # Pair by pair, from the drawn points only (the space may be sampled).
            strides = [*self.space.strides, *[1] * k]
            origin = [*(low for low, _ in self.space.box), *[0] * k]
            pairs = session.run(function.wrap)
            for pair in scan(pairs, strides, origin, check=session.check_time):
                start, end = pair[:k], pair[k:]
                distance = tuple(t - s for s, t in zip(start, end, strict=True))
                self.points.setdefault((kind, memref, distance), set()).add(start)
            return
        names = [f"x{d}" for d in range(k)]
        for distance in distances:
            shifted = ", ".join(f"{n} + ({d})" for n, d in zip(names, distance, strict=True))
            shift = session.map(f"{{ [{', '.join(names)}] -> [{shifted}] }}")
            sources = session.run(lambda s=shift: function.intersect(s).domain())
            key = (kind, memref, distance)
            if key in self.sets:
                sources = session.run(lambda s=sources, key=key: self.sets[key].union(s))
            self.sets[key] = sources

    def merge(self) -> None:
        for key in list(self.sets):
            if key in self.points:
                self.points[key].update(self._scan(self.sets.pop(key), 1))

    def _steps(self, factor: int) -> list[int]:
        """The lattice of the drawn points, `factor` times coarser along the thinned axes."""
        thinned = set(self.space.thinned)
        return [s * (factor if d in thinned else 1) for d, s in enumerate(self.space.strides)]

    def _lattice(self, factor: int) -> isl.Set | None:
        strides = self._steps(factor)
        if all(s == 1 for s in strides):
            return None
        return lattice_of(self.session, strides, self.space.box)

    def _shown(self, key: Key) -> bool:
        return key[0] in self.space.kinds

    def counts(self, factor: int | None) -> dict[Key, int]:
        """Arrows per key from the drawn points on the lattice `factor` times coarser
        (the kinds drawn), or (None) from every point of the domain (every kind; pair
        by pair: the drawn points)."""
        lattice = self._lattice(factor) if factor is not None else None
        found = {}
        for key, sources in self.sets.items():
            if factor is not None and not self._shown(key):
                continue
            if lattice is not None:
                sources = self.session.run(lambda s=sources: s.intersect(lattice))
            found[key] = count(self.session, sources)
        for key, points in self.points.items():
            if factor is None or self._shown(key):
                found[key] = len(self._kept(points, factor or 1))
        return found

    def _kept(self, points: set[Point], factor: int) -> list[Point]:
        origin = [low for low, _ in self.space.box]
        steps = self._steps(factor)
        return [
            p
            for p in points
            if all((x - o) % q == 0 for x, o, q in zip(p, origin, steps, strict=True))
        ]

    def _scan(self, sources: isl.Set, factor: int) -> list[Point]:
        origin = [low for low, _ in self.space.box]
        return scan(sources, self._steps(factor), origin, check=self.session.check_time)

    def arrows(self, factor: int) -> list[Arrow]:
        """The arrows of the kinds drawn; in a sampled space, each to the drawn point
        nearest its target in the direction of its distance (dropped when that point
        is not drawn)."""
        strides = self.space.strides
        drawn = set(self.space.points) if self.space.sampled else None
        found = []
        keys = [
            (key, self._scan(sources, factor))
            for key, sources in self.sets.items()
            if self._shown(key)
        ]
        keys += [
            (key, self._kept(points, factor))
            for key, points in self.points.items()
            if self._shown(key)
        ]
        for (kind, memref, distance), starts in keys:
            if drawn is None:
                for start in starts:
                    end = tuple(x + d for x, d in zip(start, distance, strict=True))
                    found.append(Arrow(kind, memref, start, end))
                continue
            step = _on_lattice(distance, strides)
            before = len(found)
            for start in starts:
                end = tuple(x + d for x, d in zip(start, step, strict=True))
                if end in drawn:
                    found.append(Arrow(kind, memref, start, end))
            self.space.snapped |= step != distance and len(found) > before
        found.sort(key=lambda arrow: (arrow.source, arrow.target, arrow.kind, arrow.memref))
        return found


def _on_lattice(distance: Point, strides: Sequence[int]) -> Point:
    """`distance` rounded away from zero to a multiple of the lattice's steps."""
    return tuple(
        0 if d == 0 else (1 if d > 0 else -1) * ceil(abs(d) / s) * s
        for d, s in zip(distance, strides, strict=True)
    )


def _arrows(
    drawing: _Drawing,
    space: IterationSpace,
    statements: list[Statement],
    points: isl.Set,
    limits: PictureLimits,
) -> None:
    session = drawing.session
    context = drawing.context()
    k = drawing.dims
    names_in = [f"x{d}" for d in range(k)]
    names_out = [f"y{d}" for d in range(k)]
    sources = _Sources(session, space)
    placements: dict[int, isl.Map] = {}

    inside_maps: dict[int, isl.Map] = {}

    def same_iteration(common: int) -> isl.Map:
        """Pairs of points equal in their first `common` coordinates."""
        if common not in inside_maps:
            same = " and ".join(
                f"{x} = {y}" for x, y in zip(names_in[:common], names_out[:common], strict=True)
            )
            inside_maps[common] = session.map(
                f"{{ [{', '.join(names_in)}] -> [{', '.join(names_out)}] : {same or 'true'} }}"
            )
        return inside_maps[common]

    def placement(statement: Statement) -> isl.Map:
        key = id(statement)
        if key not in placements:
            placements[key] = drawing.placement(statement.op, _depth(statement), points)
        return placements[key]

    for first, a in enumerate(statements):
        for b in statements[first:]:
            session.check_time()
            for kind, source, target, relation in session.run(
                lambda a=a, b=b: relations(a, b, context), "a dependence"
            ):
                # Loop-carried: the iterations differ in a loop both accesses are in.
                inside = same_iteration(min(_depth(source), _depth(target), k))

                def carried(
                    relation: isl.Map = relation,
                    source: Statement = source,
                    target: Statement = target,
                    inside: isl.Map = inside,
                ) -> isl.Map:
                    fixed = drawing.fix(relation)
                    fixed = _on_points(drawing, source, fixed, IN)
                    fixed = _on_points(drawing, target, fixed, OUT)
                    moved = fixed.apply_domain(placement(source)).apply_range(placement(target))
                    return moved.subtract(inside)

                moved = session.run(carried, "a dependence")
                if session.run(moved.is_empty):
                    continue
                space.carried.add(kind)
                if not session.run(moved.is_single_valued):
                    space.nearest_only = True
                nearest = session.run(moved.lexmin)
                sources.add(nearest, kind, source.memref.display_name)
    sources.merge()
    for (kind, memref, distance), number in sorted(sources.counts(None).items()):
        if number:
            space.distances.setdefault((kind, memref), {})[distance] = number
    counts = sources.counts(1)
    space.arrow_total = sum(counts.values())
    factor = 1
    while sum(counts.values()) > limits.arrows:
        factor += 1
        counts = sources.counts(factor)
    space.arrow_stride = factor
    space.arrows = sources.arrows(factor)
