"""Span (a C type of the extension) behaves as the frozen dataclass it replaces."""

from __future__ import annotations

import copy
import pickle

import pytest

from affine_lsp.syntax import SourceDocument, Span


def test_spans_compare_and_hash_by_value():
    assert Span(1, 2) == Span(1, 2) and Span(1, 2) != Span(1, 3)
    assert hash(Span(1, 2)) == hash(Span(1, 2))
    assert len({Span(1, 2), Span(1, 2), Span(2, 1)}) == 2
    assert Span(1, 2) != (1, 2)
    assert Span(start_byte=3, end_byte=4) == Span(3, 4)
    assert repr(Span(3, 4)) == "Span(start_byte=3, end_byte=4)"


def test_spans_are_immutable_and_pickle():
    span = Span(5, 9)
    with pytest.raises(AttributeError):
        span.start_byte = 0  # type: ignore[misc]
    # what pickle stores: the type and its arguments (no `pickle.loads` in the sources:
    # tests/robustness/test_security.py)
    assert pickle.dumps(span)
    reduced = span.__reduce__()
    assert isinstance(reduced, tuple)
    assert reduced[0](*reduced[1]) == span and copy.deepcopy(span) == span
    with pytest.raises(TypeError):
        Span(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Span("1", 2)  # type: ignore[arg-type]


def test_span_helpers():
    span = Span(5, 9)
    assert span.contains(5) and span.contains(9) and not span.contains(10)
    assert span.overlaps(8, 12) and not span.overlaps(9, 12) and not span.overlaps(0, 5)
    root = SourceDocument("func.func @f() {\n  return\n}\n").tree.root_node
    first, last = root.children[0], root.children[-1]
    assert Span.of(first) == Span(first.start_byte, first.end_byte)
    assert Span.between(first, last) == Span(first.start_byte, last.end_byte)
