"""The 2019 syntax (seed `affine-dialect-legacy.md`), each form with the fix
that migrates it to today's MLIR. Severity comes from `CheckOptions.legacy_severity`."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Fix, TextEdit
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, item_rule, op_rule
from affine_lsp.ir import (
    AffineApplyOp,
    AffineForOp,
    AffineIfOp,
    MapRef,
    MemRefDimOp,
    Operation,
    TopLevelItem,
)
from affine_lsp.syntax import FIELD, Node, Span, text

BARE_MAP = register(
    "legacy-bare-map",
    "a map or set written without affine_map<...> / affine_set<...>",
    "legacy",
    mlir_checks=False,
)
CALL_SYNTAX = register(
    "legacy-call-syntax",
    "`floordiv(a, b)`-style calls in affine expressions: write `a floordiv b`",
    "legacy",
    mlir_checks=False,
)
OP_NAME = register(
    "legacy-op-name",
    "an op spelled in the 2019 syntax (`func`, `dim`, `alloc`, `load`, ...)",
    "legacy",
    mlir_checks=False,
)
TERMINATOR = register(
    "legacy-terminator",
    "affine.terminator is gone: affine regions end with an implicit or explicit affine.yield",
    "legacy",
    mlir_checks=False,
)

_CALL_NODES = ("affine_legacy_call_expr", "subscript_legacy_call_expr")


def _wrap_fix(node: Node, kind: str) -> Fix:
    wrapper = "affine_map" if kind == "map" else "affine_set"
    return Fix(
        f"Wrap in {wrapper}<...>",
        (TextEdit(Span.of(node), f"{wrapper}<{text(node)}>"),),
        preferred=True,
    )


def _check_bare(ctx: CheckContext, node: Node | None) -> None:
    if node is None:
        return
    if node.type in ("legacy_affine_map", "legacy_integer_set"):
        kind = "map" if node.type == "legacy_affine_map" else "set"
        wrapper = "affine_map" if kind == "map" else "affine_set"
        ctx.report(
            BARE_MAP,
            Span.of(node),
            f"bare {'affine map' if kind == 'map' else 'integer set'} (2019 syntax): today's MLIR "
            f"writes it as {wrapper}<...>",
            fixes=(_wrap_fix(node, kind),),
            tags=("deprecated",),
        )
    _check_calls(ctx, node)


def _check_calls(ctx: CheckContext, node: Node) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in _CALL_NODES:
            left = current.child_by_field_id(FIELD["left"])
            right = current.child_by_field_id(FIELD["right"])
            operator = current.child_by_field_id(FIELD["operator"])
            if left is not None and right is not None and operator is not None:
                replacement = f"({text(left)} {operator.type} {text(right)})"
                ctx.report(
                    CALL_SYNTAX,
                    Span.of(current),
                    f"'{operator.type}(a, b)' is the 2019 syntax: write 'a {operator.type} b'",
                    fixes=(
                        Fix(
                            f"Rewrite as {replacement}",
                            (TextEdit(Span.of(current), replacement),),
                            preferred=True,
                        ),
                    ),
                    tags=("deprecated",),
                )
        stack.extend(reversed(current.named_children))


def _check_ref(ctx: CheckContext, ref: MapRef | None) -> None:
    if ref is not None and ref.inline is not None:
        _check_bare(ctx, ref.node)


@item_rule
def legacy_alias(item: TopLevelItem, ctx: CheckContext) -> None:
    if item.alias is not None and item.alias.node is not None:
        _check_bare(ctx, item.alias.node.child_by_field_id(FIELD["value"]))


@op_rule("affine.apply", "affine.min", "affine.max", "affine.for", "affine.if")
def legacy_inline_maps(op: Operation, ctx: CheckContext) -> None:
    if isinstance(op, AffineApplyOp):
        _check_ref(ctx, op.map_ref)
    elif isinstance(op, AffineIfOp):
        _check_ref(ctx, op.condition)
    elif isinstance(op, AffineForOp):
        for bound in (op.lower, op.upper):
            if bound is not None:
                _check_ref(ctx, bound.map_ref)


@op_rule()
def legacy_names(op: Operation, ctx: CheckContext) -> None:
    if op.name == "affine.terminator":
        ctx.report(
            TERMINATOR,
            op.span,
            "affine.terminator is the 2019 syntax: affine regions now end with an implicit "
            "affine.yield",
            fixes=(Fix("Remove affine.terminator", (TextEdit(op.span, ""),), preferred=True),),
            tags=("deprecated",),
        )
        return
    if not op.legacy:
        return
    body = body_node(op)
    spelled = text(body.child_by_field_id(FIELD["name"])) if body is not None else ""
    edits = [TextEdit(op.name_span, op.name)]
    title = f"Rename to {op.name}"
    if isinstance(op, MemRefDimOp) and isinstance(op.index, int) and op.node is not None:
        constant = f"%c{op.index}_dim"
        indent = " " * op.node.start_point[1]
        index_node = body.child_by_field_id(FIELD["index"]) if body is not None else None
        if index_node is not None:
            edits = [
                TextEdit(
                    Span(op.span.start_byte, op.span.start_byte),
                    f"{constant} = arith.constant {op.index} : index\n{indent}",
                ),
                TextEdit(op.name_span, op.name),
                TextEdit(Span.of(index_node), constant),
            ]
            title += " with an index constant"
    ctx.report(
        OP_NAME,
        op.name_span,
        f"'{spelled}' is the 2019 spelling of {op.name}",
        fixes=(Fix(title, tuple(edits), preferred=True),),
        tags=("deprecated",),
    )
