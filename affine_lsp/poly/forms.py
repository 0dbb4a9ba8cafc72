"""Integer affine forms read back from isl, and printed for people or for MLIR.

`AffineForm` is `sum(coefficient * name) + sum(coefficient * floor(inner / divisor))
+ constant` over isl names. `form_of_aff` reads an `isl.Aff` (None when it is not
integral); `render_math` prints `2i + N - 1` style text for hovers and messages;
`render_mlir` prints an MLIR affine expression (`d0 * 2 + s0 - 1`,
`(d0 + 1) floordiv 2`) with names mapped to `d`/`s` positions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import islpy as isl

_IN_DIM_TYPES = (isl.dim_type.in_, isl.dim_type.param)


@dataclass(frozen=True)
class AffineForm:
    terms: tuple[tuple[str, int], ...] = ()
    floors: tuple[tuple[AffineForm, int, int], ...] = ()  # (inner, divisor, coefficient)
    constant: int = 0

    @property
    def is_constant(self) -> bool:
        return not self.terms and not self.floors

    def single_name(self) -> str | None:
        """The name if the form is exactly one name (coefficient 1, nothing else)."""
        if not self.floors and self.constant == 0 and len(self.terms) == 1:
            name, coefficient = self.terms[0]
            return name if coefficient == 1 else None
        return None

    def minus(self, other: AffineForm) -> AffineForm:
        """`self - other`, with like terms merged."""
        terms = list(self.terms) + [(n, -c) for n, c in other.terms]
        floors = list(self.floors) + [(f, d, -c) for f, d, c in other.floors]
        return _merge(AffineForm(tuple(terms), tuple(floors), self.constant - other.constant))

    def names(self) -> list[str]:
        """Every name the form mentions, in order of first appearance (iterative)."""
        seen: list[str] = []
        stack: list[AffineForm] = [self]
        while stack:
            form = stack.pop()
            for name, _ in form.terms:
                if name not in seen:
                    seen.append(name)
            stack.extend(reversed([inner for inner, _, _ in form.floors]))
        return seen


def fraction(value: isl.Val) -> Fraction:
    """An `isl.Val` (integer or rational) as a Fraction."""
    return Fraction(value.to_str())


def _integer(value: isl.Val) -> int:
    return int(fraction(value))


def _scaled(value: isl.Val, scale: int) -> int | None:
    exact = fraction(value) * scale
    return int(exact) if exact.denominator == 1 else None


def form_of_aff(aff: isl.Aff, order: list[str] | None = None) -> AffineForm | None:
    """Read an integral `isl.Aff`; names come from its space (None if not integral)."""
    denominator = _integer(aff.get_denominator_val())
    if denominator != 1:
        return None
    return _read(aff, 1)


def _read(aff: isl.Aff, scale: int) -> AffineForm | None:
    """The form of `scale * aff` where the result must be integral; divs read in order."""
    divs: list[AffineForm | None] = []
    for k in range(aff.dim(isl.dim_type.div)):
        inner = aff.get_div(k)
        divisor = _integer(inner.get_denominator_val())
        numerator = _linear(inner, divisor, divs)
        if numerator is None:
            return None
        divs.append(numerator if divisor == 1 else AffineForm(floors=((numerator, divisor, 1),)))
    return _linear(aff, scale, divs)


def _linear(aff: isl.Aff, scale: int, divs: list[AffineForm | None]) -> AffineForm | None:
    terms: list[tuple[str, int]] = []
    for kind in _IN_DIM_TYPES:
        for position in range(aff.dim(kind)):
            coefficient = _scaled(aff.get_coefficient_val(kind, position), scale)
            if coefficient is None:
                return None
            if coefficient:
                name = aff.get_dim_name(kind, position) or f"_{kind}{position}"
                terms.append((name, coefficient))
    floors: list[tuple[AffineForm, int, int]] = []
    for position, div in enumerate(divs):
        coefficient = _scaled(aff.get_coefficient_val(isl.dim_type.div, position), scale)
        if coefficient is None:
            return None
        if not coefficient:
            continue
        if div is None:
            return None
        if div.floors and len(div.floors) == 1 and not div.terms and div.constant == 0:
            inner, divisor, _ = div.floors[0]
            floors.append((inner, divisor, coefficient))
        else:  # an integral div: inline its terms
            terms += [(n, c * coefficient) for n, c in div.terms]
    constant = _scaled(aff.get_constant_val(), scale)
    if constant is None:
        return None
    return _merge(AffineForm(tuple(terms), tuple(floors), constant))


def _merge(form: AffineForm) -> AffineForm:
    merged: dict[str, int] = {}
    for name, coefficient in form.terms:
        merged[name] = merged.get(name, 0) + coefficient
    terms = tuple((n, c) for n, c in merged.items() if c)
    floors: dict[tuple[AffineForm, int], int] = {}
    for inner, divisor, coefficient in form.floors:
        floors[(inner, divisor)] = floors.get((inner, divisor), 0) + coefficient
    kept = tuple((inner, d, c) for (inner, d), c in floors.items() if c)
    return AffineForm(terms, kept, form.constant)


# -- printing --------------------------------------------------------------------------


def _join(parts: list[tuple[int, str]], negated: Callable[[str], str] = "-{}".format) -> str:
    """Join signed parts: [(+1, 'i'), (-1, '2j')] -> 'i - 2j'; `negated` writes a
    leading negative part."""
    if not parts:
        return "0"
    text = ""
    for index, (sign, part) in enumerate(parts):
        if index == 0:
            text = part if sign > 0 else negated(part)
        else:
            text += f" + {part}" if sign > 0 else f" - {part}"
    return text


def render_math(form: AffineForm, rename: Callable[[str], str] = str) -> str:
    """`2i + N - 1`, `floor((i + 1)/2)`: the notation hovers and messages use."""

    def scaled(coefficient: int, text: str) -> tuple[int, str]:
        magnitude = abs(coefficient)
        body = (
            text
            if magnitude == 1
            else f"{magnitude}{text}"
            if text.isidentifier()
            else (f"{magnitude}*{text}")
        )
        return (1 if coefficient > 0 else -1), body

    return _render(form, rename, scaled, lambda inner, d: f"floor(({inner})/{d})")


def render_isl(form: AffineForm, rename: Callable[[str], str] = str) -> str:
    """isl syntax (`2*x + floor((y + 1)/2) - 3`), readable back by isl; `rename`
    maps each name to an isl term (parenthesised if it is not atomic)."""

    def scaled(coefficient: int, text: str) -> tuple[int, str]:
        magnitude = abs(coefficient)
        return (1 if coefficient > 0 else -1), text if magnitude == 1 else f"{magnitude}*{text}"

    return _render(form, rename, scaled, lambda inner, d: f"floor(({inner})/{d})")


def render_mlir(form: AffineForm, rename: Callable[[str], str]) -> str:
    """An MLIR affine expression; `rename` maps each name to `d0`, `s1`, `%x`..."""

    def scaled(coefficient: int, text: str) -> tuple[int, str]:
        magnitude = abs(coefficient)
        return (1 if coefficient > 0 else -1), text if magnitude == 1 else f"{text} * {magnitude}"

    def negated(part: str) -> str:
        # MLIR's unary minus binds tighter than floordiv: `-(x) floordiv 3` would be
        # `(-x) floordiv 3`, not `-((x) floordiv 3)`.
        return f"-({part})" if " floordiv " in part else f"-{part}"

    return _render(form, rename, scaled, lambda inner, d: f"({inner}) floordiv {d}", negated)


def _render(
    form: AffineForm,
    rename: Callable[[str], str],
    scaled: Callable[[int, str], tuple[int, str]],
    floor_text: Callable[[str, int], str],
    negated: Callable[[str], str] = "-{}".format,
) -> str:
    # Inner floors first (post-order with an explicit stack), then the outer form.
    rendered: dict[int, str] = {}
    stack: list[tuple[AffineForm, bool]] = [(form, False)]
    while stack:
        current, visited = stack.pop()
        if id(current) in rendered:
            continue
        if not visited:
            stack.append((current, True))
            stack.extend((inner, False) for inner, _, _ in current.floors)
            continue
        parts = [scaled(c, rename(n)) for n, c in current.terms]
        for inner, divisor, coefficient in current.floors:
            parts.append(scaled(coefficient, floor_text(rendered[id(inner)], divisor)))
        if current.constant or not parts:
            parts.append((1 if current.constant >= 0 else -1, str(abs(current.constant))))
        rendered[id(current)] = _join(parts, negated)
    return rendered[id(form)]
