"""Interchange, permute, tile, skew and wavefront of a band of loops.

All are a change of coordinates of the band's iterations, optionally tiled:
skew (`x_k += sum F[k][m] * x_m` for outer loops `m`), then permute (`y[P[k]] =
x[k]`), then tile the outer loops of the new order by `T_k` (tile loops step
over origins that are multiples of `T_k`, or, for a rectangular band kept in its
order, over `lb + k * step * T`), and for a wavefront run the diagonals of
tiles (or of points) one after the other. Legality: the new schedule of every
statement must keep every dependence's source first (and a parallel loop must
carry none).

Text: a rectangular, perfect band that is not skewed keeps its headers
(interchange swaps them; tiling adds `%i_tile` loops stepping over the original
bounds and bounds the point loops by `min(ub, %i_tile + step * T)`); anything
else is generated from per-statement schedules (`scheduled.py`): the band stays
perfect (a skewed loop gets a fresh iv, `%j_skew`, substituted into the
subscripts), skews compose, and imperfect bands (statements beside an inner
loop) are tiled with those statements sunk into it.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from affine_lsp.ir import AffineForOp
from affine_lsp.poly import AffineForm, BudgetExceeded, Level, Statement
from affine_lsp.syntax import Span, decode
from affine_lsp.transforms.bounds import forms_of, map_text, operand_namer
from affine_lsp.transforms.edits import line_start, next_line_start
from affine_lsp.transforms.loops import scheduled as generated
from affine_lsp.transforms.loops.bounds import loops_between
from affine_lsp.transforms.loops.core import (
    INTERCHANGE,
    PERMUTE,
    SKEW,
    TILE,
    WAVEFRONT,
    Context,
    Refused,
    Spec,
    check_layout,
)
from affine_lsp.transforms.loops.legality import NestAnalysis
from affine_lsp.transforms.loops.nest import (
    band_chain,
    body_block,
    defined_under,
    header_span,
    iv_name,
    perfect_band,
)
from affine_lsp.transforms.loops.proof import Rewrite
from affine_lsp.transforms.loops.text import Builder, Renames, indent_of, step_indent
from affine_lsp.transforms.schedule import Scheduled

SKEW_FACTORS = (1, 2, 3)
"""Skew factors tried when a band transformation is illegal."""

WAVEFRONT_COEFFICIENTS = 4
"""Wavefront coefficients tried (1..this) for a point wavefront."""


@dataclass
class BandPlan:
    band: list[AffineForOp]
    order: list[int]  # new position -> index in `band`
    sizes: list[int]  # tile sizes of the outer loops of the new order
    skews: list[list[int]]  # row k - 1: factors of loops 0..k-1 added to loop k
    keep_headers: bool  # rectangular, perfect, not skewed: keep the header texts
    what: str  # for messages: "interchange", "tiling 32×32"...
    scheduled: Scheduled | None = None  # generated code: the statements' schedules
    wavefront: str = ""  # for the summary: "tiles", "2i + j"...
    distributed: bool = False  # one innermost loop per statement
    aligned: dict[int, int] | None = None  # loops of sibling nests -> band level
    unpeeled: bool = False  # tiles written with one copy of each statement

    @property
    def skew(self) -> int | None:
        """The skew as one factor, when it is the second loop's by the first's."""
        if len(self.skews) == 1 and len(self.skews[0]) == 1:
            return self.skews[0][0]
        return None


def _words(spec: Spec, band: list[AffineForOp]) -> str:
    if spec.kind == INTERCHANGE:
        return "interchange"
    if spec.kind == PERMUTE:
        return "the permutation"
    if spec.kind == TILE:
        return "tiling " + "×".join(str(s) for s in spec.sizes)
    if spec.kind == WAVEFRONT:
        return "the wavefront"
    return "the skew"


def _skew_words(rows: tuple[tuple[int, ...], ...], band: list[AffineForOp]) -> str:
    """'%j by 1' (the second loop by the first), else '%i by %t, %j by 2×%t + %i'."""
    if len(rows) == 1 and len(rows[0]) == 1 and len(band) > 1:
        return f"{iv_name(band[1])} by {rows[0][0]}"
    parts = []
    for k, row in enumerate(rows, start=1):
        if k >= len(band):
            break
        terms = [
            ("-" if f < 0 else "")
            + (iv_name(band[m]) if abs(f) == 1 else f"{abs(f)}×{iv_name(band[m])}")
            for m, f in enumerate(row)
            if f
        ]
        if terms:
            said = " + ".join(terms).replace(" + -", " - ")
            parts.append(f"{iv_name(band[k])} by {said}")
    return ", ".join(parts)


def title(spec: Spec, band: list[AffineForOp]) -> str:
    """The code action's title."""
    rows = spec.skew_rows() if spec.kind != SKEW else ()
    prefix = f"Skew {_skew_words(rows, band)} and " if rows and len(band) > 1 else ""
    if spec.kind == INTERCHANGE:
        text = f"interchange {iv_name(band[0])} and {iv_name(band[1])}"
    elif spec.kind == PERMUTE:
        text = "permute to " + ", ".join(
            iv_name(band[spec.permutation.index(k)]) for k in range(len(spec.permutation))
        )
    elif spec.kind == TILE:
        text = "tile " + "×".join(str(s) for s in spec.sizes)
    elif spec.kind == WAVEFRONT:
        if spec.sizes:
            text = (
                "tile " + "×".join(str(s) for s in spec.sizes) + " and run the tiles in wavefront"
            )
        elif spec.factor:
            text = f"wavefront of {iv_name(band[0])}, {spec.factor} at once"
        else:
            text = f"wavefront of {iv_name(band[0])} and {iv_name(band[1])}"
    else:
        rows = spec.skew_rows()
        if len(rows) == 1 and len(rows[0]) == 1 and len(band) > 1:
            return f"Skew {iv_name(band[1])} by {rows[0][0]} (against {iv_name(band[0])})"
        return f"Skew {_skew_words(rows, band)}"
    return (prefix + text)[0].upper() + (prefix + text)[1:]


