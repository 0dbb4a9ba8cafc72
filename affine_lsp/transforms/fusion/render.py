"""isl expressions of a slice plan printed as MLIR loop bounds and affine.apply ops."""

from __future__ import annotations

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


class BoundRenderer:
    """Turns isl texts over context names into MLIR text over SSA names."""

    def __init__(self, session: IslSession, window: Window, params: list[str]) -> None:
        self.session = session
        self.window = window
        self.params = params
        self.ssa_names: dict[str, str] = {}  # context dim name -> SSA name

    def forms(self, context: list[str], texts: list[str]) -> list[AffineForm]:
        out = []
        for text in texts:
            source = f"[{', '.join(self.params)}] -> {{ [{', '.join(context)}] -> [({text})] }}"
            piecewise = self.session.run(
                lambda s=source: isl.PwAff.read_from_str(self.session.ctx, s), "a bound"
            )
            found = pieces(piecewise)
            if len(found) != 1:
                raise NotAffine("a slice bound is piecewise")
            form = form_of_aff(found[0])
            if form is None:
                raise NotAffine("a slice bound is not integral")
            out.append(form)
        return out

    def _operand(self, name: str) -> tuple[str, bool]:
        """(SSA name, is a symbol) of a context dim or parameter name."""
        if name in self.ssa_names:
            return self.ssa_names[name], False
        value = self.window.names.value(name)
        if value is None:
            raise NotAffine(f"unknown name '{name}' in a slice bound")
        return value.display_name, is_valid_symbol(value)

    def map_text(self, forms: list[AffineForm], keyword: str = "") -> str:
        """`[keyword ]affine_map<...>(dims)[symbols]` for the forms."""
        dims: list[str] = []
        symbols: list[str] = []
        positions: dict[str, str] = {}
        for form in forms:
            for name in form.names():
                if name in positions:
                    continue
                ssa, symbol = self._operand(name)
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

    def bound(self, forms: list[AffineForm], lower: bool) -> str:
        if len(forms) == 1:
            form = forms[0]
            if form.is_constant:
                return str(form.constant)
            name = form.single_name()
            if name is not None:
                ssa, symbol = self._operand(name)
                if symbol:
                    return ssa
        return self.map_text(forms, ("max" if lower else "min") if len(forms) > 1 else "")

    def single_ssa(self, form: AffineForm) -> str | None:
        """The SSA name a form is equal to, if it is exactly one operand."""
        name = form.single_name()
        return None if name is None else self._operand(name)[0]
