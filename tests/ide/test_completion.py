"""Completion in the contexts a user types in."""

from __future__ import annotations

from affine_lsp.ide.completion import completions
from tests.ide.helpers import with_cursor

BODY = (
    "#m = affine_map<(d0)[s0] -> (d0 + s0)>\n"
    "!t = memref<?xf32>\n"
    "func.func @f(%A: memref<?xf32>, %n: index) {\n"
    "  %c0 = arith.constant 0 : index\n"
    "  affine.for %i = 0 to %n {\n"
    "    %inner = arith.addi %i, %c0 : index\n"
    "    {CURSOR}\n"
    "  }\n"
    "  return\n"
    "}\n"
)


def _labels(line: str) -> list[str]:
    text = BODY.replace("{CURSOR}", line)
    analysis, offset = with_cursor(text)
    return [item.label for item in completions(analysis, offset)]


def _items(line: str):
    analysis, offset = with_cursor(BODY.replace("{CURSOR}", line))
    return analysis, completions(analysis, offset)


def test_op_names_with_snippets_at_the_start_of_a_line():
    analysis, items = _items("aff$0")
    by_label = {item.label: item for item in items}
    loop = by_label["affine.for"]
    assert loop.snippet and loop.insert_text.startswith("affine.for %${1:i} = ${2:0} to")
    assert "arith.addi" in by_label and "memref.alloc" in by_label
    replaced = analysis.document.slice(loop.replace.start_byte, loop.replace.end_byte)
    assert replaced == "aff"
    assert "affine.apply" in _labels("%x = aff$0")


def test_values_in_scope_at_the_cursor():
    labels = _labels("%y = arith.addi %$0")
    assert set(labels) >= {"%A", "%n", "%c0", "%i", "%inner"}


def test_subscripts_offer_only_valid_dimensions():
    # %inner is an arith.addi of an IV: neither a valid dimension nor symbol.
    labels = _labels("%v = affine.load %A[%$0")
    assert {"%i", "%n", "%c0"} <= set(labels) and "%inner" not in labels
    assert "%A" not in labels  # a memref is not an index


def test_symbol_positions_offer_only_valid_symbols():
    assert "%i" not in _labels("%v = affine.load %A[symbol(%$0")
    assert {"%n", "%c0"} <= set(_labels("%v = affine.load %A[symbol(%$0"))
    labels = _labels("%a = affine.apply #m(%i)[%$0")
    assert "%i" not in labels and "%n" in labels
    assert "%i" in _labels("%a = affine.apply #m(%$0")


def test_shorthand_bounds_take_symbols():
    labels = _labels("affine.for %k = 0 to %$0")
    assert "%n" in labels and "%i" not in labels and "%inner" not in labels


def test_aliases_blocks_and_symbols():
    assert _labels("%a = affine.apply #$0") == ["#m"]
    assert _labels("%b = memref.alloc(%n) : !$0") == ["!t"]
    assert _labels("func.call @$0") == ["@f"]


def test_types_and_keywords():
    labels = _labels("%z = arith.constant 1 : $0")
    assert {"index", "f32", "memref", "vector"} <= set(labels)
    assert set(_labels("affine.for %k = 0 $0")) == {"to", "step", "iter_args", "max", "min"}
    assert _labels("%v = affine.load %A[%i + sym$0") == ["symbol"]


def test_snippets_become_plain_text_for_clients_without_snippet_support():
    from affine_lsp.ide.completion import snippet_to_text

    assert snippet_to_text("affine.for ${1:%i} = ${2:0} to ${3:%N} {\n  $0\n}") == (
        "affine.for %i = 0 to %N {\n  \n}"
    )
    assert snippet_to_text(r"a \$b ${1:x\}y}") == "a $b x}y"