def _band_for(
    context: Context, spec: Spec
) -> tuple[list[AffineForOp], list[int], list[int], dict[int, int]]:
    loop = context.loop
    full = perfect_band(loop)
    chain = band_chain(loop)
    rows = spec.skew_rows()
    skewed = 1 + max((k + 1 for k, row in enumerate(rows) if any(row)), default=0)
    aligned: dict[int, int] = {}
    needed = max(len(spec.sizes or ()), skewed, 2 if spec.kind in (SKEW, WAVEFRONT) else 1)
    if spec.kind in (SKEW, TILE, WAVEFRONT) and needed > len(chain):
        longer, levels = generated.aligned_band(loop)
        if len(longer) > len(chain):  # (sibling nests beside the band's loops join it)
            chain, aligned = longer, levels
    band, order, sizes = _band_of_kind(context, spec, full, chain, skewed)
    if rows and skewed > len(chain):
        if len(chain) == 1:
            raise Refused(f"no loop is nested in {iv_name(loop)} to skew")
        raise Refused(
            f"the skew needs {skewed} nested loops but only {len(chain)} are nested "
            f"from {iv_name(loop)}"
        )
    return band, order, sizes, {key: k for key, k in aligned.items() if k < len(band)}


def _band_of_kind(
    context: Context,
    spec: Spec,
    full: list[AffineForOp],
    chain: list[AffineForOp],
    skewed: int,
) -> tuple[list[AffineForOp], list[int], list[int]]:
    loop = context.loop
    rows = spec.skew_rows()
    if spec.kind == INTERCHANGE:
        if len(full) < 2:
            raise Refused(
                f"no loop is nested directly in {iv_name(loop)} (its body holds other ops)"
            )
        return _widened(full[:2], chain, skewed), [1, 0], []
    if spec.kind == PERMUTE:
        permutation = list(spec.permutation)
        if sorted(permutation) != list(range(len(permutation))) or len(permutation) < 2:
            raise Refused("the permutation must list each position 0..n-1 once (n >= 2)")
        if len(permutation) > len(full):
            raise Refused(
                f"the permutation has {len(permutation)} entries but only {len(full)} loops are "
                f"perfectly nested from {iv_name(loop)}"
            )
        order = [permutation.index(k) for k in range(len(permutation))]
        band = _widened(full[: len(permutation)], chain, skewed)
        return band, order + list(range(len(order), len(band))), []
    if spec.kind in (TILE, WAVEFRONT) and spec.sizes:
        sizes = list(spec.sizes)
        if any(s < 1 for s in sizes):
            raise Refused("tile sizes must be positive integers")
        if len(sizes) > len(chain):
            raise Refused(
                f"{len(sizes)} tile sizes for {len(chain)} nested "
                f"loop{'s' if len(chain) > 1 else ''} from {iv_name(loop)}"
            )
        depth = max(len(sizes), skewed, 2 if spec.kind == WAVEFRONT else 1)
        band = chain[: min(depth, len(chain))]
        if len(sizes) <= len(full) and depth <= len(full):
            band = full[: min(depth, len(full))]
        return band, list(range(len(band))), sizes
    if spec.kind == TILE:
        raise Refused("tile sizes must be positive integers")
    if spec.kind == WAVEFRONT:
        if len(chain) < 2:
            raise Refused(f"no loop is nested in {iv_name(loop)} to run a wavefront over")
        if spec.factor is not None and spec.factor < 1:
            raise Refused("the number of rows at once must be a positive integer")
        band = chain[: max(2, skewed)]
        return band, list(range(len(band))), []
    if spec.kind == SKEW:
        if len(chain) < 2:
            raise Refused(f"no loop is nested in {iv_name(loop)} to skew")
        if not rows or not any(map(any, rows)):
            raise Refused("the skew factors are all 0")
        return chain[: max(2, skewed)], list(range(max(2, skewed))), []
    raise Refused(f"unknown band transformation {spec.kind}")


