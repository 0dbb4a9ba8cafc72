"""documentSymbol JSON, cached per top-level item: after any edits it is exactly
what a fresh encoding of the current text gives, and only new items are encoded."""

from __future__ import annotations

import json
import random

import pytest

from affine_lsp.ide import symbols
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.server import outline as outline_module
from affine_lsp.server.outline import SYMBOL_KINDS, OutlineCache
from affine_lsp.syntax import ContentChange
from tests.ide.helpers import fixture_text

FRAGMENTS = ["\n", " ", "é", "😀", "}", "{", "", "affine.for %k = 0 to 4 {\n", "\r\n", "#m = 1\n"]


def _json(cache: OutlineCache, analysis: DocumentAnalysis) -> list:
    return json.loads("[" + "".join(cache.parts(analysis)) + "]")


def _expected(analysis: DocumentAnalysis) -> list:
    """The outline as LSP data, computed directly from the whole document."""
    document = analysis.document

    def position(offset: int) -> dict:
        line, character = document.position(offset)
        return {"line": line, "character": character}

    def convert(symbol: symbols.OutlineSymbol) -> dict:
        data = {
            "name": symbol.name or "?",
            "kind": int(SYMBOL_KINDS[symbol.kind]),
            "range": {
                "start": position(symbol.span.start_byte),
                "end": position(symbol.span.end_byte),
            },
            "selectionRange": {
                "start": position(symbol.selection.start_byte),
                "end": position(symbol.selection.end_byte),
            },
        }
        if symbol.detail:
            data["detail"] = symbol.detail
        if symbol.children:
            data["children"] = [convert(c) for c in symbol.children]
        return data

    return [convert(s) for s in symbols.document_symbols(document)]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
@pytest.mark.parametrize("seed", range(4))
def test_cached_outline_matches_a_fresh_one_after_edits(encoding, seed):
    rng = random.Random(seed)
    analysis = DocumentAnalysis.from_text(fixture_text("nest.mlir"), encoding=encoding)
    cache = OutlineCache()
    assert _json(cache, analysis) == _expected(analysis)
    for _ in range(25):
        size = len(analysis.document.data)
        start = rng.randint(0, size)
        end = min(size, start + rng.choice([0, 0, 1, 3, 30]))
        change = ContentChange(
            rng.choice(FRAGMENTS),
            (analysis.document.position(start), analysis.document.position(end)),
        )
        analysis.apply_changes([change])
        if rng.random() < 0.6:
            assert _json(cache, analysis) == _expected(analysis)
    assert _json(cache, analysis) == _expected(analysis)


def test_only_items_an_edit_touched_are_encoded_again(monkeypatch):
    analysis = DocumentAnalysis.from_text(fixture_text("nest.mlir"))
    cache = OutlineCache()
    first = _json(cache, analysis)
    encoded = []
    real = outline_module.encode

    def counting(document, found, start, end):
        encoded.append(start)
        return real(document, found, start, end)

    monkeypatch.setattr(outline_module, "encode", counting)
    assert _json(cache, analysis) == first and encoded == []
    # a new line above every item moves them all down a line: re-placed, not re-encoded
    analysis.apply_changes([ContentChange("\n", ((0, 0), (0, 0)))])
    moved = _json(cache, analysis)
    assert encoded == [] and moved == _expected(analysis)
    assert moved[-1]["range"]["start"]["line"] == first[-1]["range"]["start"]["line"] + 1
    # an edit inside @triangle encodes it again, and nothing else
    at = analysis.document.source.index(b"affine.for")
    position = analysis.document.position(at)
    analysis.apply_changes([ContentChange(" ", (position, position))])
    assert _json(cache, analysis) == _expected(analysis)
    (triangle,) = [r for r in analysis.records if r.start <= at < r.end]
    assert encoded == [triangle.start]
