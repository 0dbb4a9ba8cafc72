"""`affine-lsp draw FILE --line N [--param NAME=VALUE]... [--func NAME]
[--dependences KINDS] [--config FILE] [-o OUT.svg]`.

Draws the iteration space of the loop nest headed by the `affine.for` or
`affine.parallel` on line N, with its loop-carried dependences of the kinds asked
for (RAW by default; the others are listed with their distances), as SVG (to
stdout, or to OUT through a temporary file and an atomic rename). Exit status
(`output.EXIT_STATUSES`): 0 when drawn; 1 for errors in the code; 2 for usage
errors (also an unreadable file, and a line N that heads no loop); 3 when the
nest cannot be drawn (its domain cannot be analysed within the budget, it has no
induction variables): the reason goes to stderr.

The file is read with its project file (`cli.project`: `--config FILE`, or the
`.affine-lsp.toml` found from its folder upward, as `check` finds it).
"""

from __future__ import annotations

import argparse
import re

from affine_lsp.checks import split_chunks
from affine_lsp.cli.output import (
    REFUSED,
    USAGE,
    add_command,
    fail,
    line_number,
    say,
)
from affine_lsp.cli.project import add_config_option
from affine_lsp.cli.results import read_checked, write_result
from affine_lsp.ide.picture import DEFAULT_KINDS, KINDS, draw, loop_on_line
from affine_lsp.ir import function_of
from affine_lsp.poly import Unknown

_PARAMETER = re.compile(r"%?([^=\s]+)=(-?\d+)")


def _parameter(text: str) -> tuple[str, int]:
    match = _PARAMETER.fullmatch(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not NAME=INTEGER (NAME is the SSA name without %, e.g. n=10)"
        )
    return match.group(1), int(match.group(2))


def _kinds(text: str) -> tuple[str, ...]:
    words = {w.strip().upper() for w in text.replace("+", ",").split(",") if w.strip()}
    if words == {"ALL"}:
        return KINDS
    if words == {"NONE"}:
        return ()
    unknown = sorted(words - set(KINDS))
    if unknown or not words:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give kinds of dependence among RAW, WAR and WAW, separated by commas, "
            "or all, or none"
        )
    return tuple(kind for kind in KINDS if kind in words)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "draw",
        "Draw the iteration space of the loop nest headed by the affine.for or "
        "affine.parallel on line N: one circle per integer point, one arrow per loop-carried "
        "dependence of the kinds asked for (RAW by default). Writes SVG to stdout unless -o "
        "is given.",
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument(
        "--line", type=line_number, required=True, metavar="N", help="the line of the nest's loop"
    )
    parser.add_argument(
        "--param",
        type=_parameter,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value for the symbol %%NAME (repeatable; symbols without one are drawn "
        "with a default, and the picture says so)",
    )
    parser.add_argument("--func", metavar="NAME", help="the loop must be in this function")
    parser.add_argument(
        "--dependences",
        type=_kinds,
        default=DEFAULT_KINDS,
        metavar="KINDS",
        help="the kinds of dependence to draw arrows for: RAW, WAR, WAW (separated by "
        "commas), all or none (default: RAW; the legend lists every kind found)",
    )
    parser.add_argument("-o", "--output", metavar="OUT", help="write the SVG to OUT")
    add_config_option(parser)
    parser.set_defaults(handler=run)


def _say(message: str) -> None:
    say("draw", message)


def _chunk_of(data: bytes, line: int) -> tuple[bytes, int, int]:
    """The `// -----` chunk holding 0-based `line`: its bytes, first line, first byte."""
    chunks = split_chunks(data)
    chosen = chunks[0]
    for chunk in chunks:
        if data.count(b"\n", 0, chunk.start_byte) <= line:
            chosen = chunk
    return chosen.data, data.count(b"\n", 0, chosen.start_byte), chosen.start_byte


def run(args: argparse.Namespace) -> int:
    line = args.line - 1
    found = read_checked("draw", args, "drawn", lambda data: _chunk_of(data, line)[:2])
    if isinstance(found, int):
        return found
    document, first_line, model = found.document, found.first_line, found.model
    loop = loop_on_line(model, line - first_line, lambda offset: document.point(offset)[0])
    if loop is None:
        return fail("draw", USAGE, f"line {args.line} heads no affine.for or affine.parallel loop")
    if args.func:
        function = function_of(loop)
        wanted = args.func.lstrip("@")
        if function is None or function.symbol.lstrip("@") != wanted:
            return fail("draw", USAGE, f"the loop on line {args.line} is not in @{wanted}")
    values = dict(args.param)
    result = draw(loop, model, document, values, first_line=first_line, kinds=args.dependences)
    if isinstance(result, Unknown):
        return fail("draw", REFUSED, f"cannot draw the nest on line {args.line}: {result.reason}")
    space, svg = result
    for name in space.unused_values:
        _say(f"warning: --param {name}: the nest has no symbol %{name}")
    for parameter in space.parameters:
        if parameter.assumed:
            _say(
                f"note: %{parameter.name} has no value; drawn with {parameter.name} = "
                f"{parameter.value} (give --param {parameter.name}=VALUE)"
            )
    if space.sampled:
        _say(f"note: {len(space.points):,} of {space.total:,} points drawn (sampled)")
    hidden = [kind for kind in KINDS if kind in space.carried and kind not in space.kinds]
    if hidden:
        _say(
            f"note: {' and '.join(hidden)} dependences not drawn (listed in the legend; "
            f"--dependences {','.join([*space.kinds, *hidden])} draws them)"
        )
    if space.dependences_unavailable:
        _say(f"note: dependences not drawn: {space.dependences_unavailable}")
    return write_result("draw", args, svg.encode())
