"""The language server: pygls glue around the `ide` layer.

What other layers use:

    create_server()   a server with every handler of `HANDLERS` registered
    warm_up(protocol) convert typical messages at once (the server warms up by itself)
    answers_are_not_errors   a log filter for pygls's log of deliberate error answers
    HANDLERS          the table of LSP methods and their handlers (rows: `Handler`)
    AffineLanguageServer   the server's class (open documents, analysis, publishing)
    diagnostic_data, TokenEncoder   how diagnostics and semantic tokens go on the wire
"""

from affine_lsp.server.convert import diagnostic_data
from affine_lsp.server.handlers import HANDLERS, Handler, create_server
from affine_lsp.server.protocol import answers_are_not_errors
from affine_lsp.server.server import AffineLanguageServer
from affine_lsp.server.tokens import TokenEncoder
from affine_lsp.server.warmup import warm_up

__all__ = [
    "HANDLERS",
    "AffineLanguageServer",
    "Handler",
    "TokenEncoder",
    "answers_are_not_errors",
    "create_server",
    "diagnostic_data",
    "warm_up",
]
