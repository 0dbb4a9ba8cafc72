"""Loop transformations written by the code generator (`transforms.schedule`): the
statements of one loop nest, a time vector for each, the legality of the new
order from the dependences, and the rewrite (text and origins) for the proof.

A *band* here is a chain of loops from the nest's root, each holding the next
(perfectly, or with other ops beside it: an imperfect band). Its transformed
coordinates are `y_k = x_k + sum(F[k][m] * x_m for m < k)` (a skew), permuted,
and the outer ones tiled (`T * floor(y / T)`: the tile loops step over tile
origins). Untiled, the coordinates replace the band's ivs in each statement's
original schedule and the loops are written atomic (a statement's guard stays an
`affine.if` inside: the band stays perfect and can be transformed again). Tiled
or in wavefront, the coordinates come first: a statement beside an inner band
loop runs at that loop's first iteration (before it) or past its last (after
it), *sunk* into the band, then come its positions and inner loops as they
were; the point loops are separated (peeled: no guard inside them).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.ir import AffineForOp, AffineIfOp, Operation
from affine_lsp.poly import NotAffine, Scope, Term, minmax
from affine_lsp.transforms.edits import line_start, next_line_start
from affine_lsp.transforms.loops.core import Context, Refused
from affine_lsp.transforms.loops.nest import body_ops, iv_name
from affine_lsp.transforms.loops.proof import Rewrite
from affine_lsp.transforms.loops.text import Origin, Renames, indent_of, step_indent
from affine_lsp.transforms.schedule import (
    Dimension,
    Scheduled,
    Statement,
    Unschedulable,
    generate,
    statements_of,
)


@dataclass
class Band:
    """How a band is transformed: skew rows, order, tile sizes, wavefronts."""

    loops: list[AffineForOp]
    skews: list[list[int]] = field(default_factory=list)  # row k - 1: loop k's factors
    order: list[int] = field(default_factory=list)  # new position -> index in `loops`
    sizes: list[int] = field(default_factory=list)  # tile sizes of the outer new positions
    tile_wavefront: bool = False  # tiles of a diagonal run in parallel
    wavefront: tuple[int, int] | None = None  # a point wavefront a * y0 + b * y1
    rows: int | None = None  # the point wavefront: this many of the first loop's values at once
    distribute: bool = False  # one innermost loop per statement
    separate: bool = False  # peel the loops below the tile loops (no guards inside)
    aligned: dict[int, int] = field(default_factory=dict)  # a sibling nest's loop -> level
    placed: dict[str, list[str]] = field(default_factory=dict)  # a peeled piece's coordinates
    shear: list[int] | None = None  # the last tiled point loop runs over x_k - sum(shear * x)

    def __post_init__(self) -> None:
        if not self.order:
            self.order = list(range(len(self.loops)))

    def factor(self, k: int, m: int) -> int:
        if k < len(self.skews) + 1 and k >= 1 and m < len(self.skews[k - 1]):
            return self.skews[k - 1][m]
        return 0

    def skewed(self, k: int) -> bool:
        return any(self.factor(k, m) for m in range(k))


def aligned_band(loop: AffineForOp) -> tuple[list[AffineForOp], dict[int, int]]:
    """A band through sibling nests: from `loop`, the first of the deepest loops of
    each body, and the loops of the other nests beside it aligned with the band's
    innermost levels (level of each, by id; `loop` is level 0). The pieces a
    shifted fusion peels (`for t { for j {..}; for i { for j {..} }; for j {..} }`)
    join the band so: their `j` is the band's `j`, and they are sunk in `i`."""
    loops = _inner_loops(body_ops(loop))
    if not loops:
        return [loop], {}
    nests = [aligned_band(inner) for inner in loops]
    main = max(range(len(nests)), key=lambda k: len(nests[k][0]))  # (the first deepest)
    chain, aligned = nests[main]
    levels = dict(aligned)
    for index, (other, inner) in enumerate(nests):
        if index == main:
            continue
        offset = len(chain) - len(other)
        levels.update({id(op): offset + level for level, op in enumerate(other)})
        levels.update({key: offset + level for key, level in inner.items()})
    return [loop, *chain], {key: level + 1 for key, level in levels.items()}


