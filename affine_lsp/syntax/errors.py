"""Syntax errors of a tree: one per ERROR or MISSING node, with a readable
message and a tight range (the unexpected token, or the point where a token
is missing)."""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter

from affine_lsp.syntax.language import mlir_language
from affine_lsp.syntax.nodes import Span, first_leaf, previous_leaf, walk

# How expected tokens read in a message.
_TOKEN_NAMES = {
    "ssa_value": "an SSA value",
    "value_use": "an SSA value",
    "value_def": "an SSA value",
    "bare_id": "an identifier",
    "integer": "an integer",
    "float": "a float",
    "string": "a string",
    "symbol_ref": "a symbol (@name)",
    "block_id": "a block label (^bb)",
    "attribute_alias": "an attribute alias (#name)",
    "type_alias": "a type alias (!name)",
    "integer_type": "a type",
    "float_type": "a type",
    "shape": "a shape",
}

_MAX_EXPECTED = 6


@dataclass(frozen=True)
class SyntaxProblem:
    """One syntax error."""

    message: str
    span: Span


def _describe(token: str) -> str:
    if token in _TOKEN_NAMES:
        return _TOKEN_NAMES[token]
    return f"'{token}'"


def _lookahead(state: int) -> dict[str, int] | None:
    """Visible tokens valid in parse `state`, by name (None if unknown)."""
    if state <= 0:
        return None
    iterator = mlir_language().lookahead_iterator(state)
    if iterator is None:
        return None
    language = mlir_language()
    return {
        name: symbol
        for symbol, name in iterator
        if language.node_kind_is_visible(symbol)
        and name not in ("ERROR", "comment", "split_marker", "end")
    }


def _expected_names(tokens: dict[str, int] | None) -> list[str]:
    """Readable names of expected tokens (empty if too many to be useful)."""
    if not tokens:
        return []
    names: list[str] = []
    for name in tokens:
        described = _describe(name)
        if described not in names:
            names.append(described)
    return names if len(names) <= _MAX_EXPECTED else []


def _failure_point(node: tree_sitter.Node) -> tuple[tree_sitter.Node | None, list[str]]:
    """Replay the error's leaves through the parse table from the last good state.

    Leaves that are shifted directly are accepted; the first one that is not is
    where parsing failed. Stops (returning the first leaf) when a reduction
    would be needed, since the table's reductions are not visible from here.
    """
    language = mlir_language()
    previous = previous_leaf(node)
    state = previous.next_parse_state if previous is not None else 1
    leaves = [
        n for n in walk(node) if n.child_count == 0 and n.type not in ("comment", "split_marker")
    ]
    after = node.next_sibling
    while after is not None and after.child_count:
        after = after.children[0]
    for leaf in [*leaves, after]:
        tokens = _lookahead(state)
        if leaf is None or tokens is None:
            return (leaves[0] if leaves else leaf), _expected_names(tokens)
        symbol = tokens.get(leaf.type)
        if symbol is None:
            return leaf, _expected_names(tokens)
        next_state = language.next_state(state, symbol)
        if next_state == 0:
            return (leaves[0] if leaves else leaf), []
        state = next_state
    return None, []


def _join(words: list[str]) -> str:
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _missing_message(node: tree_sitter.Node) -> str:
    return f"expected {_describe(node.type)}"


def _error_message(node: tree_sitter.Node) -> tuple[str, tree_sitter.Node]:
    leaf, expected = _failure_point(node)
    if leaf is None:
        leaf = first_leaf(node)
        expected = []
    if leaf.start_byte >= leaf.end_byte:
        what = "end of input"
    else:
        raw = leaf.text.decode("utf-8", errors="replace") if leaf.text else ""
        what = f"'{raw[:40]}'"
    message = f"unexpected {what}"
    if expected:
        message += f"; expected {_join(expected)}"
    return message, leaf


def syntax_problems(tree: tree_sitter.Tree) -> list[SyntaxProblem]:
    """Every syntax error in `tree`, outermost ERROR nodes only, in document order."""
    root = tree.root_node
    if not root.has_error:
        return []
    problems: list[SyntaxProblem] = []
    cursor = root.walk()
    while True:
        node = cursor.node
        descend = True
        if node.is_missing:
            problems.append(SyntaxProblem(_missing_message(node), Span.of(node)))
            descend = False
        elif node.type == "ERROR":
            message, leaf = _error_message(node)
            problems.append(SyntaxProblem(message, Span.of(leaf)))
            descend = False
        elif not node.has_error:
            descend = False
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return problems


__all__ = ["SyntaxProblem", "syntax_problems", "walk"]
