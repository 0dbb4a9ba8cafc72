"""Incremental editing: after random edits, the document's bytes, line index and
syntax tree equal those of a fresh parse of the final text."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from affine_lsp.syntax import ContentChange, SourceDocument, sexp
from affine_lsp.syntax.lines import LineIndex
from tests.corpus_data import chunks, require_shared

SAMPLE = """#map = affine_map<(d0)[s0] -> (d0 + s0)>
func.func @f(%A: memref<?xf32>, %n: index) {
  affine.for %i = 0 to %n {
    %v = affine.load %A[%i + symbol(%n)] : memref<?xf32>  // λ comment
    affine.store %v, %A[%i] : memref<?xf32>
  }
  return
}
"""

_SNIPPETS = [
    "",
    "%",
    "}",
    "{",
    "\n",
    "affine.for",
    " to ",
    "[",
    "]",
    "(",
    "é",
    "😀",
    "\r\n",
    "%x = ",
    "#map",
    ": memref<4xf32>",
    "floordiv 2",
    "// c\n",
    '"s',
    "<",
    ">",
]


def _lsp_position(text: str, offset: int) -> tuple[int, int]:
    """LSP (line, UTF-16 character) of a str offset, lines split at \\n only."""
    before = text[:offset]
    line = before.count("\n")
    column = before[before.rfind("\n") + 1 :]
    return line, len(column.encode("utf-16-le")) // 2


def _random_edit(rng: random.Random, text: str) -> tuple[str, ContentChange]:
    a = rng.randint(0, len(text))
    b = min(len(text), a + rng.choice([0, 0, 1, 2, 5, 20]))
    if "\r" in text[max(0, a - 1) : b + 1]:
        b = a  # keep LSP and str line splitting in agreement for this test
    new = rng.choice(_SNIPPETS) if rng.random() < 0.8 else text[rng.randint(0, len(text)) :][:15]
    change = ContentChange(new, (_lsp_position(text, a), _lsp_position(text, b)))
    return text[:a] + new + text[b:], change


def _assert_same_as_fresh(document: SourceDocument, text: str) -> None:
    assert document.text == text
    fresh = SourceDocument(text)
    assert sexp(document.tree.root_node) == sexp(fresh.tree.root_node)
    index = LineIndex(document.data)
    assert [document.lines.line_start(i) for i in range(document.lines.line_count)] == [
        index.line_start(i) for i in range(index.line_count)
    ]


def test_random_edits_on_corpus_match_a_fresh_parse():
    require_shared()
    rng = random.Random(20261121)
    sources = [c.text for c in chunks()[::25]]
    edits = 0
    for source in sources:
        document = SourceDocument(source)
        text = source
        for _ in range(12):
            batch = []
            for _ in range(rng.choice([1, 1, 1, 3])):
                text, change = _random_edit(rng, text)
                batch.append(change)
            document.apply_changes(batch)
            edits += len(batch)
        _assert_same_as_fresh(document, text)
    print(f"\nincremental edits checked: {edits} on {len(sources)} corpus chunks")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 10_000), st.integers(0, 6), st.sampled_from(_SNIPPETS)), max_size=8
    )
)
def test_hypothesis_edits_match_a_fresh_parse(edits):
    document = SourceDocument(SAMPLE)
    text = SAMPLE
    for start, length, new in edits:
        a = start % (len(text) + 1)
        b = min(len(text), a + length)
        change = ContentChange(new, (_lsp_position(text, a), _lsp_position(text, b)))
        if "\r" in text[max(0, a - 1) : b + 1] or "\r" in new:
            continue
        text = text[:a] + new + text[b:]
        document.apply_changes([change])
    _assert_same_as_fresh(document, text)


NEST = """func.func @f(%A: memref<8xf32>) {
  affine.for %i = 0 to 8 {
    %v = affine.load %A[%i] : memref<8xf32>
    affine.store %v, %A[%i] : memref<8xf32>
  }
  return
}
"""


def test_error_recovery_does_not_depend_on_reused_nodes():
    """After these two edits, tree-sitter's incremental parse alone recovers from the
    errors differently from a fresh parse (it skips a re-used node whole)."""
    others = [NEST.replace("@f", f"@g{i}") for i in range(4)]
    for before, after in [([], []), (others[:2], others[2:])]:
        text = "".join([*before, NEST, *after])  # edit NEST, alone or between others
        offset = sum(map(len, before))
        document = SourceDocument(text)
        for start, end, new in [(86, 88, "}"), (41, 42, "}")]:
            start, end = start + offset, end + offset
            change = ContentChange(new, (_lsp_position(text, start), _lsp_position(text, end)))
            document.apply_changes([change])
            text = text[:start] + new + text[end:]
        _assert_same_as_fresh(document, text)


def test_random_edits_with_errors_among_several_functions_match_a_fresh_parse():
    """Short bursts of edits that break a document of several functions: the error
    items are parsed once more without re-use, and the tree is a fresh parse's."""
    rng = random.Random(7)
    base = "".join(NEST.replace("@f", f"@f{i}") for i in range(6))
    snippets = ["}", "{", "%", "(", "[", " to ", "%x = ", "", "affine.for", "\n", ">", ":", "]"]
    for _ in range(1500):
        document, text = SourceDocument(base), base
        for _ in range(rng.randint(2, 4)):
            a = rng.randint(0, len(text))
            b = min(len(text), a + rng.randint(0, 2))
            new = rng.choice(snippets)
            positions = (document.position(a), document.position(b))
            document.apply_changes([ContentChange(new, positions)])
            text = text[:a] + new + text[b:]
        assert sexp(document.tree.root_node) == sexp(SourceDocument(text).tree.root_node), text


def test_full_text_change_replaces_everything():
    document = SourceDocument(SAMPLE)
    document.apply_changes([ContentChange("func.func @g() {\n  return\n}\n")])
    _assert_same_as_fresh(document, "func.func @g() {\n  return\n}\n")


def test_positions_past_the_end_are_clamped():
    document = SourceDocument("a\nbc\n")
    document.apply_changes([ContentChange("X", ((1, 99), (7, 3)))])
    assert document.text == "a\nbcX"


def test_utf16_positions_count_surrogate_pairs():
    document = SourceDocument("// 😀x\n")
    # 😀 is two UTF-16 code units: character 5 is just before `x`.
    document.apply_changes([ContentChange("Y", ((0, 5), (0, 6)))])
    assert document.text == "// 😀Y\n"
    assert document.position(document.data.index(b"Y")) == (0, 5)


def test_utf8_position_encoding():
    document = SourceDocument("// é!\n", encoding="utf-8")
    document.apply_changes([ContentChange("?", ((0, 5), (0, 6)))])
    assert document.text == "// é?\n"


def test_a_snapshot_is_independent_of_later_edits():
    document = SourceDocument("func.func @f() {\n  return\n}\n")
    snapshot = document.snapshot()
    document.apply_changes([ContentChange("// x\n", ((0, 0), (0, 0)))])
    assert snapshot.text == "func.func @f() {\n  return\n}\n"
    assert snapshot.tree.root_node.start_byte == 0 and not snapshot.tree.root_node.has_error
    assert snapshot.position(20) == (1, 3) and document.position(25) == (2, 3)
    snapshot.apply_changes([ContentChange("x", ((1, 0), (1, 0)))])
    assert document.text.startswith("// x\n") and "x  return" in snapshot.text
