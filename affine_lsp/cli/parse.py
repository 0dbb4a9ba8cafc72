"""`affine-lsp parse [--tree] FILE...`: report syntax errors, optionally print trees
(with ranges and leaves' text, as `tree-sitter parse` prints them)."""

from __future__ import annotations

import argparse

from affine_lsp.cli.output import DONE, INPUT_ERRORS, USAGE, add_command, printable, read_input
from affine_lsp.syntax import SourceDocument, pretty_sexp, syntax_problems


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "parse",
        "Parse MLIR files; print each syntax error as FILE:LINE:COL: error: MESSAGE.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument(
        "--tree",
        action="store_true",
        help="print the syntax tree of each file, as tree-sitter parse does: each node's "
        "range [row, column] - [row, column] (0-based, byte columns), a leaf's text",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    status = DONE
    for path in args.files:
        data = read_input("parse", path)
        if data is None:
            return USAGE
        document = SourceDocument(data)
        if args.tree:
            if len(args.files) > 1:
                print(f"// {printable(path)}")
            tree = pretty_sexp(document.tree.root_node, ranges=True)
            print("\n".join(printable(line) for line in tree.splitlines()))
        for problem in syntax_problems(document.tree, document.data):
            line, column = document.point(problem.span.start_byte)
            print(printable(f"{path}:{line + 1}:{column + 1}: error: {problem.message}"))
            status = INPUT_ERRORS
    return status
