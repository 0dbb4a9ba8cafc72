"""SSA names: undeclared values, redefinitions, uses before definition, and
declared operand types that contradict the value's type."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Related
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import item_rule, module_rule, operand_number
from affine_lsp.ir import ModuleModel, TopLevelItem, Value

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
        _redefinition(ctx, value, earlier)
    reported: set[tuple[int, int]] = set()
    for use in item.dominance_violations:
        key = (id(use.user), id(use.value))
        if key in reported:
            continue  # one diagnostic per operation and value, as MLIR
        reported.add(key)
        definition = use.value.span if use.value is not None else use.span
        position = operand_number(use)
        ctx.report(
            DOMINANCE,
            use.span,
            f"operand #{position} does not dominate this use: '{use.name}' is defined after it",
            related=(Related(definition, "defined here"),),
        )


@module_rule
def top_level_redefinitions(model: ModuleModel, ctx: CheckContext) -> None:
    """Results of top-level operations share the module's scope: one name each."""
    for value, earlier in model.redefinitions:
        _redefinition(ctx, value, earlier)


def _redefinition(ctx: CheckContext, value: Value, earlier: Value) -> None:
    ctx.report(
        REDEFINITION,
        value.span,
        f"redefinition of SSA value '{value.name}'",
        related=(Related(earlier.span, "previously defined here"),),
    )
