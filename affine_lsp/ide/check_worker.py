"""Checking workers: processes that check what is sent to them
(`remote_checks.Worker`: batches of items, items of a document sent when it was
opened, or whole files) until their connection closes. The server hands them part
of a large document's analysis, and files of Check Workspace
(`server.check_helpers`).

Light to import: `serve` starts the workers first thing, so that they are
loaded by the time a first document comes."""

from __future__ import annotations

import logging
import multiprocessing
import os
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

logger = logging.getLogger("affine_lsp.server")

WORKERS_VARIABLE = "AFFINE_LSP_CHECK_WORKERS"
"""How many workers to start (the environment's say over the default)."""

MOST_WORKERS = 3
"""Workers started by default, at most (each holds a copy of the analysis code)."""


def worker_count() -> int:
    """How many workers to start: the environment's number, or the cores but one
    (at most `MOST_WORKERS`)."""
    wanted = os.environ.get(WORKERS_VARIABLE, "").strip()
    if wanted:
        try:
            return max(0, int(wanted))
        except ValueError:
            logger.warning("%s=%r is not a number: no check workers", WORKERS_VARIABLE, wanted)
            return 0
    return max(0, min(MOST_WORKERS, (os.cpu_count() or 1) - 1))


def spawn(count: int) -> list[tuple[BaseProcess, Connection]]:
    """Start `count` workers, each in a fresh interpreter; (process, connection)
    pairs. Each sends None on its connection once it is loaded. Where processes
    cannot start, fewer (none)."""
    started: list[tuple[BaseProcess, Connection]] = []
    context = multiprocessing.get_context("spawn")
    for _ in range(count):
        try:
            parent, child = context.Pipe()
            process = context.Process(
                target=main, args=(child,), name="affine-lsp-checker", daemon=True
            )
            process.start()
        except Exception:  # no processes here: the server checks alone
            logger.exception("cannot start a check worker")
            break
        child.close()
        started.append((process, parent))
    return started


def main(connection: Connection) -> None:
    from affine_lsp.ide import remote_checks

    worker = remote_checks.Worker()
    connection.send(None)  # ready: the analysis is loaded
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        try:
            answer: object = worker.answer(message)
        except Exception as error:  # an outcome per item, or why there is none
            answer = f"{type(error).__name__}: {error}"
        try:
            connection.send(answer)
        except (EOFError, OSError):
            return
