"""The editor queries in grammar/queries compile and capture what they promise."""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter

from affine_lsp.syntax import SourceDocument, mlir_query, text

QUERIES = Path(__file__).resolve().parent.parent / "grammar" / "queries"

SAMPLE = """#map = affine_map<(d0)[s0] -> (d0 floordiv 2 + s0)>
func.func @f(%A: memref<?xf32>, %n: index) {
  affine.for %i = 0 to %n step 2 {
    %j = affine.apply #map(%i)[%n]
    %v = affine.load %A[%i + symbol(%n)] : memref<?xf32>
    affine.store %v, %A[%j] : memref<?xf32>
  }
  return
}
"""


def _captures(name: str, source: str = SAMPLE) -> dict[str, list[str]]:
    query = mlir_query((QUERIES / f"{name}.scm").read_text())
    tree = SourceDocument(source).tree
    found = tree_sitter.QueryCursor(query).captures(tree.root_node)
    return {capture: [text(n) for n in nodes] for capture, nodes in found.items()}


@pytest.mark.parametrize("name", ["highlights", "locals", "folds", "indents"])
def test_query_compiles(name):
    mlir_query((QUERIES / f"{name}.scm").read_text())


def test_highlights_distinguish_affine_constructs():
    captures = _captures("highlights")
    assert captures["variable.parameter.dimension"] == ["d0"]
    assert captures["variable.parameter.symbol"] == ["s0"]
    assert "%i" in captures["variable.induction"]
    assert {"affine.for", "affine.apply", "affine.load", "affine.store"} <= set(
        captures["function.affine"]
    )
    assert "floordiv" in captures["keyword.operator"]
    assert {"to", "step"} <= set(captures["keyword"])
    assert "symbol" in captures["keyword.function"]


def test_locals_define_and_reference_values():
    captures = _captures("locals")
    assert "%v" in captures["local.definition.var"]
    assert "%v" in captures["local.reference"]


def test_folds_cover_regions():
    captures = _captures("folds")
    assert any(text.startswith("{") for text in captures["fold"])
