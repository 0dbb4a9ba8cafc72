"""Editor features as plain data, independent of the Language Server Protocol.

Everything here works on byte offsets of a `SourceDocument`; the server layer
converts to and from LSP positions.

The face of this layer is the modules of `__all__`, imported by their path
(`from affine_lsp.ide import hover`, `from affine_lsp.ide.analysis import
DocumentAnalysis`): each is one feature, and importing this package loads none of
them, so that the worker entry points stay light to import.

    analysis          DocumentAnalysis: the incremental analysis of one document
    records           ItemRecord, OPERATION: what the analysis keeps per top-level item
    settings          Settings, parse_settings, SECTION, hover_pictures
    hover, navigation, completion, inlay_hints, semantic_tokens, symbols, folding
                      one editor request each
    code_actions      quick_fixes, REFACTORINGS (the refactorings offered at loops)
    extracts          an item as a text of its own, with the chunk facts it refers to
    planning          refactorings planned ahead, as plain data
    planning_worker   the entry point of the planning worker process
    remote_checks     checking in other processes (items on extracts, whole files)
    check_worker      the entry point of a checking worker process
    workspace         Check Workspace: every `.mlir` file under some folders
    picture           the SVG of an iteration space (CLI, hover, Neovim, the panel)
    panel             the VS Code panel's pictures: the loop at a position, previews

`locate`, `describe` and `op_docs` are internal to the layer.
"""

__all__ = [
    "analysis",
    "check_worker",
    "code_actions",
    "completion",
    "extracts",
    "folding",
    "hover",
    "inlay_hints",
    "navigation",
    "panel",
    "picture",
    "planning",
    "planning_worker",
    "records",
    "remote_checks",
    "semantic_tokens",
    "settings",
    "symbols",
    "workspace",
]
