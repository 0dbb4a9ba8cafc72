"""What is at an offset of an item: an SSA value, a block, an alias, a symbol,
an op name or a map identifier, with the IR objects behind it."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import tree_sitter

from affine_lsp.ir import Operation, Use, Value
from affine_lsp.syntax import Node, Span, mlir_query, text

VALUE = "value"
BLOCK = "block"
ALIAS = "alias"
SYMBOL = "symbol"
OP_NAME = "op"
MAP_ID = "map-id"

_NAME_NODES = {
    "value_use": VALUE,
    "value_def": VALUE,
    "block_id": BLOCK,
    "attribute_alias": ALIAS,
    "type_alias": ALIAS,
    "symbol_ref": SYMBOL,
    "dim_id": MAP_ID,
    "symbol_id": MAP_ID,
    "affine_id": MAP_ID,
}
_DEFINING_PARENTS = {
    "block_id": ("block_label", "name"),
    "attribute_alias": ("attribute_alias_def", "name"),
    "type_alias": ("type_alias_def", "name"),
}
MAP_NODES = frozenset({"affine_map", "integer_set", "legacy_affine_map", "legacy_integer_set"})


@dataclass
class ItemIndex:
    """The values, uses and ops of one item, by the start byte of their tokens."""

    values: dict[int, Value] = field(default_factory=dict)
    uses: dict[int, Use] = field(default_factory=dict)
    ops_by_name: dict[int, Operation] = field(default_factory=dict)
    ops: list[Operation] = field(default_factory=list)

    @classmethod
    def of(cls, root: Operation | None) -> ItemIndex:
        index = cls()
        if root is None:
            return index
        for op in root.walk():
            index.ops.append(op)
            index.ops_by_name[op.name_span.start_byte] = op
            for value in op.results:
                index.values.setdefault(value.span.start_byte, value)
            for use in op.operands:
                index.uses[use.span.start_byte] = use
            for region in op.regions:
                for block in region.blocks:
                    for argument in block.arguments:
                        index.values.setdefault(argument.span.start_byte, argument)
        return index


@dataclass
class Target:
    """A name (or op name) under the cursor."""

    kind: str
    name: str
    span: Span
    node: Node
    definition: bool = False
    value: Value | None = None
    use: Use | None = None
    op: Operation | None = None  # the op of an op name


def token_at(root: Node, offset: int) -> Node:
    """The smallest node at `offset`; if that is no name, a name ending just before."""
    node = root.descendant_for_byte_range(offset, offset) or root
    if _interesting(node) or offset <= root.start_byte:
        return node
    before = root.descendant_for_byte_range(offset - 1, offset - 1)
    if before is not None and before.end_byte == offset and _interesting(before):
        return before
    return node


def _interesting(node: Node) -> bool:
    return node.type in _NAME_NODES or _op_name_body(node) is not None


def _op_name_body(node: Node) -> Node | None:
    """The op body whose `name` field is `node` (or None)."""
    parent = node.parent
    if parent is None:
        return None
    name = parent.child_by_field_name("name")
    if name is not None and name.start_byte == node.start_byte and name.end_byte == node.end_byte:
        if parent.parent is not None and parent.parent.type == "operation":
            return parent
    return None


@cache
def _map_query() -> tree_sitter.Query:
    kinds = " ".join(f"({kind})" for kind in sorted(MAP_NODES))
    return mlir_query(f"[{kinds}] @map")


def enclosing_map(root: Node, offset: int) -> Node | None:
    """The affine map or integer set node around `offset` under `root`, if any.

    Found from the top down with a query limited to `offset`: walking up through
    parents costs the node's depth at each step, which deep expressions make
    quadratic."""
    cursor = tree_sitter.QueryCursor(_map_query())
    cursor.set_byte_range(max(offset - 1, 0), offset + 1)
    maps = [m for m in cursor.captures(root).get("map", []) if m.start_byte <= offset <= m.end_byte]
    return min(maps, key=lambda m: m.end_byte - m.start_byte) if maps else None


def locate(root: Node, index: ItemIndex, offset: int) -> Target | None:
    """The target at `offset` in an item whose syntax node is `root`."""
    node = token_at(root, offset)
    if node.type in _NAME_NODES:
        kind = _NAME_NODES[node.type]
        target = Target(kind, text(node), Span.of(node), node)
        if kind == VALUE:
            target.definition = node.type == "value_def"
            if target.definition:
                target.value = index.values.get(node.start_byte)
            else:
                target.use = index.uses.get(node.start_byte)
                target.value = target.use.value if target.use is not None else None
        elif kind == SYMBOL:
            parent = node.parent
            symbol = parent.child_by_field_name("symbol") if parent is not None else None
            target.definition = (
                parent is not None
                and symbol is not None
                and symbol.start_byte == node.start_byte
                and parent.type in ("func_func", "builtin_module", "memref_global")
            )
        elif node.type in _DEFINING_PARENTS:
            parent_type, field_name = _DEFINING_PARENTS[node.type]
            parent = node.parent
            defined = parent.child_by_field_name(field_name) if parent is not None else None
            target.definition = (
                parent is not None
                and parent.type == parent_type
                and defined is not None
                and defined.start_byte == node.start_byte
            )
        elif kind == MAP_ID:
            target.definition = node.type in ("dim_id", "symbol_id")
        return target
    body = _op_name_body(node)
    if body is not None:
        op = index.ops_by_name.get(node.start_byte)
        return Target(OP_NAME, text(node).strip('"'), Span.of(node), node, op=op)
    return None


def enclosing_op(index: ItemIndex, offset: int) -> Operation | None:
    """The innermost op whose text contains `offset`."""
    best: Operation | None = None
    for op in index.ops:
        if op.span.start_byte <= offset <= op.span.end_byte:
            if best is None or op.span.start_byte >= best.span.start_byte:
                best = op
    return best
