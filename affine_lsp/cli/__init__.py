"""The `affine-lsp` command line: one module per subcommand."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from affine_lsp import __version__
from affine_lsp.cli import check as check_command
from affine_lsp.cli import fuse as fuse_command
from affine_lsp.cli import parse as parse_command
from affine_lsp.cli import serve as serve_command
from affine_lsp.cli import transform as transform_command

# Each subcommand module provides `register(subparsers)`; the parser it adds
# carries a `run(args) -> int` function as its default `handler`.
_COMMANDS = [parse_command, check_command, fuse_command, transform_command, serve_command]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="affine-lsp",
        description="Editor tooling for MLIR's affine dialect.",
    )
    parser.add_argument("--version", action="version", version=f"affine-lsp {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in _COMMANDS:
        command.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.handler(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
