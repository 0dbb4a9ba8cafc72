"""Refactorings planned ahead (`server/planner.py`): a server in this process, its
planner's worker in a thread (one test uses the real worker process). Plans are
compared with the refactorings computed directly on the same text."""

from __future__ import annotations

import asyncio
import re
import threading

import pytest

import affine_lsp.server.planner as planner_module
from affine_lsp.ide import planning
from affine_lsp.ide.code_actions import REFACTORINGS, code_actions
from affine_lsp.ide.settings import Settings
from affine_lsp.server import create_server
from affine_lsp.syntax import ContentChange
from tests.ide.helpers import analysed, fixture_text

URI = "file:///planned.mlir"
FUSION = fixture_text("fusion.mlir")
TWO_FUNCTIONS = FUSION + "\n" + FUSION.replace("@scale_and_shift", "@again")
# Fusing the first two nests would change what the affine.store between them writes
# over: the reason names that store's line.
STORE_BETWEEN = """func.func @f(%A: memref<16xf32>, %B: memref<16xf32>, %C: memref<16xf32>) {
  affine.for %i = 0 to 16 {
    %x = affine.load %B[%i] : memref<16xf32>
    affine.store %x, %A[%i] : memref<16xf32>
  }
  %v = affine.load %C[5] : memref<16xf32>
  affine.store %v, %A[7] : memref<16xf32>
  affine.for %j = 0 to 16 {
    %y = affine.load %A[%j] : memref<16xf32>
    %q = affine.load %C[%j] : memref<16xf32>
    %s = arith.addf %y, %q : f32
    affine.store %s, %B[%j] : memref<16xf32>
  }
  return
}
"""


@pytest.fixture(autouse=True)
def _background_only_when_asked(monkeypatch):
    """Background planning starts when a test asks (`start_background`), never from
    the settle timer: on a busy machine the timer would fire in the middle of a test's
    requests and plan what the test counts."""
    monkeypatch.setattr(planner_module, "SETTLE_SECONDS", 3600.0)


class _Writer:
    def __init__(self) -> None:
        self.written = b""

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:
        pass

    def published_versions(self) -> list[int]:
        return [int(v) for v in re.findall(rb'"version": (\d+)', self.written)]


def _server(in_process: bool = True, **settings):
    server = create_server()
    server.affine_protocol.set_writer(_Writer(), include_headers=True)
    server.planner.in_process = in_process
    server.settings = Settings(**settings)
    return server


async def _open(server, text: str, version: int = 1):
    document = server.open(URI, text, version)
    await document.task
    return document


async def _edit(server, document, position, text: str, version: int):
    server.change(URI, version, [ContentChange(text, (position, position))])
    await document.task


def _loop_starts(text: str) -> list[int]:
    data = text.encode()
    return [m.start() for m in re.finditer(rb"affine\.for", data)]


def _direct(text: str, at: int) -> list[tuple]:
    """The refactorings at `at`, computed here and now (on the text with a comment at
    its end: fusion keeps the actions of a text it planned before, possibly resolved
    since, and these must be fresh)."""
    analysis = analysed(text + "// computed directly\n")
    return [
        (a.title, a.disabled_reason, a.preferred, _edits(a.edits))
        for a in code_actions(analysis, at, at, only=["refactor"])
    ]


def _edits(edits) -> tuple | None:
    if edits is None:
        return None
    return tuple(sorted((e.span.start_byte, e.span.end_byte, e.new_text) for e in edits))


async def _planned(server, document, at: int) -> list[tuple]:
    found = await server.planner.actions_at(document, at, at)
    return [
        (
            a.title,
            a.disabled_reason,
            a.preferred,
            _edits(a.text_edits(item_start)) if a.edits is not None else None,
        )
        for a, item_start, _ref in found
    ]


def _run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 120))


def test_planned_in_the_background_answered_without_planning_again():
    async def session():
        server = _server()
        document = await _open(server, TWO_FUNCTIONS)
        await server.planner.start_background()
        calls = server.planner.calls
        assert server.planner.planned_anchors >= 4 * 2
        for at in _loop_starts(TWO_FUNCTIONS):
            assert await _planned(server, document, at) == _direct(TWO_FUNCTIONS, at)
        assert server.planner.calls == calls  # every answer came from the plans
        server.planner.shutdown()

    _run(session())


