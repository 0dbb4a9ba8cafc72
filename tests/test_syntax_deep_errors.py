"""Syntax errors inside very deep expressions are found without walking up the
tree node by node (which costs the depth at every step: quadratic, minutes)."""

from __future__ import annotations

import time

from affine_lsp.syntax import SourceDocument, syntax_problems


def test_error_at_the_bottom_of_a_deep_expression_is_reported_quickly():
    terms = ["d0"] * 60_000
    terms[10] = "d0 affine.for"  # a stray token deep in the expression tree
    document = SourceDocument(f"#m = affine_map<(d0) -> ({' + '.join(terms)})>\n")
    start = time.perf_counter()
    problems = syntax_problems(document.tree)
    assert problems and time.perf_counter() - start < 3  # quadratic took over 10 s
