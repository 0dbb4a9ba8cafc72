"""Loop bounds read from an isl set (`transforms.bounds` writes them as MLIR bounds).

For a set over loop dims `[x0, ..., xn]` (outermost first), the bounds of `xk`
are the constraints of its projection on `x0..xk` that involve `xk`: lower
bounds `xk >= ceil(e / a)`, exclusive upper bounds `xk < floor(e / a) + 1`, in
terms of the outer dims and the parameters. Constraints with existential
variables are skipped (the result over-approximates; the rewrite is proven
afterwards anyway). `transforms.bounds.render_bound` prints them.
"""

from __future__ import annotations

import islpy as isl

from affine_lsp.ir import AffineForOp, Operation
from affine_lsp.poly import (
    AffineForm,
    IslSession,
    NotAffine,
    fraction,
)


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
