"""Advice (information severity), off with `CheckOptions(lints=False)`."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Fix, Severity, TextEdit
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import op_rule
from affine_lsp.ir import MemRefAccessOp, Operation

MEMREF_IN_AFFINE = register(
    "lint-memref-access-in-affine-loop",
    "memref.load/store with affine indices inside an affine loop: use affine.load/store",
    "lint",
    Severity.INFORMATION,
    mlir_checks=False,
)

_LOOPS = ("affine.for", "affine.parallel")


@op_rule("memref.load", "memref.store")
def memref_access_in_affine_loop(op: Operation, ctx: CheckContext) -> None:
    if not ctx.options.lints or not isinstance(op, MemRefAccessOp):
        return
    if not any(a.name in _LOOPS for a in op.ancestors()):
        return
    if len(op.indices) != len(op.index_nodes):
        return  # some index is an expression: another rule reports it
    for use in op.indices:
        if use.value is None or not ctx.validity.dim(use.value, op).valid:
            return
    replacement = "affine.store" if op.is_write else "affine.load"
    ctx.report(
        MEMREF_IN_AFFINE,
        op.name_span,
        f"{op.name} inside an affine loop with affine indices: use {replacement} so it can be "
        "analysed (dependences, fusion, tiling)",
        fixes=(Fix(f"Replace with {replacement}", (TextEdit(op.name_span, replacement),), True),),
    )
