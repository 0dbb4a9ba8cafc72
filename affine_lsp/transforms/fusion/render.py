"""isl expressions of a slice plan printed as MLIR loop bounds and affine.apply ops."""

from __future__ import annotations

from affine_lsp.poly import AffineForm, IslSession, Window
from affine_lsp.transforms.bounds import forms_of, map_text, operand_namer, render_bound

SLICE_BOUND = "a slice bound"


class BoundRenderer:
    """Turns isl texts over context names into MLIR text over SSA names."""

    def __init__(self, session: IslSession, window: Window, params: list[str]) -> None:
        self.session = session
        self.window = window
        self.params = params
        self.ssa_names: dict[str, str] = {}  # context dim name -> SSA name
        self._operand = operand_namer(window, self.ssa_names, SLICE_BOUND)

    def forms(self, context: list[str], texts: list[str]) -> list[AffineForm]:
        return forms_of(self.session, self.params, context, texts, SLICE_BOUND)

    def map_text(self, forms: list[AffineForm], keyword: str = "") -> str:
        """`[keyword ]affine_map<...>(dims)[symbols]` for the forms."""
        return map_text(forms, self._operand, keyword)

    def bound(self, forms: list[AffineForm], lower: bool) -> str:
        return render_bound(forms, lower, self._operand)

    def single_ssa(self, form: AffineForm) -> str | None:
        """The SSA name a form is equal to, if it is exactly one operand."""
        name = form.single_name()
        return None if name is None else self._operand(name)[0]
