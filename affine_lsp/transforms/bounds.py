"""Affine forms read from isl texts and printed as MLIR loop bounds and maps: shared
by fusion's slices and the loop transformations. A bound prints as `%N`, `42` or
`[max|min] affine_map<(d..)[s..] -> (...)>(dims)[symbols]`."""

from __future__ import annotations

from collections.abc import Callable

import islpy as isl

from affine_lsp.poly import (
    AffineForm,
    IslSession,
    NotAffine,
    Window,
    form_of_aff,
    pieces,
    render_mlir,
)
from affine_lsp.transforms.functions import is_valid_symbol


def forms_of(
    session: IslSession,
    params: list[str],
    dims: list[str],
    texts: list[str],
    what: str = "a bound",
) -> list[AffineForm]:
    """isl expression texts over `dims` and `params` as affine forms (`what` they
    are, for the reason when one is not affine)."""
    out = []
    for text in texts:
        source = f"[{', '.join(params)}] -> {{ [{', '.join(dims)}] -> [({text})] }}"
        piecewise = session.run(lambda s=source: isl.PwAff.read_from_str(session.ctx, s), what)
        found = pieces(piecewise)
        if len(found) != 1:
            raise NotAffine(f"{what} is piecewise")
        form = form_of_aff(found[0])
        if form is None:
            raise NotAffine(f"{what} is not integral")
        out.append(form)
    return out


def operand_namer(
    window: Window, ssa: dict[str, str], what: str = "a bound"
) -> Callable[[str], tuple[str, bool]]:
    """(SSA name, is a valid symbol) of a name in a form: `ssa` names loop dims (never
    symbols; read when asked, so it may grow later); anything else is a parameter of
    `window`."""

    def operand(name: str) -> tuple[str, bool]:
        if name in ssa:
            return ssa[name], False
        value = window.names.value(name)
        if value is None:
            raise NotAffine(f"unknown name '{name}' in {what}")
        return value.display_name, is_valid_symbol(value)

    return operand


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
