"""The entry point of a planning worker process (`ide.planning.serve`), light to
import: the process lowers its priority before it loads the analysis and the
refactorings, which takes a while; `spawn` starts one (the server does it early,
so that the worker loads while the server does)."""

from __future__ import annotations

import logging
import multiprocessing
import os
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

logger = logging.getLogger("affine_lsp.server")

NICENESS = 10
"""How much lower the worker's scheduling priority is than the server's."""


def spawn(niceness: int) -> tuple[BaseProcess, Connection] | None:
    """Start a worker in a fresh interpreter, `niceness` below this process's
    priority: (process, connection), or None where processes cannot start. It sends
    None on its connection once it is loaded."""
    try:
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        process = context.Process(
            target=main, args=(child, niceness), name="affine-lsp-planner", daemon=True
        )
        process.start()
    except Exception:  # no processes here: the server plans in a thread
        logger.exception("cannot start a planning process; planning in a thread")
        return None
    child.close()
    return process, parent


def main(connection: Connection, niceness: int) -> None:
    if hasattr(os, "nice"):
        os.nice(niceness)
    from affine_lsp.ide import planning

    planning.serve(connection)
