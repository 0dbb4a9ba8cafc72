"""A chain of proven steps proven again as a whole (`loops.prove_chain`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from affine_lsp.ir import build_module
from affine_lsp.poly import IslSession, PolyError, budgets
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.loops import (
    DISTRIBUTE,
    PERMUTE,
    TILE,
    UNROLL_JAM,
    ChainStep,
    Spec,
    iv_name,
    prove_chain,
    transform,
)
from tests.optimize.helpers import loop_on_line
from tests.optimize.kernels import GEMM, SYMM


def _applied(kernel, line, plan):
    """`kernel`'s nest on `line` with the steps of `plan` ((iv name, which loop of that
    name, spec)) applied one after the other, as the optimizer takes them."""
    data, model, root = loop_on_line(kernel, line)
    steps = []
    current, current_model = data, model
    for name, index, spec in plan:
        result = transform(current, current_model, _loop(current_model, name, index), spec)
        assert result.applied and result.rewrite is not None, result.reason
        steps.append(ChainStep(current_model, result.rewrite))
        assert result.new_text is not None
        current = result.new_text
        current_model = build_module(SourceDocument(current).tree.root_node)
    return data, model, root, steps, current


def _chain():
    """gemm distributed, its second nest permuted to (i, j, k), tiled and jammed."""
    plan = [
        ("%i", 0, Spec(DISTRIBUTE)),
        ("%i", 1, Spec(PERMUTE, permutation=(0, 2, 1))),
        ("%i", 1, Spec(TILE, sizes=(8, 8))),
        ("%j", 1, Spec(UNROLL_JAM, factor=2)),
    ]
    return _applied(GEMM, 3, plan)


def _loop(model, name, index):
    loops = [op for op in model.walk() if getattr(op, "induction_variable", None) is not None]
    return [loop for loop in loops if iv_name(loop) == name][index]


def test_the_composed_steps_prove_against_the_original():
    data, model, root, steps, final = _chain()
    session = IslSession(budgets.TRANSFORM)
    assert prove_chain(session, data, model, root, steps) == final
    assert prove_chain(session, data, model, root, steps[:2]) != final


def test_a_step_whose_origins_lie_is_caught():
    data, model, root, steps, _ = _chain()
    # The jam's copies claim to repeat the statement of the first nest instead.
    last = steps[-1].rewrite
    other = next(op for op in steps[-1].model.walk() if op.name == "arith.mulf")
    lying = {
        offset: replace(origin, op=other) if origin.op.name == "arith.mulf" else origin
        for offset, origin in last.origins.items()
    }
    steps[-1] = ChainStep(steps[-1].model, replace(last, origins=lying))
    with pytest.raises(PolyError):
        prove_chain(IslSession(budgets.TRANSFORM), data, model, root, steps)


def test_a_step_outside_the_nest_is_refused():
    data, model, root, steps, _ = _chain()
    outside = replace(steps[0].rewrite, start=0)
    with pytest.raises(PolyError, match="outside the nest"):
        prove_chain(IslSession(budgets.TRANSFORM), data, model, root, [ChainStep(model, outside)])


def _symm_chain(plan):
    """symm's steps, one after the other, as the optimizer takes them."""
    return _applied(SYMM, 5, plan)


def test_an_unroll_and_jam_across_iter_args_proves_as_the_last_step():
    # j jammed across the k loop that carries temp2: each copy's sum carried in
    # its own position of k's iter_args, composed back to the original's copies.
    plans = [
        [("%j", 0, Spec(UNROLL_JAM, factor=4))],
        [("%i", 0, Spec(TILE, sizes=(8, 16))), ("%j", 0, Spec(UNROLL_JAM, factor=4))],
    ]
    for plan in plans:
        data, model, root, steps, final = _symm_chain(plan)
        session = IslSession(budgets.TRANSFORM)
        assert prove_chain(session, data, model, root, steps) == final


def test_carried_values_of_swapped_copies_are_caught():
    # The jammed k loop said to carry copy 1's sum where it carries copy 0's: refused.
    data, model, root, steps, _ = _symm_chain([("%j", 0, Spec(UNROLL_JAM, factor=2))])
    rewrite = steps[-1].rewrite
    swapped = {
        offset: [(position, entries[1 - k][1]) for k, (position, _) in enumerate(entries)]
        for offset, entries in rewrite.carries.items()
    }
    assert swapped
    lying = replace(steps[-1], rewrite=replace(rewrite, carries=swapped))
    with pytest.raises(PolyError):
        prove_chain(IslSession(budgets.TRANSFORM), data, model, root, [lying])
