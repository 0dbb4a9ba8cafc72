"""Fuzzing the analysis with a fixed seed: mutated corpus and generated files
and pathological inputs go through every stage without an exception, a
recursion-limit crash or a hang. `benchmarks/fuzz.py` runs the long version."""

from __future__ import annotations

import random

import pytest

from affine_lsp.testing.fuzz import analyze
from affine_lsp.testing.mutate import PATHOLOGICAL_KINDS, mutate, pathological
from tests.corpus_data import chunks, require_shared

CASES = 3000


def _seeds() -> list[bytes]:
    require_shared()
    return [c.text.encode() for c in chunks()[::3]]


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
