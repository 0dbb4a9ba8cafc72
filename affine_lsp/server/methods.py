"""The names and options the handler table needs before any handler is loaded:
custom methods, error codes, registration options (light to import: the server
answers `initialize` before it loads the analysis)."""

from __future__ import annotations

from lsprotocol import types

ITERATION_DOMAIN = "affine-lsp/iterationDomain"
ITERATION_SPACE = "affine-lsp/iterationSpace"
PREVIEW_REFACTORING = "affine-lsp/previewRefactoring"
CHECK_WORKSPACE = "affine-lsp.checkWorkspace"

REQUEST_FAILED = -32803
CONTENT_MODIFIED = -32801

COMPLETION_TRIGGERS = ["%", "#", "!", "^", "@", ".", ":"]

CODE_ACTION_OPTIONS = types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite],
    resolve_provider=True,
)
