"""Where the iterations of a loop unrolled by F go when its trip count is not a
constant multiple of F (W = F * step: the unrolled loop's step).

- **constant**: the bounds are a constant number of iterations apart (`0 to 10`,
  `%ii to %ii + 32`): the unrolled loop stops at `lb + W * (trips floordiv F)`,
  and a remainder loop from there to the original upper bound runs the rest.
- **epilogue**: one lower bound `lb`, upper bounds `min(u_1, ..., u_n)`. Floor
  commutes with min, so the unrolled loop runs to `min_k(lb + ((u_k - lb + step - 1)
  floordiv W) * W)`; an upper bound `u_k` always a multiple of W iterations from
  `lb` (`%ii + 32` by 4) ends where its split does and is kept as it is. When at
  most one upper bound `u_x` is not, the remainder loop runs from `max(lb, s_x)`
  (its split; `lb` when the loop is empty) to the original upper bound: the
  iterations past the unrolled loop are exactly those. This is a tile's point loop
  `%ii to min(%ii + 32, %n)`.
- **full tile** (where the epilogue form does not apply): a lower bound `l*` and an
  upper bound `u* = l* + T` (T constant) among the lower (max) and upper (min)
  bounds: `affine.if` every other lower bound is at most `l*` and every other upper
  bound at least `u*` (the tile is full), a loop from `l*` to `u*` (constant trip
  count, unrolled, with a constant remainder), else the original loop (a partial
  tile).

Measured on a tiled gemm (tiles 32, N = 500, `clang-22 -O3 -march=native`, one
core, interleaved), `%j` unrolled and jammed by 4 with scalar replacement: the
epilogue form took 0.95 and 0.86 of the full-tile form's time in two runs (7.8
against 8.2 ms, 78 against 91 ms on a loaded machine); it is also the shorter
text (no second copy of the body), so it is used wherever it applies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from affine_lsp.ir import AffineForOp
from affine_lsp.poly import AffineForm, Statement, Term, render_mlir
from affine_lsp.transforms.bounds import forms_of, operand_namer, render_bound
from affine_lsp.transforms.loops.core import Context, Refused
from affine_lsp.transforms.loops.nest import iv_name

CONSTANT = "constant"
EPILOGUE = "epilogue"
FULL_TILE = "full tile"

Namer = Callable[[str], tuple[str, bool]]


@dataclass
class Bounds:
    """A loop's bounds as affine forms over the window's parameters, with the isl
    terms they come from."""

    lowers: list[AffineForm]
    uppers: list[AffineForm]
    lower_terms: list[Term]
    upper_terms: list[Term]
    operand: Namer
    params: list[str]


@dataclass
class Split:
    """How the iterations divide (see the module's docstring). Texts are MLIR bounds."""

    kind: str
    trips: int | None  # constant: the loop's; full tile: a full tile's
    main_lower: str | None = None  # None: the loop's own
    main_upper: str | None = None
    rest_lower: str | None = None  # None: no remainder loop
    rest_upper: str | None = None  # None: the loop's own
    condition: str = ""  # full tile: the affine.if's condition ("": every tile is full)
    lower_at: int = 0  # full tile: which lower bound is l*, which upper bound is u*
    upper_at: int = 0
    width: int = 1

    @property
    def remainder(self) -> bool:
        return self.rest_lower is not None


def bounds_of(context: Context, loop: AffineForOp) -> Bounds:
    analysis = context.analysis(loop)
    builder = analysis.window.builder
    domain = builder.build([])
    lower_terms = builder.bound_terms(loop.lower, domain.scope)
    upper_terms = builder.bound_terms(loop.upper, domain.scope)
    params = sorted(set(domain.params).union(*(t.params for t in lower_terms + upper_terms)))
    return Bounds(
        forms_of(context.session, params, [], [t.text for t in lower_terms]),
        forms_of(context.session, params, [], [t.text for t in upper_terms]),
        lower_terms,
        upper_terms,
        operand_namer(analysis.window, {}),
        params,
    )


def trip_count(bounds: Bounds, step: int) -> int | None:
    """The trip count when the loop has one lower and one upper bound a constant apart."""
    if len(bounds.lowers) != 1 or len(bounds.uppers) != 1:
        return None
    difference = bounds.uppers[0].minus(bounds.lowers[0])
    if not difference.is_constant:
        return None
    return max(0, -(-difference.constant // step))


def plus(form: AffineForm, constant: int) -> AffineForm:
    return AffineForm(form.terms, form.floors, form.constant + constant)


def _split_form(lower: AffineForm, upper: AffineForm, step: int, width: int) -> AffineForm:
    """lower + ((upper - lower + step - 1) floordiv width) * width."""
    inner = upper.minus(lower)
    inner = AffineForm(inner.terms, inner.floors, inner.constant + step - 1)
    groups = AffineForm((), ((inner, width, width),), 0)
    return lower.minus(AffineForm((), tuple((f, d, -c) for f, d, c in groups.floors), 0))


def _split_term(lower: str, upper: str, step: int, width: int) -> str:
    return f"({lower}) + {width}*floor((({upper}) - ({lower}) + {step - 1})/{width})"


def plan_split(context: Context, loop: AffineForOp, factor: int) -> Split:
    """How to unroll `loop` by `factor` (refused when no form applies)."""
    bounds = bounds_of(context, loop)
    step = loop.step or 1
    width = step * factor
    trips = trip_count(bounds, step)
    if trips is not None:
        return _constant(bounds, trips, factor, width)
    refusal: Refused | None = None
    if len(bounds.lowers) == 1:
        try:
            return _epilogue(context, bounds, step, width)
        except Refused as why:
            refusal = why
    found = _full_tile(context, bounds, step, factor)
    if found is not None:
        return found
    if refusal is not None:
        raise refusal
    ends = "a min of bounds" if len(bounds.uppers) > 1 else "a bound"
    raise Refused(
        f"{iv_name(loop)} starts at a max of several bounds and ends at {ends} none of "
        "which is a constant number of iterations after one of its starts: its "
        f"iterations cannot be grouped by {factor}"
    )


def _constant(bounds: Bounds, trips: int, factor: int, width: int) -> Split:
    lower = bounds.lowers[0]
    if trips % factor == 0:
        return Split(CONSTANT, trips, width=width)
    end = plus(lower, width * (trips // factor))
    text = render_bound([end], False, bounds.operand)
    return Split(CONSTANT, trips, main_upper=text, rest_lower=text, width=width)


def _always(context: Context, bounds: Bounds, condition: str) -> bool:
    """Whether `condition` (over the parameters) holds wherever the loop runs."""
    analysis = context.analysis()
    window = analysis.window

    def check() -> bool:
        where = context.session.set(f"[{', '.join(bounds.params)}] -> {{ : {condition} }}")
        return bool(window.context.is_subset(where.align_params(window.context.get_space())))

    return bool(context.session.run(check, "the loop's bounds"))


def _never(context: Context, bounds: Bounds, condition: str) -> bool:
    return _always(context, bounds, f"not ({condition})")


def _epilogue(context: Context, bounds: Bounds, step: int, width: int) -> Split:
    lower = bounds.lowers[0]
    lower_text = bounds.lower_terms[0].text
    mains: list[AffineForm] = []
    ragged: list[tuple[AffineForm, str]] = []  # (split, its isl text)
    for upper, term in zip(bounds.uppers, bounds.upper_terms, strict=True):
        split = _split_form(lower, upper, step, width)
        split_text = _split_term(lower_text, term.text, step, width)
        # Aligned: no iteration is left between the split and the bound.
        if _never(context, bounds, f"{term.text} > {lower_text} and {split_text} < {term.text}"):
            mains.append(upper)
            continue
        mains.append(split)
        ragged.append((split, split_text))
    if len(ragged) > 1:
        raise Refused(
            f"the loop ends at a min of several bounds that are not a multiple of "
            f"{width // step} iterations from its start, and none of them is a constant "
            "number of iterations after it: its iterations cannot be grouped by "
            f"{width // step}"
        )
    if not ragged:  # every tile runs a multiple of the factor: the bound stays
        return Split(EPILOGUE, None, width=width)
    main_upper = render_bound(mains, False, bounds.operand)
    split, split_text = ragged[0]
    if _always(context, bounds, f"{split_text} >= {lower_text}"):
        rest = render_bound([split], True, bounds.operand)
    else:
        rest = render_bound([lower, split], True, bounds.operand)
    return Split(EPILOGUE, None, main_upper=main_upper, rest_lower=rest, width=width)


def _full_tile(context: Context, bounds: Bounds, step: int, factor: int) -> Split | None:
    width = step * factor
    for m, lower in enumerate(bounds.lowers):
        for k, upper in enumerate(bounds.uppers):
            difference = upper.minus(lower)
            if not difference.is_constant or difference.constant <= 0:
                continue
            trips = -(-difference.constant // step)
            conditions = full_conditions(bounds.lower_terms, bounds.upper_terms, m, k)
            condition = " and ".join(conditions)
            if _never(context, bounds, condition):
                continue
            if trips < factor:
                raise Refused(
                    f"a full tile of the loop runs only {trips} times: unroll it by at most {trips}"
                )
            main_end = plus(lower, width * (trips // factor))
            start = render_bound([lower], True, bounds.operand)
            text = "" if _always(context, bounds, condition) else _set_text(bounds, m, k)
            rest = None
            if trips % factor:
                rest = render_bound([main_end], True, bounds.operand)
            return Split(
                FULL_TILE,
                trips,
                main_lower=start,
                main_upper=render_bound([main_end], False, bounds.operand),
                rest_lower=rest,
                rest_upper=render_bound([upper], False, bounds.operand),
                condition=text,
                lower_at=m,
                upper_at=k,
                width=width,
            )
    return None


def full_conditions(lowers: list[Term], uppers: list[Term], m: int, k: int) -> list[str]:
    """isl conditions 'lower bound m is the max, upper bound k the min'."""
    found = [f"{lowers[m].text} >= {t.text}" for n, t in enumerate(lowers) if n != m]
    found += [f"{uppers[k].text} <= {t.text}" for n, t in enumerate(uppers) if n != k]
    return found or ["true"]


def _set_text(bounds: Bounds, m: int, k: int) -> str:
    """The full tile's condition as an `affine.if` writes it."""
    forms = [bounds.lowers[m].minus(f) for n, f in enumerate(bounds.lowers) if n != m]
    forms += [f.minus(bounds.uppers[k]) for n, f in enumerate(bounds.uppers) if n != k]
    return set_text(bounds, forms)


def runs_condition(bounds: Bounds) -> str:
    """'the loop runs at least once' (every upper bound above every lower bound) as an
    `affine.if` writes it."""
    forms = [plus(u.minus(lower), -1) for lower in bounds.lowers for u in bounds.uppers]
    return set_text(bounds, forms)


def set_text(bounds: Bounds, forms: list[AffineForm]) -> str:
    """`affine_set<(d..)[s..] : (e >= 0, ...)>(dims)[symbols]`: every form at least 0."""
    dims: list[str] = []
    symbols: list[str] = []
    positions: dict[str, str] = {}
    for form in forms:
        for name in form.names():
            if name in positions:
                continue
            ssa, symbol = bounds.operand(name)
            group = symbols if symbol else dims
            positions[name] = f"{'s' if symbol else 'd'}{len(group)}"
            group.append(ssa)
    constraints = ", ".join(f"{render_mlir(f, positions.__getitem__)} >= 0" for f in forms)
    header = f"({', '.join(f'd{k}' for k in range(len(dims)))})"
    if symbols:
        header += f"[{', '.join(f's{k}' for k in range(len(symbols)))}]"
    operands = f"({', '.join(dims)})" + (f"[{', '.join(symbols)}]" if symbols else "")
    return f"affine_set<{header} : ({constraints})>{operands}"


# -- legality: the condition 'in the unrolled loop' of a statement's instance ------------


def main_condition(
    context: Context, statement: Statement, loop: AffineForOp, split: Split | None, x: str
) -> str:
    """isl condition on dim `x` (of `loop`, in `statement`'s scope): the instance runs in
    the unrolled loop ("" when every instance does)."""
    if split is None:
        return ""
    analysis = context.analysis(loop)
    builder = analysis.window.builder
    scope = statement.domain.scope
    lowers = builder.bound_terms(loop.lower, scope)
    uppers = builder.bound_terms(loop.upper, scope)
    step = loop.step or 1
    width = split.width
    if split.kind == FULL_TILE:
        lower = lowers[split.lower_at].text
        trips = split.trips or 0
        end = f"({lower}) + {width * (trips // (width // step))}"
        full = " and ".join(full_conditions(lowers, uppers, split.lower_at, split.upper_at))
        return f"({full}) and {x} < {end}"
    if not split.remainder:
        return ""
    lower = lowers[0].text
    if split.kind == CONSTANT:
        trips = split.trips or 0
        return f"{x} < ({lower}) + {width * (trips // (width // step))}"
    return " and ".join(f"{x} < {_split_term(lower, u.text, step, width)}" for u in uppers)
