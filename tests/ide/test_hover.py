"""Hover contents, computed directly on analysed fixtures."""

from __future__ import annotations

from affine_lsp.ide.hover import hover, iteration_domain
from tests.ide.helpers import analysed, fixture_text, offset_of, with_cursor

NEST = fixture_text("nest.mlir")


def _hover(needle: str, occurrence: int = 0, shift: int = 1, text: str = NEST) -> str:
    analysis = analysed(text)
    found = hover(analysis, offset_of(analysis, needle, occurrence, shift))
    assert found is not None, needle
    return found.markdown


def test_loop_name_shows_domain_trip_count_step_and_syntax():
    markdown = _hover("affine.for", 1)
    assert "[N] -> { [i, j] : (i + j) mod 2 = 0 and i >= 0 and i <= j < N }" in markdown
    assert "**Trip count** `-i + floor((i + N + 1)/2)`" in markdown
    assert "**step** `2`" in markdown
    assert "operation ::= `affine.for`" in markdown


def test_induction_variable_definition_and_use_show_the_nest_domain():
    for occurrence in (0, 1):  # `%i = 0 to` (definition), `#lower(%i)` (use)
        markdown = _hover("%i", occurrence)
        assert "[N] -> { [i] : 0 <= i < N }" in markdown
        assert "index" in markdown and "Induction variable of `affine.for %i = 0 to %N`" in markdown


def test_parallel_loop_domain_has_every_dimension():
    markdown = _hover("affine.parallel")
    assert "[N] -> { [x, y] : 0 <= x < N and 0 <= y <= 7 }" in markdown
    assert "**Trip count** `N, 8`" in markdown


def test_access_shows_relation_and_footprint():
    markdown = _hover("affine.load")
    assert "[N] -> { [i, j] -> A[i, j + 1] }" in markdown
    assert "Region touched" in markdown and "A[i0, i1]" in markdown
    store = _hover("affine.store", 2)
    assert "[N] -> { [x, y] -> B[x + N - 1] }" in store


def test_if_shows_condition_and_where_it_holds():
    markdown = _hover("affine.if")
    assert "**Condition**" in markdown and "0 < i <= -2 + N" in markdown
    assert "**Holds on**" in markdown and "i <= j < N" in markdown


def test_alias_use_shows_definition_counts_and_operand_binding():
    markdown = _hover("#inside", 1)
    assert "#inside = affine_set<(d0)[s0] : (d0 - 1 >= 0, s0 - d0 - 2 >= 0)>" in markdown
    assert "1 dimension (d0), 1 symbol (s0), 2 constraints" in markdown
    assert "Defined at line 4" in markdown
    assert "`d0` ← `%i`, `s0` ← `%N`" in markdown


def test_alias_definition_and_map_identifiers():
    assert "1 dimension (d0), 1 symbol (s0), 2 results" in _hover("#tile", 0)
    assert "`s0`: symbol 0 of `(d0)[s0] -> (d0 * 4, s0)`" in _hover("s0", 1, 0)


def test_inline_map_hover():
    text = (
        "func.func @f(%n: index) {\n"
        "  %a = affine.apply affine_map<(i)[N] -> (i + N)>(%n)[%n]\n"
        "  return\n}\n"
    )
    markdown = _hover("affine_map", 0, 0, text)
    assert "(i)[N] -> (i + N)" in markdown and "1 dimension (i), 1 symbol (N)" in markdown
    assert "`i` ← `%n`, `N` ← `%n`" in markdown


def test_value_use_tells_validity_and_rule():
    markdown = _hover("%N", 3)  # `#inside(%i)[%N]`: bound as a symbol
    assert "Bound as a **symbol** of `affine.if` here: ✓ valid" in markdown
    assert "region argument of `func.func @triangle`" in markdown
    text = (
        "func.func @f(%A: memref<?xf32>, %n: index) {\n"
        "  affine.for %i = 0 to %n {\n"
        "    %m = arith.addi %i, %n : index\n"
        "    affine.for %j = 0 to %m {\n"
        "    }\n"
        "  }\n"
        "  return\n"
        "}\n"
    )
    markdown = _hover("%m", 1, 1, text)
    assert "Bound as a **symbol** of `affine.for` here: ✗ not valid" in markdown
    # A pure op of symbols would be one (MLIR 22); this one uses an induction variable.
    assert "%m is an arith.addi of %i (%i is the induction variable of `affine.for %i`)" in markdown


def test_value_definition_shows_type_origin_and_uses():
    markdown = _hover("%v", 0)
    assert "%v : f32" in markdown
    assert "Result of `affine.load` (line 12); 1 use." in markdown


def test_unknown_value_and_other_ops():
    text = "func.func @f() {\n  %x = arith.addi %nope, %nope : index\n  return\n}\n"
    assert "not defined here" in _hover("%nope", 0, 1, text)
    assert "**arith.constant**" in _hover("arith.constant", 0, 2)
    assert "**foo.bar**" in _hover(
        "foo.bar", 0, 2, 'func.func @f() {\n  "foo.bar"() : () -> ()\n  return\n}\n'
    )


def test_symbol_and_block_hovers():
    assert "func.func @triangle(%A: memref<?x?xf32>" in _hover("@triangle", 1)
    assert "^bb1(%k: index)" in _hover("^bb1", 0)


def test_nothing_in_comments_and_whitespace():
    analysis, offset = with_cursor("// a comment $0here\nfunc.func @f() {\n  return\n}\n")
    assert hover(analysis, offset) is None
    analysis = analysed(NEST)
    assert hover(analysis, len(analysis.document.data) + 100) is None


def test_iteration_domain_of_the_innermost_loop():
    analysis = analysed(NEST)
    domain, message = iteration_domain(analysis, offset_of(analysis, "affine.store"))
    assert domain == "[N] -> { [i, j] : (i + j) mod 2 = 0 and i >= 0 and i <= j < N }"
    assert "affine.for %j" in message and "line 11" in message
    domain, message = iteration_domain(analysis, offset_of(analysis, "%c0 = arith"))
    assert domain is None and "No affine loop nest" in message


def test_hover_at_the_end_of_a_word():
    analysis = analysed(NEST)
    end_of_name = offset_of(analysis, "%zero", 1, len("%zero"))
    found = hover(analysis, end_of_name)
    assert found is not None and "%zero : f32" in found.markdown
