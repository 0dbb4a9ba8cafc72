"""`affine-lsp serve [--tcp HOST:PORT]`: run the language server (stdio by default)."""

from __future__ import annotations

import argparse
import logging
import sys

from affine_lsp.cli.output import DONE, USAGE, add_command, error_reason, fail


def _host_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host, int(port)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "serve",
        "Run the affine-lsp language server over stdio (the default) or TCP. "
        "Logs go to stderr (or --log-file); the client's logLevel setting overrides --log-level.",
    )
    parser.add_argument(
        "--tcp", type=_host_port, metavar="HOST:PORT", help="listen on a TCP socket instead"
    )
    parser.add_argument(
        "--stdio", action="store_true", help="use stdin/stdout (the default; for editor configs)"
    )
    parser.add_argument(
        "--log-level", choices=["error", "warning", "info", "debug"], default="warning"
    )
    parser.add_argument("--log-file", metavar="PATH", help="write logs here instead of stderr")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    handler: logging.Handler
    try:
        handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler()
    except OSError as error:
        return fail("serve", USAGE, f"cannot write {args.log_file}: {error_reason(error)}")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    ours = logging.getLogger("affine_lsp")
    ours.addHandler(handler)
    ours.setLevel(args.log_level.upper())
    # pygls logs every message body at INFO: keep it quiet unless debugging.
    pygls = logging.getLogger("pygls")
    pygls.addHandler(handler)
    pygls.setLevel(logging.DEBUG if args.log_level == "debug" else logging.WARNING)
    if args.log_level != "debug":
        from affine_lsp.server import answers_are_not_errors

        handler.addFilter(answers_are_not_errors)

    from affine_lsp.server import create_server

    # Nothing of the analysis is loaded before `initialize` is answered: the server
    # warms up once the client has its answer (`server/warmup.py`), and starts the
    # check workers then.
    server = create_server()
    # Worker threads (fusion, outlines of large files, the warm-up's imports) hand the
    # interpreter back to the event loop within a millisecond, so that keystrokes are
    # not kept waiting.
    sys.setswitchinterval(0.001)
    if args.tcp is not None:
        server.start_tcp(*args.tcp)
    else:
        server.start_io(server.incoming.watch(sys.stdin.buffer), sys.stdout.buffer)
    return DONE
