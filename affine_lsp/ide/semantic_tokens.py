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

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import tree_sitter

from affine_lsp.ide.symbols import top_level_nodes
from affine_lsp.syntax import Node, SourceDocument, mlir_query, text

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
[(subscript_list) (parallel_bound)] @dims_area
(dim_operands) @dims_area
[(symbol_use) (symbol_operands)] @symbols_area
(lower_bound shorthand: (value_use) @shorthand)
(upper_bound shorthand: (value_use) @shorthand)
[(affine_map) (integer_set) (legacy_affine_map) (legacy_integer_set)] @map
(affine_for induction_variable: (value_def) @induction)
(scf_for induction_variable: (value_def) @induction)
(parallel_ivs (value_def) @induction)
"""
    + "["
    + " ".join(f'"{k}"' for k in _KEYWORDS)
    + "] @keyword\n"
    + "["
    + " ".join(f'"{k}"' for k in _BUILTIN_TYPES)
    + "] @builtin_type\n"
)
_AREAS = frozenset({"dims_area", "symbols_area", "shorthand", "map", "induction", "defining"})
_DEFAULT_DIALECTS = ("affine.", "arith.", "func.", "memref.", "scf.", "cf.", "builtin.")
_DIM_LISTS = {"dim_operands": "dimension", "symbol_operands": "symbol"}
_DEFINING_FIELDS = {
    "attribute_alias_def": "name",
    "type_alias_def": "name",
    "block_label": "name",
    "func_func": "symbol",
    "builtin_module": "symbol",
    "memref_global": "symbol",
}


# The names these definitions give, as query patterns (asking a node for its parent
# costs the depth of the tree).
_QUERY += "".join(
    f"({definer} {field}: (_) @defining)\n" for definer, field in _DEFINING_FIELDS.items()
)


@dataclass(frozen=True)
class Token:
    start: int  # byte offsets; a token never spans lines
    end: int
    type: str
    modifiers: frozenset[str] = frozenset()


@cache
def _query() -> tree_sitter.Query:
    return mlir_query(_QUERY)


class _Areas:
    """Disjoint byte ranges of one kind (subscripts, symbol lists, maps), searched by
    position. Everything is classified from these ranges rather than by walking up
    from each token: in a deep expression every step up costs the node's depth."""

    def __init__(self, nodes: list[Node]) -> None:
        self.nodes = sorted(nodes, key=lambda n: n.start_byte)
        self._starts = [n.start_byte for n in self.nodes]

    def at(self, offset: int) -> Node | None:
        index = bisect_right(self._starts, offset) - 1
        if index >= 0 and offset < self.nodes[index].end_byte:
            return self.nodes[index]
        return None


class _MapNames:
    """Dimension and symbol names of the maps and sets, by position."""

    def __init__(self, maps: list[Node]) -> None:
        self._areas = _Areas(maps)
        self._names: dict[int, tuple[set[str], set[str]]] = {}

    def role(self, identifier: Node) -> str | None:
        map_node = self._areas.at(identifier.start_byte)
        if map_node is None:
            return None
        if map_node.start_byte not in self._names:
            dim_list = map_node.child_by_field_name("dimensions")
            symbol_list = map_node.child_by_field_name("symbols")
            self._names[map_node.start_byte] = (
                {text(n) for n in (dim_list.named_children if dim_list else [])},
                {text(n) for n in (symbol_list.named_children if symbol_list else [])},
            )
        dims, symbols = self._names[map_node.start_byte]
        name = text(identifier)
        if name in dims:
            return "dimension"
        if name in symbols:
            return "symbol"
        return None


class _Roles:
    """Whether a value use is bound to a dimension or a symbol, by position."""

    def __init__(self, captures: dict[str, list[Node]]) -> None:
        self._dims = _Areas(captures.get("dims_area", []))
        self._symbols = _Areas(captures.get("symbols_area", []))
        self._shorthand = {n.start_byte for n in captures.get("shorthand", [])}

    def of(self, node: Node) -> str | None:
        start = node.start_byte
        if start in self._shorthand or self._symbols.at(start) is not None:
            return "symbol"
        if self._dims.at(start) is not None:
            return "dimension"
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


def token_parts(document: SourceDocument) -> Iterator[list[Token]]:
    """The tokens of the whole document, top-level node by top-level node."""
    for node in top_level_nodes(document):
        yield semantic_tokens(document, node.start_byte, node.end_byte)


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
    context = _Context(
        _MapNames(captures.get("map", [])),
        _Roles(captures),
        {text(n) for n in captures.get("induction", [])},
        {n.start_byte for n in captures.get("defining", [])},
    )
    for kind, nodes in captures.items():
        if kind in _AREAS:
            continue
        for node in nodes:
            token = _classify(kind, node, context)
            if token is not None:
                tokens.append(token)
    tokens.sort(key=lambda t: (t.start, -t.end))
    return _split_lines(document, _drop_overlaps(tokens))


@dataclass(frozen=True)
class _Context:
    maps: _MapNames
    roles: _Roles
    induction: set[str]  # names of the induction variables in the range
    defining: set[int]  # start bytes of the names definitions give (aliases, blocks, symbols)


def _classify(kind: str, node: Node, context: _Context) -> Token | None:
    start, end = node.start_byte, node.end_byte
    induction = context.induction
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
        role = context.roles.of(node)
        if role:
            modifiers.add(role)
        return Token(start, end, "variable", frozenset(modifiers))
    if kind in ("map_dim", "map_symbol"):
        role = "dimension" if kind == "map_dim" else "symbol"
        return Token(start, end, "parameter", frozenset({role, "declaration"}))
    if kind == "map_id":
        role = context.maps.role(node)
        return Token(start, end, "parameter", frozenset({role} if role else ()))
    if kind in ("attribute_alias", "type_alias", "block", "symbol_ref"):
        defining = start in context.defining
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