def _inner_loops(ops: list[Operation]) -> list[AffineForOp] | None:
    """The loops among `ops` and in the `affine.if`s among them (None where another op
    with regions holds a loop)."""
    found: list[AffineForOp] = []
    for op in ops:
        if isinstance(op, AffineForOp):
            found.append(op)
        elif isinstance(op, AffineIfOp):
            inner = [o for r in op.regions for o in r.operations() if o.name != "affine.yield"]
            more = _inner_loops(inner)
            if more is None:
                return None
            found += more
        elif op.regions and any(isinstance(inner, AffineForOp) for inner in op.walk()):
            return None
    return found


def statements(context: Context) -> list[Statement]:
    """The statements of the context's nest (Refused with the reason if it has none)."""
    try:
        found = statements_of(context.analysis().window)
    except Unschedulable as error:
        raise Refused(error.reason) from None
    if not found:
        raise Refused(f"nothing to do: {iv_name(context.loop)} holds no code but loops")
    return found


def _sunk(context: Context, statement: Statement, band: Band) -> list[str]:
    """The band coordinates `x` of a statement (its dims, the dims of its loops
    aligned with band loops, or the loops' first iteration / one past their last
    for a statement beside an inner band loop)."""
    found: list[str] = []
    builder = context.analysis().window.builder
    scope = Scope(dict(statement.domain.scope.dims), statement.domain.scope.inside)
    own = {band.aligned[id(loop)]: loop for loop in statement.loops if id(loop) in band.aligned}
    for level, loop in enumerate(band.loops):
        assert loop.induction_variable is not None
        dim = statement.dim_of(own[level] if level in own else loop)
        if dim is not None:
            found.append(dim)
            if level in own:
                scope.bind(loop.induction_variable, Term.name(dim))
            continue
        before = _is_before(statement, loop)
        bound = loop.lower if before else loop.upper
        terms = builder.bound_terms(bound, scope)
        term = minmax("max" if before else "min", terms)
        found.append(term.text)
        scope.bind(loop.induction_variable, Term(f"({term.text})", term.value, term.params))
    return found


def peeled_places(context: Context, band: Band, found: list[Statement]) -> dict[str, list[str]]:
    """The band coordinates of the statements beside the band's loops that repeat
    an iteration of a statement inside them (the pieces a shifted fusion peels: they
    write, at the same iterations of the loops they share with it, where it would
    write at one other iteration): that iteration, by statement name. Their place
    in the band is where they came from, rather than a loop's first or last
    iteration."""
    window = context.analysis().window
    writes: dict[int, isl.Map] = {}
    for access in window.statements:
        if access.is_write:
            writes[id(access.op)] = access.access
    inside = [s for s in found if all(s.dim_of(loop) is not None for loop in band.loops)]
    places: dict[str, list[str]] = {}
    for statement in found:
        if statement in inside:
            continue
        store = _single_write(statement, writes)
        if store is None:
            continue
        for other in inside:
            target = _single_write(other, writes)
            array = store.get_tuple_name(isl.dim_type.out)
            if target is None or target.get_tuple_name(isl.dim_type.out) != array:
                continue
            place = _place(statement, other, band, store, target)
            if place is not None:
                places[statement.name] = place
                break
    return places


def _single_write(statement: Statement, writes: dict[int, isl.Map]) -> isl.Map | None:
    found = [writes[id(op)] for op in statement.ops if id(op) in writes]
    return found[0] if len(found) == 1 else None