def _widened(band: list[AffineForOp], chain: list[AffineForOp], depth: int) -> list[AffineForOp]:
    """`band` extended along the chain to hold `depth` loops (for a skew)."""
    return band if len(band) >= depth else chain[:depth]


def _rectangular(band: list[AffineForOp]) -> bool:
    root = band[0]
    for loop in band:
        for bound in (loop.lower, loop.upper):
            if bound is None:
                return False
            for use in bound.operands:
                if use.value is None or defined_under(use.value, root):
                    return False
    return True


def _check_structure(context: Context, band: list[AffineForOp]) -> None:
    for loop in band:
        if loop.iter_args or loop.results:
            raise Refused(f"{iv_name(loop)} carries values through iter_args")
        if loop.body is None or body_block(loop) is None:
            raise Refused(f"{iv_name(loop)} has no body")
    for loop in band:
        check_layout(context, loop)


def plan(context: Context, spec: Spec, check: bool = True) -> BandPlan:
    band, order, sizes, aligned = _band_for(context, spec)
    _check_structure(context, band)
    skews = [list(row) for row in spec.skew_rows()]
    rectangular = _rectangular(band)
    identity = order == list(range(len(order)))
    perfect = band == perfect_band(band[0], len(band))
    keep = (
        rectangular and not skews and perfect and (not sizes or identity) and spec.kind != WAVEFRONT
    )
    if spec.kind == PERMUTE and identity:
        raise Refused("nothing to do: the permutation keeps every loop in place")
    keep = keep and not aligned
    result = BandPlan(band, order, sizes, skews, keep, _words(spec, band), aligned=aligned)
    if not keep:
        _schedule(context, spec, result, check)
    # A skew alone keeps every dependence forward: at the first loop a dependence
    # moves along, the skewed coordinates add only outer loops' distances, all zero.
    if check and (spec.kind != SKEW or aligned):  # (sinking a sibling nest may not be)
        violation = _violation(context, result)
        if violation is not None:
            hint = _skew_hint(context, spec, result) if not skews else None
            reason = violation
            if hint is not None:
                reason += f"; skew {_skew_words(hint.skew_rows(), band)} first"
            raise Refused(reason, hint)
    return result


