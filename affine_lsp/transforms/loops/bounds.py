"""Loop bounds read from an isl set and written as MLIR bounds.

For a set over loop dims `[x0, ..., xn]` (outermost first), the bounds of `xk`
are the constraints of its projection on `x0..xk` that involve `xk`: lower
bounds `xk >= ceil(e / a)`, exclusive upper bounds `xk < floor(e / a) + 1`, in
terms of the outer dims and the parameters. Constraints with existential
variables are skipped (the result over-approximates; the rewrite is proven
afterwards anyway). `render_bound` prints them as `%N`, `42` or
`[max|min] affine_map<(d..)[s..] -> (...)>(dims)[symbols]`.
"""

from __future__ import annotations

from collections.abc import Callable

import islpy as isl

from affine_lsp.ir import AffineForOp, Operation
from affine_lsp.poly import (
    AffineForm,
    IslSession,
    NotAffine,
    Window,
    form_of_aff,
    fraction,
    pieces,
    render_mlir,
)
from affine_lsp.transforms.functions import is_valid_symbol


def _linear(terms: list[tuple[str, int]], constant: int) -> AffineForm:
    return AffineForm(tuple((n, c) for n, c in terms if c), (), constant)


def _divided(form: AffineForm, divisor: int, ceil: bool) -> AffineForm:
    """floor(form / divisor) or ceil(form / divisor) as a form."""
    if divisor == 1:
        return form
    inner = form
    if ceil:
        inner = AffineForm(form.terms, form.floors, form.constant + divisor - 1)
    return AffineForm((), ((inner, divisor, 1),), 0)


def dim_bounds(
    session: IslSession, domain: isl.Set, position: int
) -> tuple[list[AffineForm], list[AffineForm]]:
    """(lower bounds, exclusive upper bounds) of set dim `position` over the dims
    before it and the parameters (names as in the set's space)."""

    def run() -> isl.BasicSet:
        count = domain.dim(isl.dim_type.set)
        projected = domain.project_out(isl.dim_type.set, position + 1, count - position - 1)
        return projected.remove_redundancies().simple_hull()

    hull = session.run(run, "loop bounds")
    names = [hull.get_dim_name(isl.dim_type.set, k) or f"_x{k}" for k in range(position)]
    params = [
        hull.get_dim_name(isl.dim_type.param, k) or f"_p{k}"
        for k in range(hull.dim(isl.dim_type.param))
    ]
    lowers: list[AffineForm] = []
    uppers: list[AffineForm] = []
    for constraint in hull.get_constraints():
        own = int(fraction(constraint.get_coefficient_val(isl.dim_type.set, position)))
        if own == 0:
            continue
        if any(
            not constraint.get_coefficient_val(isl.dim_type.div, k).is_zero()
            for k in range(hull.dim(isl.dim_type.div))
        ):
            continue
        terms = [
            (names[k], int(fraction(constraint.get_coefficient_val(isl.dim_type.set, k))))
            for k in range(position)
        ]
        terms += [
            (params[k], int(fraction(constraint.get_coefficient_val(isl.dim_type.param, k))))
            for k in range(len(params))
        ]
        constant = int(fraction(constraint.get_constant_val()))
        # own * x + rest >= 0 (or = 0)
        rest = _linear(terms, constant)
        negated = _linear([(n, -c) for n, c in terms], -constant)
        scale = abs(own)
        if own > 0 or constraint.is_equality():
            # x >= -rest / own  (own > 0)  |  x >= rest / scale (own < 0, equality)
            lowers.append(_divided(negated if own > 0 else rest, scale, ceil=True))
        if own < 0 or constraint.is_equality():
            upper = _divided(rest if own < 0 else negated, scale, ceil=False)
            uppers.append(AffineForm(upper.terms, upper.floors, upper.constant + 1))
    if not lowers or not uppers:
        raise NotAffine("a loop of the new order has no bound")
    return _unique(lowers), _unique(uppers)


def _unique(forms: list[AffineForm]) -> list[AffineForm]:
    seen: list[AffineForm] = []
    for form in forms:
        if form not in seen:
            seen.append(form)
    return seen


def render_bound(
    forms: list[AffineForm], lower: bool, operand: Callable[[str], tuple[str, bool]]
) -> str:
    """MLIR text of a bound; `operand(name)` gives (SSA name, is a valid symbol)."""
    if len(forms) == 1:
        form = forms[0]
        if form.is_constant:
            return str(form.constant)
        name = form.single_name()
        if name is not None:
            ssa, symbol = operand(name)
            if symbol:
                return ssa
    return map_text(forms, operand, ("max" if lower else "min") if len(forms) > 1 else "")


def map_text(
    forms: list[AffineForm], operand: Callable[[str], tuple[str, bool]], keyword: str = ""
) -> str:
    """`[keyword ]affine_map<(d..)[s..] -> (forms)>(dims)[symbols]`."""
    dims: list[str] = []
    symbols: list[str] = []
    positions: dict[str, str] = {}
    for form in forms:
        for name in form.names():
            if name in positions:
                continue
            ssa, symbol = operand(name)
            group = symbols if symbol else dims
            positions[name] = f"{'s' if symbol else 'd'}{len(group)}"
            group.append(ssa)
    results = ", ".join(render_mlir(f, positions.__getitem__) for f in forms)
    header = f"({', '.join(f'd{k}' for k in range(len(dims)))})"
    if symbols:
        header += f"[{', '.join(f's{k}' for k in range(len(symbols)))}]"
    operands = f"({', '.join(dims)})" + (f"[{', '.join(symbols)}]" if symbols else "")
    prefix = f"{keyword} " if keyword else ""
    return f"{prefix}affine_map<{header} -> ({results})>{operands}"


def loops_between(root: AffineForOp, loop: Operation) -> list[AffineForOp]:
    """The affine.for ops around `loop` from `root` (included) inward, outermost
    first (empty when `loop` is `root`)."""
    chain = []
    current = loop.parent_op if loop is not root else None
    while isinstance(current, AffineForOp):
        chain.append(current)
        if current is root:
            break
        current = current.parent_op
    else:
        return []
    chain.reverse()
    return chain


def forms_of(
    session: IslSession, params: list[str], dims: list[str], texts: list[str]
) -> list[AffineForm]:
    """isl expression texts over `dims` and `params` as affine forms."""
    out = []
    for text in texts:
        source = f"[{', '.join(params)}] -> {{ [{', '.join(dims)}] -> [({text})] }}"
        piecewise = session.run(lambda s=source: isl.PwAff.read_from_str(session.ctx, s), "a bound")
        found = pieces(piecewise)
        if len(found) != 1:
            raise NotAffine("a bound is piecewise")
        form = form_of_aff(found[0])
        if form is None:
            raise NotAffine("a bound is not integral")
        out.append(form)
    return out


def operand_namer(window: Window, ssa: dict[str, str]) -> Callable[[str], tuple[str, bool]]:
    """(SSA name, is a valid symbol) of a name in a form: `ssa` names loop dims (never
    symbols); anything else is a parameter of `window`."""

    def operand(name: str) -> tuple[str, bool]:
        if name in ssa:
            return ssa[name], False
        value = window.names.value(name)
        if value is None:
            raise NotAffine(f"unknown name '{name}' in a bound")
        return value.display_name, is_valid_symbol(value)

    return operand
