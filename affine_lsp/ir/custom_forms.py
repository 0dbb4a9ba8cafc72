"""Result types of everyday ops the grammar only skims (vector, tensor, linalg named
ops), read from their custom syntax as MLIR 22 prints it.

The fallback rule gives a flat sequence of tokens and groups; after the op's
top-level `:` each format names its result in a known place: after `to`
(`vector.broadcast %x : f32 to vector<4xf32>`), after `into`, the first or last
type, the types after `->`, the element type of the operand's type
(`tensor.extract`), or index. Anything that does not fit the expected shape gives
no types: an unknown type is never an error, a wrong one would be.
"""

from __future__ import annotations

from affine_lsp.ir.types import INDEX, Type, element_type, type_from_node
from affine_lsp.syntax import Node, text

_TYPE_NODES = frozenset(
    {
        "integer_type",
        "float_type",
        "index_type",
        "none_type",
        "memref_type",
        "tensor_type",
        "vector_type",
        "complex_type",
        "tuple_type",
        "type_alias",
        "dialect_type",
    }
)

# How each op names its single result (or, with "arrow", all of them).
_AFTER_TO, _AFTER_INTO, _FIRST, _LAST, _ARROW, _ELEMENT, _INDEX = (
    "to",
    "into",
    "first",
    "last",
    "arrow",
    "element",
    "index",
)
RESULT_FORMS: dict[str, str] = {
    **dict.fromkeys(
        [
            "vector.broadcast",
            "vector.shape_cast",
            "vector.bitcast",
            "vector.type_cast",
            "vector.extract_strided_slice",
            "vector.transpose",
            "vector.multi_reduction",
            "tensor.extract_slice",
            "tensor.cast",
            "tensor.pad",
            "tensor.bitcast",
        ],
        _AFTER_TO,
    ),
    **dict.fromkeys(
        [
            "vector.insert",
            "vector.insert_strided_slice",
            "vector.reduction",
            "vector.contract",
            "vector.maskedload",
            "vector.gather",
            "vector.expandload",
            "tensor.insert_slice",
            "tensor.expand_shape",
            "tensor.collapse_shape",
        ],
        _AFTER_INTO,
    ),
    "vector.extract": _FIRST,
    **dict.fromkeys(
        [
            "vector.transfer_read",
            "vector.load",
            "vector.splat",
            "vector.fma",
            "vector.create_mask",
            "vector.constant_mask",
            "vector.step",
            "vector.from_elements",
            "tensor.empty",
            "tensor.insert",
            "tensor.generate",
            "tensor.splat",
            "tensor.from_elements",
        ],
        _LAST,
    ),
    **dict.fromkeys(["vector.interleave", "tensor.reshape", "tensor.concat"], _ARROW),
    "tensor.extract": _ELEMENT,
    "tensor.dim": _INDEX,
    "linalg.index": _INDEX,
}


def custom_result_types(name: str, body: Node, results: int) -> list[Type]:
    """The result types of the skimmed op `name` with `results` results (empty if
    its format is not known or the text does not fit it)."""
    form = RESULT_FORMS.get(name)
    if form is None:
        if name.startswith("linalg.") and name not in ("linalg.yield", "linalg.index"):
            form = _ARROW  # named structured ops: `ins(...) outs(...) -> types`
        else:
            return []
    if form == _INDEX:
        return [INDEX] if results == 1 else []
    children = body.children
    if form == _ARROW:
        arrows = [i for i, c in enumerate(children) if c.type == "->"]
        found = _types_in(children[arrows[-1] + 1 :]) if arrows else []
        return found if len(found) == results else []
    if results != 1:
        return []
    colons = [i for i, c in enumerate(children) if c.type == ":"]
    if not colons:
        return []
    tail = children[colons[-1] + 1 :]
    types = [c for c in tail if c.type in _TYPE_NODES]
    chosen: Node | None = None
    if form in (_AFTER_TO, _AFTER_INTO):
        words = [i for i, c in enumerate(tail) if c.type == "bare_id" and text(c) == form]
        after = tail[words[-1] + 1 :] if words else []
        chosen = after[0] if after and after[0].type in _TYPE_NODES else None
    elif form == _FIRST:
        chosen = types[0] if types else None
    elif form in (_LAST, _ELEMENT):
        chosen = types[-1] if types else None
    found = type_from_node(chosen) if chosen is not None else None
    if found is not None and form == _ELEMENT:
        found = element_type(found)
    return [found] if found is not None else []


def _types_in(nodes: list[Node]) -> list[Type]:
    """The types of `-> t` or `-> (t1, t2)` (a parenthesized group)."""
    if not nodes:
        return []
    first = nodes[0]
    if first.type in _TYPE_NODES:
        found = type_from_node(first)
        return [found] if found is not None else []
    if first.type == "custom_group" and first.child_count and first.children[0].type == "(":
        types = []
        for child in first.named_children:
            if child.type not in _TYPE_NODES:
                return []
            found = type_from_node(child)
            if found is None:
                return []
            types.append(found)
        return types
    return []
