"""Generated code goes through the same proof: a wrong subscript, bound, record or
parallel loop is refused, whether the cheap order-of-dependences argument or the
dataflow comparison decides."""

from __future__ import annotations

import pytest

from affine_lsp.transforms.loops import SKEW, TILE, WAVEFRONT, Spec, scheduled
from affine_lsp.transforms.loops.text import Origin
from tests.loops.helpers import run
from tests.loops.stencils import JACOBI_1D, SEIDEL
from tests.loops.test_proof import _broken

CASES = [
    # a substituted subscript that reads the wrong element
    (
        SEIDEL,
        "affine.for %t",
        Spec(SKEW, factor=1),
        "%A[%i_skew - %t - 1, %j - 1]",
        "%A[%i_skew - %t, %j - 1]",
    ),
    # a skewed loop that misses its last iteration
    (SEIDEL, "affine.for %t", Spec(SKEW, factor=1), "(d0 + 11)>(%t)", "(d0 + 10)>(%t)"),
    # time tiles that skip every other tile
    (JACOBI_1D, "affine.for %t", Spec(TILE, sizes=(4, 16), skew=2), "step 16", "step 32"),
    # the second sweep's loop one iteration short in each time tile
    (
        JACOBI_1D,
        "affine.for %t",
        Spec(TILE, sizes=(4, 16), skew=2),
        "(d0 + 16, d1 * 2 + 40)",
        "(d0 + 15, d1 * 2 + 40)",
    ),
    # a wavefront's diagonal read along the wrong line
    (SEIDEL, "affine.for %i", Spec(WAVEFRONT), "%front - %i * 2 - 1]", "%front - %i - 1]"),
]


@pytest.mark.parametrize("text, needle, spec, old, new", CASES)
def test_wrong_generated_code_is_refused(monkeypatch, text, needle, spec, old, new):
    assert run(text, needle, spec).applied  # the right one is proven
    _broken(monkeypatch, "scheduled", old, new)
    result = run(text, needle, spec)
    assert not result.applied and result.reason


def test_a_copy_that_records_another_iteration_than_it_computes_is_refused(monkeypatch):
    original = scheduled.rewrite

    def rewrite(context, plan):
        result = original(context, plan)
        for offset, origin in list(result.origins.items()):
            if origin.substitution:
                shifted = {
                    key: form.minus(type(form)((), (), 1)) if k == 1 else form
                    for k, (key, form) in enumerate(origin.substitution.items())
                }
                result.origins[offset] = Origin(origin.op, origin.renames, origin.copy, shifted)
        return result

    monkeypatch.setattr(scheduled, "rewrite", rewrite)
    result = run(SEIDEL, "affine.for %t", Spec(SKEW, factor=1))
    assert not result.applied
    assert "not equivalent" in (result.reason or "")


def test_a_naive_wavefront_with_dependent_points_on_a_diagonal_is_not_proven():
    # Without the dependence check, the first diagonal tried is i + j: the points of
    # one diagonal depend on each other (seidel reads %A[i - 1, j + 1]).
    naive = run(SEIDEL, "affine.for %i", Spec(WAVEFRONT), check=False, prove=False)
    assert naive.applied and "affine.parallel" in naive.new_text.decode()  # type: ignore[union-attr]
    unproven = run(SEIDEL, "affine.for %i", Spec(WAVEFRONT), check=False)
    assert not unproven.applied
    assert "two iterations of the new affine.parallel touch the same element of %A" in (
        unproven.reason or ""
    )


def test_a_naive_tiling_of_a_skewed_band_that_needs_more_skew_is_not_proven():
    skewed = run(SEIDEL, "affine.for %t", Spec(SKEW, factor=1)).new_text.decode()  # type: ignore[union-attr]
    naive = run(skewed, "affine.for %t", Spec(TILE, sizes=(2, 4, 4)), check=False, prove=False)
    assert naive.applied
    unproven = run(skewed, "affine.for %t", Spec(TILE, sizes=(2, 4, 4)), check=False)
    assert not unproven.applied and "not equivalent" in (unproven.reason or "")
