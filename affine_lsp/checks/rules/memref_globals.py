"""memref.global and memref.get_global: a global is a statically shaped memref
whose initial value, if any, is `uninitialized` or an elements attribute of its
shape and element type; get_global names a global of the nearest symbol table
(the module around it) and returns exactly its type."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, op_rule
from affine_lsp.checks.rules.memref_common import declared_result, result_anchor, retype_fix
from affine_lsp.checks.symbols import global_types, global_view
from affine_lsp.ir import (
    AliasType,
    MemRefType,
    OpaqueType,
    Operation,
    TensorType,
    Type,
    type_from_node,
)
from affine_lsp.syntax import FIELD, Node, Span, text

GLOBAL_TYPE = register(
    "memref-global-type",
    "memref.global needs a statically shaped memref type",
    "memref",
)
INITIAL_VALUE = register(
    "memref-global-initial-value",
    "memref.global: the initial value is not `uninitialized` or an elements attribute of the "
    "global's shape and element type",
    "memref",
)
GLOBAL_REFERENCE = register(
    "memref-global-reference",
    "memref.get_global names no memref.global of its module, or one of another type",
    "memref",
)

_ELEMENTS = ("dense_attribute",)


@op_rule("memref.global")
def memref_global(op: Operation, ctx: CheckContext) -> None:
    view = global_view(op)
    if view is None or view.type_node is None:
        return
    memref = _through_aliases(ctx, view.type)
    if isinstance(memref, AliasType | OpaqueType) or memref is None:
        return  # a type we cannot see: nothing proven
    if not isinstance(memref, MemRefType) or memref.shape is None or None in memref.shape:
        ctx.report(
            GLOBAL_TYPE,
            Span.of(view.type_node),
            f"type should be static shaped memref, but got '{memref}': a global has a fixed size",
        )
        return
    value = view.initial_value
    if value is None or value.type == "dictionary_entry" or text(value) == "uninitialized":
        return
    _check_initial_value(ctx, value, memref)


def _through_aliases(ctx: CheckContext, declared: Type | None) -> Type | None:
    """`!name` replaced by the type its alias definition gives (if any)."""
    for _ in range(8):  # aliases of aliases, never a cycle forever
        if not isinstance(declared, AliasType):
            break
        alias = ctx.module.aliases.get(declared.name)
        if alias is None or alias.type is None:
            break
        declared = alias.type
    return declared


def _check_initial_value(ctx: CheckContext, value: Node, memref: MemRefType) -> None:
    assert memref.shape is not None
    literal, declared = value, None
    if value.type == "typed_literal":
        literal = value.child_by_field_id(FIELD["value"]) or value
        declared = type_from_node(value.child_by_field_id(FIELD["type"]))
    if literal.type not in _ELEMENTS or literal.has_error:
        ctx.report(
            INITIAL_VALUE,
            Span.of(value),
            f"initial value should be a unit or elements attribute: write `uninitialized` or "
            f"`dense<...>` holding {memref.element} values",
        )
        return
    if isinstance(declared, TensorType):
        _check_declared_elements(ctx, value, declared, memref)
        return
    kind = literal.child_by_field_id(FIELD["kind"])
    if kind is None or text(kind) != "dense":
        return
    shape = dense_shape(literal)
    if shape is None:
        ctx.report(
            INITIAL_VALUE,
            Span.of(literal),
            "tensor literal is invalid; ranks are not consistent between elements: every "
            "nested list needs the same shape",
        )
    elif shape != () and shape != memref.shape:
        ctx.report(
            INITIAL_VALUE,
            Span.of(literal),
            f"inferred shape of elements literal ({_shape(shape)}) does not match type "
            f"({_shape(memref.shape)}): nest the values as the type's shape, or give one value "
            "to fill it",
        )


def _check_declared_elements(
    ctx: CheckContext, value: Node, declared: TensorType, memref: MemRefType
) -> None:
    if declared.element != memref.element:
        ctx.report(
            INITIAL_VALUE,
            Span.of(value),
            f"'memref.global' op initial value element expected to be of type "
            f"'{memref.element}', but was of type '{declared.element}': the initial value holds "
            "elements of the global's type",
        )
    elif declared.shape != memref.shape:
        ctx.report(
            INITIAL_VALUE,
            Span.of(value),
            f"'memref.global' op initial value shape expected to be {_sizes(memref.shape)} but "
            f"was {_sizes(declared.shape)}: the initial value has the global's shape",
        )


def _shape(shape: tuple[int | None, ...]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _sizes(shape: tuple[int | None, ...] | None) -> str:
    return ", ".join("?" if d is None else str(d) for d in shape or ())


def dense_shape(literal: Node) -> tuple[int, ...] | None:
    """The shape written by a `dense<...>` literal's brackets (() for a splat), or None if
    its nesting is ragged."""
    # One frame per open `[`: [element count, shape of its nested lists, has scalars].
    frames: list[list] = []
    top_shape: tuple[int, ...] | None = ()
    for child in literal.children:
        kind = child.type
        if kind == "[":
            frames.append([0, None, False])
        elif kind == "]":
            if not frames:
                return None
            count, nested, scalars = frames.pop()
            if nested is not None and scalars:
                return None
            shape = (count,) + (nested or ())
            if not frames:
                top_shape = shape
                continue
            parent = frames[-1]
            if parent[1] is not None and parent[1] != shape:
                return None
            parent[0] += 1
            parent[1] = shape
        elif child.is_named and frames:
            frames[-1][0] += 1
            frames[-1][2] = True
    return top_shape if not frames else None


@op_rule("memref.get_global")
def get_global(op: Operation, ctx: CheckContext) -> None:
    body = body_node(op)
    symbol = body.child_by_field_id(FIELD["symbol"]) if body is not None else None
    if symbol is None or symbol.is_missing:
        return
    table = _symbol_table(op, ctx)
    if table is None:
        return
    name = text(symbol)
    if name not in table:
        ctx.report(
            GLOBAL_REFERENCE,
            Span.of(symbol),
            f"'{name[1:]}' does not reference a valid global memref: no memref.global {name} "
            "is defined in this module",
        )
        return
    expected = table[name]
    result = declared_result(op)
    declared = result.type or (op.result_types[0] if op.result_types else None)
    if declared is None or expected is None or declared == expected:
        return
    span, related = result_anchor(op, result)
    ctx.report(
        GLOBAL_REFERENCE,
        span,
        f"result type '{declared}' does not match type '{expected}' of the global memref "
        f"{name}: get_global returns the global as it is declared",
        related=related,
        fixes=retype_fix(result, expected),
    )


def _symbol_table(op: Operation, ctx: CheckContext) -> dict[str, Type | None] | None:
    """The memref.global types of the symbol table around `op` (None: one we do not
    model, such as gpu.module)."""
    for ancestor in op.ancestors():
        if ancestor.name in ctx.options.dialects.symbol_tables:
            key = ("memref.global table", id(ancestor))
            if key not in ctx.memo:
                body = ancestor.regions[0] if ancestor.regions else None
                ctx.memo[key] = global_types(body.operations() if body is not None else ())
            return ctx.memo[key]  # type: ignore[return-value]
        if ancestor.name.endswith(".module"):
            return None  # another kind of symbol table (gpu.module, spirv.module, ...)
    return ctx.module.globals