def _schedule(context: Context, spec: Spec, plan: BandPlan, check: bool) -> None:
    """The statements' schedules for the code generator."""
    statements = generated.statements(context)
    band = generated.Band(plan.band, plan.skews, plan.order, plan.sizes)
    band.aligned = plan.aligned or {}
    band.separate = (bool(plan.sizes) and spec.peel) or spec.kind == WAVEFRONT
    plan.unpeeled = bool(plan.sizes) and not band.separate
    if spec.kind == WAVEFRONT:
        if plan.sizes:
            if len(plan.sizes) < 2:
                raise Refused("a wavefront of tiles needs at least 2 tile sizes")
            band.tile_wavefront = True
            plan.wavefront = "tiles"
        else:
            band.wavefront, plan.wavefront = _front(context, band, statements, check)
            band.rows = spec.factor
    band.distribute = bool(band.aligned) or (
        bool(plan.sizes) and _distributable(context, statements, plan.band)
    )  # (sibling nests kept in loops of their own where that is legal)
    sunk = generated.sinks(band)
    places = generated.peeled_places(context, band, statements) if sunk else {}
    options = [(d, p) for d in (band.distribute, False) for p in (bool(places), False)]
    options = list(dict.fromkeys(options))  # (the first that keeps every dependence)
    for number, (distribute, placed) in enumerate(options):
        band.distribute, band.placed = distribute, places if placed else {}
        plan.scheduled = generated.band_schedule(context, band, statements)
        last = number == len(options) - 1
        if last or generated.violation(context, plan.scheduled, plan.what) is None:
            break
    plan.distributed = band.distribute


def _distributable(context: Context, statements: list, band: list[AffineForOp]) -> bool:
    """Statements under the band's last loop that depend on each other across its
    iterations (their shifts differ): each gets an innermost loop of its own, which
    vectorises without guards."""
    inner = band[-1]
    under = {id(op): s for s in statements if s.dim_of(inner) is not None for op in s.ops}
    if len({id(s) for s in under.values()}) < 2:
        return False
    if _shifted_along(context, list({id(s): s for s in under.values()}.values()), inner):
        return True
    analysis = context.analysis()
    depth = len(band) - 1
    for dependence in analysis.dependences():
        a = under.get(id(dependence.source.op))
        b = under.get(id(dependence.target.op))
        if a is None or b is None or a is b:
            continue
        if generated.carried(context, dependence.relation, depth):
            return True
    return False


def _shifted_along(context: Context, statements: list, inner: AffineForOp) -> bool:
    """Statements whose iterations along `inner` start or end at other places (a
    time step's sweeps fused with a shift, each guarded inside the loop)."""

    def ranges() -> set[str]:
        found = set()
        for statement in statements:
            dim = statement.dims.index(statement.dim_of(inner))
            instances = statement.instances
            kept = instances.project_out(
                isl.dim_type.set, dim + 1, instances.dim(isl.dim_type.set) - dim - 1
            )
            kept = kept.project_out(isl.dim_type.set, 0, dim).reset_tuple_id()
            found.add(str(kept.coalesce()))
        return found

    return len(context.session.run(ranges, "the statements' ranges")) > 1


def _front(
    context: Context, band: generated.Band, statements: list, check: bool
) -> tuple[tuple[int, int], str]:
    """The smallest wavefront `a * x0 + b * x1` that every dependence of the band's
    first two loops moves forward: the points of a diagonal are independent."""
    names = [iv_name(loop).lstrip("%") for loop in band.loops[:2]]
    candidates = sorted(
        (
            (a, b)
            for a in range(1, WAVEFRONT_COEFFICIENTS + 1)
            for b in range(1, WAVEFRONT_COEFFICIENTS + 1)
        ),
        key=lambda ab: (ab[0] + ab[1], ab),
    )
    for a, b in candidates:
        band.wavefront = (a, b)
        scheduled = generated.band_schedule(context, band, statements)
        position = generated.front_position(band)
        if not check or (
            generated.reversed_violation(context, scheduled, position, "the wavefront") is None
        ):
            text = f"{'' if a == 1 else a}{names[0]} + {'' if b == 1 else b}{names[1]}"
            return (a, b), text
    raise Refused(
        f"no wavefront a*{names[0]} + b*{names[1]} with a, b <= {WAVEFRONT_COEFFICIENTS} "
        "leaves the points of each diagonal independent"
    )


