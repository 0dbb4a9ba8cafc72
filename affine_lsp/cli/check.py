"""`affine-lsp check [--format text|json] [--no-split] PATH...`: run the verifier.

Text output is one line per diagnostic, `path:line:col: severity: message [code]`
(1-based lines, byte columns, as mlir-opt prints them). JSON output is a list
of objects with `path`, `range` (LSP: 0-based lines, UTF-16 characters),
`severity`, `code` and `message`. Exit status: 1 if any error was reported,
0 otherwise, 2 for usage errors (unreadable paths).
"""

from __future__ import annotations

import argparse
import json
import sys

from affine_lsp.checks import CheckOptions, Diagnostic, Severity, check_document, iter_chunks
from affine_lsp.cli.output import printable, read_input
from affine_lsp.syntax import SourceDocument, mlir_files


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check",
        description="Check MLIR files (directories are searched for *.mlir, leaving out "
        "hidden directories, build, node_modules and __pycache__). Text output: "
        "PATH:LINE:COL: SEVERITY: MESSAGE [CODE]. Exit status 1 if any error was found, "
        "0 otherwise, 2 for usage errors. Chunks separated by '// -----' lines are checked "
        "independently, as mlir-opt --split-input-file does.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--no-split", action="store_true", help="check each file as a whole (ignore '// -----')"
    )
    parser.add_argument("--no-lints", action="store_true", help="leave out lint advice")
    parser.add_argument(
        "--legacy-severity",
        choices=("error", "warning", "information", "hint"),
        default=CheckOptions().legacy_severity.label,
        help="severity of 2019-syntax diagnostics (default: %(default)s)",
    )
    parser.set_defaults(handler=run)


def check_bytes(data: bytes, options: CheckOptions, split: bool = True) -> list[Diagnostic]:
    """Diagnostics of a whole file, chunk by chunk, with spans in file offsets."""
    found: list[Diagnostic] = []
    for chunk in iter_chunks(data, split):
        document = SourceDocument(chunk.data)
        found += [chunk.to_file(d) for d in check_document(document, options)]
    return found


def run(args: argparse.Namespace) -> int:
    options = CheckOptions(
        legacy_severity=Severity.parse(args.legacy_severity), lints=not args.no_lints
    )
    files = [str(file) for path in args.paths for file in mlir_files(path)]
    results = []
    for path in files:
        data = read_input("check", path)
        if data is None:
            return 2
        results.append((path, data, check_bytes(data, options, split=not args.no_split)))
    status = 0
    records = []
    for path, data, diagnostics in results:
        document = SourceDocument(data) if args.format == "json" else None
        lines = _LineStarts(data)
        for diagnostic in diagnostics:
            if diagnostic.severity == Severity.ERROR:
                status = 1
            if document is not None:
                records.append(_record(path, document, diagnostic))
            else:
                line, column = lines.point(diagnostic.span.start_byte)
                print(
                    printable(
                        f"{path}:{line + 1}:{column + 1}: {diagnostic.severity.label}: "
                        f"{diagnostic.message} [{diagnostic.code}]"
                    )
                )
    if args.format == "json":
        json.dump(records, sys.stdout, indent=2)
        print()
    return status


class _LineStarts:
    """Byte offset -> (line, byte column), for text output."""

    def __init__(self, data: bytes) -> None:
        self.starts = [0]
        position = data.find(b"\n")
        while position >= 0:
            self.starts.append(position + 1)
            position = data.find(b"\n", position + 1)

    def point(self, offset: int) -> tuple[int, int]:
        from bisect import bisect_right

        line = bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]


def _record(path: str, document: SourceDocument, diagnostic: Diagnostic) -> dict:
    def position(offset: int) -> dict:
        line, character = document.position(offset)
        return {"line": line, "character": character}

    return {
        "path": path,
        "range": {
            "start": position(diagnostic.span.start_byte),
            "end": position(diagnostic.span.end_byte),
        },
        "severity": diagnostic.severity.label,
        "code": diagnostic.code,
        "message": diagnostic.message,
    }