def _place(
    statement: Statement, other: Statement, band: Band, store: isl.Map, target: isl.Map
) -> list[str] | None:
    """`statement`'s instance as an iteration of `other`'s band loops, where both
    write the same element at the same values of their common loops (None unless
    that iteration is one affine function of the instance, defined for every
    instance: a function found only for some would put the others at the same place)."""
    try:
        relation = store.apply_range(isl.Map.from_basic_map(target.affine_hull()).reverse())
        instances = statement.instances.set_tuple_name(store.get_tuple_name(isl.dim_type.in_))
        relation = relation.intersect_domain(instances)
        mine, theirs = statement.domain.dims, other.domain.dims
        for loop in band.loops:
            a, b = statement.dim_of(loop), other.dim_of(loop)
            if a is not None and b is not None:
                relation = relation.equate(
                    isl.dim_type.in_, mine.index(a), isl.dim_type.out, theirs.index(b)
                )
        if relation.is_empty() or not relation.is_single_valued():
            return None
        if not relation.domain().is_equal(instances):
            return None
        function = isl.PwMultiAff.from_map(relation)
        place = []
        for loop in band.loops:
            dim = other.dim_of(loop)
            assert dim is not None
            pieces = function.get_pw_aff(theirs.index(dim)).get_pieces()
            if len(pieces) != 1:
                return None
            text = _aff_text(pieces[0][1], mine)
            if text is None:
                return None
            place.append(text)
        return place
    except isl.Error:
        return None


def _aff_text(aff: isl.Aff, dims: list[str]) -> str | None:
    """An affine function of `dims` (and parameters) as isl text; None with divisions."""
    if aff.dim(isl.dim_type.div):
        return None
    terms = []
    for kind, names in (
        (isl.dim_type.in_, dims),
        (
            isl.dim_type.param,
            [aff.get_dim_name(isl.dim_type.param, k) for k in range(aff.dim(isl.dim_type.param))],
        ),
    ):
        for k, name in enumerate(names):
            value = aff.get_coefficient_val(kind, k)
            if not value.is_zero():
                if not value.is_int():
                    return None
                terms.append(f"{value.to_python()}*({name})")
    constant = aff.get_constant_val()
    if not constant.is_int():
        return None
    terms.append(str(constant.to_python()))
    return "(" + " + ".join(terms) + ")"


def _is_before(statement: Statement, loop: AffineForOp) -> bool:
    return statement.ops[0].span.start_byte < loop.span.start_byte


def _tail(statement: Statement, band: Band) -> list[object]:
    """The statement's original schedule path without the band's ivs."""
    ivs = {id(loop.induction_variable) for loop in band.loops}
    ivs |= {id(loop.induction_variable) for loop in statement.loops if id(loop) in band.aligned}
    return [e for e in statement.path if isinstance(e, int) or id(e) not in ivs]


def band_schedule(context: Context, band: Band, found: list[Statement]) -> Scheduled:
    """The time vectors of the statements under `band.loops[0]` and the dimensions:
    tiled or in wavefront, the band's coordinates come first (statements beside an
    inner band loop sunk into it); otherwise they replace the band's ivs in each
    statement's original schedule (statements stay beside the loops they were beside)."""
    if sinks(band):
        return _sunk_schedule(context, band, found)
    return _interleaved_schedule(context, band, found)


def sinks(band: Band) -> bool:
    """Whether statements beside the band's inner loops are sunk into them."""
    return bool(band.sizes or band.wavefront is not None or band.tile_wavefront or band.aligned)


def _coordinates(band: Band, x: list[str]) -> list[str]:
    """The skewed coordinates of the first `len(x)` band loops, in the new order."""
    y = []
    for k in range(len(x)):
        terms = [f"({x[k]})"] + [
            f"{band.factor(k, m)}*({x[m]})" for m in range(k) if band.factor(k, m)
        ]
        y.append(" + ".join(terms))
    return [y[index] for index in band.order if index < len(x)]