def test_the_outermost_loops_of_every_function_are_planned_first():
    original = planning.Planning.plan
    order: list[int] = []

    def plan(self, extract, anchors, *rest):
        order.extend(relative for _, relative in anchors)
        return original(self, extract, anchors, *rest)

    async def session():
        server = _server()
        await _open(server, TWO_FUNCTIONS)
        await server.planner.start_background()
        server.planner.shutdown()

    planning.Planning.plan = plan  # type: ignore[method-assign]
    try:
        _run(session())
    finally:
        planning.Planning.plan = original  # type: ignore[method-assign]
    first = FUSION.index("func.func")
    outermost = [at - first for at in _loop_starts(FUSION) if FUSION[at - 3 : at] == "\n  "]
    refactorings = len(REFACTORINGS)
    at_every_loop = refactorings - 1  # "Optimize nest" is at outermost loops only
    assert len(order) == 4 * refactorings + 4 * at_every_loop and len(outermost) == 2
    # (the second function's offsets are shorter by the length of its shorter name)
    shift = len("@scale_and_shift") - len("@again")
    first_four = sorted(outermost + [r - shift for r in outermost]) * refactorings
    assert sorted(order[: 4 * refactorings]) == sorted(first_four)


def test_an_edit_elsewhere_keeps_the_plans():
    async def session():
        server = _server()
        document = await _open(server, TWO_FUNCTIONS)
        await server.planner.start_background()
        # A line above everything (every item moves) and a space in the first function.
        await _edit(server, document, (0, 0), "// a new first line\n", 2)
        await _edit(server, document, (10, 0), " ", 3)
        text = document.analysis.document.text
        calls = server.planner.calls
        second = [at for at in _loop_starts(text) if at > text.index("@again")]
        for at in second:
            assert await _planned(server, document, at) == _direct(text, at)
        assert server.planner.calls == calls
        first = _loop_starts(text)[0]
        assert await _planned(server, document, first) == _direct(text, first)
        assert server.planner.calls == calls + 1  # the edited function is planned again
        server.planner.shutdown()

    _run(session())


def test_a_plan_whose_words_name_a_line_is_made_again_when_its_function_moves():
    async def session():
        server = _server()
        document = await _open(server, STORE_BETWEEN)
        at = _loop_starts(STORE_BETWEEN)[0]
        before = await _planned(server, document, at)
        assert any("on line 7" in (reason or "") for _, reason, _, _ in before)
        await _edit(server, document, (0, 0), "\n\n", 2)
        text = document.analysis.document.text
        after = await _planned(server, document, at + 2)
        assert after == _direct(text, at + 2)
        assert any("on line 9" in (reason or "") for _, reason, _, _ in after)
        server.planner.shutdown()

    _run(session())


def test_a_newer_version_stops_the_background():
    async def session():
        server = _server()
        document = await _open(server, TWO_FUNCTIONS)
        task = server.planner.start_background()
        while server.planner.planned_anchors == 0:
            await asyncio.sleep(0.001)
        await _edit(server, document, (0, 0), " ", 2)
        assert task.cancelled() or task.done()
        planned = server.planner.planned_anchors
        await asyncio.sleep(0.05)  # (the settle timer is not running)
        assert server.planner.planned_anchors <= planned + 1  # at most the call under way
        server.planner.shutdown()

    _run(session())


def test_no_background_planning_when_switched_off():
    async def session():
        server = _server(plan_in_background=False)
        document = await _open(server, FUSION)
        assert server.planner.start_background() is None and server.planner.calls == 0
        at = _loop_starts(FUSION)[0]
        assert await _planned(server, document, at) == _direct(FUSION, at)  # asked: planned
        server.planner.shutdown()

    _run(session())


class _HeldPlanning:
    """`Planning.plan` recording the anchors of every call and holding the first call
    in the worker until `release` (set at the end of the test in any case)."""

    def __init__(self) -> None:
        self.held, self.release = threading.Event(), threading.Event()
        self.planned: list[planning.Anchor] = []

    def patch(self, original):
        def plan(planner, extract, anchors, *rest, **options):
            self.planned.extend(anchors)
            if not self.held.is_set():
                self.held.set()
                self.release.wait(60)
            return original(planner, extract, anchors, *rest, **options)

        return plan

    async def until_held(self) -> None:
        while not self.held.is_set():
            await asyncio.sleep(0.001)


