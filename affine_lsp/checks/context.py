"""What rules see while they check one top-level item.

`ModuleContext` is everything an item's diagnostics may depend on besides the
item itself (the language server caches diagnostics per item and re-uses them
while the item and this context are unchanged):
  - `aliases`: the first definition of each `#`/`!` alias of the document;
  - `globals`: the declared type of each top-level `memref.global` by symbol
    (what `memref.get_global` refers to).

`CheckContext` is per check run: the options, the module context, memoised
analyses (dim/symbol validity) and the list diagnostics are appended to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from affine_lsp.checks.diagnostics import Diagnostic, Fix, Related, Severity
from affine_lsp.checks.registry import RULES
from affine_lsp.checks.symbols import global_types
from affine_lsp.checks.validity import Validity
from affine_lsp.ir import (
    UPSTREAM,
    AffineMap,
    AliasDef,
    Dialects,
    IntegerSet,
    MapRef,
    ModuleModel,
    Type,
)
from affine_lsp.syntax import Span


@dataclass(frozen=True)
class CheckOptions:
    legacy_severity: Severity = Severity.WARNING
    lints: bool = True
    # The registered dialects and ops' traits (a project file's, or mlir-opt's).
    dialects: Dialects = UPSTREAM
    performance_hints: bool = True  # (the editor's analysis adds them: ide.analysis)


@dataclass
class ModuleContext:
    """What item checks need to know about the rest of the document."""

    aliases: dict[str, AliasDef] = field(default_factory=dict)
    globals: dict[str, Type | None] = field(default_factory=dict)

    @classmethod
    def from_model(cls, model: ModuleModel) -> ModuleContext:
        return cls(aliases=model.alias_table(), globals=global_types(model.operations()))


class CheckContext:
    """Collects the diagnostics of one run and memoises shared analyses."""

    def __init__(self, module: ModuleContext, options: CheckOptions) -> None:
        self.module = module
        self.options = options
        self.found: list[Diagnostic] = []
        self.validity = Validity(options.dialects)
        self.memo: dict[object, object] = {}  # analyses rules share within the run

    def report(
        self,
        code: str,
        span: Span,
        message: str,
        *,
        related: tuple[Related, ...] = (),
        fixes: tuple[Fix, ...] = (),
        severity: Severity | None = None,
        tags: tuple[str, ...] = (),
    ) -> None:
        if severity is None:
            info = RULES.get(code)
            severity = info.severity if info is not None else Severity.ERROR
            if info is not None and info.group == "legacy":
                severity = self.options.legacy_severity
        self.found.append(Diagnostic(span, severity, code, message, related, fixes, tags))

    def resolve(self, ref: MapRef | None) -> AffineMap | IntegerSet | None:
        """The map or set an op refers to (inline, or through a known alias)."""
        if ref is None:
            return None
        if ref.inline is not None:
            return ref.inline
        alias = self.module.aliases.get(ref.alias or "")
        if alias is None:
            return None
        return alias.map if alias.map is not None else alias.set

    def definition_of(self, ref: MapRef | None) -> Span | None:
        """Where the map or set of `ref` is written (its alias definition if aliased)."""
        if ref is None:
            return None
        if ref.alias is not None:
            alias = self.module.aliases.get(ref.alias)
            return alias.value_span if alias is not None else None
        return ref.span
