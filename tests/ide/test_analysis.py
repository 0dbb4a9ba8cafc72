"""Incremental analysis: after any sequence of edits, records and diagnostics are
exactly those of a fresh analysis of the same text."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from affine_lsp.checks import CheckOptions, Severity, check_document, check_item
from affine_lsp.checks.chunks import ends_chunk
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.syntax import ContentChange, SourceDocument
from tests.ide.helpers import analysed, fixture_text

FRAGMENTS = [
    " ",
    "\n",
    "{",
    "}",
    "(",
    ")",
    "%x",
    "%undefined",
    "#m",
    "#tile",
    "// -----\n",
    "\n// -----\n",
    "// note\n",
    '"',
    "affine.for %k = 0 to 4 {\n",
    "%r = arith.addi %n, %n : index\n",
    "#m = affine_map<(d0) -> (d0)>\n",
    '%v = "test.value"() : () -> index\n',
    "func.func @g() {\nreturn\n}\n",
    "é",
]


def _state(analysis: DocumentAnalysis):
    records = [(r.start, r.end, r.kind, r.chunk) for r in analysis.records]
    diagnostics = [
        (d.span, d.severity, d.code, d.message, d.related, d.fixes) for d in analysis.diagnostics()
    ]
    return records, diagnostics


def _random_change(rng: random.Random, document: SourceDocument) -> ContentChange:
    size = len(document.data)
    start = rng.randint(0, size)
    end = min(size, start + rng.choice([0, 0, 1, 2, 5, 40]))
    text = rng.choice(FRAGMENTS) if rng.random() < 0.8 else ""
    return ContentChange(text, (document.position(start), document.position(end)))


def _check_consistent(analysis: DocumentAnalysis) -> None:
    # Compare with a fresh analysis of the same tree: with syntax errors, tree-sitter's
    # incremental error recovery may differ from that of a fresh parse.
    fresh = DocumentAnalysis(analysis.document)
    fresh.analyse_all()
    assert _state(analysis) == _state(fresh)
    top = [
        (n.start_byte, n.end_byte, n.type)
        for n in analysis.document.tree.root_node.named_children
        if n.type != "comment" or ends_chunk(n.text or b"")  # `// note // -----` ends a chunk
    ]
    assert [(r.start, r.end, r.kind) for r in analysis.records] == top


@pytest.mark.parametrize("name", ["nest.mlir", "chunks.mlir", "broken.mlir", "single.mlir"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), batch=st.integers(1, 3), interrupt=st.booleans())
# A `{` that makes error recovery insert an empty name away from the edit.
@example(seed=1048940, batch=1, interrupt=False)
def test_random_edits_match_a_fresh_analysis(name, seed, batch, interrupt):
    rng = random.Random(seed)
    analysis = analysed(fixture_text(name))
    for _ in range(6):
        # Several notifications before the analysis runs, as in a burst of typing.
        for _ in range(batch):
            analysis.apply_changes([_random_change(rng, analysis.document)])
        if interrupt:  # stop part-way, as when a newer edit cancels the analysis
            for _step in zip(range(1), analysis.analyse(), strict=False):
                pass
        else:
            analysis.analyse_all()
    analysis.analyse_all()
    _check_consistent(analysis)


def test_batched_changes_in_one_notification():
    analysis = analysed(fixture_text("nest.mlir"))
    document = SourceDocument(analysis.document.text)
    rng = random.Random(7)
    changes = []
    for _ in range(5):
        change = _random_change(rng, document)
        document.apply_changes([change])
        changes.append(change)
    analysis.apply_changes(changes)
    analysis.analyse_all()
    assert analysis.document.text == document.text
    _check_consistent(analysis)


def test_full_text_change_resets_everything():
    analysis = analysed(fixture_text("nest.mlir"))
    analysis.apply_changes([ContentChange(fixture_text("broken.mlir"))])
    analysis.analyse_all()
    _check_consistent(analysis)


def test_single_chunk_documents_agree_with_check_document():
    for name in ("nest.mlir", "broken.mlir"):
        text = fixture_text(name)
        expected = check_document(SourceDocument(text))
        assert analysed(text).diagnostics() == expected


def test_chunks_are_checked_independently():
    analysis = analysed(fixture_text("chunks.mlir"))
    assert [r.chunk for r in analysis.records if r.kind == "operation"] == [0, 1, 2, 2, 2]
    messages = [d.message for d in analysis.diagnostics()]
    assert messages == ["use of undeclared SSA value name '%undefined'"]


def test_an_edit_reanalyses_only_the_item_it_touches():
    analysis = analysed(fixture_text("nest.mlir"))
    before = {id(r) for r in analysis.records}
    offset = analysis.document.source.index(b"%c0 = arith")
    position = analysis.document.position(offset)
    analysis.apply_changes([ContentChange("%c0", (position, position))])
    steps = list(analysis.analyse())
    assert len(steps) == 1
    replaced = [r for r in analysis.records if id(r) not in before]
    assert [r.kind for r in replaced] == ["operation"]
    assert [d.code for d in analysis.diagnostics()] == ["alias-unused", "syntax"]


def test_alias_edit_rechecks_the_items_that_mention_it():
    text = (
        "#m = affine_map<(d0) -> (d0)>\n"
        "func.func @a(%n: index) {\n  %x = affine.apply #m(%n)\n  return\n}\n"
        "func.func @b(%n: index) {\n  return\n}\n"
    )
    analysis = analysed(text)
    offset = analysis.document.source.index(b"(d0) -> (d0)") + len("(d0) -> (d0")
    position = analysis.document.position(offset)
    analysis.apply_changes([ContentChange(" + 1", (position, position))])
    steps = list(analysis.analyse())
    assert len(steps) == 1  # @a mentions #m; @b does not


def test_options_change_rechecks_everything():
    analysis = analysed(fixture_text("nest.mlir"))
    analysis.set_options(CheckOptions(legacy_severity=Severity.ERROR))
    assert len(list(analysis.analyse())) == 2


def test_a_failing_check_spoils_only_its_item(monkeypatch):
    import affine_lsp.ide.analysis as analysis_module

    real = check_item

    def flaky(item, context, options):
        if getattr(item.operation, "symbol", "") == "@triangle":
            raise RuntimeError("a bug in a rule")
        return real(item, context, options)

    monkeypatch.setattr(analysis_module, "check_item", flaky)
    analysis = analysed(fixture_text("nest.mlir"))
    codes = [d.code for d in analysis.diagnostics()]
    assert codes == ["alias-unused", "internal-error"]


def test_each_item_is_searched_for_alias_references_once(monkeypatch):
    import affine_lsp.checks.rules.aliases as aliases

    searched = []
    real = aliases._alias_captures  # the query over an item

    def counting(item):
        searched.append(item.span)
        return real(item)

    monkeypatch.setattr(aliases, "_alias_captures", counting)
    text = (
        "#m = affine_map<(d0) -> (d0)>\n#unused = affine_map<(d0) -> (d0)>\n!t = index\n"
        "func.func @a(%n: index, %t: !t) {\n  %x = affine.apply #m(%n)\n  return\n}\n"
        "func.func @b(%n: index) {\n  %y = affine.apply #missing(%n)\n  return\n}\n"
    )
    analysis = analysed(text)
    # once per item, the item with an undefined alias too (the nodes to report are
    # those of the same search)
    assert sorted(searched, key=lambda s: s.start_byte) == [r.span for r in analysis.records]
    assert [d.code for d in analysis.diagnostics()] == ["alias-unused", "alias-undefined"]
    assert analysis.diagnostics() == check_document(SourceDocument(text))


def test_a_failing_check_leaves_the_aliases_of_its_item_used(monkeypatch):
    import affine_lsp.ide.analysis as analysis_module

    real = check_item

    def flaky(item, context, options):
        if getattr(item.operation, "symbol", "") == "@a":
            raise RuntimeError("a bug in a rule")
        return real(item, context, options)

    monkeypatch.setattr(analysis_module, "check_item", flaky)
    text = (
        "#m = affine_map<(d0) -> (d0)>\n"
        "func.func @a(%n: index) {\n  %x = affine.apply #m(%n)\n  return\n}\n"
    )
    assert [d.code for d in analysed(text).diagnostics()] == ["internal-error"]


def _functions_with_errors(count: int, wrong: set[int]) -> str:
    """`count` functions; those in `wrong` use an undefined name."""
    return "#unused = affine_map<(d0) -> (d0)>\n" + "".join(
        f"func.func @f{i}(%n: index) {{\n"
        f"  %x = arith.addi {'%undefined' if i in wrong else '%n'}, %n : index\n"
        "  return\n}\n"
        for i in range(count)
    )


def _lines_of(analysis: DocumentAnalysis, diagnostics) -> list[int]:
    return [analysis.document.point(d.span.start_byte)[0] for d in diagnostics]


def test_prioritised_items_are_analysed_first_and_settled_diagnostics_are_theirs():
    text = _functions_with_errors(40, {0, 20, 39})
    analysis = DocumentAnalysis.from_text(text)
    last = analysis.records[-1]
    analysis.prioritise(last.start, last.end)
    steps = analysis.analyse()
    next(steps)
    assert not last.dirty and analysis.settled(last.start, last.end)
    assert not analysis.settled(0, analysis.records[1].end)
    assert not analysis.complete
    # Only what this version computed: the last function's error, no alias-unused yet
    # (the module rules wait for every item), nothing of the items not analysed.
    partial = analysis.settled_diagnostics()
    assert [d.code for d in partial] == ["ssa-undefined"]
    assert _lines_of(analysis, partial) == [1 + 4 * 39 + 1]
    for _ in steps:
        pass
    assert analysis.complete
    fresh = DocumentAnalysis.from_text(text)
    fresh.analyse_all()
    assert analysis.settled_diagnostics() == analysis.diagnostics() == fresh.diagnostics()
    assert [d.code for d in fresh.diagnostics()] == ["alias-unused"] + ["ssa-undefined"] * 3


def test_settled_diagnostics_leave_out_items_an_edit_made_stale():
    text = _functions_with_errors(10, {2})
    analysis = analysed(text)
    start = analysis.records[3].start  # @f2: its error goes away with the edit
    line = analysis.document.point(start)[0] + 1
    analysis.apply_changes([ContentChange("%n", ((line, 18), (line, 28)))])
    # The edited item is not analysed yet, and the module rules of its chunk wait for it.
    assert analysis.settled_diagnostics() == []
    assert analysis.unsettled_bytes() > 0 and not analysis.complete
    analysis.analyse_all()
    assert analysis.settled_diagnostics() == analysis.diagnostics()
    assert [d.code for d in analysis.diagnostics()] == ["alias-unused"]


def test_requests_after_an_edit_reuse_what_the_analysis_built(monkeypatch):
    """The item just checked is the view requests get (no second build), its anchors
    are found once per version, and the merged diagnostics are merged again only when
    a list of them changed."""
    from affine_lsp.ide import analysis as module
    from affine_lsp.ide.planning import anchors_of
    from affine_lsp.ir import build_operation_item

    text = "func.func @f(%A: memref<8xf32>) {\n  affine.for %i = 0 to 8 {\n  }\n  return\n}\n"
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    at = text.index("affine.for")
    analysis.apply_changes([ContentChange(" ", ((1, 0), (1, 0)))])
    analysis.analyse_all()
    builds: list[object] = []
    original = build_operation_item

    def counting(*args):
        builds.append(args)
        return original(*args)

    monkeypatch.setattr(module, "build_operation_item", counting)
    view = analysis.view_at(at)
    record = analysis.record_at(at)
    assert view is not None and record is not None
    first = anchors_of(analysis, record)
    assert first[0] and anchors_of(analysis, record) is first
    assert builds == []
    merged = analysis.diagnostics()
    assert analysis.diagnostics() == merged
    analysis.apply_changes([ContentChange("%x", ((1, 0), (1, 0)))])
    analysis.analyse_all()
    assert analysis.diagnostics() != merged
    fresh = DocumentAnalysis.from_text(analysis.document.text)
    fresh.analyse_all()
    assert analysis.diagnostics() == fresh.diagnostics()