@pytest.fixture
def held_planning(monkeypatch):
    held = _HeldPlanning()
    monkeypatch.setattr(planning.Planning, "plan", held.patch(planning.Planning.plan))
    yield held
    held.release.set()


def test_edits_are_analysed_while_the_worker_plans(held_planning):
    """Typing never waits for planning: with the worker held in the middle of a call,
    an edit is analysed and its diagnostics published."""

    async def session():
        server = _server(plan_in_background=False)
        document = await _open(server, FUSION)
        request = asyncio.ensure_future(_planned(server, document, _loop_starts(FUSION)[0]))
        await held_planning.until_held()
        await _edit(server, document, (0, 0), " ", 2)
        assert 2 in server.affine_protocol.writer.published_versions()
        assert not request.done()
        held_planning.release.set()
        await request  # (planned for version 1: the handler answers ContentModified)
        server.planner.shutdown()

    _run(session())


def test_a_request_waits_for_the_anchor_the_background_is_planning(held_planning):
    """A request at a loop whose anchor the worker is planning in the background
    takes that plan when it is done, and plans only the other anchors there; the
    background then skips what the request planned."""
    planned = held_planning.planned

    async def session():
        server = _server()
        document = await _open(server, FUSION)
        background = server.planner.start_background()
        await held_planning.until_held()
        name, relative = planned[0]
        at = FUSION.index("func.func") + relative
        request = asyncio.ensure_future(_planned(server, document, at))
        await asyncio.sleep(0.05)
        held_planning.release.set()
        assert await request == _direct(FUSION, at)
        assert planned.count((name, relative)) == 1
        await background
        assert len(planned) == len(set(planned))  # nor what the request planned meanwhile
        server.planner.shutdown()

    _run(session())


def test_a_failing_anchor_is_planned_once_and_the_rest_goes_on():
    original = planning.Planning.plan
    failing = _loop_starts(FUSION)[0]

    def plan(self, extract, anchors, *rest):
        if any(relative == failing - FUSION.index("func.func") for _, relative in anchors):
            raise RuntimeError("a bug in a refactoring")
        return original(self, extract, anchors, *rest)

    async def session():
        server = _server()
        document = await _open(server, TWO_FUNCTIONS)
        await server.planner.start_background()
        planned, calls = server.planner.planned_anchors, server.planner.calls
        assert planned >= 7  # all but the failing one
        assert await _planned(server, document, failing) == []  # (an empty plan)
        await server.planner.start_background()
        assert server.planner.calls == calls  # not tried again
        server.planner.shutdown()

    planning.Planning.plan = plan  # type: ignore[method-assign]
    try:
        _run(session())
    finally:
        planning.Planning.plan = original  # type: ignore[method-assign]


def test_resolving_a_planned_action_gives_the_fused_text():
    # A function of its own: resolving changes the actions fusion keeps for its text.
    text = FUSION.replace("@scale_and_shift", "@resolved")

    async def session():
        server = _server()
        document = await _open(server, text)
        at = _loop_starts(text)[0]
        found = await server.planner.actions_at(document, at, at)
        (fuse_all,) = [ref for action, _, ref in found if action.title.startswith("Fuse all")]
        edits, reason = await server.planner.resolve(document, fuse_all)
        assert reason is None
        direct = code_actions(analysed(text), at, at, only=["refactor"])
        expected = next(a for a in direct if a.title.startswith("Fuse all")).resolve()
        assert _edits(edits) == _edits(expected)
        server.planner.shutdown()

    _run(session())


def test_the_worker_process_plans_and_comes_back_after_dying():
    async def session():
        server = _server(in_process=False)
        document = await _open(server, FUSION)
        at = _loop_starts(FUSION)[0]
        assert await _planned(server, document, at) == _direct(FUSION, at)
        worker = server.planner._worker
        worker._process.kill()
        while server.planner._worker is worker:
            await asyncio.sleep(0.01)
        second = _loop_starts(FUSION)[1]
        assert await _planned(server, document, second) == _direct(FUSION, second)
        server.planner.shutdown()

    _run(session())
