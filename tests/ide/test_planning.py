"""Plans made on an item's extract (`ide.planning`) are the refactorings computed on
the whole document: same titles, reasons and edits (relative to the item), for
every loop of every fixture."""

from __future__ import annotations

import re

import pytest

from affine_lsp.ide import extracts, planning
from affine_lsp.ide.code_actions import REFACTORINGS
from affine_lsp.ide.records import OPERATION
from affine_lsp.ide.settings import Settings
from tests.ide.helpers import FIXTURES, analysed

# Aliases after a function, a top-level value and a second chunk: the extract must
# carry each function's module facts, and keep its lines.
MIXED = """#id = affine_map<(d0) -> (d0)>
func.func @first(%A: memref<8xf32>, %B: memref<8xf32>) {
  affine.for %i = 0 to 8 {
    %x = affine.load %A[#id(%i)] : memref<8xf32>
    affine.store %x, %B[%i] : memref<8xf32>
  }
  affine.for %j = 0 to 8 {
    %y = affine.load %B[%j] : memref<8xf32>
    affine.store %y, %A[%j] : memref<8xf32>
  }
  return
}
#late = affine_map<(d0) -> (d0 + 1)>
// -----
#id = affine_map<(d0) -> (d0 * 2)>
func.func @second(%A: memref<16xf32>, %B: memref<16xf32>) {
  affine.for %i = 0 to 8 {
    %x = affine.load %A[#id(%i)] : memref<16xf32>
    affine.store %x, %B[%i] : memref<16xf32>
  }
  affine.for %j = 0 to 8 {
    %y = affine.load %B[%j] : memref<16xf32>
    affine.store %y, %A[%j] : memref<16xf32>
  }
  return
}
"""

# Fusing the first two nests would change what the affine.store between them writes
# over: the reason names that store's line.
STORE_BETWEEN = """// a comment line
func.func @f(%A: memref<16xf32>, %B: memref<16xf32>, %C: memref<16xf32>) {
  affine.for %i = 0 to 16 {
    %x = affine.load %B[%i] : memref<16xf32>
    affine.store %x, %A[%i] : memref<16xf32>
  }
  %v = affine.load %C[5] : memref<16xf32>
  affine.store %v, %A[7] : memref<16xf32>
  affine.for %j = 0 to 16 {
    %y = affine.load %A[%j] : memref<16xf32>
    %q = affine.load %C[%j] : memref<16xf32>
    %s = arith.addf %y, %q : f32
    affine.store %s, %B[%j] : memref<16xf32>
  }
  return
}
"""

TEXTS = {path.name: path.read_text() for path in sorted(FIXTURES.glob("*.mlir"))}
TEXTS["mixed"] = MIXED
TEXTS["store_between"] = STORE_BETWEEN


def _relative(edits, start: int) -> tuple | None:
    if edits is None:
        return None
    return tuple(
        sorted((e.span.start_byte - start, e.span.end_byte - start, e.new_text) for e in edits)
    )


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_plans_of_extracts_are_the_refactorings_of_the_document(name):
    text = TEXTS[name]
    analysis = analysed(text)
    fresh = analysed(text + "// (fusion keeps the actions of a text: not these)\n")
    settings = Settings()
    worker = planning.Planning()
    for record in [r for r in analysis.records if r.kind == OPERATION]:
        extract = extracts.extract_of(analysis, record)
        anchors, outermost = worker.anchors(extract)
        assert (anchors, outermost) == planning.anchors_of(analysis, record)
        plans = worker.plan(extract, anchors, settings)
        for (refactoring, relative), plan in plans.items():
            at = record.start + relative
            assert refactoring in {r.name for r in REFACTORINGS}
            assert plan.line == analysis.document.point(record.start)[0]
            expected = [
                (a.title, a.disabled_reason, a.preferred, _relative(a.edits, record.start))
                for a in planning.refactoring_named(refactoring).prepare(fresh, at, at, settings)()
            ]
            found = [
                (
                    a.title,
                    a.disabled_reason,
                    a.preferred,
                    _relative(a.text_edits(0) if a.edits is not None else None, 0),
                )
                for a in plan.actions
            ]
            assert found == expected, (name, at)


def test_anchors_outermost_loops_first():
    analysis = analysed(TEXTS["fusion.mlir"])
    (record,) = [r for r in analysis.records if r.kind == OPERATION]
    anchors, outermost = planning.anchors_of(analysis, record)
    data = TEXTS["fusion.mlir"].encode()
    indents = [len(data[: record.start + relative].rsplit(b"\n", 1)[1]) for _, relative in anchors]
    assert indents == sorted(indents) and set(indents) == {2, 4}
    assert outermost == indents.count(2) == 2 * len(REFACTORINGS)


def test_an_extract_keeps_the_line_and_column_of_its_item_when_asked():
    analysis = analysed(MIXED)
    for record in [r for r in analysis.records if r.kind == OPERATION]:
        extract = extracts.extract_of(analysis, record)
        item = MIXED.encode()[record.start : record.end]
        for at_row in (False, True):
            text, start = extract.text(at_row)
            assert text[start:].startswith(item)
            chunk = bytes(analysis.document.data[: record.start]).split(b"// -----")[-1]
            assert re.findall(rb"#id = [^\n]*", text) == re.findall(rb"#id = [^\n]*", chunk)
        text, start = extract.text(at_row=True)
        assert text[:start].count(b"\n") == MIXED.encode()[: record.start].count(b"\n")


def test_the_item_is_put_on_its_line_only_for_words_that_name_lines():
    settings = Settings()
    for text, names_lines in ((STORE_BETWEEN, True), (MIXED, False)):
        analysis = analysed(text)
        record = next(r for r in analysis.records if r.kind == OPERATION)
        worker = planning.Planning()
        extract = extracts.extract_of(analysis, record)
        plans = worker.plan(extract, worker.anchors(extract)[0], settings)
        assert any(p.mentions_lines for plan in plans.values() for p in plan.actions) == names_lines
        assert worker._last is not None
        assert worker._last[0][1] == names_lines  # the text it planned on last
