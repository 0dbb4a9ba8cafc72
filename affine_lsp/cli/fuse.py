"""`affine-lsp fuse FILE [--func NAME] (--all | --line N [--depth D] [--sibling])
[--config FILE] [-o OUT | --in-place]`.

Prints the whole file, fused, to stdout (or writes it). Exit status
(`output.EXIT_STATUSES`): 0 when done (with `--all`, also when nothing could be
fused), 1 when the input has errors, 2 for usage errors and requests for what the
file does not have (no nest on the line, none after it, no such depth or
function), 3 when the fusion `--line` asks for is refused (the reason goes to
stderr).

The file is read with its project file (`cli.project`: `--config FILE`, or the
`.affine-lsp.toml` found from its folder upward, as `check` finds it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from affine_lsp.cli.output import (
    DONE,
    INTERNAL_ERROR,
    REFUSED,
    USAGE,
    add_command,
    line_number,
    say,
)
from affine_lsp.cli.project import add_config_option
from affine_lsp.cli.results import read_checked, report_errors, write_result
from affine_lsp.ir import FuncOp, build_module, function_of
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.fusion import (
    PRODUCER_CONSUMER,
    SIBLING,
    Considered,
    Fusion,
    FusionOptions,
    PairFusion,
    Removed,
    fuse_all,
    nest_on_line,
    next_nest,
    shift_text,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "fuse",
        "Fuse affine loop nests. Every fusion is proven legal by an exact "
        "dataflow analysis of the fused code. Prints the whole file to stdout unless -o or "
        "--in-place is given.",
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--func", metavar="NAME", help="only this function (with or without @)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--all",
        action="store_true",
        help="fuse everywhere (and remove dead nests), in the order that leaves fewest nests",
    )
    what.add_argument(
        "--line", type=line_number, metavar="N", help="fuse the nest on line N with the next nest"
    )
    parser.add_argument("--depth", type=int, metavar="D", help="with --line: fuse at this depth")
    parser.add_argument(
        "--sibling", action="store_true", help="with --line: sibling fusion (shared inputs)"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="with --all: every depth's reason for the pairs left apart",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=FusionOptions().tolerance,
        metavar="F",
        help="extra computation accepted, as a fraction (default %(default)s)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="OUT", help="write the result to OUT")
    where.add_argument("--in-place", action="store_true", help="rewrite FILE (atomically)")
    add_config_option(parser)
    parser.set_defaults(handler=run, parser=parser)


def _error(message: str) -> None:
    say("fuse", message)


def run(args: argparse.Namespace) -> int:
    if args.all and (args.depth is not None or args.sibling):
        args.parser.print_usage(sys.stderr)
        _error("--depth and --sibling go with --line")
        return USAGE
    if args.depth is not None and args.depth < 1:
        _error("--depth must be at least 1")
        return USAGE
    found = read_checked("fuse", args, "fused")
    if isinstance(found, int):
        return found
    data, project, document = found.data, found.project, found.document
    options = FusionOptions(tolerance=args.tolerance, dialects=project.dialects)
    only = {args.func.lstrip("@")} if args.func else None
    if only is not None and not _has_function(document, args.func.lstrip("@")):
        _error(f"{args.file} has no function @{args.func.lstrip('@')}")
        return USAGE
    if args.all:
        result = fuse_all(data, options, only)
        output = result.text
        if not result.steps:
            _error("nothing could be fused")
        for step in result.steps:
            _error(_step_text(step))
        joined = _joined(result.steps)
        for pair in result.left_alone:
            _error(_left_alone_text(pair, args.verbose, joined))
        if result.spent:
            _error(
                "stopped asking: fuse --all's budget of isl operations is spent (later pairs "
                "were not considered)"
            )
    else:
        status, output = _fuse_line(data, document, args, options, only)
        if status:
            return status
    if output != data and report_errors(
        "<fused>", SourceDocument(output), dialects=project.dialects
    ):
        _error("internal error: the fused text does not verify; nothing was fused")
        return INTERNAL_ERROR
    return write_result("fuse", args, output)


def _fuse_line(
    data: bytes,
    document: SourceDocument,
    args: argparse.Namespace,
    options: FusionOptions,
    only: set[str] | None,
) -> tuple[int, bytes]:
    model = build_module(document.tree.root_node, options.dialects)
    first = nest_on_line(model, args.line - 1, document.point)
    if first is None:
        _error(f"no affine.for loop nest on line {args.line}")
        return USAGE, data
    function = function_of(first)
    if function is None or (only is not None and function.symbol.lstrip("@") not in only):
        _error(f"the nest on line {args.line} is not in @{args.func.lstrip('@')}")
        return USAGE, data
    second = next_nest(first)
    if second is None:
        _error(f"nothing to fuse: no loop nest follows the one on line {args.line}")
        return USAGE, data
    mode = SIBLING if args.sibling else PRODUCER_CONSUMER
    fusion = PairFusion(data, model, function, first, second, mode, options)
    second_line = document.point(second.span.start_byte)[0] + 1
    if args.depth is not None:
        depths = fusion.depths()
        if fusion.failure is None and args.depth not in depths:
            _error(
                f"the nests on lines {args.line} and {second_line} have no depth {args.depth} "
                f"to fuse at ({_depths_text(depths)})"
            )
            return USAGE, data
        candidate = fusion.choice(args.depth)
        chosen = candidate if candidate.legal else None
        reason = candidate.reason
    else:
        chosen = fusion.best()
        reason = fusion.failure or _best_failure(fusion, options)
    if chosen is None or chosen.new_text is None:
        _error(f"cannot fuse the nests on lines {args.line} and {second_line}: {reason}")
        return REFUSED, data
    kept = ", first nest kept" if chosen.producer_kept else ""
    shifted = f", second nest {shift_text(chosen.shift)}" if chosen.shift else ""
    _error(
        f"fused the nest on line {args.line} into the nest on line {second_line} "
        f"(depth {chosen.depth}{shifted}, +{(chosen.extra or 0):.0%} compute{kept})"
    )
    return DONE, chosen.new_text


def _nest(line: int | None) -> str:
    return f"the nest on line {line}" if line is not None else "a loop an earlier fusion wrote"


def _step_text(step: Fusion | Removed) -> str:
    if isinstance(step, Removed):
        return (
            f"{step.function}: removed {_nest(step.line)}: nothing reads what it writes "
            "before it is overwritten"
        )
    shifted = f", second nest {shift_text(step.shift)}" if step.shift else ""
    permuted = f", its loops reordered to {', '.join(step.permuted)} first" if step.permuted else ""
    return (
        f"{step.function}: fused {_nest(step.first_line)} into {_nest(step.second_line)} "
        f"({step.mode}, depth {step.depth}{shifted}, +{step.extra:.0%} compute{permuted})"
    )


def _joined(steps: Sequence[Fusion | Removed]) -> dict[tuple[str, int, int], int]:
    """The pairs of input lines a fusion joined (by function), with its depth."""
    joined: dict[tuple[str, int, int], int] = {}
    for step in steps:
        if isinstance(step, Fusion) and None not in (step.first_line, step.second_line):
            first, second = sorted((step.first_line or 0, step.second_line or 0))
            joined.setdefault((step.function, first, second), step.depth)
    return joined


def _left_alone_text(
    pair: Considered, verbose: bool, joined: dict[tuple[str, int, int], int] | None = None
) -> str:
    lines = sorted((pair.first_line, pair.second_line))
    depth = (joined or {}).get((pair.function, lines[0], lines[1]))
    if depth is not None:  # (fused at a shallower depth: what was refused is the rest)
        head = (
            f"{pair.function}: fused the nests on lines {lines[0]} and {lines[1]} "
            f"at depth {depth} only, no deeper"
        )
    else:
        head = f"{pair.function}: left the nests on lines {lines[0]} and {lines[1]} apart"
    if verbose:
        text = f"{head} ({pair.mode}): {pair.verdict.detail()}"
        return f"{text}; {pair.reordering}" if pair.reordering else text
    return f"{head}: {pair.reordering or pair.verdict.why()}"


def _has_function(document: SourceDocument, name: str) -> bool:
    model = build_module(document.tree.root_node)
    return any(isinstance(op, FuncOp) and op.symbol.lstrip("@") == name for op in model.walk())


def _depths_text(depths: list[int]) -> str:
    if not depths:
        return "they share no loop"
    if len(depths) == 1:
        return f"only depth {depths[0]}"
    return f"depths {depths[0]} to {depths[-1]}"


def _best_failure(fusion: PairFusion, options: FusionOptions) -> str:
    reasons = []
    for depth in fusion.depths():
        candidate = fusion.candidate(depth)
        if candidate.legal:
            reasons.append(
                f"depth {depth}: +{(candidate.extra or 0):.0%} compute exceeds the "
                f"{options.tolerance:.0%} tolerance"
            )
        else:
            reasons.append(f"depth {depth}: {candidate.reason}")
    return "; ".join(reasons) or "no depth to fuse at"
