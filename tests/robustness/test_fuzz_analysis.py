"""Fuzzing the analysis with a fixed seed: mutated corpus and generated files
and pathological inputs go through every stage without an exception, a
recursion-limit crash or a hang. `benchmarks/fuzz.py` runs the long version."""

from __future__ import annotations

import random

import pytest

from affine_lsp.testing.fuzz import analyze
from affine_lsp.testing.mutate import PATHOLOGICAL_KINDS, mutate, pathological
from affine_lsp.testing.upstream import chunk_texts
from tests.corpus_data import UPSTREAM, chunks, require_shared, require_upstream
from tests.cost import growth

CASES = 3000


def _seeds() -> list[bytes]:
    """Chunks of the corpus and, where it is there, of MLIR's test suite (every
    dialect's custom syntax)."""
    require_shared()
    seeds = [c.text.encode() for c in chunks()[::3]]
    if (UPSTREAM / "chunks.tsv").is_file():
        seeds += chunk_texts(UPSTREAM, every=10)
    return seeds


def test_every_editor_feature_on_a_slice_of_mlir_tests():
    """Unmutated chunks of MLIR's test suite through every stage: parsing, checks,
    hovers, symbols, semantic tokens, folding, completion, navigation, fusion plans."""
    require_upstream()
    rng = random.Random(3)
    texts = chunk_texts(UPSTREAM, every=40)
    for data in texts:
        analyze(data, rng)
    assert len(texts) > 200


@pytest.mark.slow
def test_mutated_documents_never_crash_the_analysis():
    rng = random.Random(7)
    seeds = _seeds()
    slowest = (0.0, b"")
    for _ in range(CASES):
        data = mutate(rng.choice(seeds), rng)[:100_000]
        result = analyze(data, rng)
        slowest = max(slowest, (result.seconds, data))
    print(f"\nfuzzed documents: {CASES}, crashes: 0, slowest: {slowest[0] * 1000:.0f} ms")


@pytest.mark.slow
@pytest.mark.parametrize("kind", PATHOLOGICAL_KINDS)
def test_pathological_inputs(kind):
    result = analyze(pathological(kind), random.Random(1))
    print(f"\n{kind}: {result.seconds * 1000:.0f} ms")


@pytest.mark.slow
def test_every_stage_grows_linearly_with_the_depth_of_unclosed_nesting():
    """`affine.if` opened again and again, never closed (the pathological
    `deep_unclosed`): every stage, the editor's edits and requests included, costs
    in proportion to the depth."""

    def make(depth: int):
        data = b"func.func @f() {\n" + b"affine.if #s(%i) {\n" * depth
        return lambda: analyze(data, random.Random(1))

    assert growth(make, 300) < 2.5  # (quadratic work would make it 4)
