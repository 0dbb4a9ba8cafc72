"""The syntax layer: parse MLIR text with tree-sitter, edit it incrementally, and
report syntax errors. It never fails: every input gives a tree plus errors."""

from affine_lsp.syntax.document import ByteEdit, ContentChange, SourceDocument, decode, encode
from affine_lsp.syntax.errors import SyntaxProblem, syntax_problems
from affine_lsp.syntax.language import mlir_language, new_parser
from affine_lsp.syntax.nodes import FIELD, Node, Span, walk
from affine_lsp.syntax.printer import pretty_sexp, sexp

__all__ = [
    "FIELD",
    "ByteEdit",
    "ContentChange",
    "Node",
    "SourceDocument",
    "Span",
    "SyntaxProblem",
    "decode",
    "encode",
    "mlir_language",
    "new_parser",
    "pretty_sexp",
    "sexp",
    "syntax_problems",
    "walk",
]
