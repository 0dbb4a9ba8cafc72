""" "Optimize nest" through a real server: offered with the other refactorings (its
edit left to codeAction/resolve), resolved on request; a cancelled resolution
leaves the server answering."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from affine_lsp.server import create_server
from tests.server.conftest import FIXTURES
from tests.server.helpers import open_fixture, open_text, position_of


async def _actions(client, uri: str, text: str):
    at = position_of(text, "affine.for", 0, 2)
    context = types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.RefactorRewrite])
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=at, end=at),
            context=context,
        )
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_offered_and_resolved(client):
    uri, _ = await open_fixture(client, "fusion.mlir")
    text = (FIXTURES / "fusion.mlir").read_text()
    actions = await _actions(client, uri, text)
    optimize = next(a for a in actions if a.title == "Optimize nest")
    assert optimize.edit is None and optimize.data and optimize.disabled is None
    resolved = await client.code_action_resolve_async(optimize)
    # What pays depends on the machine: an edit, or the reason there is none.
    assert resolved.edit is not None or resolved.disabled is not None


GEMM = """func.func @gemm(%A: memref<1000x1200xf64>, %B: memref<1200x1100xf64>,
                 %C: memref<1000x1100xf64>) {
  affine.for %i = 0 to 1000 {
    affine.for %k = 0 to 1200 {
      affine.for %j = 0 to 1100 {
        %a = affine.load %A[%i, %k] : memref<1000x1200xf64>
        %b = affine.load %B[%k, %j] : memref<1200x1100xf64>
        %c = affine.load %C[%i, %j] : memref<1000x1100xf64>
        %p = arith.mulf %a, %b : f64
        %q = arith.addf %c, %p : f64
        affine.store %q, %C[%i, %j] : memref<1000x1100xf64>
      }
    }
  }
  return
}
"""


@pytest.mark.asyncio(loop_scope="module")
async def test_resolved_under_work_done_progress(client):
    """Resolving takes seconds on a nest this size: the client shows it as progress
    titled with the action, begun and ended (the edit, or the reason, comes after)."""
    uri = (FIXTURES / "optimize-gemm.mlir").as_uri()
    await open_text(client, uri, GEMM)
    actions = await _actions(client, uri, GEMM)
    optimize = next(a for a in actions if a.title == "Optimize nest")
    assert optimize.edit is None and optimize.data
    resolved = await client.code_action_resolve_async(optimize)
    assert resolved.edit is not None or resolved.disabled is not None
    shown = []
    for values in client.progress_reports.values():
        kinds = [v.kind for v in values]
        if kinds and kinds[0] == "begin" and values[0].title == "Optimize nest":
            shown.append(kinds)
    assert shown and all(kinds[-1] == "end" for kinds in shown)


def test_a_cancelled_resolution_stops_the_worker_and_the_next_call_is_answered():
    """The request's task is cancelled ($/cancelRequest): the worker computing it is
    stopped (its late answer goes nowhere) and a new one answers the next call."""

    async def session():
        server = create_server()
        server.affine_protocol.set_writer(_Writer(), include_headers=True)
        document = server.open("file:///gemm.mlir", GEMM, 1)
        assert document.task is not None
        await document.task
        at = GEMM.index("affine.for")
        found = await server.planner.actions_at(document, at, at)
        (ref,) = [ref for action, _, ref in found if action.title == "Optimize nest"]
        first = server.planner.start_worker()
        task = asyncio.ensure_future(server.planner.resolve(document, ref))
        for _ in range(600):  # (until the worker computes it: the machine may be loaded)
            if server.planner.busy_with == "resolve":
                break
            await asyncio.sleep(0.1)
        assert server.planner.busy_with == "resolve" and not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        again = await asyncio.wait_for(server.planner.actions_at(document, at, at), 60)
        assert [a.title for a, _, _ in again] == [a.title for a, _, _ in found]
        assert server.planner.start_worker() is not first
        server.planner.shutdown()

    asyncio.run(session())


class _Writer:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


COLUMNS = """func.func @column_sums(%A: memref<512x512xf64>, %s: memref<512xf64>) {
  affine.for %i = 0 to 512 {
    affine.for %j = 0 to 512 {
      %a = affine.load %A[%j, %i] : memref<512x512xf64>
      %t = affine.load %s[%i] : memref<512xf64>
      %u = arith.addf %t, %a : f64
      affine.store %u, %s[%i] : memref<512xf64>
    }
  }
  return
}
"""


@pytest.mark.asyncio(loop_scope="module")
async def test_optimize_nest_is_the_quick_fix_of_a_performance_hint(client):
    uri = (FIXTURES / "optimize-hints.mlir").as_uri()
    diagnostics = await open_text(client, uri, COLUMNS)
    hints = [d for d in diagnostics if d.code == "performance"]
    assert hints and all(d.severity == types.DiagnosticSeverity.Hint for d in hints)
    context = types.CodeActionContext(diagnostics=hints, only=[types.CodeActionKind.QuickFix])
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=hints[0].range,
            context=context,
        )
    )
    (fix,) = [a for a in actions if a.title == "Optimize nest"]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert list(fix.diagnostics or ()) == hints and fix.data
