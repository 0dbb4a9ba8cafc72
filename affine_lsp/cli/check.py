"""`affine-lsp check [--format text|json] [--no-split] [--jobs N] PATH...`: run the
verifier.

Text output is one line per diagnostic, `path:line:col: severity: message [code]`
(1-based lines, byte columns, as mlir-opt prints them). JSON output is a list
of objects with `path`, `range` (LSP: 0-based lines, UTF-16 characters),
`severity`, `code` and `message`. Exit status (`output.EXIT_STATUSES`): 1 if any
error was reported, 0 otherwise, 2 for usage errors (unreadable paths).

Each file is checked with its project file (`.affine-lsp.toml` in its folder or
one above it, or the one `--config` names): the project's dialects and the traits
of their ops; what the project file says that is left out is printed as warnings
on it (code `project-file`).

Files and their `// -----` chunks are checked independently of each other: when
there is enough to check, they are spread over worker processes (forked, so they
start with everything loaded), and the output is the same as with one process.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

from affine_lsp.checks import (
    CheckOptions,
    Chunk,
    Diagnostic,
    Severity,
    check_document,
    iter_chunks,
)
from affine_lsp.cli.output import (
    DONE,
    INPUT_ERRORS,
    USAGE,
    add_command,
    diagnostic_line,
    fail,
    read_input,
)
from affine_lsp.cli.project import PROJECT_FILE_CODE, load_project
from affine_lsp.ir import NO_PROJECT, Project, find_project_file
from affine_lsp.syntax import LocalLines, SourceDocument, mlir_files

PARALLEL_BYTES = 128 * 1024
"""Less text than this is checked in one process: starting workers costs more."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "check",
        "Check MLIR files (directories are searched for *.mlir, leaving out "
        "hidden directories, build, node_modules and __pycache__). Text output: "
        "PATH:LINE:COL: SEVERITY: MESSAGE [CODE]. Chunks separated by '// -----' lines are "
        "checked independently, as mlir-opt --split-input-file does.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--no-split", action="store_true", help="check each file as a whole (ignore '// -----')"
    )
    parser.add_argument("--no-lints", action="store_true", help="leave out lint advice")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the project file (dialects and ops' traits) to check every file with "
        "(default: the .affine-lsp.toml in each file's folder or the nearest one above)",
    )
    parser.add_argument(
        "--legacy-severity",
        choices=("error", "warning", "information", "hint"),
        default=CheckOptions().legacy_severity.label,
        help="severity of 2019-syntax diagnostics (default: %(default)s)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="processes to check with (default: one per core when there is enough to "
        "check; 1: this process only)",
    )
    parser.set_defaults(handler=run)


def check_bytes(data: bytes, options: CheckOptions, split: bool = True) -> list[Diagnostic]:
    """Diagnostics of a whole file, chunk by chunk, with spans in file offsets."""
    found: list[Diagnostic] = []
    for chunk in iter_chunks(data, split):
        found += check_chunk(chunk, options)
    return found


def check_chunk(chunk: Chunk, options: CheckOptions) -> list[Diagnostic]:
    """Diagnostics of one chunk of a file, with spans in file offsets."""
    return [chunk.to_file(d) for d in check_document(SourceDocument(chunk.data), options)]


def check_chunks(
    chunks: list[Chunk], options: list[CheckOptions], jobs: int
) -> list[list[Diagnostic]]:
    """The diagnostics of each chunk, checked with its options (`options[i]` for
    `chunks[i]`), in `jobs` processes (0: as many as there are cores, if the chunks
    are long enough to be worth it)."""
    if jobs <= 0:
        large = sum(len(chunk.data) for chunk in chunks) >= PARALLEL_BYTES
        jobs = (os.cpu_count() or 1) if large else 1
    jobs = min(jobs, len(chunks))
    # (forking a process that runs other threads may leave a worker waiting forever
    # on a lock one of them held)
    forkable = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    if jobs <= 1 or not forkable:
        return [check_chunk(chunk, chosen) for chunk, chosen in zip(chunks, options, strict=True)]
    found: list[list[Diagnostic] | None] = [None] * len(chunks)
    context = multiprocessing.get_context("fork")  # (the workers inherit the chunks)
    try:
        with ProcessPoolExecutor(
            jobs, mp_context=context, initializer=_take, initargs=(chunks, options)
        ) as pool:
            # Longest first, so that no worker is left with a long chunk at the end.
            order = sorted(range(len(chunks)), key=lambda i: -len(chunks[i].data))
            futures: list[tuple[int, Future[list[Diagnostic]]]] = [
                (index, pool.submit(_check_taken, index)) for index in order
            ]
            for index, future in futures:
                found[index] = future.result()
    except Exception:  # a worker failed (out of memory, killed): the rest is done here
        pass
    return [
        checked if checked is not None else check_chunk(chunk, chosen)
        for chunk, chosen, checked in zip(chunks, options, found, strict=True)
    ]


# What a worker process checks: the chunks and options `check_chunks` gave it.
_taken: tuple[list[Chunk], list[CheckOptions]] | None = None


def _take(chunks: list[Chunk], options: list[CheckOptions]) -> None:
    global _taken
    _taken = (chunks, options)


def _check_taken(index: int) -> list[Diagnostic]:
    assert _taken is not None
    chunks, options = _taken
    return check_chunk(chunks[index], options[index])


def run(args: argparse.Namespace) -> int:
    options = CheckOptions(
        legacy_severity=Severity.parse(args.legacy_severity), lints=not args.no_lints
    )
    if args.jobs < 0:
        return fail("check", USAGE, "--jobs must be 0 (automatic) or more")
    files = [str(file) for path in args.paths for file in mlir_files(path)]
    read: list[tuple[str, bytes]] = []
    for path in files:
        data = read_input("check", path)
        if data is None:
            return USAGE
        read.append((path, data))
    projects = _Projects(args.config)
    if args.config is not None and not Path(args.config).is_file():
        return fail("check", USAGE, f"cannot read {args.config}: not a file")
    file_options = [replace(options, dialects=projects.of(path).dialects) for path, _ in read]
    chunks = [
        (n, chunk)
        for n, (_, data) in enumerate(read)
        for chunk in iter_chunks(data, not args.no_split)
    ]
    checked = check_chunks(
        [chunk for _, chunk in chunks], [file_options[n] for n, _ in chunks], args.jobs
    )
    by_file: list[list[Diagnostic]] = [[] for _ in read]
    for (file_index, _), diagnostics in zip(chunks, checked, strict=True):
        by_file[file_index] += diagnostics
    status = DONE
    records = []
    for project in projects.used():
        assert project.path is not None
        data = project.source
        diagnostics = [
            Diagnostic(problem.span, Severity.WARNING, PROJECT_FILE_CODE, problem.message)
            for problem in project.problems
        ]
        read.append((str(project.path), data))
        by_file.append(diagnostics)
    for (path, data), diagnostics in zip(read, by_file, strict=True):
        positions = LocalLines(data, 0, len(data), "utf-16") if args.format == "json" else None
        lines = _LineStarts(data)
        for diagnostic in diagnostics:
            if diagnostic.severity == Severity.ERROR:
                status = INPUT_ERRORS
            if positions is not None:
                records.append(_record(path, positions, diagnostic))
            else:
                line, column = lines.point(diagnostic.span.start_byte)
                print(
                    diagnostic_line(
                        path,
                        line,
                        column,
                        diagnostic.severity.label,
                        diagnostic.message,
                        diagnostic.code,
                    )
                )
    if args.format == "json":
        json.dump(records, sys.stdout, indent=2)
        print()
    return status


class _Projects:
    """The project file of each checked file (read once each), or the one given."""

    def __init__(self, config: str | None) -> None:
        self._given = Path(config) if config is not None else None
        self._by_folder: dict[Path, Path | None] = {}
        self._loaded: dict[Path, Project] = {}

    def of(self, path: str) -> Project:
        found = self._given
        if found is None:
            folder = Path(path).resolve().parent
            if folder not in self._by_folder:
                self._by_folder[folder] = find_project_file(folder)
            found = self._by_folder[folder]
        if found is None:
            return NO_PROJECT
        if found not in self._loaded:
            self._loaded[found] = load_project(found)
        return self._loaded[found]

    def used(self) -> list[Project]:
        """The project files read that have something to say about themselves."""
        return [p for p in self._loaded.values() if p.problems and p.path is not None]


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


def _record(path: str, positions: LocalLines, diagnostic: Diagnostic) -> dict:
    def position(offset: int) -> dict:
        line, character = positions.position(offset)
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
