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


def pretty_sexp(node: tree_sitter.Node) -> str:
    """Indented S-expression: one named node per line, fields as `name:` prefixes."""
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
        lines.append("  " * depth + f"{prefix}({label}")
        stack.append((current, None, depth, True))
        children = []
        for index, child in enumerate(current.children):
            if child.is_named or child.is_missing:
                children.append((child, current.field_name_for_child(index), depth + 1, False))
        stack.extend(reversed(children))
    return "\n".join(lines)
