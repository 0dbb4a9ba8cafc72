"""Run the checks over a document, an item or the module-wide rules."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from affine_lsp.checks.context import CheckContext, CheckOptions, ModuleContext
from affine_lsp.checks.diagnostics import Diagnostic, Severity
from affine_lsp.checks.registry import SYNTAX
from affine_lsp.checks.rules import (
    EVERY_OP_RULES,
    GENERIC_OP_RULES,
    ITEM_RULES,
    MODULE_RULES,
    OP_RULES,
)
from affine_lsp.ir import ModuleModel, TopLevelItem, build_module
from affine_lsp.syntax import SourceDocument, syntax_problems

__all__ = [
    "CheckOptions",
    "ModuleContext",
    "check_document",
    "check_item",
    "check_module",
    "syntax_diagnostics",
]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The checks only add to a large live model: no garbage for the collector to find."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def syntax_diagnostics(document: SourceDocument) -> list[Diagnostic]:
    return [
        Diagnostic(p.span, Severity.ERROR, SYNTAX, p.message)
        for p in syntax_problems(document.tree, document.data)
    ]


def check_item(
    item: TopLevelItem, context: ModuleContext, options: CheckOptions
) -> list[Diagnostic]:
    """Diagnostics of one top-level item; they depend only on the item and `context`."""
    ctx = CheckContext(context, options)
    with _collector_paused():
        for item_rule in ITEM_RULES:
            item_rule(item, ctx)
        if item.operation is not None:
            for op in item.operation.walk():
                for op_rule in OP_RULES.get(op.name, ()):
                    op_rule(op, ctx)
                for op_rule in EVERY_OP_RULES:
                    op_rule(op, ctx)
                if op.kind == "generic_operation":
                    for op_rule in GENERIC_OP_RULES:
                        op_rule(op, ctx)
    return ctx.found


def check_module(
    model: ModuleModel, context: ModuleContext, options: CheckOptions
) -> list[Diagnostic]:
    """Rules that look across items (duplicate and unused aliases)."""
    ctx = CheckContext(context, options)
    for module_rule in MODULE_RULES:
        module_rule(model, ctx)
    return ctx.found


def check_document(
    document: SourceDocument, options: CheckOptions | None = None
) -> list[Diagnostic]:
    """All diagnostics of a document, sorted by position."""
    options = options or CheckOptions()
    with _collector_paused():
        model = build_module(document.tree.root_node, options.dialects)
        context = ModuleContext.from_model(model)
        found = syntax_diagnostics(document)
        found += check_module(model, context, options)
        for item in model.items:
            found += check_item(item, context, options)
    return sorted(found, key=Diagnostic.sort_key)
