"""affine-lsp: editor tooling for MLIR's affine dialect."""

__version__ = "0.1.0"
