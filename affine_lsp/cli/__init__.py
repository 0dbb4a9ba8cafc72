"""The `affine-lsp` command line: one module per subcommand, imported only when used.

Adding a subcommand is one line in `COMMANDS`: its name, its module and the one-line
help that `affine-lsp --help` lists. The module provides `register(subparsers)`, which
adds the subcommand's parser (`output.add_command`) with `run(args) -> int` as its
default `handler`; the status it returns follows `output.EXIT_STATUSES`, the one rule
for every subcommand (`tests/test_cli_exit_statuses.py` holds each to it).

`main(argv)` runs the command line; `build_parser(command)` and `chosen_command(argv)`
are how it imports only the chosen subcommand's module.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from affine_lsp import __version__

# name -> (module, one-line help); `affine-lsp --help` reads only this table.
COMMANDS: dict[str, tuple[str, str]] = {
    "parse": ("affine_lsp.cli.parse", "parse files and report syntax errors"),
    "check": ("affine_lsp.cli.check", "verify affine code and report every error"),
    "fuse": ("affine_lsp.cli.fuse", "fuse affine loop nests (checked by dependence analysis)"),
    "transform": (
        "affine_lsp.cli.transform",
        "transform an affine.for loop (each result proven equivalent)",
    ),
    "optimize": (
        "affine_lsp.cli.optimize",
        "optimize loop nests for locality and parallelism (each step proven)",
    ),
    "draw": (
        "affine_lsp.cli.draw",
        "draw the iteration space of a loop nest and its dependences (SVG)",
    ),
    "traits": (
        "affine_lsp.cli.traits",
        "write the project file of dialects from their ODS (.td) files",
    ),
    "serve": ("affine_lsp.cli.serve", "run the language server"),
}

_TOP_LEVEL_OPTIONS = {"-h", "--help", "--version"}

__all__ = ["COMMANDS", "build_parser", "chosen_command", "main"]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only `command`'s module is imported. The other subcommands get a
    placeholder with their help, enough for the top-level `--help` listing (which is
    shown only when no subcommand is chosen)."""
    parser = argparse.ArgumentParser(
        prog="affine-lsp",
        description="Editor tooling for MLIR's affine dialect.",
    )
    parser.add_argument("--version", action="version", version=f"affine-lsp {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if name == command:
            importlib.import_module(module).register(subparsers)
        else:
            subparsers.add_parser(name, help=help_text, add_help=False)
    return parser


def chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` names (None when a top-level option comes first)."""
    for argument in argv:
        if argument in _TOP_LEVEL_OPTIONS:
            return None
        if not argument.startswith("-"):
            return argument if argument in COMMANDS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(chosen_command(arguments))
    args = parser.parse_args(arguments)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.handler(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception:  # a bug: its traceback, and the exit status of internal errors
        import traceback

        from affine_lsp.cli.output import INTERNAL_ERROR, say

        traceback.print_exc()
        say(args.command, "internal error (a bug of affine-lsp; please report it with the input)")
        return INTERNAL_ERROR
