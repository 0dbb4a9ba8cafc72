"""`affine-lsp serve` (stdio) starting with the settings given as JSON, for benchmark
clients that send none:

    python benchmarks/serve_with_settings.py '{"refactorings": {"planInBackground": false}}'

The settings are what `initializationOptions` would give; the client's own
(`initializationOptions`, `workspace/configuration`) still apply on top.
"""

from __future__ import annotations

import json
import sys

import affine_lsp.server
from affine_lsp.cli import main
from affine_lsp.ide.settings import parse_settings


def _serve(raw: object) -> int:
    create_server = affine_lsp.server.create_server

    def create_configured_server():
        server = create_server()
        server.settings, problems = parse_settings(raw, server.settings)
        if problems:
            raise SystemExit("; ".join(problems))
        return server

    affine_lsp.server.create_server = create_configured_server
    return main(["serve", *sys.argv[2:]])


if __name__ == "__main__":
    sys.exit(_serve(json.loads(sys.argv[1])))
