"""A fusion whose buffer shrinking runs out of time is decided later, never offered
unshrunk: what the lightbulb gives must not depend on how loaded the machine is."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from affine_lsp.ir import build_module
from affine_lsp.poly import BudgetExceeded
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms import apply_edits
from affine_lsp.transforms.fusion import actions, privatize

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "producer_consumer.mlir"


def _depth_2_result() -> str | None:
    data = EXAMPLE.read_bytes()
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    at = data.index(b"affine.for %i")
    for action in actions.fusion_actions(document, model, at, at, time_limit=None):
        if action.title.startswith("Fuse with the next loop nest (depth 2"):
            edits = action.resolve()
            return apply_edits(data, edits).decode() if edits else None
    return None


def test_the_buffer_shrinks_to_one_element():
    fused = _depth_2_result()
    assert fused is not None and "memref.alloc() : memref<1x1xf32>" in fused


def test_out_of_time_while_shrinking_is_never_an_unshrunk_fusion(monkeypatch):
    def out_of_time(*_arguments: object) -> None:
        raise BudgetExceeded("the deadline ran out")

    monkeypatch.setattr(privatize.Privatizer, "privatize", out_of_time)
    monkeypatch.setattr(actions, "_CACHE", OrderedDict())  # (planned afresh)
    fused = _depth_2_result()
    assert fused is None or "memref.alloc() : memref<64x64xf32>" not in fused
