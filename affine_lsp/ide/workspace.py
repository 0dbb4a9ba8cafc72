"""Checking every `.mlir` file under some folders (the "Check Workspace" command).

Which files are checked is `affine_lsp.syntax.files.mlir_files`, as for `affine-lsp
check`. Only files inside the workspace folders are read (`inside`): a folder or file
named by a client outside them, or a link leading out of them, is not.
"""

from __future__ import annotations

from pathlib import Path

from affine_lsp.checks import CheckOptions, Diagnostic, Severity
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ir import PROJECT_FILE
from affine_lsp.syntax import inside, mlir_files

__all__ = [
    "analysis_of",
    "count_severities",
    "inside",
    "mlir_files",
    "read_file",
    "read_project_file",
]


def read_file(path: Path) -> bytes:
    """The bytes of a file found by `mlir_files` (the one place the server reads
    files); OSError if it cannot be read."""
    return path.read_bytes()


def read_project_file(path: Path) -> bytes:
    """The bytes of a document's project file (`.affine-lsp.toml`, found by
    `ir.find_project_file`): the other file the server reads, TOML data it only
    parses; OSError if it cannot be read, ValueError for a file of another name."""
    if path.name != PROJECT_FILE:
        raise ValueError(f"not a project file: {path}")
    return path.read_bytes()


def analysis_of(data: bytes, options: CheckOptions, encoding: str) -> DocumentAnalysis:
    """A (not yet analysed) analysis of a file's bytes."""
    return DocumentAnalysis.from_text(data, encoding=encoding, options=options)


def count_severities(diagnostics: list[Diagnostic]) -> tuple[int, int]:
    """(errors, warnings)."""
    errors = sum(1 for d in diagnostics if d.severity == Severity.ERROR)
    warnings = sum(1 for d in diagnostics if d.severity == Severity.WARNING)
    return errors, warnings
