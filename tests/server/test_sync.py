"""Document sync, versioned diagnostics, encodings, settings, progress and
isolation — each test with a server of its own."""

from __future__ import annotations

import asyncio
import time
import uuid
from concurrent.futures import Future

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.server.guard import guarded
from tests.server.conftest import FIXTURES, record_diagnostics, start
from tests.server.helpers import diagnostics_for, fixture_uri, open_text

FIXES = (FIXTURES / "fixes.mlir").read_text()
SMALL = "func.func @f(%n: index) {\n  %x = arith.addi %n, %n : index\n  return\n}\n"


def _change(uri: str, version: int, *changes) -> types.DidChangeTextDocumentParams:
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=list(changes),
    )


def _edit(line: int, start: int, end: int, text: str):
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=line, character=start),
            end=types.Position(line=line, character=end),
        ),
        text=text,
    )


async def test_versioned_diagnostics_after_open_and_every_change(fresh_client):
    await start(fresh_client)
    uri = "file:///tmp/sync.mlir"
    assert list(await open_text(fresh_client, uri, SMALL)) == []
    fresh_client.text_document_did_change(_change(uri, 2, _edit(1, 18, 20, "%m")))
    (error,) = await diagnostics_for(fresh_client, uri, 2)
    assert error.message == "use of undeclared SSA value name '%m'"
    assert (error.range.start.line, error.range.start.character) == (1, 18)
    fresh_client.text_document_did_change(_change(uri, 3, _edit(1, 18, 20, "%n")))
    assert list(await diagnostics_for(fresh_client, uri, 3)) == []  # also when empty
    fresh_client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await asyncio.sleep(0.2)
    assert list(fresh_client.diagnostic_notifications[-1].diagnostics) == []


async def test_utf16_positions_with_characters_outside_the_bmp(fresh_client):
    await start(fresh_client)
    uri = "file:///tmp/utf16.mlir"
    text = "// 𝜆 é\nfunc.func @f() {\n  %x = arith.addi %a, %a : index // 𝜆\n  return\n}\n"
    first = (await open_text(fresh_client, uri, text))[0]
    assert (first.range.start.line, first.range.start.character) == (2, 18)
    # Replace the comment's 𝜆 (two UTF-16 units at 37..39) and then %a by %b.
    fresh_client.text_document_did_change(
        _change(uri, 2, _edit(2, 37, 39, "x"), _edit(2, 18, 20, "%b"))
    )
    diagnostics = await diagnostics_for(fresh_client, uri, 2)
    assert [(d.range.start.character, d.message[-4:]) for d in diagnostics] == [
        (18, "'%b'"),
        (22, "'%a'"),
    ]


async def test_utf8_positions_when_the_client_prefers_them(fresh_client):
    result = await fresh_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                general=types.GeneralClientCapabilities(position_encodings=["utf-8", "utf-16"])
            )
        )
    )
    assert result.capabilities.position_encoding == "utf-8"
    from tests.server.conftest import record_diagnostics

    record_diagnostics(fresh_client)
    uri = "file:///tmp/utf8.mlir"
    text = 'func.func @f() {\n  func.call @"é"(%nope) : (index) -> ()\n  return\n}\n'
    first = (await open_text(fresh_client, uri, text))[0]
    assert first.range.start.character == 18  # in bytes: `é` counts two


async def test_a_burst_of_changes_ends_with_the_last_version(fresh_client):
    await start(fresh_client)
    uri = "file:///tmp/burst.mlir"
    await open_text(fresh_client, uri, SMALL)
    for version in range(2, 42):
        fresh_client.text_document_did_change(
            _change(uri, version, _edit(0, 0, 0, " ") if version % 2 else _edit(0, 0, 1, ""))
        )
    assert list(await diagnostics_for(fresh_client, uri, 41)) == []
    versions = [p.version for p in fresh_client.diagnostic_notifications if p.uri == uri]
    assert versions == sorted(versions) and versions[-1] == 41


NEST = """func.func @f(%A: memref<8xf32>) {
  affine.for %i = 0 to 8 {
    %v = affine.load %A[%i] : memref<8xf32>
    affine.store %v, %A[%i] : memref<8xf32>
  }
  return
}
"""