def _interleaved_schedule(context: Context, band: Band, found: list[Statement]) -> Scheduled:
    slots = {id(loop.induction_variable): k for k, loop in enumerate(band.loops)}
    times: dict[str, list[str]] = {}
    for statement in found:
        x = [d for d in (statement.dim_of(loop) for loop in band.loops) if d is not None]
        y = _coordinates(band, x)
        names = dict(
            zip((id(iv) for iv in statement.domain.ivs), statement.domain.dims, strict=True)
        )
        time = []
        for entry in statement.path:
            if isinstance(entry, int):
                time.append(str(entry))
            elif id(entry) in slots:
                time.append(y[slots[id(entry)]])
            else:
                time.append(names[id(entry)])
        times[statement.name] = time
    points = _band_dims(context, band)
    dims: list[Dimension] = []
    width = max(len(t) for t in times.values())
    for position in range(width):
        k = (position - 1) // 2
        if position % 2 == 1 and k < len(band.loops):
            dims.append(points[k])
            continue
        loops: dict[str, AffineForOp] = {}
        for statement in found:
            if position < len(statement.path) and not isinstance(statement.path[position], int):
                loop = _loop_of(statement, statement.path[position])
                if loop is not None:
                    loops[statement.name] = loop
        dims.append(_tail_dimension(band, loops))
    return Scheduled(found, times, dims)


def _sunk_schedule(context: Context, band: Band, found: list[Statement]) -> Scheduled:
    band.shear = _shear(context, band, found)
    times: dict[str, list[str]] = {}
    tails: dict[str, list[object]] = {}
    for statement in found:
        x = band.placed.get(statement.name) or _sunk(context, statement, band)
        head = _head(band, _coordinates(band, x), _point(band, x))
        tail = _tail(statement, band)
        tails[statement.name] = tail
        names = dict(
            zip((id(iv) for iv in statement.domain.ivs), statement.domain.dims, strict=True)
        )
        times[statement.name] = head + [
            str(e) if isinstance(e, int) else names[id(e)] for e in tail
        ]
    dims = _band_dims(context, band)
    width = max(len(t) for t in times.values())
    base = len(dims)
    for position in range(base, width):
        loops: dict[str, AffineForOp] = {}
        for statement in found:
            tail = tails[statement.name]
            index = position - base
            if index < len(tail) and not isinstance(tail[index], int):
                loop = _loop_of(statement, tail[index])
                if loop is not None:
                    loops[statement.name] = loop
        dims.append(_tail_dimension(band, loops))
    return Scheduled(found, times, dims)


def _loop_of(statement: Statement, iv: object) -> AffineForOp | None:
    for loop in statement.loops:
        if loop.induction_variable is iv:
            return loop
    return None


def _head(band: Band, y: list[str], point: str | None) -> list[str]:
    """Tile origins, wavefronts and the band's coordinates (the innermost one `point`
    when given, see `_shear`)."""
    sizes = band.sizes
    tiles = [f"{size}*floor(({y[k]})/{size})" for k, size in enumerate(sizes)]
    if band.tile_wavefront:  # tiles by their index (no strides: a cheaper proof)
        indices = [f"floor(({y[k]})/{size})" for k, size in enumerate(sizes)]
        tiles = [" + ".join(indices), *indices[1:]]
    points = list(y)
    if point is not None:
        points[len(sizes) - 1] = point
    if band.wavefront:
        a, b = band.wavefront
        group = [f"{band.rows}*floor(({y[0]})/{band.rows})"] if band.rows else []
        points = [*group, f"{a}*({y[0]}) + {b}*({y[1]})", y[0], *y[2:]]
    if band.distribute:
        points = [*points[:-1], DISTRIBUTED, points[-1]]
    return tiles + points


DISTRIBUTED = "_s_"
"""The time entry that stands for the statement's own position (one innermost loop
per statement)."""


