"""The tree-sitter language for MLIR, built from grammar/src by setup.py."""

from __future__ import annotations

from functools import cache

import tree_sitter

from affine_lsp import _binding


@cache
def mlir_language() -> tree_sitter.Language:
    """The MLIR tree-sitter language (loaded once)."""
    return tree_sitter.Language(_binding.language())


def mlir_query(source: str) -> tree_sitter.Query:
    """A query over the MLIR grammar. (tree-sitter's stubs type `Query` with
    `typing.Self`, which type checkers do not know for Python 3.10: typed here.)"""
    query: tree_sitter.Query = tree_sitter.Query(mlir_language(), source)
    return query


def new_parser() -> tree_sitter.Parser:
    """A fresh parser for MLIR. Parsers are not thread-safe: one per owner."""
    return tree_sitter.Parser(mlir_language())


def parser_input(data: bytes) -> bytes:
    """The bytes the parser reads: NUL bytes, which MLIR skips like whitespace,
    become spaces (same length: every offset stays the same)."""
    return data.replace(b"\0", b" ") if b"\0" in data else data
