"""Types of the wrong kind where an affine op's custom form names one: a memref for
affine.load/store/vector_load/vector_store/prefetch (ranked: `memref<*x...>` is
not one), a vector for the vector type of affine.vector_load/store, index for
affine.linearize_index. MLIR's parser rejects the op there."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, op_rule
from affine_lsp.ir import (
    AffineAccessOp,
    AliasType,
    FloatType,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    Operation,
    TensorType,
    Type,
    VectorType,
    type_from_node,
)
from affine_lsp.syntax import FIELD, Node, Span

TYPE_KIND = register(
    "affine-type-kind",
    "an affine op's custom form names a type of the wrong kind: not a ranked memref for "
    "load/store/vector_load/vector_store/prefetch, not a vector for the vector type of "
    "vector_load/store, not index for linearize_index",
    "types",
)

# Builtin types whose kind is known (a dialect type may be anything: not judged).
_BUILTIN = (MemRefType, TensorType, VectorType, IntegerType, FloatType, IndexType, FunctionType)

_MEMREF = "builtin.memref"
_VECTOR = "builtin.vector"
_INDEX = "builtin.index"


@op_rule(
    "affine.load", "affine.store", "affine.vector_load", "affine.vector_store", "affine.prefetch"
)
def access_types(op: Operation, ctx: CheckContext) -> None:
    if isinstance(op, AffineAccessOp) and _ranked_memref(op.memref_type):
        if op.name not in ("affine.vector_load", "affine.vector_store"):
            return  # (most accesses: the builder read the types already)
        if isinstance(op.vector_type, VectorType):
            return
    body = body_node(op)
    if body is None or op.kind == "generic_operation":
        return
    if _report(op, ctx, body.child_by_field_id(FIELD["type"]), _MEMREF, from_colon=True):
        return
    if op.name in ("affine.vector_load", "affine.vector_store"):
        _report(op, ctx, body.child_by_field_id(FIELD["vector_type"]), _VECTOR)


@op_rule("affine.linearize_index")
def linearize_type(op: Operation, ctx: CheckContext) -> None:
    body = body_node(op)
    if body is None or op.kind == "generic_operation":
        return
    _report(op, ctx, body.child_by_field_id(FIELD["type"]), _INDEX)


def _report(
    op: Operation, ctx: CheckContext, node: Node | None, expected: str, from_colon: bool = False
) -> bool:
    """Report the type of `node` if it is a builtin type of another kind than
    `expected` (aliases resolved); whether it did. MLIR points at the type, or for the
    memref of an access at the `:` before it (`from_colon`)."""
    if node is None or node.is_missing:
        return False
    found = _resolved(type_from_node(node), ctx)
    if found is None or not isinstance(found, _BUILTIN) or _fits(found, expected):
        return False
    span = Span.of(node)
    colon = node.prev_sibling
    if from_colon and colon is not None and colon.type == ":":
        span = Span(colon.start_byte, node.end_byte)
    ctx.report(
        TYPE_KIND,
        span,
        f"custom op '{op.name}' invalid kind of type specified: expected {expected}, but found "
        f"'{found}'{_why(expected)}",
    )
    return True


def _ranked_memref(found: Type | None) -> bool:
    return isinstance(found, MemRefType) and found.shape is not None


def _fits(found: Type, expected: str) -> bool:
    if expected == _MEMREF:
        return isinstance(found, MemRefType) and found.shape is not None
    if expected == _VECTOR:
        return isinstance(found, VectorType)
    return isinstance(found, IndexType)


def _why(expected: str) -> str:
    if expected == _MEMREF:
        return ": affine accesses read and write ranked memrefs"
    if expected == _VECTOR:
        return ": the type after the memref type is the vector transferred"
    return ": a linear index is an index"


def _resolved(found: Type | None, ctx: CheckContext) -> Type | None:
    """A type with a type alias replaced by what it names (None if unknown)."""
    for _ in range(16):
        if not isinstance(found, AliasType):
            return found
        alias = ctx.module.aliases.get(found.name)
        found = alias.type if alias is not None else None
    return None
