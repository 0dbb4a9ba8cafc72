"""Syntax errors inside very deep expressions are found without walking up the
tree node by node (which costs the depth at every step: quadratic, minutes)."""

from __future__ import annotations

from affine_lsp.syntax import SourceDocument, syntax_problems
from tests.cost import count_calls


def test_error_at_the_bottom_of_a_deep_expression_is_reported_quickly():
    terms = ["d0"] * 60_000
    terms[10] = "d0 affine.for"  # a stray token deep in the expression tree
    document = SourceDocument(f"#m = affine_map<(d0) -> ({' + '.join(terms)})>\n")
    problems, calls = count_calls(lambda: syntax_problems(document.tree))
    assert problems
    # linear: about 7 calls a term; walking up from each node would be ~10^9
    assert calls < 20 * len(terms), f"{calls} calls for {len(terms)} terms"
