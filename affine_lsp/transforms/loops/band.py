"""Interchange, permute, tile and skew a perfect band of loops.

All four are a change of coordinates of the band's iterations, optionally tiled:
skew (`x1 += f * x0`), then permute (`y[P[k]] = x[k]`), then tile the outer
loops of the new order by `T_k` (tile loops step over origins that are multiples
of `T_k`, or, for a rectangular band kept in its order, over `lb + k * step * T`).
Legality: the new schedule of every statement (the tile index
`floor(y_k / T_k)`, then `y`) must keep every dependence's source first.

Text: a rectangular band keeps its headers (interchange swaps them; tiling adds
`%i_tile` loops stepping over the original bounds and bounds the point loops by
`min(ub, %i_tile + step * T)`); otherwise every header is computed from the
band's domain with isl (`bounds.py`), and a skewed loop gets a fresh iv
(`%j_skew`) with the old one recomputed at the top of the body.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from affine_lsp.ir import AffineForOp
from affine_lsp.poly import AffineForm, Level, Statement
from affine_lsp.syntax import Span, decode
from affine_lsp.transforms.bounds import forms_of, map_text, operand_namer, render_bound
from affine_lsp.transforms.edits import line_start, next_line_start
from affine_lsp.transforms.loops.bounds import dim_bounds, loops_between
from affine_lsp.transforms.loops.core import (
    INTERCHANGE,
    PERMUTE,
    SKEW,
    TILE,
    Context,
    Refused,
    Spec,
    check_layout,
)
from affine_lsp.transforms.loops.legality import NestAnalysis
from affine_lsp.transforms.loops.nest import (
    body_block,
    defined_under,
    header_span,
    iv,
    iv_name,
    perfect_band,
)
from affine_lsp.transforms.loops.proof import Rewrite
from affine_lsp.transforms.loops.text import Builder, Renames, indent_of, step_indent

SKEW_FACTORS = (1, 2, 3)
"""Skew factors tried when a band transformation is illegal."""


@dataclass
class BandPlan:
    band: list[AffineForOp]
    order: list[int]  # new position -> index in `band`
    sizes: list[int]  # tile sizes of the outer loops of the new order
    skew: int | None
    keep_headers: bool  # rectangular, not skewed: keep the header texts
    what: str  # for messages: "interchange", "tiling 32×32"...


def _words(spec: Spec, band: list[AffineForOp]) -> str:
    if spec.kind == INTERCHANGE:
        return "interchange"
    if spec.kind == PERMUTE:
        return "the permutation"
    if spec.kind == TILE:
        return "tiling " + "×".join(str(s) for s in spec.sizes)
    return "the skew"


def title(spec: Spec, band: list[AffineForOp]) -> str:
    """The code action's title."""
    prefix = ""
    if spec.skew is not None and len(band) > 1:
        prefix = f"Skew {iv_name(band[1])} by {spec.skew} and "
    if spec.kind == INTERCHANGE:
        text = f"interchange {iv_name(band[0])} and {iv_name(band[1])}"
    elif spec.kind == PERMUTE:
        text = "permute to " + ", ".join(
            iv_name(band[spec.permutation.index(k)]) for k in range(len(spec.permutation))
        )
    elif spec.kind == TILE:
        text = "tile " + "×".join(str(s) for s in spec.sizes)
    else:
        return f"Skew {iv_name(band[1])} by {spec.factor} (against {iv_name(band[0])})"
    return (prefix + text)[0].upper() + (prefix + text)[1:]


