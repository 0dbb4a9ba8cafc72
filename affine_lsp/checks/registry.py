"""Every diagnostic code the checker can produce, with a one-line description.

Rule modules register their codes here at import time (`register(...)`); the
CLI's documentation, the table of docs/checker.md and the language server's hover
read `RULES`. A code never changes meaning once published.
"""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.checks.diagnostics import Severity


@dataclass(frozen=True)
class RuleInfo:
    code: str
    summary: str  # one line, for docs and hovers
    severity: Severity  # the default severity
    group: str  # syntax | dims-symbols | arity | maps | structure | ssa | aliases | types |
    #             memref | legacy | lint
    mlir_checks: bool = True  # MLIR 22 reports this too (False: our own rule)


RULES: dict[str, RuleInfo] = {}


def register(
    code: str,
    summary: str,
    group: str,
    severity: Severity = Severity.ERROR,
    *,
    mlir_checks: bool = True,
) -> str:
    """Declare a code; returns it so rule modules can keep it in a constant."""
    info = RuleInfo(code, summary, severity, group, mlir_checks)
    existing = RULES.get(code)
    if existing is not None and existing != info:
        raise ValueError(f"diagnostic code {code!r} registered twice with different meanings")
    RULES[code] = info
    return code


def describe(code: str) -> str:
    """The one-line description of a code ('' if unknown)."""
    info = RULES.get(code)
    return info.summary if info is not None else ""


SYNTAX = register(
    "syntax", "the text does not parse (tree-sitter error or missing token)", "syntax"
)