async def test_diagnostics_of_edits_with_errors_are_those_of_a_fresh_analysis(fresh_client):
    """Edits after which tree-sitter's incremental error recovery alone would differ
    from a fresh parse's: each version's diagnostics are those of its text."""
    await start(fresh_client)
    uri = "file:///tmp/recovery.mlir"
    await open_text(fresh_client, uri, NEST)
    text = NEST
    for version, (lo, hi, new) in enumerate([(86, 88, "}"), (41, 42, "}")], start=2):
        before = text[:lo]
        line, character = before.count("\n"), lo - (before.rfind("\n") + 1)
        fresh_client.text_document_did_change(
            _change(uri, version, _edit(line, character, character + hi - lo, new))
        )
        text = text[:lo] + new + text[hi:]
        published = await diagnostics_for(fresh_client, uri, version)
        fresh = DocumentAnalysis.from_text(text)
        fresh.analyse_all()
        assert sorted(d.message for d in published) == sorted(
            d.message for d in fresh.diagnostics()
        )


async def test_settings_from_initialization_options(fresh_client):
    await start(fresh_client, {"legacySyntax": {"severity": "error"}, "lints.enabled": False})
    diagnostics = await open_text(fresh_client, fixture_uri("fixes.mlir"), FIXES)
    codes = {d.code: d.severity for d in diagnostics}
    assert codes["legacy-op-name"] == types.DiagnosticSeverity.Error
    assert "lint-memref-access-in-affine-loop" not in codes


async def test_settings_pulled_and_changed_through_workspace_configuration(fresh_client):
    fresh_client.set_configuration({"legacySyntax": {"severity": "hint"}}, section="affineLsp")
    await start(fresh_client)
    uri = fixture_uri("fixes.mlir")
    await asyncio.sleep(0.3)  # the server asks for the configuration after `initialized`
    diagnostics = await open_text(fresh_client, uri, FIXES)
    assert {d.code: d.severity for d in diagnostics}["legacy-op-name"] == 4
    fresh_client.set_configuration(
        {"legacySyntax": {"severity": "error"}, "fusion": {"tolerance": "high"}},
        section="affineLsp",
    )
    before = len(fresh_client.diagnostic_notifications)
    fresh_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )

    async def republished():
        while True:
            for params in fresh_client.diagnostic_notifications[before:]:
                severities = {d.code: d.severity for d in params.diagnostics}
                if severities.get("legacy-op-name") == 1:
                    return
            await asyncio.sleep(0.02)

    await asyncio.wait_for(republished(), 10)
    messages = [m.message for m in fresh_client.messages]
    assert any("fusion.tolerance" in m for m in messages)  # a bad value, reported once
    fresh_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )
    await asyncio.sleep(0.3)
    assert sum("fusion.tolerance" in m.message for m in fresh_client.messages) == 1


async def test_work_done_progress_for_long_analyses(fresh_client):
    await start(fresh_client)
    function = (FIXTURES / "nest.mlir").read_text().split("func.func @caller")[0]
    header, body = function.split("func.func @triangle")
    text = header + "".join(f"func.func @t{i}{body}" for i in range(1000))  # ~0.5 s or more
    await open_text(fresh_client, "file:///tmp/big.mlir", text)

    def reports():
        return [value for values in fresh_client.progress_reports.values() for value in values]

    for _ in range(100):  # the `end` follows the diagnostics
        if reports() and reports()[-1].kind == "end":
            break
        await asyncio.sleep(0.05)
    found = reports()
    kinds = [r.kind for r in found]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert any(r.kind == "report" and r.percentage is not None for r in found)


def _record_events(client) -> list[tuple]:
    """Progress notifications and diagnostics, in the order they arrive."""
    events: list[tuple] = []
    features = client.protocol.fm.features
    for method, kind in (
        (types.PROGRESS, "progress"),
        (types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, "diagnostics"),
    ):
        original = features[method]

        def record(params, original=original, kind=kind):
            events.append((kind, params))
            return original(params)

        features[method] = record
    return events


def _functions_with_errors(count: int, wrong: set[int]) -> str:
    return "".join(
        f"func.func @f{i}(%n: index) {{\n"
        f"  %x = arith.addi {'%undefined' if i in wrong else '%n'}, %n : index\n"
        "  return\n}\n"
        for i in range(count)
    )


def _progress_kind(params) -> str:
    value = params.value
    return value["kind"] if isinstance(value, dict) else value.kind


async def _until_progress_ends(events: list[tuple]) -> None:
    async def ended():
        while not any(kind == "progress" and _progress_kind(p) == "end" for kind, p in events):
            await asyncio.sleep(0.02)

    await asyncio.wait_for(ended(), 60)


def _publishes(events: list[tuple]) -> list[tuple[bool, list[int]]]:
    """(whether a progress was running, the lines of the errors) of each publish of
    version 1."""
    found, running = [], False
    for kind, params in events:
        if kind == "progress":
            running = _progress_kind(params) != "end"
        elif params.version == 1:
            found.append((running, sorted(d.range.start.line for d in params.diagnostics)))
    return found