def _shear(context: Context, band: Band, found: list[Statement]) -> list[int] | None:
    """The last tiled point loop's shear: the outer band loops' coefficients in its lower
    bound (a loop skewed by an earlier step; a skew of this step keeps its coordinates, as
    its preview draws them). Its point loop then runs over its unskewed coordinate
    `x_k - sum(shear * x)`, over a range that moves with the outer point loops as its
    subscripts do (`%A[%i - 1]`, not `%A[%i_skew - %t * 2 - 1]` over a fixed box in a
    full tile, whose alias checks LLVM hoists out of the outer loop and then does not
    vectorize it). Within a tile the outer point ivs are fixed, so the order of the
    points is the same. Only where the band touches several memrefs: alias checks are
    between memrefs, and a band over one (an in-place stencil) keeps its skewed point
    loop, which a wavefront inside its tiles then follows."""
    k = len(band.sizes) - 1
    if k < 1 or band.wavefront is not None or band.tile_wavefront or band.aligned:
        return None
    if len(_memrefs(context, found)) < 2:
        return None
    if band.order != list(range(len(band.loops))):
        return None
    loop = band.loops[k]
    statement = next((s for s in found if all(s.dim_of(o) for o in band.loops[: k + 1])), None)
    if statement is None or loop.lower is None:
        return None
    builder = context.analysis().window.builder
    scope = Scope(dict(statement.domain.scope.dims), statement.domain.scope.inside)
    try:
        terms = builder.bound_terms(loop.lower, scope)
        lower = isl.Aff.read_from_str(
            context.session.ctx, statement.domain.text(f" -> [({terms[0].text})]")
        )
    except (NotAffine, isl.Error):
        return None
    if len(terms) != 1 or lower.dim(isl.dim_type.div):
        return None
    shear = []
    for outer in band.loops[:k]:
        position = statement.domain.dims.index(statement.dim_of(outer) or "")
        shear.append(int(lower.get_coefficient_val(isl.dim_type.in_, position).to_python()))
    return shear if any(shear) else None


def _memrefs(context: Context, found: list[Statement]) -> set[str]:
    """The memrefs (isl array names) the statements `found` access."""
    ops = {id(op) for statement in found for op in statement.ops}
    return {
        access.access.get_tuple_name(isl.dim_type.out)
        for access in context.analysis().window.statements
        if id(access.op) in ops
    }


def _point(band: Band, x: list[str]) -> str | None:
    """The last tiled point coordinate of a statement at band coordinates `x`."""
    if band.shear is None:
        return None
    k = len(band.shear)
    terms = [f"({x[k]})"] + [f"{-c}*({x[m]})" for m, c in enumerate(band.shear) if c]
    return " + ".join(terms)


def front_position(band: Band) -> int:
    """Where the first band loop's coordinate is in a point wavefront's time vector
    (the loop that runs along a diagonal)."""
    return len(band.sizes) + (1 if band.rows else 0) + 1


def _band_dims(context: Context, band: Band) -> list[Dimension]:
    n = len(band.loops)
    names = []
    for position in range(n):
        index = band.order[position]
        loop = band.loops[index]
        if band.shear is not None and position == len(band.shear):
            names.append(_unskewed_name(context, loop))
            continue
        names.append(_skewed_name(context, loop) if band.skewed(index) else iv_name(loop))
    tile_names = [_tile_name(context, band.loops[band.order[k]]) for k in range(len(band.sizes))]
    dims = [Dimension(name, separate=False) for name in tile_names]
    if band.tile_wavefront:
        front = Dimension(_named(context, "tile_front", "%tile_front"), separate=False)
        parallel = [Dimension(d.name, parallel=True, separate=False) for d in dims[1:]]
        dims = [front, *parallel]
    points = []
    for position in range(n):
        index = band.order[position]
        loops = {} if band.skewed(index) else {"*": band.loops[index]}
        points.append(Dimension(names[position], separate=band.separate, loops=loops))
    if band.wavefront:
        group = [Dimension(_tile_name(context, band.loops[0]), separate=False)] if band.rows else []
        front = Dimension(_named(context, "front", "%front"), separate=band.separate)
        along = Dimension(
            points[0].name,
            parallel=band.rows is None,
            separate=band.separate,
            loops=points[0].loops,
        )
        points = [*group, front, along, *points[2:]]
    if band.distribute:
        points = [*points[:-1], Dimension(), points[-1]]
    return dims + points


