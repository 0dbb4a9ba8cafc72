"""Strided instances counted without existentials: a checked bijection, and the same
dataflow through it."""

from __future__ import annotations

import pytest

from affine_lsp.poly import IslSession, dataflow
from affine_lsp.poly.dataflow import Dataflow
from affine_lsp.poly.strides import compression, compressions, has_existentials
from tests.poly.test_dataflow import (
    TILED_READS,
    TILED_SCHEDULE,
    TILED_WRITES,
    UNBOUNDED,
    _question,
)


def test_tiled_instances_are_counted_by_their_iteration_numbers():
    session = IslSession(UNBOUNDED)
    instances = session.union_map(TILED_READS).domain()
    piece = instances.as_set()  # one statement
    assert has_existentials(piece)
    bijection = compression(piece)
    assert bijection is not None
    assert not has_existentials(bijection.domain())
    assert bijection.is_bijective() and bijection.range().is_equal(piece)


@pytest.mark.parametrize(
    "text",
    [
        "{ S[i] : 0 <= i < 10 }",  # nothing to gain
        "[n] -> { S[i, j] : 0 <= i < n and 0 <= j < 8 }",
    ],
)
def test_instances_without_existentials_are_left_alone(text):
    session = IslSession(UNBOUNDED)
    assert compression(session.set(text)) is None


def test_two_strides_in_one_statement():
    """A union of pieces with different strides: compressed only if checked."""
    session = IslSession(UNBOUNDED)
    instances = session.set("{ S[i] : 0 <= i < 20 and (i mod 3 = 0 or i mod 5 = 0) }")
    bijection = compression(instances)
    if bijection is not None:
        assert bijection.is_bijective() and bijection.range().is_equal(instances)


def test_the_dataflow_through_the_compression_is_isl_s_own(monkeypatch):
    session = IslSession(UNBOUNDED)
    question = _question(session, TILED_READS, TILED_WRITES, TILED_SCHEDULE)
    assert compressions(question[2].domain()) is not None
    compressed = Dataflow(session, *question)
    monkeypatch.setattr(dataflow, "compressions", lambda instances: None)
    direct = Dataflow(session, *question)
    assert compressed.dependence.is_equal(direct.dependence)
    assert compressed.fresh.is_equal(direct.fresh)
