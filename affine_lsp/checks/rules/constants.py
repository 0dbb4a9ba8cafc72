"""Integer constants MLIR's parser refuses in affine syntax: in an affine expression
(maps, sets, subscripts, affine.parallel bounds and steps) a constant above the
largest 64-bit signed integer, and a constant bound or step of affine.for outside
the 64-bit signed range."""

from __future__ import annotations

from functools import cache

import tree_sitter

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import item_rule
from affine_lsp.ir import TopLevelItem
from affine_lsp.syntax import Node, Span, mlir_query, text

CONSTANT_RANGE = register(
    "affine-constant-range",
    "an integer constant of an affine expression, bound or step that does not fit in a "
    "64-bit signed integer",
    "maps",
)

_LARGEST = 2**63 - 1
_EXPRESSION_PARENTS = (
    "affine_result_list",
    "constraint",
    "affine_binary_expr",
    "affine_neg_expr",
    "affine_paren_expr",
    "affine_legacy_call_expr",
    "subscript_list",
    "subscript_binary_expr",
    "subscript_neg_expr",
    "subscript_paren_expr",
    "subscript_legacy_call_expr",
    "parallel_bound",
    "parallel_steps",
)


@cache
def _query() -> tree_sitter.Query:
    patterns = [f"({parent} (integer) @expression)" for parent in _EXPRESSION_PARENTS]
    patterns += [
        "(lower_bound shorthand: (integer) @attribute)",
        "(upper_bound shorthand: (integer) @attribute)",
        "(affine_for step: (integer) @attribute)",
    ]
    return mlir_query(" ".join(patterns))


def _value(node: Node) -> int | None:
    spelling = text(node).replace(" ", "").replace("\t", "").replace("\n", "")
    sign = -1 if spelling.startswith("-") else 1
    digits = spelling.lstrip("-")
    try:
        magnitude = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 10)
    except ValueError:
        return None
    return sign * magnitude


@item_rule
def constant_range(item: TopLevelItem, ctx: CheckContext) -> None:
    node = item.alias.node if item.alias is not None else None
    if node is None and item.operation is not None:
        node = item.operation.node
    if node is None:
        return
    captures = tree_sitter.QueryCursor(_query()).captures(node)
    for constant in captures.get("expression", []):
        value = _value(constant)
        if value is not None and value > _LARGEST:
            ctx.report(CONSTANT_RANGE, Span.of(constant), "constant too large for index")
    for constant in captures.get("attribute", []):
        value = _value(constant)
        if value is not None and not -_LARGEST - 1 <= value <= _LARGEST:
            ctx.report(
                CONSTANT_RANGE, Span.of(constant), "integer constant out of range for attribute"
            )
