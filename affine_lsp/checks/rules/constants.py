"""Integer constants MLIR's parser refuses in affine syntax: in an affine expression
(maps, sets, subscripts, affine.parallel bounds and steps) a constant above the
largest 64-bit signed integer, and a constant bound or step of affine.for outside
the 64-bit signed range."""

from __future__ import annotations

from bisect import bisect_right
from functools import cache

import tree_sitter

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import item_node, item_rule, item_source
from affine_lsp.ir import TopLevelItem
from affine_lsp.syntax import Node, Span, mlir_query, text

CONSTANT_RANGE = register(
    "affine-constant-range",
    "an integer constant of an affine expression, bound or step that does not fit in a "
    "64-bit signed integer",
    "maps",
)

_LARGEST = 2**63 - 1
# The shortest spelling of a constant that does not fit: `0x8000000000000000` (a
# decimal one has 19 digits, `9223372036854775808`); shorter ones always fit.
_SHORTEST_OUT_OF_RANGE = len(hex(_LARGEST + 1))
# Such a constant has 16 hexadecimal (or 19 decimal) digits in a row: an item whose
# text has no such run has nothing this rule reports, and is not searched further.
# (Found as a run of zeros once every hexadecimal digit is a zero: `bytes.translate`
# and a substring search cost a tenth of a regular expression's search.)
_AS_ZEROS = bytes.maketrans(b"123456789abcdefABCDEF", b"0" * 21)
_LONG_RUN = b"0" * (_SHORTEST_OUT_OF_RANGE - 2)


def may_hold_long_constant(source: bytes) -> bool:
    """Whether `source` has a run of digits long enough for a constant out of range."""
    return _LONG_RUN in source.translate(_AS_ZEROS)


# What holds affine expressions: every integer in them is an expression constant.
_EXPRESSIONS = (
    "affine_map",
    "legacy_affine_map",
    "integer_set",
    "legacy_integer_set",
    "subscript_list",
    "parallel_bounds",
    "parallel_steps",
)


@cache
def _query() -> tree_sitter.Query:
    # Single-node patterns only: a pattern with a child (`(binary_expr (integer))`)
    # keeps a match open at every level of a nested expression, which costs the
    # square of its depth.
    contexts = " ".join(f"({kind})" for kind in _EXPRESSIONS)
    return mlir_query(
        f"[{contexts}] @expression (lower_bound) @bound (upper_bound) @bound "
        "(affine_for) @loop (integer) @integer"
    )


def _value(node: Node) -> int | None:
    spelling = "".join(text(node).split())
    sign = -1 if spelling.startswith("-") else 1
    digits = spelling.lstrip("-")
    try:
        magnitude = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 10)
    except ValueError:
        return None
    return sign * magnitude


def _inside(offset: int, starts: list[int], spans: list[tuple[int, int]]) -> bool:
    index = bisect_right(starts, offset) - 1
    return index >= 0 and spans[index][0] <= offset < spans[index][1]


@item_rule
def constant_range(item: TopLevelItem, ctx: CheckContext) -> None:
    node = item_node(item)
    if node is not None and may_hold_long_constant(item_source(item, ctx)):
        check_constants(node, ctx)


def check_constants(node: Node, ctx: CheckContext) -> None:
    """The rule's search of every node under `node` (a query)."""
    captures = tree_sitter.QueryCursor(_query()).captures(node)
    long = [
        n
        for n in captures.get("integer", [])
        if n.end_byte - n.start_byte >= _SHORTEST_OUT_OF_RANGE
    ]
    if not long:
        return
    spans = sorted((n.start_byte, n.end_byte) for n in captures.get("expression", []))
    starts = [start for start, _ in spans]
    attributes = {
        child.start_byte
        for bound in captures.get("bound", [])
        if (child := bound.child_by_field_name("shorthand")) is not None
    }
    attributes |= {
        child.start_byte
        for loop in captures.get("loop", [])
        if (child := loop.child_by_field_name("step")) is not None
    }
    for constant in long:
        value = _value(constant)
        if value is None:
            continue
        if _inside(constant.start_byte, starts, spans):
            if value > _LARGEST:
                ctx.report(CONSTANT_RANGE, Span.of(constant), "constant too large for index")
        elif constant.start_byte in attributes and not -_LARGEST - 1 <= value <= _LARGEST:
            ctx.report(
                CONSTANT_RANGE, Span.of(constant), "integer constant out of range for attribute"
            )