def _band_for(context: Context, spec: Spec) -> tuple[list[AffineForOp], list[int], list[int]]:
    loop = context.loop
    full = perfect_band(loop)
    if spec.kind == INTERCHANGE:
        if len(full) < 2:
            raise Refused(
                f"no loop is nested directly in {iv_name(loop)} (its body holds other ops)"
            )
        return full[:2], [1, 0], []
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
        return full[: len(permutation)], order, []
    if spec.kind == TILE:
        sizes = list(spec.sizes)
        if not sizes or any(s < 1 for s in sizes):
            raise Refused("tile sizes must be positive integers")
        if len(sizes) > len(full):
            raise Refused(
                f"{len(sizes)} tile sizes for {len(full)} perfectly nested "
                f"loop{'s' if len(full) > 1 else ''} from {iv_name(loop)}"
            )
        depth = max(len(sizes), 2 if spec.skew is not None else 1)
        band = full[: min(depth, len(full))]
        return band, list(range(len(band))), sizes
    if spec.kind == SKEW:
        if len(full) < 2:
            raise Refused(f"no loop is nested directly in {iv_name(loop)} to skew")
        if not spec.factor or spec.factor < 1:
            raise Refused("the skew factor must be a positive integer")
        return full[:2], [0, 1], []
    raise Refused(f"unknown band transformation {spec.kind}")


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
    band, order, sizes = _band_for(context, spec)
    _check_structure(context, band)
    skew = spec.factor if spec.kind == SKEW else spec.skew
    rectangular = _rectangular(band)
    identity = order == list(range(len(order)))
    keep = rectangular and skew is None and (not sizes or identity)
    if not keep and any((loop.step or 1) != 1 for loop in band):
        raise Refused(
            "loops with a step other than 1 are only transformed when their bounds do not "
            "depend on each other"
        )
    if spec.kind == PERMUTE and identity:
        raise Refused("nothing to do: the permutation keeps every loop in place")
    result = BandPlan(band, order, sizes, skew, keep, _words(spec, band))
    if check:
        violation = _violation(context, result)
        if violation is not None:
            hint = _skew_hint(context, spec, result) if skew is None else None
            reason = violation
            if hint is not None:
                reason += f"; skew {iv_name(band[1])} by {hint.skew} first"
            raise Refused(reason, hint)
    return result


def _skew_hint(context: Context, spec: Spec, failed: BandPlan) -> Spec | None:
    if spec.kind not in (INTERCHANGE, PERMUTE, TILE) or len(failed.band) < 2:
        return None
    if any((loop.step or 1) != 1 for loop in failed.band):
        return None
    for factor in SKEW_FACTORS:
        candidate = BandPlan(failed.band, failed.order, failed.sizes, factor, False, failed.what)
        if _violation(context, candidate) is None:
            return spec.with_skew(factor)
    return None


# -- legality ---------------------------------------------------------------------------


def _coordinates(plan: BandPlan, x: list[str]) -> list[str]:
    """The new coordinates `y` (new order) as expressions of the old ones."""
    skewed = list(x)
    if plan.skew is not None:
        skewed[1] = f"({x[1]} + {plan.skew}*{x[0]})"
    return [skewed[index] for index in plan.order]


def _violation(context: Context, plan: BandPlan) -> str | None:
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
            if plan.keep_headers:
                loop = plan.band[k]
                start = analysis.lower_bound(statement, loop)
                step = (loop.step or 1) * size
                tiles.append(f"floor(({x[k]} - ({start}))/{step})")
            else:
                tiles.append(f"floor(({y[k]})/{size})")
        return old[:first] + tiles + y + old[last + 1 :]

    found = analysis.violation(entries)
    if found is None:
        return None
    dependence, relation = found
    return analysis.explain(dependence, relation, plan.what)


# -- text ---------------------------------------------------------------------------------


def rewrite(context: Context, plan: BandPlan) -> Rewrite:
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
    if plan.keep_headers and not plan.sizes:
        _swap_headers(builder, context, plan, end)
    else:
        headers = (
            _tiled_headers(context, plan) if plan.keep_headers else _isl_headers(context, plan)
        )
        for depth, header in enumerate(headers):
            builder.line(indent + " " * (unit * depth), header + " {")
        depth = len(headers)
        old_depth = len(band)
        inner_indent = indent + " " * (unit * depth)
        if plan.skew is not None:
            skewed = band[1]
            builder.line(
                inner_indent,
                f"{iv_name(skewed)} = affine.apply affine_map<(d0, d1) -> "
                f"(d0 - {_times('d1', plan.skew)})>"
                f"({_skew_name(context, skewed)}, {iv_name(band[0])})",
            )
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


def _times(name: str, factor: int) -> str:
    return name if factor == 1 else f"{name} * {factor}"


