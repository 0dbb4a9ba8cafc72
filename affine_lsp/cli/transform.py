"""`affine-lsp transform FILE --line N (--interchange | --permute P | --tile S1[,S2...]
| --unroll F|full | --unroll-jam F [--interleave] | --parallelize | --hoist | --distribute
| --skew F1[,F2...] | --wavefront [R] [--tile-sizes S1[,S2...]] | --scalar-replace)
[--config FILE]
[-o OUT | --in-place]`.

Transforms the `affine.for` that starts on line N, proven legal, and prints the
whole file to stdout (or writes it). Exit status (`output.EXIT_STATUSES`): 0
applied, 1 the input has errors, 2 usage errors (also a factor or permutation that
is never a change, no loop on line N), 3 refused (illegal, or nothing to do for
this loop: the reason goes to stderr, nothing to stdout).

The file is read with its project file (`cli.project`: `--config FILE`, or the
`.affine-lsp.toml` found from its folder upward, as `check` finds it).
"""

from __future__ import annotations

import argparse

from affine_lsp.cli.output import (
    INTERNAL_ERROR,
    REFUSED,
    USAGE,
    add_command,
    fail,
    line_number,
    say,
)
from affine_lsp.cli.project import add_config_option
from affine_lsp.cli.results import read_checked, report_errors, write_result
from affine_lsp.ir import AffineForOp, ModuleModel
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.loops import (
    DISTRIBUTE,
    HOIST,
    INTERCHANGE,
    PARALLELIZE,
    PERMUTE,
    SCALAR_REPLACE,
    SKEW,
    TILE,
    UNROLL,
    UNROLL_JAM,
    WAVEFRONT,
    Spec,
    transform,
)