def _skew_hint(context: Context, spec: Spec, failed: BandPlan) -> Spec | None:
    if spec.kind not in (INTERCHANGE, PERMUTE, TILE, WAVEFRONT) or len(failed.band) < 2:
        return None
    if spec.kind == WAVEFRONT and not spec.sizes:
        return None
    try:
        for factor in SKEW_FACTORS:
            if _legal_with(context, spec.with_skew(factor)):
                return spec.with_skew(factor)
        if spec.kind in (TILE, WAVEFRONT) and len(failed.band) >= 3:
            rows = generated.permutable_skew(context, failed.band, SKEW_FACTORS[-1], failed.aligned)
            if rows is not None and _legal_with(context, spec.with_skews(rows)):
                return spec.with_skews(rows)
    except BudgetExceeded:
        pass  # (no hint found in time: the refusal stands without one)
    return None


def _legal_with(context: Context, spec: Spec) -> bool:
    try:
        plan(context, spec, True)
    except Refused:
        return False
    return True


# -- legality ---------------------------------------------------------------------------


def _coordinates(plan: BandPlan, x: list[str]) -> list[str]:
    """The new coordinates `y` (new order) as expressions of the old ones."""
    skewed = list(x)
    for k in range(1, len(x)):
        row = plan.skews[k - 1] if k - 1 < len(plan.skews) else []
        terms = [f"{f}*{x[m]}" for m, f in enumerate(row) if f and m < k]
        if terms:
            skewed[k] = f"({x[k]} + {' + '.join(terms)})"
    return [skewed[index] for index in plan.order]


def _violation(context: Context, plan: BandPlan) -> str | None:
    if plan.scheduled is not None:
        found = generated.violation(context, plan.scheduled, plan.what)
        if found is None:
            found = generated.parallel_violation(context, plan.scheduled, plan.what)
        return found
    analysis = context.analysis(plan.band[0])

    def entries(statement: Statement) -> list[str]:
        old = analysis.entries(statement)
        found = [analysis.dim_of(statement, loop) for loop in plan.band]
        x = [name for name in found if name is not None]
        if len(x) != len(found):
            return old
        first = old.index(x[0])
        last = old.index(x[-1])
        y = _coordinates(plan, x)
        tiles = []
        for k, size in enumerate(plan.sizes):
            loop = plan.band[k]
            start = analysis.lower_bound(statement, loop)
            step = (loop.step or 1) * size
            tiles.append(f"floor(({x[k]} - ({start}))/{step})")
        return old[:first] + tiles + y + old[last + 1 :]

    found = analysis.violation(entries)
    if found is None:
        return None
    dependence, relation = found
    return analysis.explain(dependence, relation, plan.what)


# -- text ---------------------------------------------------------------------------------


def rewrite(context: Context, plan: BandPlan) -> Rewrite:
    if plan.scheduled is not None:
        return generated.rewrite(context, plan.scheduled)
    data = context.data
    band = plan.band
    root = band[0]
    start = line_start(data, root.span.start_byte)
    end = next_line_start(data, root.span.end_byte)
    builder = Builder(data, start)
    indent = indent_of(data, root)
    inner = band[-1]
    unit = step_indent(data, root, band[1]) if len(band) > 1 else 2
    inner_block = body_block(inner)
    body_ops = inner_block.operations if inner_block is not None else []
    if not plan.sizes:
        _swap_headers(builder, context, plan, end)
    else:
        headers = _tiled_headers(context, plan)
        for depth, header in enumerate(headers):
            builder.line(indent + " " * (unit * depth), header + " {")
        depth = len(headers)
        old_depth = len(band)
        if body_ops:
            body_start = next_line_start(data, inner.body.span.start_byte)  # type: ignore[union-attr]
            body_end = line_start(data, inner.body.span.end_byte - 1)  # type: ignore[union-attr]
            builder.copy(body_start, body_end, body_ops, Renames(), unit * (depth - old_depth))
        for level in reversed(range(depth)):
            builder.line(indent + " " * (unit * level), "}")
    return Rewrite(start, end, builder.text(), builder.origins)


