"""Render syntax trees as S-expressions, in tree-sitter's test-corpus style."""

from __future__ import annotations

import re

import tree_sitter

_SPACES = re.compile(r"\s+")


def sexp(node: tree_sitter.Node) -> str:
    """One-line S-expression of named nodes with field names, like `tree-sitter parse`."""
    return str(node)


def normalize_sexp(text: str) -> str:
    """Collapse whitespace so that hand-formatted expected trees compare equal."""
    text = _SPACES.sub(" ", text.strip())
    return text.replace("( ", "(").replace(" )", ")")


def pretty_sexp(node: tree_sitter.Node, ranges: bool = False) -> str:
    """Indented S-expression: one named node per line, fields as `name:` prefixes.
    With `ranges`, as `tree-sitter parse` prints it: each node's `[row, column] -
    [row, column]` (0-based, byte columns), and a leaf's text as a quoted string."""
    lines: list[str] = []
    stack: list[tuple[tree_sitter.Node, str | None, int, bool]] = [(node, None, 0, False)]
    while stack:
        current, field_name, depth, closing = stack.pop()
        if closing:
            lines[-1] += ")"
            continue
        label = current.type if current.is_named else f'"{current.type}"'
        if current.is_missing:
            label = "MISSING " + label
        prefix = f"{field_name}: " if field_name else ""
        children = []
        for index, child in enumerate(current.children):
            if child.is_named or child.is_missing:
                children.append((child, current.field_name_for_child(index), depth + 1, False))
        if ranges:
            label += _range(current) + ("" if children else _leaf_text(current))
        lines.append("  " * depth + f"{prefix}({label}")
        stack.append((current, None, depth, True))
        stack.extend(reversed(children))
    return "\n".join(lines)


def _range(node: tree_sitter.Node) -> str:
    (start_row, start_column), (end_row, end_column) = node.start_point, node.end_point
    return f" [{start_row}, {start_column}] - [{end_row}, {end_column}]"


def _leaf_text(node: tree_sitter.Node) -> str:
    """` "text"` of a leaf (quotes and backslashes escaped; undecodable bytes kept as
    surrogates, which the command line prints as `\\xNN`)."""
    text = (node.text or b"").decode("utf-8", "surrogateescape")
    if not text:
        return ""
    return ' "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