def _integers(text: str, what: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.replace("x", ",").split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be integers separated by commas") from None
    if not values:
        raise argparse.ArgumentTypeError(f"{what} must not be empty")
    return values


def _sizes(text: str) -> tuple[int, ...]:
    values = _integers(text, "tile sizes")
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError("tile sizes must be positive")
    return values


def _permutation(text: str) -> tuple[int, ...]:
    values = _integers(text, "the permutation")
    if len(values) < 2 or sorted(values) != list(range(len(values))):
        raise argparse.ArgumentTypeError(
            f"the permutation must list 0..n-1 once each, n >= 2 (got {text})"
        )
    if values == tuple(range(len(values))):
        raise argparse.ArgumentTypeError(f"the permutation {text} keeps every loop in place")
    return values


def _skew_factors(text: str) -> tuple[int, ...]:
    values = _integers(text, "skew factors")
    if not any(values):
        raise argparse.ArgumentTypeError("skew factors: one of them nonzero")
    return values


def _factor(text: str, least: int = 1) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a factor must be an integer (got {text!r})") from None
    if value < least:
        raise argparse.ArgumentTypeError(
            "a factor must be positive" if least == 1 else f"the factor must be at least {least}"
        )
    return value


def _unroll_jam_factor(text: str) -> int:
    return _factor(text, least=2)  # (unrolling by 1 changes nothing, whatever the loop)


def _wavefront_rows(text: str) -> int:
    return _factor(text, least=2)  # (one row at a time is the order the loops had)


FULL = 0  # `--unroll full`


def _unroll_factor(text: str) -> int:
    return FULL if text.strip().lower() == "full" else _factor(text, least=2)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "transform",
        "Transform the affine.for that starts on line N. The transformed code is "
        "parsed back and proven equivalent to the original by an exact dataflow analysis; an "
        "illegal transformation is refused with the dependence it would break. Prints the "
        "whole file to stdout unless -o or --in-place is given.",
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument(
        "--line", type=line_number, required=True, metavar="N", help="the line of the affine.for"
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--interchange", action="store_true", help="swap the loop with the loop directly inside"
    )
    what.add_argument(
        "--permute",
        type=_permutation,
        metavar="P",
        help="permute a perfect band: P[k] = new position of its k-th loop (e.g. 2,0,1)",
    )
    what.add_argument(
        "--tile",
        type=_sizes,
        metavar="S1[,S2...]",
        help="tile a perfect band by these sizes, from the outside",
    )
    what.add_argument(
        "--unroll", type=_unroll_factor, metavar="F|full", help="unroll by F, or fully"
    )
    what.add_argument(
        "--unroll-jam", type=_unroll_jam_factor, metavar="F", help="unroll and jam by F"
    )
    what.add_argument(
        "--parallelize", action="store_true", help="turn the loop into affine.parallel"
    )
    what.add_argument("--hoist", action="store_true", help="hoist loop-invariant code out")
    what.add_argument(
        "--distribute", action="store_true", help="split the loop along dependence cycles"
    )
    what.add_argument(
        "--skew",
        type=_skew_factors,
        metavar="F1[,F2...]",
        help="skew the loops inside: the k-th loop below this one by Fk times this "
        "loop's iv (the band stays perfect; skews compose)",
    )
    what.add_argument(
        "--wavefront",
        nargs="?",
        const=0,
        type=_wavefront_rows,
        metavar="R",
        help="run the diagonals of the band's first two loops one after the other, the "
        "points of a diagonal in parallel (R: R rows at once instead); with --tile-sizes, "
        "tile and run the tiles of each diagonal in parallel",
    )
    parser.add_argument(
        "--interleave",
        action="store_true",
        help="with --unroll-jam: write the copies in the innermost jammed body op by op "
        "(each op's copies side by side) where the dependences allow, for a vectorizer",
    )
    parser.add_argument(
        "--tile-sizes",
        type=_sizes,
        metavar="S1[,S2...]",
        help="with --wavefront: the tile sizes",
    )
    what.add_argument(
        "--scalar-replace",
        action="store_true",
        help="keep the elements the loop does not move in registers (loaded before it, "
        "stored after it)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="OUT", help="write the result to OUT")
    where.add_argument("--in-place", action="store_true", help="rewrite FILE (atomically)")
    add_config_option(parser)
    parser.set_defaults(handler=run, parser=parser)


def _error(message: str) -> None:
    say("transform", message)


def spec_of(args: argparse.Namespace) -> Spec:
    if args.interchange:
        return Spec(INTERCHANGE)
    if args.permute is not None:
        return Spec(PERMUTE, permutation=args.permute)
    if args.tile is not None:
        return Spec(TILE, sizes=args.tile)
    if args.unroll_jam is not None:
        return Spec(UNROLL_JAM, factor=args.unroll_jam, interleave=args.interleave)
    if args.parallelize:
        return Spec(PARALLELIZE)
    if args.hoist:
        return Spec(HOIST)
    if args.distribute:
        return Spec(DISTRIBUTE)
    if args.skew is not None:
        factors = args.skew
        if len(factors) == 1:
            return Spec(SKEW, factor=factors[0])
        rows = tuple((f,) + (0,) * k for k, f in enumerate(factors))
        return Spec(SKEW, skews=rows)
    if args.wavefront is not None:
        return Spec(WAVEFRONT, sizes=args.tile_sizes or (), factor=args.wavefront or None)
    if args.scalar_replace:
        return Spec(SCALAR_REPLACE)
    return Spec(UNROLL, factor=None if args.unroll == FULL else args.unroll)


def loop_on_line(model: ModuleModel, document: SourceDocument, line: int) -> AffineForOp | None:
    """The (outermost) affine.for whose first line, or the line of its `affine.for`
    (results may be written on the lines before), is 1-based `line`."""
    for op in model.walk():
        if isinstance(op, AffineForOp) and line - 1 in (
            document.point(op.span.start_byte)[0],
            document.point(op.name_span.start_byte)[0],
        ):
            return op
    return None


def run(args: argparse.Namespace) -> int:
    if args.tile_sizes is not None and args.wavefront is None:
        return fail("transform", USAGE, "--tile-sizes goes with --wavefront (use --tile to tile)")
    if args.interleave and args.unroll_jam is None:
        return fail("transform", USAGE, "--interleave goes with --unroll-jam")
    spec = spec_of(args)
    found = read_checked("transform", args, "transformed")
    if isinstance(found, int):
        return found
    data, project, document, model = found.data, found.project, found.document, found.model
    loop = loop_on_line(model, document, args.line)
    if loop is None:
        return fail("transform", USAGE, f"no affine.for starts on line {args.line}")
    result = transform(data, model, loop, spec)
    if not result.applied or result.new_text is None:
        _error(f"refused: {result.reason}")
        if result.hint is not None:
            _error(f"a legal variant: {_hint_words(result.hint, args.line)}")
        return REFUSED
    if report_errors("<transformed>", SourceDocument(result.new_text), dialects=project.dialects):
        _error("internal error: the transformed text does not verify; nothing was transformed")
        return INTERNAL_ERROR
    if result.summary:
        _error(result.summary)
    return write_result("transform", args, result.new_text)


def _hint_words(spec: Spec, line: int) -> str:
    sizes = ",".join(str(s) for s in spec.sizes)
    options = {
        INTERCHANGE: "--interchange",
        PERMUTE: "--permute " + ",".join(str(p) for p in spec.permutation),
        TILE: f"--tile {sizes}",
        WAVEFRONT: f"--wavefront --tile-sizes {sizes}" if sizes else "--wavefront",
    }
    steps = _skew_steps(spec.skew_rows(), line)
    if steps is None:
        return f"the skew of the message, then {options.get(spec.kind, spec.kind)}"
    return ", then ".join([*steps, f"{options.get(spec.kind, spec.kind)} on this line"])


def _skew_steps(rows: tuple[tuple[int, ...], ...], line: int) -> list[str] | None:
    """A skew as `--skew` steps on the band's lines (its k-th loop on line + k), each by
    non-negative factors of one loop's iv (None if there are none).

    With R the skew (unit lower triangular), the steps on loops 0, 1, ... are the
    columns of I - R^-1: R = L_last ... L_0, L_m = I - (column m of R^-1)."""
    n = len(rows) + 1
    skew = [[1 if k == m else 0 for m in range(n)] for k in range(n)]
    for k, row in enumerate(rows, start=1):
        for m, factor in enumerate(row[:k]):
            skew[k][m] = factor
    inverse = [[0] * n for _ in range(n)]
    for m in range(n):
        inverse[m][m] = 1
        for k in range(m + 1, n):
            inverse[k][m] = -sum(skew[k][j] * inverse[j][m] for j in range(m, k))
    steps = []
    for m in range(n - 1):
        column = [-inverse[k][m] for k in range(m + 1, n)]
        if any(f < 0 for f in column):
            return None
        while column and column[-1] == 0:
            column.pop()
        if column:
            where = "on this line" if m == 0 else f"on line {line + m}"
            steps.append(f"--skew {','.join(str(f) for f in column)} {where}")
    return steps
