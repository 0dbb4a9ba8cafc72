""" "Optimize nest" as a code action: offered at once at the nest (nothing computed),
resolved when chosen; disabled with the reason when nothing pays."""

from __future__ import annotations

from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.code_actions import REFACTORINGS, code_actions
from affine_lsp.ide.settings import Settings, parse_settings
from affine_lsp.ir import build_module
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms import apply_edits
from affine_lsp.transforms.optimize import OptimizeOptions, optimize_actions
from tests.optimize.kernels import GEMM, JACOBI_2D, SMALL_MACHINE

OPTIONS = OptimizeOptions(machine=SMALL_MACHINE)


def _actions(text: str, needle: str, options: OptimizeOptions = OPTIONS):
    data = text.encode()
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    at = data.index(needle.encode())
    return document, optimize_actions(document, model, at, at, options)


def test_offered_at_every_loop_of_a_nest_without_computing_anything():
    for needle in ("affine.for %i", "affine.for %k", "%b = affine.load"):
        _, actions = _actions(GEMM, needle)
        assert [(a.title, a.edits, a.disabled_reason) for a in actions] == [
            ("Optimize nest", None, None)
        ]
    _, outside = _actions(GEMM, "return")
    assert outside == []


def test_resolving_optimizes_the_whole_nest():
    document, (action,) = _actions(GEMM, "affine.for %k")
    edits = action.resolve()
    assert edits and action.disabled_reason is None
    assert action.summary.startswith("distributed %i into 2 nests, ")
    assert "; model: " in action.summary and action.summary.endswith("x fewer cycles")
    new = apply_edits(bytes(document.source), edits).decode()
    assert "affine.parallel (%i" in new


def test_nothing_to_gain_comes_back_disabled_with_the_reason():
    _, (action,) = _actions(JACOBI_2D, "affine.for %t")
    assert action.resolve() == []
    assert action.disabled_reason is not None
    assert action.disabled_reason.startswith("nothing to gain: ")


def test_not_offered_in_a_function_with_errors():
    broken = GEMM.replace("%b = affine.load %B[%k, %j]", "%b = affine.load %B[%k, %undefined]")
    _, actions = _actions(broken, "affine.for %k")
    assert actions == []


def test_the_editor_offers_it_among_the_refactorings():
    assert "optimize" in [r.name for r in REFACTORINGS]
    analysis = DocumentAnalysis.from_text(GEMM)
    analysis.analyse_all()
    at = GEMM.encode().index(b"affine.for %j")
    titles = [a.title for a in code_actions(analysis, at, at, only=["refactor"])]
    assert titles[-1] == "Optimize nest"


def test_the_setting_optimize_enabled_takes_it_out_of_the_menu():
    settings, problems = parse_settings({"affineLsp": {"optimize": {"enabled": False}}})
    assert problems == [] and settings.optimize_offered is False
    analysis = DocumentAnalysis.from_text(GEMM)
    analysis.analyse_all()
    at = GEMM.encode().index(b"affine.for %j")
    (optimize,) = [r for r in REFACTORINGS if r.name == "optimize"]
    assert optimize.prepare(analysis, at, at, settings)() == []
    assert [a.title for a in optimize.prepare(analysis, at, at, Settings())()] == ["Optimize nest"]
