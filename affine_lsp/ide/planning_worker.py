"""The entry point of a planning worker process (`ide.planning.serve`), light to
import: the process lowers its priority before it loads the analysis and the
refactorings, which takes a while."""

from __future__ import annotations

import os
from multiprocessing.connection import Connection


def main(connection: Connection, niceness: int) -> None:
    if hasattr(os, "nice"):
        os.nice(niceness)
    from affine_lsp.ide import planning

    planning.serve(connection)
