"""`affine-lsp optimize FILE (--line N | --func NAME | --all) [--tune] [-o OUT |
--in-place] [-v] [--cache SIZES] [--vector-bits B]`.

Finds a schedule for locality and parallelism for the nest starting on line N
(every nest of function NAME, of every function), applies it as proven
transformations, and prints the whole file to stdout (or writes it). Steps go
to stderr, one line per nest, with the cost model's estimate of the gain. Exit status
(`output.EXIT_STATUSES`): 0 done (with --func or --all, also when nothing
changed), 3 the nest of --line left as it is (the reasons on stderr, nothing on
stdout), 1 the input has errors, 2 usage errors, 4 internal errors.
"""

from __future__ import annotations

import argparse
import sys

from affine_lsp.cli.output import (
    INTERNAL_ERROR,
    REFUSED,
    USAGE,
    add_command,
    say,
)
from affine_lsp.cli.project import add_config_option
from affine_lsp.cli.results import read_checked, report_errors, write_result
from affine_lsp.ir import AffineForOp, FuncOp, ModuleModel
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.optimize import (
    NestReport,
    Options,
    TuneError,
    optimize_nests,
    outermost_loops,
    tune_function,
)
from affine_lsp.transforms.performance import machine, parse_caches


def _caches(text: str) -> tuple[int, ...]:
    try:
        return parse_caches(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _bits(text: str) -> int:
    if text not in ("128", "256", "512"):
        raise argparse.ArgumentTypeError("the vector width is 128, 256 or 512 bits")
    return int(text)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "optimize",
        "Optimize loop nests for locality and parallelism: isl's scheduler and a cost model "
        "choose a loop order, tile sizes, unroll-and-jam and parallel loops, applied as "
        "transformations that are each proven equivalent (and the result proven against the "
        "original). Prints the whole file to stdout unless -o or --in-place is given; the "
        "steps go to stderr. A nest of --line left as it is is status 3 (the reasons on "
        "stderr).",
    )
    parser.add_argument("file", metavar="FILE")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--line", type=int, metavar="N", help="the nest whose loop starts on N")
    which.add_argument("--func", metavar="NAME", help="every nest of function NAME")
    which.add_argument("--all", action="store_true", help="every nest of every function")
    parser.add_argument(
        "--tune",
        action="store_true",
        help="compile and time a few candidate schedules (mlir-opt, clang) and keep the "
        "fastest; this runs the code",
    )
    parser.add_argument(
        "--cache",
        type=_caches,
        metavar="SIZES",
        help="data cache sizes from L1 out, e.g. 48K,1M,32M (default: this machine's)",
    )
    parser.add_argument(
        "--vector-bits", type=_bits, metavar="B", help="the vector width (default: this CPU's)"
    )
    add_config_option(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="say more: schedule, notes")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="OUT", help="write the result to OUT")
    where.add_argument("--in-place", action="store_true", help="rewrite FILE (atomically)")
    parser.set_defaults(handler=run, parser=parser)


def _say(message: str) -> None:
    say("optimize", message)


def _targets(
    args: argparse.Namespace, model: ModuleModel, document: SourceDocument
) -> dict[int, list[int]] | str:
    """Function start -> the starts of its nests to optimize, or what is wrong."""
    functions = [op for op in model.walk() if isinstance(op, FuncOp)]
    found: dict[int, list[int]] = {}
    if args.line is not None:
        for function in functions:
            for loop in function.walk():
                if not isinstance(loop, AffineForOp):
                    continue
                if document.point(loop.span.start_byte)[0] == args.line - 1:
                    found[function.span.start_byte] = [loop.span.start_byte]
                    return found
        return f"no affine.for starts on line {args.line}"
    chosen = functions
    if args.func is not None:
        name = args.func if args.func.startswith("@") else f"@{args.func}"
        chosen = [f for f in functions if f.symbol == name]
        if not chosen:
            return f"no function {name}"
    for function in chosen:
        nests = [loop.span.start_byte for loop in outermost_loops(function)]
        if nests:
            found[function.span.start_byte] = nests
    return found  # (empty: nothing to optimize, which is done)


def run(args: argparse.Namespace) -> int:
    if args.line is not None and args.line < 1:
        _say("--line must be at least 1")
        return USAGE
    found = read_checked("optimize", args, "optimized")
    if isinstance(found, int):
        return found
    data, project, document, model = found.data, found.project, found.document, found.model
    targets = _targets(args, model, document)
    if isinstance(targets, str):
        _say(targets)
        return USAGE
    target = machine().with_overrides(
        args.cache, args.vector_bits // 8 if args.vector_bits else None
    )
    options = Options(machine=target, dialects=project.dialects)
    if args.verbose:
        _say(f"machine: {target.describe()}")
    new = data
    reports: list[NestReport] = []
    tools_missing = None
    for function_start in sorted(targets, reverse=True):
        starts = targets[function_start]
        if args.tune and tools_missing is None:
            try:
                progress = _progress if sys.stderr.isatty() else _lines if args.verbose else None
                tuned = tune_function(new, function_start, starts, options, progress)
            except TuneError as error:
                _clear_progress()
                tools_missing = error.reason
                _say(f"not tuned ({error.reason}); the cost model decides")
            else:
                _clear_progress()
                _say(tuned.words)
                new = tuned.data
                reports = tuned.reports + reports
                continue
        new, found = optimize_nests(new, starts, options)
        reports = found + reports
    for report in reports:
        _tell(report, args.verbose)
    if not targets:
        _say("no loop nest to optimize")
    elif new == data:
        _say("nothing changed")
        if args.line is not None:
            return REFUSED  # (a whole function or file with nothing to change is done)
    elif report_errors("<optimized>", SourceDocument(new), dialects=project.dialects):
        _say("internal error: the optimized text does not verify; nothing was changed")
        return INTERNAL_ERROR
    return write_result("optimize", args, new)


def _tell(report: NestReport, verbose: bool) -> None:
    outcome = report.outcome
    where = f"line {report.line} ({report.loop})"
    if outcome.steps:
        _say(f"{where}: {', '.join(outcome.steps)}{outcome.gain_words}")
    else:
        reason = "; ".join(outcome.notes[-1:]) or "no step pays"
        _say(f"{where}: unchanged ({reason})")
    for refused in outcome.refused:
        _say(f"{where}: not done: {refused}")
    if verbose:
        for line in outcome.schedule:
            _say(f"{where}: schedule: {line}")
        for note in outcome.notes:
            _say(f"{where}: {note}")
        if outcome.cycles[0]:
            before, after = outcome.cycles
            _say(f"{where}: model: {before:.3g} cycles before, {after:.3g} after")


def _progress(done: int, total: int, what: str) -> None:
    """A progress bar on the terminal, redrawn in place."""
    width = 24
    filled = int(width * done / max(1, total))
    bar = "#" * filled + "." * (width - filled)
    print(f"\raffine-lsp optimize: [{bar}] {done}/{total} {what:<40}", end="", file=sys.stderr)
    sys.stderr.flush()


def _lines(done: int, total: int, what: str) -> None:
    """Progress where stderr is not a terminal (with -v): a line per step."""
    if done < total:
        _say(f"tuning: {done}/{total} {what}")


def _clear_progress() -> None:
    if sys.stderr.isatty():
        print("\r" + " " * 100 + "\r", end="", file=sys.stderr)
