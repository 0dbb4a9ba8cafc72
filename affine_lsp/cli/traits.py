"""`affine-lsp traits PATH...`: the project file of a dialect, from its ODS files.

Reads the `.td` files given (folders: every `.td` file under them, and the files
they include that are found there) without TableGen, and prints on stdout an
`.affine-lsp.toml` that declares their dialects and the traits of every op
(`[ops."dialect.name"] traits = [...]`, the traits a project file understands).
Each def that looks like an op but could not be read is named on stderr with
the reason (`PATH:LINE: not read: NAME: reason`). Exit status (docs/cli.md): 0
when ops were read, 1 when the files define none, 2 for a path that does not exist.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from affine_lsp.cli.output import DONE, INPUT_ERRORS, USAGE, add_command, fail, printable
from affine_lsp.ir import OdsResult, read_ods

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "traits",
        "Print the project file (.affine-lsp.toml) of the dialects that ODS files define: "
        "their names and the traits of their ops that affine-lsp uses (AffineScope, "
        "IsolatedFromAbove, Pure, ...). Defs that could not be read are named on stderr.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="ODS files or folders")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    paths = [Path(path) for path in args.paths]
    for path in paths:
        if not path.exists():
            return fail("traits", USAGE, f"cannot read {path}: No such file or directory")
    result = read_ods(paths, _text)
    for problem in sorted(result.problems, key=lambda p: (str(p.path), p.line)):
        print(
            printable(f"{problem.path}:{problem.line}: not read: {problem.name}: {problem.reason}"),
            file=sys.stderr,
        )
    if not result.ops:
        message = f"no op definitions found in {len(result.files)} ODS file(s)"
        return fail("traits", INPUT_ERRORS, message)
    sys.stdout.write(project_text(result, args.paths))
    return DONE


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def project_text(result: OdsResult, sources: list[str]) -> str:
    """The project file: the dialects, then one table per op."""
    lines = [
        f"# Written by `affine-lsp traits {' '.join(sources)}`: the dialects these ODS files",
        "# define and the traits of their ops (docs/project-file.md).",
        "",
        "[dialects]",
        f"registered = [{', '.join(_quoted(d) for d in result.dialects)}]",
    ]
    for dialect in result.element_dialects:
        if dialect in result.dialects:
            lines += ["", f"[dialects.{_key(dialect)}]", "memref_element_types = true"]
    seen: set[str] = set()
    for op in result.ops:
        if op.name in seen:
            continue
        seen.add(op.name)
        lines += [
            "",
            f"[ops.{_quoted(op.name)}]",
            f"traits = [{', '.join(_quoted(t) for t in op.traits)}]",
        ]
    return "\n".join(lines) + "\n"


def _key(text: str) -> str:
    """A TOML key: bare when it can be."""
    return text if _BARE_KEY.fullmatch(text) else _quoted(text)


def _quoted(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