def _skew_name(context: Context, loop: AffineForOp) -> str:
    key = "_skew_name"
    names: dict[int, str] = context.__dict__.setdefault(key, {})
    if id(loop) not in names:
        names[id(loop)] = context.fresh(iv_name(loop), "skew")
    return names[id(loop)]


def _tile_name(context: Context, loop: AffineForOp) -> str:
    names: dict[int, str] = context.__dict__.setdefault("_tile_names", {})
    if id(loop) not in names:
        names[id(loop)] = context.fresh(iv_name(loop), "tile")
    return names[id(loop)]


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


def _isl_headers(context: Context, plan: BandPlan) -> list[str]:
    """Headers computed from the band's domain: tile loops, then the band's loops in
    the new order (steps are 1)."""
    band = plan.band
    analysis = context.analysis(band[0])
    builder = analysis.window.builder
    levels: list[Level] = [Level(op) for op in loops_between(context.loop, band[0])]
    levels += [Level(op) for op in band]
    domain = builder.build(levels)
    assert domain.set is not None
    outer = len(levels) - len(band)
    x = domain.dims[outer:]
    y = _coordinates(plan, x)
    m = len(plan.sizes)
    outs = [f"_o{k}" for k in range(m)] + [f"_y{k}" for k in range(len(band))]
    constraints = [f"_y{k} = {expr}" for k, expr in enumerate(y)]
    constraints += [f"_o{k} <= _y{k} < _o{k} + {size}" for k, size in enumerate(plan.sizes)]
    params = ", ".join(sorted(domain.params))
    kept = domain.dims[:outer]
    # Loops around the band inside the window are parameters of the new headers.
    relation = context.session.map(
        f"[{params}] -> {{ [{', '.join(domain.dims)}] -> [{', '.join(kept + outs)}] : "
        + " and ".join(constraints)
        + " }"
    )
    domain_set = domain.set
    new_set = context.session.run(lambda: domain_set.apply(relation), "the new domain")
    for position, name in enumerate(kept + outs):
        new_set = new_set.set_dim_name(isl.dim_type.set, position, name)
    tile_names = [_tile_name(context, band[plan.order[k]]) for k in range(m)]
    loop_names = []
    for k in range(len(band)):
        loop = band[plan.order[k]]
        loop_names.append(
            _skew_name(context, loop)
            if plan.skew is not None and loop is band[1]
            else iv_name(loop)
        )
    ssa = {f"_o{k}": tile_names[k] for k in range(m)}
    ssa.update({f"_y{k}": loop_names[k] for k in range(len(band))})
    for position, dim in enumerate(kept):
        ssa[dim] = iv(levels[position].op).name  # type: ignore[arg-type]

    operand = operand_namer(analysis.window, ssa)

    headers = []
    for position in range(len(kept), len(kept) + len(outs)):
        lowers, uppers = dim_bounds(context.session, new_set, position)
        k = position - len(kept)
        if k < m:
            size = plan.sizes[k]
            lowers = [_aligned(form, size) for form in lowers]
            headers.append(
                f"affine.for {tile_names[k]} = {render_bound(lowers, True, operand)} to "
                f"{render_bound(uppers, False, operand)} step {size}"
            )
        else:
            name = loop_names[k - m]
            headers.append(
                f"affine.for {name} = {render_bound(lowers, True, operand)} to "
                f"{render_bound(uppers, False, operand)}"
            )
    return headers


def _aligned(form: AffineForm, size: int) -> AffineForm:
    """The smallest multiple of `size` at least `form`."""
    if size == 1:
        return form
    if form.is_constant:
        return AffineForm((), (), -(-form.constant // size) * size)
    inner = AffineForm(form.terms, form.floors, form.constant + size - 1)
    return AffineForm((), ((inner, size, size),), 0)


def summary(context: Context, plan: BandPlan) -> str:
    names = [iv_name(loop) for loop in plan.band]
    done = []
    if plan.skew is not None:
        done.append(f"skewed {names[1]} by {plan.skew}")
    if plan.order != list(range(len(plan.order))):
        done.append("reordered the loops to " + ", ".join(names[k] for k in plan.order))
    if plan.sizes:
        done.append("tiled by " + "×".join(str(s) for s in plan.sizes))
    return "; ".join(done) or "nothing"
