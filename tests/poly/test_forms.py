"""Affine forms printed as MLIR: what MLIR's parser reads back is the same value."""

from __future__ import annotations

from affine_lsp.poly import AffineForm, render_mlir


def _floor(inner: AffineForm, divisor: int, coefficient: int) -> AffineForm:
    return AffineForm((), ((inner, divisor, coefficient),), 0)


N_MINUS_D0 = AffineForm((("n", 1), ("d", -1)), (), 0)


def test_a_leading_negated_floor_is_parenthesised():
    # MLIR reads `-(x) floordiv 3` as `(-x) floordiv 3`: a ceiling written as minus a
    # floor needs its own parentheses.
    assert render_mlir(_floor(N_MINUS_D0, 3, -1), str) == "-((n - d) floordiv 3)"
    assert render_mlir(_floor(N_MINUS_D0, 3, -2), str) == "-((n - d) floordiv 3 * 2)"


def test_a_negated_floor_after_another_part_needs_no_parentheses():
    form = AffineForm((("t", 1),), ((N_MINUS_D0, 3, -1),), 14)
    assert render_mlir(form, str) == "t - (n - d) floordiv 3 + 14"


def test_a_leading_negated_name_stays_plain():
    assert render_mlir(AffineForm((("t", -3),), (), 1), str) == "-t * 3 + 1"
