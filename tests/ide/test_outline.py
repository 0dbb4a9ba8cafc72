"""Document symbols, folding ranges, semantic tokens and inlay hints."""

from __future__ import annotations

from affine_lsp.ide.folding import folding_ranges
from affine_lsp.ide.inlay_hints import inlay_hints
from affine_lsp.ide.semantic_tokens import TOKEN_MODIFIERS, TOKEN_TYPES, semantic_tokens
from affine_lsp.ide.symbols import document_symbols
from tests.ide.helpers import analysed, fixture_text, offset_of

NEST = fixture_text("nest.mlir")


def _tree(symbols, depth=0):
    lines = []
    for symbol in symbols:
        lines.append(f"{'  ' * depth}{symbol.kind}: {symbol.name}")
        lines += _tree(symbol.children, depth + 1)
    return lines


def test_outline_nests_loops_ifs_and_parallels_under_functions():
    assert _tree(document_symbols(analysed(NEST).document)) == [
        "alias: #lower",
        "alias: #tile",
        "alias: #inside",
        "alias: #unused",
        "function: @triangle",
        "  loop: affine.for %i = 0 to %N",
        "    loop: affine.for %j = #lower(%i) to %N step 2",
        "      if: affine.if #inside(%i)[%N]",
        "  parallel: affine.parallel (%x, %y) = (0, 0) to (%N, 8)",
        "function: @caller",
    ]


def test_outline_ranges_cover_the_op_and_select_its_name():
    analysis = analysed(NEST)
    function = document_symbols(analysis.document)[4]
    text = analysis.document.slice(function.selection.start_byte, function.selection.end_byte)
    assert text == "@triangle" and function.detail.startswith("func.func @triangle(")
    loop = function.children[0]
    assert analysis.document.slice(loop.span.start_byte, loop.span.end_byte).endswith("}")


def test_folding_regions_maps_comments_and_chunks():
    text = (
        "// one\n// two\n#m = affine_map<(d0)\n  -> (d0)>\n"
        "func.func @f() {\n  affine.for %i = 0 to 4 {\n    %x = arith.constant 0 : index\n"
        "  }\n  return\n}\n// -----\nfunc.func @g() {\n  return\n}\n"
    )
    folds = {(f.start_line, f.end_line, f.kind) for f in folding_ranges(analysed(text).document)}
    assert (0, 1, "comment") in folds  # the comment block
    assert (4, 8, None) in folds  # the function body, up to the line before `}`
    assert (5, 6, None) in folds  # the loop body
    assert (0, 9, "region") in folds and (10, 13, "region") in folds  # the chunks
    assert not any(f[0] == 2 and f[2] is None for f in folds)  # a 2-line map folds to nothing


def _token_map(text: str):
    analysis = analysed(text)
    document = analysis.document
    return [
        (document.slice(t.start, t.end), t.type, frozenset(t.modifiers))
        for t in semantic_tokens(document)
    ]


def test_tokens_tell_dimensions_from_symbols_and_ivs():
    tokens = _token_map(NEST)
    assert ("%i", "variable", frozenset({"declaration", "induction"})) in tokens
    assert ("%i", "variable", frozenset({"dimension", "induction"})) in tokens
    assert ("%N", "variable", frozenset({"symbol"})) in tokens  # shorthand bound / symbol list
    assert ("d0", "parameter", frozenset({"declaration", "dimension"})) in tokens
    assert ("s0", "parameter", frozenset({"symbol"})) in tokens
    assert ("affine.for", "function", frozenset({"affine", "defaultLibrary"})) in tokens
    assert ("#inside", "macro", frozenset({"declaration"})) in tokens
    assert ("#inside", "macro", frozenset()) in tokens
    assert ("@triangle", "function", frozenset({"declaration"})) in tokens
    assert ("^bb1", "label", frozenset({"declaration"})) in tokens
    assert ("to", "keyword", frozenset()) in tokens and ("step", "keyword", frozenset()) in tokens
    assert ("index", "type", frozenset({"defaultLibrary"})) in tokens
    assert all(t in TOKEN_TYPES and m <= set(TOKEN_MODIFIERS) for _, t, m in tokens)


