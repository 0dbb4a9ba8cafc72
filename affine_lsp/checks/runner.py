"""Run the checks over a document, an item or the module-wide rules."""

from __future__ import annotations

from dataclasses import dataclass, field

from affine_lsp.checks.diagnostics import Diagnostic, Related, Severity
from affine_lsp.ir import build_module
from affine_lsp.ir.model import AliasDef, ModuleModel, TopLevelItem
from affine_lsp.syntax import SourceDocument, syntax_problems


@dataclass(frozen=True)
class CheckOptions:
    legacy_severity: Severity = Severity.WARNING
    lints: bool = True


@dataclass
class ModuleContext:
    """What item checks need to know about the rest of the document."""

    aliases: dict[str, AliasDef] = field(default_factory=dict)

    @classmethod
    def from_model(cls, model: ModuleModel) -> ModuleContext:
        return cls(aliases=model.alias_table())


def syntax_diagnostics(document: SourceDocument) -> list[Diagnostic]:
    return [
        Diagnostic(p.span, Severity.ERROR, "syntax", p.message)
        for p in syntax_problems(document.tree)
    ]


def check_item(
    item: TopLevelItem, context: ModuleContext, options: CheckOptions
) -> list[Diagnostic]:
    """Diagnostics of one top-level item."""
    found: list[Diagnostic] = []
    for use in item.unresolved:
        found.append(
            Diagnostic(
                use.span,
                Severity.ERROR,
                "ssa-undefined",
                f"use of undeclared SSA value name '{use.name}'",
            )
        )
    for value, earlier in item.redefinitions:
        found.append(
            Diagnostic(
                value.span,
                Severity.ERROR,
                "ssa-redefinition",
                f"redefinition of SSA value '{value.name}'",
                related=(Related(earlier.span, "previously defined here"),),
            )
        )
    for use in item.dominance_violations:
        definition = use.value.span if use.value is not None else use.span
        found.append(
            Diagnostic(
                use.span,
                Severity.ERROR,
                "ssa-dominance",
                f"operand '{use.name}' does not dominate this use: it is defined later",
                related=(Related(definition, "defined here"),),
            )
        )
    return found


def check_module(
    model: ModuleModel, context: ModuleContext, options: CheckOptions
) -> list[Diagnostic]:
    """Rules that look across items (aliases)."""
    return []


def check_document(
    document: SourceDocument, options: CheckOptions | None = None
) -> list[Diagnostic]:
    """All diagnostics of a document, sorted by position."""
    options = options or CheckOptions()
    model = build_module(document.tree.root_node)
    context = ModuleContext.from_model(model)
    found = syntax_diagnostics(document)
    found += check_module(model, context, options)
    for item in model.items:
        found += check_item(item, context, options)
    return sorted(found, key=Diagnostic.sort_key)