def _check_sets(events: list[tuple], publishes: list, complete: list[int]) -> None:
    """Partial sets only under a running progress; the complete set last, and the
    progress ends right after it."""
    assert all(running for running, _ in publishes)
    assert publishes[-1][1] == complete
    assert all(lines != complete for _, lines in publishes[:-1])
    assert events[-1][0] == "progress" and _progress_kind(events[-1][1]) == "end"
    assert events[-2][0] == "diagnostics"


async def test_a_large_document_publishes_its_start_first_under_progress(fresh_client):
    await start(fresh_client)
    events = _record_events(fresh_client)
    last = 1499
    client_open(fresh_client, "file:///tmp/early.mlir", _functions_with_errors(1500, {0, last}))
    await _until_progress_ends(events)
    publishes = _publishes(events)
    assert publishes[0] == (True, [1])  # the start of the file, what the editor shows
    _check_sets(events, publishes, [1, 4 * last + 1])


async def test_the_range_the_editor_shows_is_published_first(fresh_client):
    await start(fresh_client)
    events = _record_events(fresh_client)
    uri = "file:///tmp/early_range.mlir"
    last = 1999
    client_open(fresh_client, uri, _functions_with_errors(2000, {0, 1000, last}))
    shown = types.Range(
        start=types.Position(line=4 * last - 30, character=0),
        end=types.Position(line=4 * last + 3, character=0),
    )
    await fresh_client.text_document_semantic_tokens_range_async(
        types.SemanticTokensRangeParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=shown
        )
    )
    await _until_progress_ends(events)
    publishes = _publishes(events)
    # The range asked for comes before the middle of the file.
    assert any(4 * last + 1 in lines and 4001 not in lines for _, lines in publishes)
    _check_sets(events, publishes, [1, 4001, 4 * last + 1])


async def test_without_progress_a_large_document_gets_one_complete_set(fresh_client):
    record_diagnostics(fresh_client)
    await fresh_client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities())
    )
    uri = "file:///tmp/no_progress.mlir"
    await open_text(fresh_client, uri, _functions_with_errors(400, {0, 399}))
    await asyncio.sleep(0.2)
    (published,) = [p for p in fresh_client.diagnostic_notifications if p.uri == uri]
    assert sorted(d.range.start.line for d in published.diagnostics) == [1, 4 * 399 + 1]


def client_open(client, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="mlir", version=1, text=text)
        )
    )


async def test_malformed_requests_get_errors_and_the_server_goes_on(fresh_client):
    await start(fresh_client)
    uri = "file:///tmp/malformed.mlir"
    await open_text(fresh_client, uri, SMALL)
    with pytest.raises(JsonRpcException):  # the position is missing
        await raw_request(fresh_client, "textDocument/hover", {"textDocument": {"uri": uri}})
    with pytest.raises(JsonRpcException):
        await raw_request(fresh_client, "textDocument/definition", [1, 2])
    result = await fresh_client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=1, character=20),
        )
    )
    assert result is not None and "%n : index" in result.contents.value


async def raw_request(client, method: str, params):
    """Send a request as raw JSON (bypassing the client's types) and await the answer."""
    msg_id = str(uuid.uuid4())
    future: Future = Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wait_for(asyncio.wrap_future(future), 10)


def test_guarded_handlers_log_and_answer_empty(caplog):
    @guarded([])
    def broken(*_):
        raise ValueError("boom")

    @guarded(None)
    async def broken_async(*_):
        raise KeyError("boom")

    assert broken() == []
    assert asyncio.run(broken_async()) is None
    assert "broken failed" in caplog.text and "broken_async failed" in caplog.text


def test_whole_document_requests_stop_when_the_document_changes():
    from affine_lsp.ide.analysis import DocumentAnalysis
    from affine_lsp.server.methods import CONTENT_MODIFIED
    from affine_lsp.server.server import AffineLanguageServer

    server = AffineLanguageServer()
    analysis = DocumentAnalysis.from_text(SMALL)

    def parts():
        for index in range(5):
            time.sleep(0.003)  # longer than a slice: the loop gets a turn after each
            if index == 1:
                analysis.edit_count += 1  # as an edit arriving in that turn would
            yield index

    async def consume():
        return [part async for part in server.sliced(parts(), analysis)]

    with pytest.raises(JsonRpcException) as raised:
        asyncio.run(consume())
    assert raised.value.code == CONTENT_MODIFIED
