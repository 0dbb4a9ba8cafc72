"""Definition, references and rename for every kind of name."""

from __future__ import annotations

import pytest

from affine_lsp.ide import navigation
from affine_lsp.ide.navigation import RenameError
from affine_lsp.syntax import Span
from tests.ide.helpers import analysed, apply_text_edits, fixture_text, offset_of

NEST = fixture_text("nest.mlir")
GROUPS = (
    "func.func @g() {\n"
    '  %r:2 = "test.two"() : () -> (index, index)\n'
    "  %s = arith.addi %r#1, %r#0 : index\n"
    "  %t = arith.addi %r#1, %s : index\n"
    "  return\n"
    "}\n"
)


def _texts(analysis, spans: list[Span]) -> list[str]:
    return [analysis.document.slice(s.start_byte, s.end_byte) for s in spans]


def _lines(analysis, spans: list[Span]) -> list[int]:
    return [analysis.document.point(s.start_byte)[0] + 1 for s in spans]


def _renamed(analysis, offset: int, new_name: str) -> str:
    return apply_text_edits(analysis, navigation.rename(analysis, offset, new_name))


def test_value_definition_and_references():
    analysis = analysed(NEST)
    at = offset_of(analysis, "%N", 2, 1)
    assert _lines(analysis, navigation.definition(analysis, at)) == [7]
    refs = navigation.references(analysis, at, include_declaration=False)
    assert len(refs) == 6 and set(_texts(analysis, refs)) == {"%N"}
    with_decl = navigation.references(analysis, at, include_declaration=True)
    assert len(with_decl) == 7 and _lines(analysis, with_decl)[0] == 7


def test_result_groups_rename_every_member_and_keep_the_index():
    analysis = analysed(GROUPS)
    at = offset_of(analysis, "%r#1", 0, 1)
    assert _lines(analysis, navigation.definition(analysis, at)) == [2]
    span, placeholder = navigation.prepare_rename(analysis, at)
    assert placeholder == "%r" and analysis.document.slice(span.start_byte, span.end_byte) == "%r"
    renamed = _renamed(analysis, at, "pair")
    assert "%pair:2 = " in renamed and "%pair#1, %pair#0" in renamed and "%pair#1, %s" in renamed


def test_block_navigation_and_rename():
    analysis = analysed(NEST)
    use = offset_of(analysis, "^bb1", 0, 1)
    assert _lines(analysis, navigation.definition(analysis, use)) == [31]
    assert _lines(analysis, navigation.references(analysis, use, False)) == [30]
    assert "^exit(%k: index)" in _renamed(analysis, use, "^exit")


def test_alias_navigation_and_rename():
    analysis = analysed(NEST)
    use = offset_of(analysis, "#inside", 1, 2)
    assert _lines(analysis, navigation.definition(analysis, use)) == [4]
    assert _lines(analysis, navigation.references(analysis, use, False)) == [13]
    renamed = _renamed(analysis, use, "interior")  # the sigil is added
    assert "#interior = affine_set" in renamed and "affine.if #interior(%i)" in renamed


def test_symbol_navigation_across_functions_and_rename():
    analysis = analysed(NEST)
    call = offset_of(analysis, "@triangle", 1, 2)
    assert _lines(analysis, navigation.definition(analysis, call)) == [7]
    assert _lines(analysis, navigation.references(analysis, call, True)) == [7, 29]
    renamed = _renamed(analysis, call, "@tri")
    assert "func.func @tri(" in renamed and "func.call @tri(" in renamed


def test_map_identifier_rename_stays_in_its_map():
    analysis = analysed(NEST)
    at = offset_of(analysis, "s0", 1, 0)  # `(d0)[s0] -> (d0 * 4, s0)` of #tile
    renamed = _renamed(analysis, at, "size")
    assert "#tile = affine_map<(d0)[size] -> (d0 * 4, size)>" in renamed
    assert "#inside = affine_set<(d0)[s0]" in renamed


def test_chunks_scope_aliases_and_symbols():
    analysis = analysed(fixture_text("chunks.mlir"))
    use = offset_of(analysis, "#m(%i)", 0, 1)
    assert _lines(analysis, navigation.references(analysis, use, True)) == [1, 4]


@pytest.mark.parametrize(
    ("needle", "occurrence", "new_name", "reason"),
    [
        ("%v", 0, "%zero", "already defined"),
        ("%v", 0, "%bad name", "not a valid name"),
        ("^bb1", 0, "^bb1 x", "not a valid name"),
        ("#inside", 1, "#tile", "already defined"),
        ("#inside", 1, "!inside", "another kind"),
        ("@triangle", 1, "@caller", "already defined"),
        ("s0", 1, "d0", "already defined"),
        ("s0", 1, "mod", "keyword"),
    ],
)
def test_rename_rejects_invalid_or_clashing_names(needle, occurrence, new_name, reason):
    analysis = analysed(NEST)
    shift = 0 if needle == "s0" else 1
    with pytest.raises(RenameError, match=reason):
        navigation.rename(analysis, offset_of(analysis, needle, occurrence, shift), new_name)


def test_prepare_rename_refuses_op_names_and_undefined_names():
    analysis = analysed(NEST)
    with pytest.raises(RenameError, match="Operation names"):
        navigation.prepare_rename(analysis, offset_of(analysis, "affine.for", 0, 2))
    broken = analysed("func.func @f() {\n  %x = arith.addi %nope, %nope : index\n  return\n}\n")
    with pytest.raises(RenameError, match="not defined"):
        navigation.prepare_rename(broken, offset_of(broken, "%nope", 0, 1))
    with pytest.raises(RenameError, match="No renamable name"):
        navigation.prepare_rename(analysis, 0)


def test_same_name_is_a_no_op():
    analysis = analysed(NEST)
    assert navigation.rename(analysis, offset_of(analysis, "%v", 0, 1), "v") == []
