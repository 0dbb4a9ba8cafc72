"""Attribute values of operations, read from the syntax tree.

An op's attributes are the entries of its properties (`<{...}>`, the generic
form) and of its attribute dictionary (`{...}`); `attribute_entries` maps each
name to its value node. The readers below turn the common value shapes into
Python values and return None for anything else, so a malformed attribute is
never an exception.
"""

from __future__ import annotations

from affine_lsp.ir.affine_syntax import parse_integer
from affine_lsp.syntax import FIELD, Node, text

_DICTIONARY_FIELDS = ("properties", "attributes", "trailing_attributes")

DYNAMIC_INDEX = -(2**63)
"""How static offsets, sizes, strides and bases mark an entry given by a value."""


def attribute_entries(body: Node | None) -> dict[str, Node]:
    """name -> value node for every attribute of an op body (a unit entry such
    as `{constant}` maps to its entry node). Properties come first; a name given
    twice keeps its first value."""
    entries: dict[str, Node] = {}
    if body is None:
        return entries
    for field in _DICTIONARY_FIELDS:
        holder = body.child_by_field_id(FIELD[field])
        if holder is None:
            continue
        dictionary = holder if holder.type == "dictionary" else _first_dictionary(holder)
        if dictionary is None:
            continue
        for entry in dictionary.named_children:
            if entry.type != "dictionary_entry":
                continue
            name = entry.child_by_field_id(FIELD["name"])
            if name is None:
                continue
            value = entry.child_by_field_id(FIELD["value"])
            entries.setdefault(text(name).strip('"'), value if value is not None else entry)
    return entries


def _first_dictionary(node: Node) -> Node | None:
    return next((c for c in node.named_children if c.type == "dictionary"), None)


def integer_value(node: Node | None) -> int | None:
    """`42`, `-1`, `0x10`, or a typed `1 : index` (None for anything else)."""
    if node is None:
        return None
    if node.type == "typed_literal":
        node = node.child_by_field_id(FIELD["value"])
        if node is None:
            return None
    if node.type != "integer":
        return None
    return parse_integer(node)


def integer_array(node: Node | None) -> list[int] | None:
    """The integers of `array<i64: 1, -2>` or `[1, 2]` (None if any entry is not one)."""
    if node is None or node.type not in ("dense_array_attribute", "array_attribute"):
        return None
    element_type = node.child_by_field_id(FIELD["element_type"])
    values = []
    for child in node.named_children:
        if element_type is not None and child == element_type:
            continue
        value = integer_value(child)
        if value is None:
            return None
        values.append(value)
    return values


def string_value(node: Node | None) -> str | None:
    """The contents of a string attribute, without quotes."""
    if node is None or node.type != "string":
        return None
    return text(node)[1:-1]


def integer_elements(node: Node | None) -> list[int] | None:
    """The integers of `dense<[1, 2]> : tensor<2xi32>` (a splat repeated to the tensor's
    size), or of an array; None for anything else."""
    if node is None:
        return None
    if node.type != "typed_literal":
        return integer_array(node)
    literal = node.child_by_field_id(FIELD["value"])
    tensor = node.child_by_field_id(FIELD["type"])
    if literal is None or literal.type != "dense_attribute" or tensor is None:
        return None
    values = []
    for child in literal.named_children:
        value = integer_value(child) if child.type == "integer" else None
        if value is None:
            return None
        values.append(value)
    nested = any(c.type == "[" for c in literal.children)
    if len(values) == 1 and not nested:
        shape = tensor.child_by_field_id(FIELD["shape"])
        size = text(shape).rstrip("x").strip() if shape is not None else "1"
        return values * int(size) if size.isdigit() else None
    return values
