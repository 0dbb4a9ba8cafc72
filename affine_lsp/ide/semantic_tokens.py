"""Semantic tokens: what each name means, beyond what a grammar can colour.

Legend (token type, then modifiers):
  op names (`affine.for`, `"foo.bar"`)  function: defaultLibrary (known dialects),
                                        affine (affine ops), deprecated (2019 spellings)
  `@symbols`                            function: declaration where defined
  SSA values                            variable: declaration where defined, induction
                                        for loop IVs, dimension / symbol where bound to
                                        a map input (operand lists, subscripts, bounds)
  identifiers of maps and sets          parameter: dimension / symbol, declaration in
                                        the header
  `#` aliases                           macro: declaration where defined
  `!` aliases, types                    type: declaration where defined, defaultLibrary
                                        for builtin types
  `^blocks`                             label: declaration where defined
  `to`, `step`, `iter_args`, `symbol`,  keyword
  `max`, `min`, `else`, ...
  `floordiv`, `ceildiv`, `mod`          operator
  numbers, strings, comments            number, string, comment
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import tree_sitter

from affine_lsp.ide.locate import enclosing_map
from affine_lsp.syntax import Node, SourceDocument, mlir_language
from affine_lsp.syntax.nodes import text

TOKEN_TYPES = [
    "function",
    "variable",
    "parameter",
    "macro",
    "type",
    "label",
    "keyword",
    "operator",
    "number",
    "string",
    "comment",
]
TOKEN_MODIFIERS = [
    "declaration",
    "defaultLibrary",
    "deprecated",
    "dimension",
    "symbol",
    "induction",
    "affine",
]

_KEYWORDS = [
    "to", "step", "iter_args", "max", "min", "else", "reduce", "into", "by", "disjoint",
    "attributes", "private", "public", "nested", "loc", "constant", "uninitialized",
    "read", "write", "data", "instr", "locality", "symbol", "affine_map", "affine_set",
]  # fmt: skip
_BUILTIN_TYPES = ["memref", "tensor", "vector", "complex", "tuple"]

_QUERY = (
    """
