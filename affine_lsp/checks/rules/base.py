"""How rules plug in: op rules run on every op with a given name, item rules
once per top-level item, module rules once per document."""

from __future__ import annotations

from collections.abc import Callable

from affine_lsp.checks.context import CheckContext
from affine_lsp.ir import ModuleModel, Operation, TopLevelItem, Type, Use
from affine_lsp.syntax import FIELD, Node, Span

OpRule = Callable[[Operation, CheckContext], None]
ItemRule = Callable[[TopLevelItem, CheckContext], None]
ModuleRule = Callable[[ModuleModel, CheckContext], None]

OP_RULES: dict[str, list[OpRule]] = {}
EVERY_OP_RULES: list[OpRule] = []
GENERIC_OP_RULES: list[OpRule] = []  # run on every op written in the generic form
ITEM_RULES: list[ItemRule] = []
MODULE_RULES: list[ModuleRule] = []


def op_rule(*names: str) -> Callable[[OpRule], OpRule]:
    """Run the decorated function on every op named one of `names` (all ops if none)."""

    def decorate(function: OpRule) -> OpRule:
        if not names:
            EVERY_OP_RULES.append(function)
        for name in names:
            OP_RULES.setdefault(name, []).append(function)
        return function

    return decorate


def generic_op_rule(function: OpRule) -> OpRule:
    """Run the decorated function on every op written in the generic form."""
    GENERIC_OP_RULES.append(function)
    return function


def item_rule(function: ItemRule) -> ItemRule:
    ITEM_RULES.append(function)
    return function


def module_rule(function: ModuleRule) -> ModuleRule:
    MODULE_RULES.append(function)
    return function


# -- small helpers shared by rules -------------------------------------------------


def item_node(item: TopLevelItem) -> Node | None:
    """The syntax node of an item: its alias definition, else its operation."""
    if item.alias is not None and item.alias.node is not None:
        return item.alias.node
    return item.operation.node if item.operation is not None else None


def item_source(item: TopLevelItem, ctx: CheckContext) -> bytes:
    """The source text of an item (b"" without a node), read once per check run.

    Rules that look for something anywhere in an item's syntax search this text
    first (in C, with `re`): a search costs a small part of a query over the item's
    nodes, and where the text cannot hold what a rule reports, no query is needed."""
    key = ("item source", id(item))
    found = ctx.memo.get(key)
    if isinstance(found, bytes):
        return found
    node = item_node(item)
    source = (node.text or b"") if node is not None else b""
    ctx.memo[key] = source
    return source


LOOKUP_BUDGET = 4_000_000
"""Bytes times lookups an item's text search may cost (`few_lookups`)."""


def few_lookups(source: bytes, lookups: int) -> bool:
    """Whether looking up the node around `lookups` matches in an item of text `source`
    costs less than a query over its nodes. A lookup goes down from the item through
    every level of nesting at the match, so its cost is bounded by the item's size: a
    deep item with many matches (3000 nested `affine.if #set(...) {`) would cost its
    depth for each, where a query costs the item once."""
    return lookups * len(source) <= LOOKUP_BUDGET


def body_node(op: Operation) -> Node | None:
    """The op's syntax node without its results (`operation.body`)."""
    return op.node.child_by_field_id(FIELD["body"]) if op.node is not None else None


def field_span(op: Operation, name: str) -> Span | None:
    """Span of a field of the op's body node (None if absent)."""
    body = body_node(op)
    child = body.child_by_field_id(FIELD[name]) if body is not None else None
    return Span.of(child) if child is not None else None


def signature_spans(op: Operation, side: str) -> list[Span]:
    """Spans of the input (`side="inputs"`) or result (`"results"`) types of a
    generic-form op's function type."""
    body = body_node(op)
    function_type = body.child_by_field_id(FIELD["type"]) if body is not None else None
    listed = function_type.child_by_field_id(FIELD[side]) if function_type is not None else None
    if listed is None:
        return []
    if listed.type != "type_list_parens":
        return [Span.of(listed)]
    return [Span.of(c) for c in listed.named_children if c.type != "comment"]


def node_at(op: Operation, span: Span) -> Node | None:
    """The syntax node of the op exactly covering `span` (or the smallest around it)."""
    if op.node is None:
        return None
    return op.node.descendant_for_byte_range(span.start_byte, span.end_byte)


def is_generic(op: Operation) -> bool:
    """Whether the op is written in the generic form (`"dialect.op"(...) : (...) -> ...`)."""
    return op.kind == "generic_operation"


def operand_number(use: Use) -> int:
    """Position of `use` among its user's operands, as MLIR numbers them."""
    if use.user is None:
        return 0
    for number, candidate in enumerate(use.user.operands):
        if candidate is use:
            return number
    return 0


def operand_type(use: Use) -> Type | None:
    """The type an op sees for an operand: the value's, which the generic form also
    declares. None if unknown, or if the declaration contradicts the value
    (`ssa-type-mismatch` reports that)."""
    actual = use.value.type if use.value is not None else None
    user = use.user
    if user is not None and user.operand_types:
        number = operand_number(use)
        if number < len(user.operand_types):
            declared = user.operand_types[number]
            if actual is not None and declared != actual:
                return None
            return declared
    return actual


def join(spans: list[Span]) -> Span:
    return Span(spans[0].start_byte, spans[-1].end_byte)


_PLURALS = {"index": "indices"}


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {_PLURALS.get(noun, noun + 's')}"
