"""Build the tree-sitter parser for MLIR as a C extension (affine_lsp._binding), with
the Span type (affine_lsp/_span.c)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "affine_lsp._binding",
            sources=[
                "affine_lsp/_binding.c",
                "affine_lsp/_span.c",
                "grammar/src/parser.c",
                "grammar/src/scanner.c",
            ],
            include_dirs=["grammar/src"],
            extra_compile_args=["-std=c11", "-O2"],
        )
    ],
)