def _tail_dimension(band: Band, loops: dict[str, AffineForOp]) -> Dimension:
    return Dimension(separate=band.separate, loops=loops)


def _named(context: Context, key: str, like: str) -> str:
    """A fresh name, the same for every use of `key` in this context."""
    names: dict[str, str] = context.__dict__.setdefault("_scheduled_names", {})
    if key not in names:
        names[key] = context.names.reuse(like)
    return names[key]


def _skewed_name(context: Context, loop: AffineForOp) -> str:
    names: dict[int, str] = context.__dict__.setdefault("_skewed_names", {})
    if id(loop) not in names:
        base = iv_name(loop)
        if base.endswith("_skew"):  # skewed again: its iv goes, the name stays
            names[id(loop)] = base
        else:
            names[id(loop)] = context.fresh(base, "skew")
    return names[id(loop)]


def _unskewed_name(context: Context, loop: AffineForOp) -> str:
    """The name of `loop`'s unskewed point loop: `%i` for `%i_skew`, else `%i_point`."""
    base = iv_name(loop)
    if base.endswith("_skew"):
        return _named(context, f"unskewed {id(loop)}", base[: -len("_skew")])
    return context.fresh(base, "point")


def tile_name(context: Context, loop: AffineForOp) -> str:
    """`%i_tile` for the tile loops of `loop` (the same name for every use)."""
    return _tile_name(context, loop)


def _tile_name(context: Context, loop: AffineForOp) -> str:
    names: dict[int, str] = context.__dict__.setdefault("_tile_names", {})
    if id(loop) not in names:
        names[id(loop)] = context.fresh(iv_name(loop), "tile")
    return names[id(loop)]


# -- legality -------------------------------------------------------------------------------


def violation(context: Context, scheduled: Scheduled, what: str) -> str | None:
    """The dependence the new schedule would break, in words (None: legal)."""
    analysis = context.analysis()
    place: dict[int, tuple[Statement, int]] = {}
    for statement in scheduled.statements:
        for index, op in enumerate(statement.ops):
            place[id(op)] = (statement, index)

    def entries(access: object) -> list[str]:
        statement, index = place[id(access.op)]  # type: ignore[attr-defined]
        return [*_concrete(scheduled.times[statement.name], statement), str(index)]

    found = analysis.violation(entries)
    if found is None:
        return None
    dependence, relation = found
    return analysis.explain(dependence, relation, what)


def permutable_skew(
    context: Context, loops: list[AffineForOp], largest: int, aligned: dict[int, int] | None = None
) -> tuple[tuple[int, ...], ...] | None:
    """The smallest skew (factors up to `largest`, row by row) after which no
    dependence goes backwards along any loop of the band (`aligned`: the loops of
    sibling nests that join it): then it tiles."""
    found = statements(context)
    dependences = context.analysis().dependences()
    aligned = aligned or {}
    places = peeled_places(context, Band(loops), found)
    rows: list[list[int]] = []
    for k in range(1, len(loops)):
        candidates = sorted(
            itertools.product(range(largest + 1), repeat=k), key=lambda r: (sum(r), r[::-1])
        )
        for candidate in candidates:
            band = Band(loops, [*rows, list(candidate)], aligned=aligned, placed=places)
            scheduled = _sunk_schedule(context, band, found)  # (as tiles see them)
            if _forward(context, scheduled, dependences, k):
                rows.append(list(candidate))
                break
        else:
            return None
    if not any(map(any, rows)):
        return None
    return tuple(tuple(row) for row in rows)