def _swap_headers(builder: Builder, context: Context, plan: BandPlan, end: int) -> None:
    """A rectangular permutation: each header moves, everything else stays."""
    data = context.data
    band = plan.band
    position = builder.base
    for k, loop in enumerate(band):
        span = header_span(loop)
        builder.copy(position, span.start_byte, [], Renames())
        source = header_span(band[plan.order[k]])
        builder.raw(decode(data[source.start_byte : source.end_byte]))
        position = span.end_byte
    builder.copy(position, end, [band[-1]], Renames())


def _tile_name(context: Context, loop: AffineForOp) -> str:
    return generated.tile_name(context, loop)


def _tiled_headers(context: Context, plan: BandPlan) -> list[str]:
    """Headers of a rectangular band tiled in its own order: tile loops over the
    original bounds, point loops from the tile's origin."""
    data = context.data
    band = plan.band
    analysis = context.analysis(band[0])
    headers = []
    for k, size in enumerate(plan.sizes):
        loop = band[k]
        step = (loop.step or 1) * size
        lower = _text(data, loop.lower.span)  # type: ignore[union-attr]
        upper = _text(data, loop.upper.span)  # type: ignore[union-attr]
        headers.append(f"affine.for {_tile_name(context, loop)} = {lower} to {upper} step {step}")
    for k, loop in enumerate(band):
        if k >= len(plan.sizes):
            span = header_span(loop)
            headers.append(_text(data, span).rstrip())
            continue
        size = plan.sizes[k]
        step = loop.step or 1
        tile = _tile_name(context, loop)
        upper = _point_upper(context, analysis, loop, tile, step * size)
        suffix = f" step {step}" if step != 1 else ""
        lower = f"affine_map<(d0) -> (d0)>({tile})"
        headers.append(f"affine.for {iv_name(loop)} = {lower} to {upper}{suffix}")
    return headers


def _text(data: bytes, span: Span) -> str:
    return decode(data[span.start_byte : span.end_byte])


def _point_upper(
    context: Context, analysis: NestAnalysis, loop: AffineForOp, tile: str, extent: int
) -> str:
    """`min(ub, tile + extent)`, or `tile + extent` when every tile is full."""
    builder = analysis.window.builder
    levels = [Level(op) for op in loops_between(context.loop, loop)]
    domain = builder.build(levels)
    lowers = builder.bound_terms(loop.lower, domain.scope)
    uppers = builder.bound_terms(loop.upper, domain.scope)
    params = sorted(set(domain.params).union(*(t.params for t in lowers + uppers)))
    tile_dim = "_t"
    outer = [tile_dim]
    forms = [AffineForm(((tile_dim, 1),), (), extent)]
    full = False
    if len(lowers) == 1 and len(uppers) == 1:
        low, high = lowers[0].value, uppers[0].value
        if low is not None and high is not None and (high - low) % extent == 0:
            full = True
    if not full:
        forms += forms_of(context.session, params, outer, [t.text for t in uppers])
    operand = operand_namer(analysis.window, {tile_dim: tile})

    if len(forms) == 1:
        return map_text(forms, operand)
    return map_text(forms, operand, "min")


def summary(context: Context, plan: BandPlan) -> str:
    names = [iv_name(loop) for loop in plan.band]
    done = []
    if plan.skews:
        done.append("skewed " + _skew_words(tuple(map(tuple, plan.skews)), plan.band))
    if plan.order != list(range(len(plan.order))):
        done.append("reordered the loops to " + ", ".join(names[k] for k in plan.order))
    if plan.sizes:
        done.append("tiled by " + "×".join(str(s) for s in plan.sizes))
        if plan.unpeeled:
            done.append("the point loops not peeled (bounded by min/max)")
    if plan.distributed:
        done.append("one innermost loop per statement")
    if plan.wavefront == "tiles":
        done.append("the tiles of each diagonal in parallel")
    elif plan.wavefront:
        done.append(f"the points in wavefront along {plan.wavefront}")
    return "; ".join(done) or "nothing"
