"""`affine-lsp draw FILE --line N [--param NAME=VALUE]... [--func NAME] [-o OUT.svg]`.

Draws the iteration space of the loop nest headed by the `affine.for` or
`affine.parallel` on line N, with its loop-carried dependences, as SVG (to
stdout, or to OUT through a temporary file and an atomic rename). Exit status:
0 when drawn; 1 for input errors (an unreadable file, errors in the code);
2 for usage errors; 3 when line N heads no loop or the nest's domain cannot be
analysed within the budget (the reason goes to stderr).
"""

from __future__ import annotations

import argparse
import re
import sys

from affine_lsp.checks import split_chunks
from affine_lsp.cli.output import error_reason, read_input, say
from affine_lsp.cli.results import report_errors, write_atomically
from affine_lsp.ide.picture import draw, loop_on_line
from affine_lsp.ir import build_module, function_of
from affine_lsp.poly import Unknown
from affine_lsp.syntax import SourceDocument

NO_LOOP = 3
_PARAMETER = re.compile(r"%?([^=\s]+)=(-?\d+)")


def _parameter(text: str) -> tuple[str, int]:
    match = _PARAMETER.fullmatch(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not NAME=INTEGER (NAME is the SSA name without %, e.g. n=10)"
        )
    return match.group(1), int(match.group(2))


def _line(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a line number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("line numbers start at 1")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "draw",
        description="Draw the iteration space of the loop nest headed by the affine.for or "
        "affine.parallel on line N: one circle per integer point, one arrow per loop-carried "
        "dependence (RAW, WAR, WAW). Writes SVG to stdout unless -o is given. Exit status: "
        "0 when drawn, 1 for input errors, 2 for usage errors, 3 when line N heads no loop "
        "or its domain cannot be analysed within the budget.",
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument(
        "--line", type=_line, required=True, metavar="N", help="the line of the nest's loop"
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
    parser.add_argument("-o", "--output", metavar="OUT", help="write the SVG to OUT")
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
    data = read_input("draw", args.file)
    if data is None:
        return 1
    line = args.line - 1
    chunk, first_line, _ = _chunk_of(data, line)
    document = SourceDocument(chunk)
    if report_errors(args.file, document, first_line):
        _say(f"{args.file} has errors; nothing was drawn")
        return 1
    model = build_module(document.tree.root_node)
    loop = loop_on_line(model, line - first_line, lambda offset: document.point(offset)[0])
    if loop is None:
        _say(f"line {args.line} heads no affine.for or affine.parallel loop")
        return NO_LOOP
    if args.func:
        function = function_of(loop)
        wanted = args.func.lstrip("@")
        if function is None or function.symbol.lstrip("@") != wanted:
            _say(f"the loop on line {args.line} is not in @{wanted}")
            return NO_LOOP
    values = dict(args.param)
    result = draw(loop, model, document, values, first_line=first_line)
    if isinstance(result, Unknown):
        _say(f"cannot draw the nest on line {args.line}: {result.reason}")
        return NO_LOOP
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
    if space.dependences_unavailable:
        _say(f"note: dependences not drawn: {space.dependences_unavailable}")
    output = svg.encode()
    if not args.output:
        sys.stdout.buffer.write(output)
        sys.stdout.flush()
        return 0
    try:
        write_atomically(args.output, output)
    except OSError as error:
        _say(f"cannot write {args.output}: {error_reason(error)}")
        return 1
    return 0
