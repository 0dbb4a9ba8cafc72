"""Verifier rules → diagnostics.

Entry points:
  check_document(document, options)   everything for one document
  check_item(item, context, options)  one top-level item (cacheable per item)
  check_module(model, context, options)  cross-item rules (aliases, ...)
  syntax_diagnostics(document)        syntax errors as diagnostics
"""

from affine_lsp.checks.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from affine_lsp.checks.runner import (
    CheckOptions,
    ModuleContext,
    check_document,
    check_item,
    check_module,
    syntax_diagnostics,
)

__all__ = [
    "CheckOptions",
    "Diagnostic",
    "Fix",
    "ModuleContext",
    "Related",
    "Severity",
    "TextEdit",
    "check_document",
    "check_item",
    "check_module",
    "syntax_diagnostics",
]