(comment) @comment
(split_marker) @comment
(string) @string
(integer) @number
(float) @number
(value_def) @value_def
(value_use) @value_use
(block_id) @block
(symbol_ref) @symbol_ref
(attribute_alias) @attribute_alias
(type_alias) @type_alias
(dim_id) @map_dim
(symbol_id) @map_symbol
(affine_id) @map_id
[(integer_type) (float_type) (index_type) (none_type)] @builtin_type
(operation body: (_ name: _ @op_name))
["floordiv" "ceildiv" "mod"] @operator
"""
    + "["
    + " ".join(f'"{k}"' for k in _KEYWORDS)
    + "] @keyword\n"
    + "["
    + " ".join(f'"{k}"' for k in _BUILTIN_TYPES)
    + "] @builtin_type\n"
)
_DEFAULT_DIALECTS = ("affine.", "arith.", "func.", "memref.", "scf.", "cf.", "builtin.")
_IV_PARENTS = {("affine_for", "induction_variable"), ("scf_for", "induction_variable")}
_DIM_LISTS = {"dim_operands": "dimension", "symbol_operands": "symbol"}


@dataclass(frozen=True)
class Token:
    start: int  # byte offsets; a token never spans lines
    end: int
    type: str
    modifiers: frozenset[str] = frozenset()


@cache
def _query() -> tree_sitter.Query:
    return tree_sitter.Query(mlir_language(), _QUERY)


def _field_of(node: Node) -> tuple[str, str | None]:
    """(parent type, field name of `node` in its parent)."""
    parent = node.parent
    if parent is None:
        return "", None
    for index, child in enumerate(parent.children):
        if child.start_byte == node.start_byte and child.end_byte == node.end_byte:
            return parent.type, parent.field_name_for_child(index)
    return parent.type, None


def _binding_role(node: Node) -> str | None:
    """ "dimension" / "symbol" for a value bound to a map input, else None."""
    parent = node.parent
    if parent is None:
        return None
    if parent.type in _DIM_LISTS:
        return _DIM_LISTS[parent.type]
    if parent.type == "symbol_use":
        return "symbol"
    if parent.type in ("lower_bound", "upper_bound"):
        return "symbol"  # shorthand bound
    current = parent
    while current is not None and current.type != "operation":
        if current.type in ("subscript_list", "parallel_bound"):
            return "dimension"
        current = current.parent
    return None


class _MapNames:
    """Dimension and symbol names of map nodes, memoised by node position."""

    def __init__(self) -> None:
        self._names: dict[tuple[int, int], tuple[set[str], set[str]]] = {}

    def role(self, identifier: Node) -> str | None:
        map_node = enclosing_map(identifier)
        if map_node is None:
            return None
        key = (map_node.start_byte, map_node.end_byte)
        if key not in self._names:
            dims = map_node.child_by_field_name("dimensions")
            symbols = map_node.child_by_field_name("symbols")
            self._names[key] = (
                {text(n) for n in (dims.named_children if dims else [])},
                {text(n) for n in (symbols.named_children if symbols else [])},
            )
        dims, symbols = self._names[key]
        name = text(identifier)
        if name in dims:
            return "dimension"
        if name in symbols:
            return "symbol"
        return None


def _op_name_token(name: Node) -> Token:
    spelling = text(name).strip('"')
    modifiers = set()
    if spelling.startswith(_DEFAULT_DIALECTS) or "." not in spelling:
        modifiers.add("defaultLibrary")
    if spelling.startswith("affine."):
        modifiers.add("affine")
    if name.type == "legacy_keyword":
        modifiers.add("deprecated")
    return Token(name.start_byte, name.end_byte, "function", frozenset(modifiers))


def semantic_tokens(
    document: SourceDocument, start: int = 0, end: int | None = None
) -> list[Token]:
    """Tokens overlapping bytes [start, end), in document order, split at line breaks."""
    end = len(document.data) if end is None else end
    root = document.tree.root_node
    cursor = tree_sitter.QueryCursor(_query())
    cursor.set_byte_range(start, end)
    captures = cursor.captures(root)
    tokens: list[Token] = []
    map_names = _MapNames()
    induction_names: set[str] = set()
    for kind in ("value_def",):
        for node in captures.get(kind, []):
            if _field_of(node) in _IV_PARENTS or (
                node.parent and node.parent.type == "parallel_ivs"
            ):
                induction_names.add(text(node))
    for kind, nodes in captures.items():
        for node in nodes:
            token = _classify(kind, node, map_names, induction_names)
            if token is not None:
                tokens.append(token)
    tokens.sort(key=lambda t: (t.start, -t.end))
    return _split_lines(document, _drop_overlaps(tokens))


def _classify(kind: str, node: Node, maps: _MapNames, induction: set[str]) -> Token | None:
    start, end = node.start_byte, node.end_byte
    modifiers: set[str] = set()
    if kind == "value_def":
        modifiers.add("declaration")
        if text(node) in induction:
            modifiers.add("induction")
        return Token(start, end, "variable", frozenset(modifiers))
    if kind == "value_use":
        name = text(node).split("#")[0]
        if name in induction:
            modifiers.add("induction")
        role = _binding_role(node)
        if role:
            modifiers.add(role)
        return Token(start, end, "variable", frozenset(modifiers))
    if kind in ("map_dim", "map_symbol"):
        role = "dimension" if kind == "map_dim" else "symbol"
        return Token(start, end, "parameter", frozenset({role, "declaration"}))
    if kind == "map_id":
        role = maps.role(node)
        return Token(start, end, "parameter", frozenset({role} if role else ()))
    if kind in ("attribute_alias", "type_alias", "block", "symbol_ref"):
        parent_type, field_name = _field_of(node)
        defining = field_name in ("name", "symbol") and parent_type in (
            "attribute_alias_def",
            "type_alias_def",
            "block_label",
            "func_func",
            "builtin_module",
            "memref_global",
        )
        token_type = {
            "attribute_alias": "macro",
            "type_alias": "type",
            "block": "label",
            "symbol_ref": "function",
        }[kind]
        return Token(start, end, token_type, frozenset({"declaration"} if defining else ()))
    if kind == "builtin_type":
        return Token(start, end, "type", frozenset({"defaultLibrary"}))
    if kind == "op_name":
        return _op_name_token(node)
    simple = {"comment": "comment", "string": "string", "number": "number"}
    if kind in simple:
        return Token(start, end, simple[kind])
    if kind in ("keyword", "operator"):
        return Token(start, end, kind)
    return None


def _drop_overlaps(tokens: list[Token]) -> list[Token]:
    """Keep the first of overlapping tokens (LSP tokens may not overlap)."""
    kept: list[Token] = []
    for token in tokens:
        if kept and token.start < kept[-1].end:
            continue
        kept.append(token)
    return kept


def _split_lines(document: SourceDocument, tokens: list[Token]) -> list[Token]:
    result = []
    data = document.data
    for token in tokens:
        if data.find(b"\n", token.start, token.end) < 0:
            result.append(token)
            continue
        start = token.start
        while start < token.end:
            stop = data.find(b"\n", start, token.end)
            stop = token.end if stop < 0 else stop
            piece_end = stop - 1 if stop > start and data[stop - 1 : stop] == b"\r" else stop
            if piece_end > start:
                result.append(Token(start, piece_end, token.type, token.modifiers))
            start = stop + 1
    return result
