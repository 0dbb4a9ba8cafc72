"""The project file (`.affine-lsp.toml`) of a command's input: `--config FILE`, or
the one found from the file's folder upward, as `check` finds it. Its dialects are
what the commands that read MLIR (`fuse`, `transform`, `optimize`, `draw`) model, check and
prove the file with; what it says that is left out is printed to stderr as
warnings on it (code `project-file`), as `check` prints them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from affine_lsp.cli.output import USAGE, diagnostic_line, error_reason, fail
from affine_lsp.ir import (
    NO_PROJECT,
    Project,
    find_project_file,
    parse_project,
    unreadable_project,
)

PROJECT_FILE_CODE = "project-file"
"""The code of what a project file says that is left out (not a checker rule)."""


def add_config_option(parser: argparse.ArgumentParser) -> None:
    """The `--config FILE` option (`check` has its own: one for every file)."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the project file (dialects and ops' traits) to read FILE with "
        "(default: the .affine-lsp.toml in FILE's folder or the nearest one above)",
    )


def load_project(path: Path) -> Project:
    """The project file at `path` (an unreadable one has that as its problem)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        return unreadable_project(path, error_reason(error))
    return parse_project(data, path)


def project_of(command: str, file: str, config: str | None) -> Project | int:
    """The project of `file` (that of `config` if given), its problems printed to
    stderr; or the usage exit status, said, when `config` names no file."""
    if config is not None and not Path(config).is_file():
        return fail(command, USAGE, f"cannot read {config}: not a file")
    found = Path(config) if config is not None else find_project_file(Path(file).resolve().parent)
    if found is None:
        return NO_PROJECT
    project = load_project(found)
    print_problems(project)
    return project


def print_problems(project: Project) -> None:
    """What a project file says that is left out, as warnings on it (stderr)."""
    data = project.source
    for problem in project.problems:
        start = problem.span.start_byte
        line = data.count(b"\n", 0, start)
        column = start - (data.rfind(b"\n", 0, start) + 1)
        print(
            diagnostic_line(
                str(project.path), line, column, "warning", problem.message, PROJECT_FILE_CODE
            ),
            file=sys.stderr,
        )
