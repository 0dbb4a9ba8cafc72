"""Run the grammar's test corpus (grammar/test/corpus) without the tree-sitter CLI."""

from __future__ import annotations

import pytest

from affine_lsp.syntax import SourceDocument, sexp
from affine_lsp.syntax.printer import normalize_sexp
from tests.grammar_corpus import all_cases

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.file.stem}: {c.name}" for c in CASES])
def test_corpus_case(case):
    tree = SourceDocument(case.source).tree
    assert normalize_sexp(sexp(tree.root_node)) == normalize_sexp(case.expected)


def test_corpus_is_not_empty():
    assert len(CASES) >= 60
