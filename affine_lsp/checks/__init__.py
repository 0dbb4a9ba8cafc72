"""Verifier rules → diagnostics.

What other layers use (nothing else of this package):

Entry points (`runner`):
  check_document(document, options)   everything for one document
  check_item(item, context, options)  one top-level item (cacheable per item)
  check_module(model, context, options)  cross-item rules (aliases, ...)
  syntax_diagnostics(document)        syntax errors as diagnostics
  CheckOptions, ModuleContext         what a run reads besides the item
Diagnostics as plain data (`diagnostics`): Diagnostic, Severity, Fix, Related, TextEdit
Every code the checker produces (`registry`): RULES, RuleInfo
`// -----` chunks (`chunks`): Chunk, split_chunks, iter_chunks, ends_chunk, SPLIT_MARKER
Validity of dims and symbols in words (`validity`): Validity, Verdict, affine_scope, describe_op
The aliases an item refers to (`rules.aliases`): referenced_aliases
"""

from affine_lsp.checks.chunks import SPLIT_MARKER, Chunk, ends_chunk, iter_chunks, split_chunks
from affine_lsp.checks.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from affine_lsp.checks.registry import RULES, RuleInfo
from affine_lsp.checks.rules.aliases import referenced_aliases
from affine_lsp.checks.runner import (
    CheckOptions,
    ModuleContext,
    check_document,
    check_item,
    check_module,
    syntax_diagnostics,
)
from affine_lsp.checks.validity import Validity, Verdict, affine_scope, describe_op

__all__ = [
    "RULES",
    "SPLIT_MARKER",
    "CheckOptions",
    "Chunk",
    "Diagnostic",
    "Fix",
    "ModuleContext",
    "Related",
    "RuleInfo",
    "Severity",
    "TextEdit",
    "Validity",
    "Verdict",
    "affine_scope",
    "check_document",
    "check_item",
    "check_module",
    "describe_op",
    "ends_chunk",
    "iter_chunks",
    "referenced_aliases",
    "split_chunks",
    "syntax_diagnostics",
]