def _forward(context: Context, scheduled: Scheduled, dependences: list, position: int) -> bool:
    """Whether no dependence goes backwards along time dimension `position`."""
    by_op = {id(op): s for s in scheduled.statements for op in s.ops}

    def entry(access: object) -> isl.Map:
        statement = by_op[id(access.op)]  # type: ignore[attr-defined]
        time = _concrete(scheduled.times[statement.name], statement)
        domain = access.domain  # type: ignore[attr-defined]
        text = domain.text(f" -> [{time[position]}]", access.name)  # type: ignore[attr-defined]
        return context.session.map(text)

    for dependence in dependences:
        source, target = entry(dependence.source), entry(dependence.target)

        def backwards(
            relation: isl.Map = dependence.relation,
            source: isl.Map = source,
            target: isl.Map = target,
        ) -> bool:
            times = relation.apply_domain(source).apply_range(target)
            space = times.get_space()
            going_back = isl.Map.universe(space).order_gt(isl.dim_type.in_, 0, isl.dim_type.out, 0)
            return not times.intersect(going_back).is_empty()

        if context.session.run(backwards, "a dependence"):
            return False
    return True


def carried(context: Context, relation: isl.Map, depth: int) -> bool:
    """Whether dependent instances (`relation`, between statements of the window) have
    the same first `depth` dims and differ in the next one."""

    def run() -> bool:
        space = relation.get_space()
        same = isl.Map.universe(space)
        for k in range(depth):
            same = same.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
        if depth >= min(relation.dim(isl.dim_type.in_), relation.dim(isl.dim_type.out)):
            return False
        differ = isl.Map.universe(space).order_lt(isl.dim_type.in_, depth, isl.dim_type.out, depth)
        differ = differ.union(
            isl.Map.universe(space).order_gt(isl.dim_type.in_, depth, isl.dim_type.out, depth)
        )
        return not relation.intersect(same).intersect(differ).is_empty()

    return bool(context.session.run(run, "a dependence"))


def parallel_violation(context: Context, scheduled: Scheduled, what: str) -> str | None:
    """A dependence between two iterations of a loop written as affine.parallel (its
    iterations may run in any order: as well backwards)."""
    for position, dim in enumerate(scheduled.dims):
        if dim.parallel:
            found = reversed_violation(context, scheduled, position, f"{what} in parallel")
            if found is not None:
                return found
    return None


def reversed_violation(
    context: Context, scheduled: Scheduled, position: int, what: str
) -> str | None:
    """The dependence broken when time dimension `position` runs backwards (None: its
    values at equal outer times are independent, and the schedule legal)."""
    times = {}
    for statement in scheduled.statements:
        time = list(scheduled.times[statement.name])
        if position < len(time):
            time[position] = f"-({time[position]})"
        times[statement.name] = time
    return violation(context, Scheduled(scheduled.statements, times, scheduled.dims), what)


def _concrete(time: list[str], statement: Statement) -> list[str]:
    """A time vector with the statement's own order in place of `DISTRIBUTED`."""
    return [str(int(statement.name[1:])) if entry == DISTRIBUTED else entry for entry in time]


def concrete(scheduled: Scheduled) -> Scheduled:
    times = {s.name: _concrete(scheduled.times[s.name], s) for s in scheduled.statements}
    return Scheduled(
        scheduled.statements,
        times,
        scheduled.dims,
        extents=scheduled.extents,
        lifted=scheduled.lifted,
    )


# -- text ---------------------------------------------------------------------------------


def rewrite(context: Context, scheduled: Scheduled) -> Rewrite:
    """The nest's lines replaced by the generated code."""
    data = context.data
    root = context.loop
    start = line_start(data, root.span.start_byte)
    end = next_line_start(data, root.span.end_byte)
    inner = next((op for op in root.walk() if op is not root and isinstance(op, AffineForOp)), None)
    unit = step_indent(data, root, inner) if inner is not None else 2
    window = context.analysis().window
    try:
        generated = generate(
            context.session,
            data,
            window,
            concrete(scheduled),
            indent_of(data, root),
            unit,
            context.names,
        )
    except Unschedulable as error:
        raise Refused(error.reason) from None
    origins = {
        start + offset: Origin(copy.op, Renames(dict(copy.renames)), copy.copy, copy.substitution)
        for offset, copy in generated.copies.items()
    }
    return Rewrite(start, end, generated.text, origins)
