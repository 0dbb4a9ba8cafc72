"""SSA names: undeclared values, redefinitions, uses before definition, and
declared operand types that contradict the value's type."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Related
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import item_rule
from affine_lsp.ir.model import TopLevelItem

UNDEFINED = register("ssa-undefined", "use of an SSA value that is not defined", "ssa")
REDEFINITION = register("ssa-redefinition", "an SSA value name is defined twice", "ssa")
DOMINANCE = register(
    "ssa-dominance", "a value is used before its definition where dominance applies", "ssa"
)


@item_rule
def names(item: TopLevelItem, ctx: CheckContext) -> None:
    for use in item.unresolved:
        ctx.report(
            UNDEFINED,
            use.span,
            f"use of undeclared SSA value name '{use.name}'",
        )
    for value, earlier in item.redefinitions:
        ctx.report(
            REDEFINITION,
            value.span,
            f"redefinition of SSA value '{value.name}'",
            related=(Related(earlier.span, "previously defined here"),),
        )
    for use in item.dominance_violations:
        definition = use.value.span if use.value is not None else use.span
        ctx.report(
            DOMINANCE,
            use.span,
            f"operand '{use.name}' does not dominate this use: it is defined later",
            related=(Related(definition, "defined here"),),
        )
