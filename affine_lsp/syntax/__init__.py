"""The syntax layer: parse MLIR text with tree-sitter, edit it incrementally, and
report syntax errors. It never fails: every input gives a tree plus errors.

What other layers use (nothing else of this package):

    SourceDocument, ByteEdit, ContentChange, encode, decode
                            a document: bytes, lines, tree, incremental edits
    Node, Span, text, walk  tree-sitter nodes, byte spans, a node's text
    FIELD                   field ids by name: `node.child_by_field_id(FIELD["body"])`
    syntax_problems, SyntaxProblem   ERROR/MISSING nodes as messages
    mlir_language, mlir_query, new_parser   the grammar, queries over it, parsers
    sexp, pretty_sexp                trees as S-expressions
    LocalLines, column_units         LSP columns of a line's bytes
    mlir_files, inside               which files hold MLIR (`check DIR`, Check Workspace)
"""

from affine_lsp.syntax.document import ByteEdit, ContentChange, SourceDocument, decode, encode
from affine_lsp.syntax.errors import SyntaxProblem, syntax_problems
from affine_lsp.syntax.files import inside, mlir_files
from affine_lsp.syntax.language import mlir_language, mlir_query, new_parser
from affine_lsp.syntax.lines import LocalLines, column_units
from affine_lsp.syntax.nodes import FIELD, Node, Span, text, walk
from affine_lsp.syntax.printer import pretty_sexp, sexp

__all__ = [
    "FIELD",
    "ByteEdit",
    "ContentChange",
    "LocalLines",
    "Node",
    "SourceDocument",
    "Span",
    "SyntaxProblem",
    "column_units",
    "decode",
    "encode",
    "inside",
    "mlir_files",
    "mlir_language",
    "mlir_query",
    "new_parser",
    "pretty_sexp",
    "sexp",
    "syntax_problems",
    "text",
    "walk",
]
