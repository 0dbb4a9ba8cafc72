"""Positions relative to a stretch of a document (`LocalLines`) agree with the
document's own positions once the stretch's start position is added."""

from __future__ import annotations

import random

import pytest

from affine_lsp.syntax.lines import LineIndex, LocalLines

PIECES = ["a", "bc", " ", "\n", "\r", "\r\n", "é", "😀", "λx", "\t"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_local_positions_add_up_to_document_positions(encoding):
    rng = random.Random(encoding)
    for _ in range(200):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))
        data = text.encode("utf-8")
        index = LineIndex(data)
        # character boundaries, as node starts and ends are
        bounds = sorted({len(text[:i].encode("utf-8")) for i in range(len(text) + 1)})
        start = rng.choice(bounds)
        end = rng.choice([b for b in bounds if b >= start])
        base_line, base_character = index.position(data, start, encoding)
        local = LocalLines(data, start, end, encoding)
        for offset in (b for b in bounds if start <= b <= end):
            lines, character = local.position(offset)
            expected = index.position(data, offset, encoding)
            shifted = (base_line + lines, character + (base_character if lines == 0 else 0))
            assert shifted == expected, (text, start, end, offset)


def test_a_copied_index_keeps_its_lines_when_the_original_is_edited():
    rng = random.Random(7)
    data = bytearray("".join(rng.choice(PIECES) for _ in range(5000)).encode("utf-8"))
    index = LineIndex(data)
    copy = index.copy()
    before = [copy.line_start(line) for line in range(copy.line_count)]
    for _ in range(50):
        start = rng.randint(0, len(data))
        end = min(len(data), start + rng.randint(0, 40))
        new = "\n".join(rng.choice(PIECES) for _ in range(rng.randint(0, 5))).encode("utf-8")
        data[start:end] = new
        index.replace(data, start, end, start + len(new))
    assert [copy.line_start(line) for line in range(copy.line_count)] == before
    fresh = LineIndex(data)
    assert [index.line_start(i) for i in range(index.line_count)] == [
        fresh.line_start(i) for i in range(fresh.line_count)
    ]
