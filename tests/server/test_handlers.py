"""The table of handlers, the warm-up and the fuzz stages agree: every method the
server registers is warmed up and fuzzed (or the stages say what covers it)."""

from __future__ import annotations

import random
from collections.abc import Collection

from affine_lsp.ir import build_module
from affine_lsp.server import HANDLERS, create_server
from affine_lsp.server.handlers import COMMAND, REQUEST
from affine_lsp.server.warmup import message_of
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing import editor_stages
from affine_lsp.testing.fuzz import FuzzContext
from tests.server.conftest import FIXTURES


def test_every_method_has_one_row():
    methods = [row.method for row in HANDLERS]
    assert len(methods) == len(set(methods))


def test_every_row_is_registered():
    server = create_server()
    features = server.protocol.fm.features
    commands = server.protocol.fm.commands
    for row in HANDLERS:
        registered = commands if row.kind == COMMAND else features
        assert row.method in registered, row.method


def test_the_warm_up_reads_every_message_and_writes_every_result():
    protocol = create_server().affine_protocol
    for row in HANDLERS:
        message = protocol.read_as_pygls(message_of(row))
        assert message is not None, row.method
        if row.result is not None:
            assert row.kind == REQUEST, row.method
            assert protocol.write_as_pygls(row.method, row.result())["id"] == 0, row.method


def test_every_row_is_fuzzed_or_says_what_covers_it():
    methods = {row.method for row in HANDLERS}
    groups: list[Collection[str]] = [
        editor_stages.AT_OFFSET,
        editor_stages.WHOLE_DOCUMENT,
        editor_stages.NOT_HERE,
    ]
    for row in HANDLERS:
        assert sum(row.method in group for group in groups) == 1, row.method
    stale = [m for group in groups for m in group if m not in methods]
    assert not stale, f"fuzz stages for methods the server does not have: {stale}"


def test_the_editor_stages_run_every_request_of_the_table():
    data = (FIXTURES / "fusion.mlir").read_bytes()
    document = SourceDocument(data)
    model = build_module(document.tree.root_node)
    rng = random.Random(3)
    offsets = [rng.randint(0, len(data)) for _ in range(4)] + [0, len(data)]
    context = FuzzContext(document, model, rng, offsets)
    for stage in editor_stages.STAGES.values():
        stage(context)


def test_each_row_says_whether_its_handler_is_a_coroutine():
    import inspect

    for row in HANDLERS:
        assert inspect.iscoroutinefunction(row.load()) == row.coroutine, row.function
