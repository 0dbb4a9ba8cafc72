"""The table of diagnostic codes in docs/checker.md, generated from the registry.

    python -m affine_lsp.checks.docs   # prints the table to paste into docs/checker.md

The suite checks that docs/checker.md holds exactly this table.
"""

from __future__ import annotations

from affine_lsp.checks import rules  # noqa: F401  (registers every code)
from affine_lsp.checks.context import CheckOptions
from affine_lsp.checks.registry import RULES, RuleInfo

DOCS_PAGE = "docs/checker.md"  # the page that holds the table, from the project's root
HEADER = (
    "| code | group | default severity | MLIR 22 checks it | what it means |\n"
    "|---|---|---|---|---|\n"
)


def _severity(info: RuleInfo) -> str:
    if info.group == "legacy":
        return f"legacy option ({CheckOptions().legacy_severity.label})"
    return info.severity.label


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def rules_table() -> str:
    """One row per code, by group then code."""
    rows = [
        f"| `{info.code}` | {info.group} | {_severity(info)} | "
        f"{'yes' if info.mlir_checks else 'no'} | {_cell(info.summary)} |\n"
        for info in sorted(RULES.values(), key=lambda i: (i.group, i.code))
    ]
    return HEADER + "".join(rows)


if __name__ == "__main__":
    print(rules_table(), end="")
