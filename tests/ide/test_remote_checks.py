"""Items checked on a batch of their own (what a check worker does), or where they
are in a worker's copy of the document (a prepared document), give exactly the
diagnostics, aliases and symbol the analysis finds in place; claims of the
analysis settle, come back or are voided as they must."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.records import OPERATION, ItemRecord
from affine_lsp.ide.remote_checks import (
    Claimed,
    Forget,
    Outcome,
    Prepare,
    Worker,
    batches_of,
    check_batches,
)
from affine_lsp.syntax import ContentChange, encode
from affine_lsp.testing.mutate import mutate
from affine_lsp.testing.upstream import chunk_texts
from tests.corpus_data import CORPUS, UPSTREAM, require_shared, require_upstream
from tests.ide.helpers import fixture_text

FIXTURES = Path(__file__).parent / "fixtures"


def _remote_matches_in_place(data: bytes | str, rng: random.Random, *, broken: bool = False) -> int:
    """Check every item of `data` in batches (claimed in a random order) and
    compare with the analysis in place; returns how many items were compared.
    In a `broken` text an item may parse otherwise on its own (error recovery
    depends on what comes before): it is given back (None), to be checked in place."""
    analysis = DocumentAnalysis.from_text(data)
    analysis.analyse_all()
    records = [
        r for r in analysis.records if r.kind == OPERATION and not r.removed and not r.splits
    ]
    claims = [(record, token) for token, record in enumerate(records)]
    rng.shuffle(claims)
    by_token = {token: record for record, token in claims}
    outcomes = check_batches(batches_of(analysis, claims))
    assert sorted(o.token for o in outcomes) == sorted(by_token)
    compared = 0
    for outcome in outcomes:
        record = by_token[outcome.token]
        if outcome.diagnostics is None and broken:
            continue
        compared += 1
        _assert_found_in_place(outcome, record)
    return compared


def _assert_found_in_place(outcome: Outcome, record: ItemRecord) -> None:
    """The outcome is what the analysis in place found for the record."""
    assert outcome.diagnostics is not None, record.start
    assert list(outcome.diagnostics) == record.diagnostics, record.start
    assert outcome.used_aliases == record.used_aliases
    assert outcome.symbol == record.symbol


def _prepared_matches_in_place(data: bytes | str, rng: random.Random) -> int:
    """Check every item of `data` in a worker's prepared copy of it (named in a few
    messages, in a random order) and compare with the analysis in place; returns how
    many items were compared. The copy is the same text parsed the same way, so
    every item is found, in a broken text too."""
    analysis = DocumentAnalysis.from_text(data)
    analysis.analyse_all()
    records = [r for r in analysis.records if r.kind == OPERATION and not r.removed]
    claims = [(token, record.start, record.end) for token, record in enumerate(records)]
    rng.shuffle(claims)
    worker = Worker()
    prepared = data if isinstance(data, bytes) else encode(data)
    assert worker.answer(Prepare(3, prepared, analysis.options)) == []
    outcomes: list[Outcome] = []
    while claims:
        count = rng.randint(1, 8)
        taken, claims = claims[:count], claims[count:]
        answer = worker.answer(Claimed(3, tuple(taken)))
        assert isinstance(answer, list)
        outcomes += answer
    assert sorted(o.token for o in outcomes) == list(range(len(records)))
    for outcome in outcomes:
        _assert_found_in_place(outcome, records[outcome.token])
    return len(outcomes)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.mlir")))
def test_batches_match_the_analysis_on_the_fixtures(name):
    assert _remote_matches_in_place(fixture_text(name), random.Random(name)) > 0
    assert _prepared_matches_in_place(fixture_text(name), random.Random(name)) > 0


def test_batches_match_the_analysis_on_the_corpus():
    require_shared()
    compared = prepared = 0
    for path in sorted(CORPUS.rglob("*.mlir")):
        compared += _remote_matches_in_place(path.read_bytes(), random.Random(path.name))
        prepared += _prepared_matches_in_place(path.read_bytes(), random.Random(path.name))
    assert compared > 500 and prepared >= compared


def test_batches_match_the_analysis_on_mlir_tests_and_mutations():
    """A slice of MLIR's test suite (every dialect), as it is and mutated (syntax
    errors, names undefined or defined twice, aliases changed...)."""
    require_upstream()
    rng = random.Random(5)
    texts = chunk_texts(UPSTREAM, every=15)
    for data in texts:
        _remote_matches_in_place(data, rng)
        _prepared_matches_in_place(data, rng)
    compared = prepared = 0
    for _ in range(300):
        broken = mutate(rng.choice(texts), rng)[:50_000]
        compared += _remote_matches_in_place(broken, rng, broken=True)
        prepared += _prepared_matches_in_place(broken, rng)
    assert compared > 300 and prepared >= compared


def test_a_worker_gives_back_items_it_cannot_find_as_claimed():
    """Another document's key, a span that is not an item's, a document forgotten:
    the items come back unchecked (None), to be checked in place."""
    text = _functions(3)
    analysis = DocumentAnalysis.from_text(text)
    first, second = analysis.records[:2]
    worker = Worker()
    assert worker.answer(Claimed(1, ((0, first.start, first.end),))) == [Outcome(0, None)]
    worker.answer(Prepare(1, encode(text), analysis.options))
    answer = worker.answer(
        Claimed(
            1,
            (
                (0, first.start, first.end),
                (1, second.start, second.end - 1),  # (not where the item ends)
                (2, first.start + 1, first.end),  # (not where it starts)
            ),
        )
    )
    assert isinstance(answer, list)
    assert [o.diagnostics is not None for o in answer] == [True, False, False]
    assert worker.answer(Claimed(2, ((0, first.start, first.end),))) == [Outcome(0, None)]
    worker.answer(Forget(2))  # (another document's key: kept)
    assert worker.answer(Claimed(1, ((0, first.start, first.end),))) == [
        Outcome(0, (), frozenset(), "@f0")
    ]
    worker.answer(Forget(1))
    assert worker.answer(Claimed(1, ((0, first.start, first.end),))) == [Outcome(0, None)]


def test_a_new_document_replaces_the_one_prepared_before():
    worker = Worker()
    old = _functions(2)
    new = _functions(2).replace("%A[%i]", "%A[%i, %i]")  # arity errors
    worker.answer(Prepare(1, encode(old), DocumentAnalysis.from_text(old).options))
    analysis = DocumentAnalysis.from_text(new)
    worker.answer(Prepare(2, encode(new), analysis.options))
    record = analysis.records[0]
    assert worker.answer(Claimed(1, ((0, record.start, record.end),))) == [Outcome(0, None)]
    answer = worker.answer(Claimed(2, ((0, record.start, record.end),)))
    assert isinstance(answer, list) and answer[0].diagnostics


def _functions(count: int) -> str:
    body = "  affine.for %i = 0 to 8 {\n    %v = affine.load %A[%i] : memref<8xf32>\n  }\n"
    return "".join(
        f"func.func @f{n}(%A: memref<8xf32>) {{\n{body}  return\n}}\n" for n in range(count)
    )


def _dirty(analysis: DocumentAnalysis) -> list[ItemRecord]:
    return [r for r in analysis.records if r.kind == OPERATION and r.dirty]


def test_claims_come_from_the_back_and_leave_the_front():
    analysis = DocumentAnalysis.from_text(_functions(20))
    size = analysis.records[0].end - analysis.records[0].start
    claims = analysis.claim(most_bytes=3 * size, leave_bytes=10 * size)
    records = [record for record, _ in claims]
    assert records == analysis.records[-3:][::-1]
    assert analysis.claimed == 3 and not analysis.complete
    # What the server analyses itself stops short of the claimed items.
    analysis.analyse_all()
    assert _dirty(analysis) == records[::-1]
    # Nothing more is taken when only what should be left is left.
    assert analysis.claim(most_bytes=100 * size, leave_bytes=20 * size) == []


def test_settling_claims_completes_the_analysis_as_checking_in_place_does():
    text = _functions(6).replace("%A[%i]", "%A[%i, %i]", 1)  # an arity error in @f0
    fresh = DocumentAnalysis.from_text(text)
    fresh.analyse_all()
    analysis = DocumentAnalysis.from_text(text)
    claims = analysis.claim(most_bytes=10**6, leave_bytes=0)
    analysis.analyse_all()
    assert not analysis.complete
    outcomes = {o.token: o for o in check_batches(batches_of(analysis, claims))}
    for record, token in claims:
        o = outcomes[token]
        assert analysis.settle_claimed(token, record, o.diagnostics, o.used_aliases, o.symbol)
    analysis.analyse_all()
    assert analysis.complete
    assert analysis.diagnostics() == fresh.diagnostics()
    assert any(d.code for d in analysis.diagnostics())


def test_an_edit_voids_claims_and_their_outcomes_are_dropped():
    analysis = DocumentAnalysis.from_text(_functions(6))
    claims = analysis.claim(most_bytes=10**6, leave_bytes=0)
    outcomes = {o.token: o for o in check_batches(batches_of(analysis, claims))}
    analysis.apply_changes([ContentChange("\n", ((0, 0), (0, 0)))])  # every offset moves
    assert analysis.claimed == 0
    for record, token in claims:
        o = outcomes[token]
        assert not analysis.settle_claimed(token, record, o.diagnostics, o.used_aliases, o.symbol)
    analysis.analyse_all()
    fresh = DocumentAnalysis.from_text("\n" + _functions(6))
    fresh.analyse_all()
    assert analysis.complete and analysis.diagnostics() == fresh.diagnostics()
    assert [r.start for r in analysis.records] == [r.start for r in fresh.records]


def test_a_claim_given_back_unchecked_is_checked_in_place():
    analysis = DocumentAnalysis.from_text(_functions(4))
    claims = analysis.claim(most_bytes=10**6, leave_bytes=0)
    record, token = claims[0]
    assert not analysis.settle_claimed(token, record, None, frozenset(), None)
    assert not analysis.settle_claimed(token, record, [], frozenset(), None)  # (once)
    analysis.release_claims()
    analysis.analyse_all()
    assert analysis.complete and not _dirty(analysis)


def test_items_with_a_chunk_marker_inside_are_not_claimed():
    text = "func.func @a() {\n// -----\n  return\n}\n" + _functions(3)
    analysis = DocumentAnalysis.from_text(text)
    claims = analysis.claim(most_bytes=10**6, leave_bytes=0)
    assert analysis.records[0] not in [record for record, _ in claims]
    assert len(claims) == 3


def test_items_defining_top_level_values_are_checked_alone():
    text = '%t = "test.value"() : () -> index\n' + _functions(3).replace("to 8", "to %t", 1)
    analysis = DocumentAnalysis.from_text(text)
    claims = analysis.claim(most_bytes=10**6, leave_bytes=0)
    batches = batches_of(analysis, claims)
    assert sorted(len(b.items) for b in batches) == [1, 3]
    _remote_matches_in_place(text, random.Random(1))