def test_symbol_in_subscripts_and_legacy_names():
    tokens = _token_map(NEST)
    assert ("%N", "variable", frozenset({"symbol"})) in tokens  # symbol(%N)
    legacy = _token_map("func @f() {\n  return\n}\n")
    assert ("func", "function", frozenset({"defaultLibrary", "deprecated"})) in legacy


def test_tokens_are_ordered_disjoint_and_single_line():
    analysis = analysed(NEST + '\n"test.op"() {attr = "a\\nb"} : () -> ()\n')
    tokens = semantic_tokens(analysis.document)
    for before, after in zip(tokens, tokens[1:], strict=False):
        assert before.end <= after.start
    assert all(b"\n" not in analysis.document.data[t.start : t.end] for t in tokens)


def test_range_tokens_are_a_slice_of_the_full_tokens():
    analysis = analysed(NEST)
    start, end = offset_of(analysis, "affine.parallel"), offset_of(analysis, "return")
    full = semantic_tokens(analysis.document)
    part = semantic_tokens(analysis.document, start, end)
    assert part and all(start <= t.start < end for t in part)
    assert part == [t for t in full if start <= t.start < end]


def test_inlay_hints_show_trip_counts_and_bindings():
    analysis = analysed(NEST)
    hints = inlay_hints(analysis, 0, len(analysis.document.data))
    labels = [(analysis.document.point(h.offset)[0] + 1, h.label) for h in hints]
    assert (10, "N iterations") in labels
    assert (11, "-i + floor((i + N + 1)/2) iterations") in labels
    assert (11, "d0:") in labels  # #lower(d0: %i)
    assert (13, "d0:") in labels and (13, "s0:") in labels
    first = next(h for h in hints if h.label == "N iterations")
    assert analysis.document.data[first.offset - 1 : first.offset] == b"{"
    assert "domain" in first.tooltip


def test_inlay_hints_only_in_the_requested_range():
    analysis = analysed(NEST)
    start = offset_of(analysis, "affine.parallel")
    hints = inlay_hints(analysis, start, start + 10)
    assert hints == []


def test_cached_folding_ranges_match_fresh_ones_after_edits(monkeypatch):
    import random

    from affine_lsp.ide import folding
    from affine_lsp.ide.analysis import DocumentAnalysis
    from affine_lsp.ide.folding import FoldingCache
    from affine_lsp.syntax import ContentChange

    fragments = ["\n", " ", "}", "// c\n", "  // x\n", "// -----\n", "#m = 1\n", "", "\r\n"]
    rng = random.Random(11)
    analysis = DocumentAnalysis.from_text(NEST + "// -----\n// one\n// two\n" + NEST)
    cache = FoldingCache()
    assert cache.ranges(analysis) == folding_ranges(analysis.document)
    for _ in range(60):
        size = len(analysis.document.data)
        start = rng.randint(0, size)
        end = min(size, start + rng.choice([0, 1, 3, 40]))
        position = analysis.document.position
        change = ContentChange(rng.choice(fragments), (position(start), position(end)))
        analysis.apply_changes([change])
        assert cache.ranges(analysis) == folding_ranges(analysis.document)
    # items the edit did not touch are not searched again
    searched = []
    real = folding._find

    def find(*arguments):
        searched.append(arguments[1].type)
        return real(*arguments)

    monkeypatch.setattr(folding, "_find", find)
    cache.ranges(analysis)
    assert "operation" not in searched
    analysis.apply_changes([ContentChange("\n", ((0, 0), (0, 0)))])
    assert cache.ranges(analysis) == folding_ranges(analysis.document)
    assert "operation" not in searched


def test_folding_with_lone_carriage_returns_is_computed_whole():
    from affine_lsp.ide.analysis import DocumentAnalysis
    from affine_lsp.ide.folding import FoldingCache

    analysis = DocumentAnalysis.from_text(NEST.replace("\n", "\r", 1))
    assert analysis.document.has_lone_cr
    assert FoldingCache().ranges(analysis) == folding_ranges(analysis.document) != []
