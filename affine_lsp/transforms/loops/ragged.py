"""Unroll-and-jam around an inner loop whose bounds depend on the unrolled iv (a
triangle: `%j = 0 to %i + 1` in `%i`).

Copy c of the inner loop runs from `L(%i + c*s)` to `U(%i + c*s)` (s: the unrolled
loop's step). Its copies are jammed where they all run, from the largest lower bound
to the smallest upper bound (the copy with the extreme bound is known from the sign
of `%i`'s coefficient); the iterations of a copy before that range run in a loop of
their own before the jammed loop (a prologue), those after it in one after it (an
epilogue), copy by copy: `%j = %i + 1 to %i + 2` for copy 1 of the triangle above,
while copy 0 needs none. So the jammed loop is the rectangular part and the prologues
and epilogues the rest of the triangle. The bounds must be single affine expressions
with `%i` outside any floordiv, and the inner loop's step 1 (so that every copy's
iterations lie on the jammed loop's grid).

Legality is checked on the exact schedule (`unroll._check_jam` asks `pieces` for the
order of an instance: prologue, jammed, epilogue), and the result is proven like any
rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.ir import AffineForOp
from affine_lsp.poly import AffineForm, NotAffine, Statement, render_isl
from affine_lsp.transforms.bounds import forms_of, render_bound
from affine_lsp.transforms.loops.core import Context, Refused
from affine_lsp.transforms.loops.nest import iv, iv_name
from affine_lsp.transforms.loops.split import Namer, bounds_of


@dataclass
class Ragged:
    """An inner loop whose bounds depend on the unrolled iv: its bounds per copy (as
    forms over the window's parameters) and which copy has the extreme bounds."""

    inner: AffineForOp
    lowers: list[AffineForm]  # copy c's lower bound
    uppers: list[AffineForm]
    first: int  # the copy whose lower bound is the largest (the jammed loop's start)
    last: int  # the copy whose upper bound is the smallest (its end)
    operand: Namer

    def jammed_bounds(self) -> tuple[str, str]:
        return (
            render_bound([self.lowers[self.first]], True, self.operand),
            render_bound([self.uppers[self.last]], False, self.operand),
        )

    def prologue(self, copy: int) -> tuple[str, str] | None:
        """Bounds of copy `copy`'s iterations before the jammed range (None: none)."""
        if self.lowers[copy] == self.lowers[self.first]:
            return None
        end = _distinct([self.uppers[copy], self.lowers[self.first]])
        return (
            render_bound([self.lowers[copy]], True, self.operand),
            render_bound(end, False, self.operand),
        )

    def epilogue(self, copy: int) -> tuple[str, str] | None:
        """Bounds of copy `copy`'s iterations after the jammed range (None: none)."""
        if self.uppers[copy] == self.uppers[self.last]:
            return None
        start = _distinct([self.lowers[copy], self.lowers[self.first], self.uppers[self.last]])
        return (
            render_bound(start, True, self.operand),
            render_bound([self.uppers[copy]], False, self.operand),
        )


def _distinct(forms: list[AffineForm]) -> list[AffineForm]:
    out: list[AffineForm] = []
    for form in forms:
        if form not in out:
            out.append(form)
    return out


def _shifted(form: AffineForm, name: str, by: int) -> AffineForm:
    coefficient = dict(form.terms).get(name, 0)
    return AffineForm(form.terms, form.floors, form.constant + coefficient * by)


def _coefficient(form: AffineForm, name: str, what: str) -> int:
    for inner, _, _ in form.floors:
        if name in inner.names():
            raise Refused(what)
    return dict(form.terms).get(name, 0)


def plan_ragged(context: Context, loop: AffineForOp, inner: AffineForOp, factor: int) -> Ragged:
    """How the copies of `inner` (bounds depending on `loop`'s iv) are jammed."""
    refusal = (
        f"the bounds of {iv_name(inner)} depend on {iv_name(loop)} other than by one "
        "affine expression each"
    )
    if (inner.step or 1) != 1:
        raise Refused(
            f"the bounds of {iv_name(inner)} depend on {iv_name(loop)} and its step is not 1"
        )
    try:
        bounds = bounds_of(context, inner)
    except NotAffine as error:
        raise Refused(f"the bounds of {iv_name(inner)}: {error.reason}") from None
    if len(bounds.lowers) != 1 or len(bounds.uppers) != 1:
        raise Refused(refusal)
    window = context.analysis(inner).window
    name = next(
        (n for n in bounds.params if window.names.value(n) is iv(loop)),
        None,
    )
    if name is None:
        raise Refused(refusal)
    step = loop.step or 1
    lower, upper = bounds.lowers[0], bounds.uppers[0]
    low = _coefficient(lower, name, refusal)
    high = _coefficient(upper, name, refusal)
    lowers = [_shifted(lower, name, c * step) for c in range(factor)]
    uppers = [_shifted(upper, name, c * step) for c in range(factor)]
    first = factor - 1 if low > 0 else 0
    last = 0 if high >= 0 else factor - 1
    outer = iv(loop).display_name

    def operand(n: str) -> tuple[str, bool]:  # the iv is a dim, never a symbol
        return (outer, False) if n == name else bounds.operand(n)

    return Ragged(inner, lowers, uppers, first, last, operand)


def ragged_pieces(
    context: Context,
    statement: Statement,
    ragged: Ragged,
    loop: AffineForOp,
    x: str,
    start: str,
    step: int,
) -> tuple[str, str, str]:
    """For an instance of `statement` (under `ragged.inner`, dims over `x` the unrolled
    iv): the isl conditions 'in a prologue' and 'in an epilogue' and the inner dim,
    for the group starting at `start` (an isl term)."""
    analysis = context.analysis(loop)
    y = analysis.dim_of(statement, ragged.inner)
    if y is None:
        raise Refused(f"{iv_name(ragged.inner)} is not modelled")
    dims = list(statement.domain.dims)
    params = sorted(statement.domain.params)

    def bound(text: str, copy: int) -> str:
        form = forms_of(context.session, params, dims, [text])[0]
        value = f"({start} + {copy * step})"
        return render_isl(form, lambda n: value if n == x else n)

    lower = bound(str(analysis.lower_bound(statement, ragged.inner)), ragged.first)
    upper = bound(str(analysis.upper_bound(statement, ragged.inner)), ragged.last)
    return f"{y} < {lower}", f"{y} >= {upper} and {y} >= {lower}", y
