"""The extension in a real VS Code: code-server with the built .vsix, driven in
Debian's Chromium through Playwright, checked on what a person sees.

Needs Node.js/npm (code-server is installed into ~/.cache by
editors/vscode/scripts/install-code-server.sh), Chromium and the `playwright`
package; skipped with the reason when one is missing, unless CI asks for it
with AFFINE_LSP_REQUIRE_VSCODE_E2E=1. Screenshots go to build/vscode-e2e/
(or $AFFINE_LSP_SCREENSHOTS), never into the source tree. $AFFINE_LSP_VSIX names a
ready .vsix to test instead of building one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from affine_lsp.checks import Severity, check_document
from affine_lsp.ide import code_actions
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.hover import iteration_domain
from affine_lsp.syntax import SourceDocument

from .code_server import (
    REQUIRED_VARIABLE,
    STUB_DIAGNOSTIC_MARKER,
    CodeServer,
    Unavailable,
    build_llvm_mlir_stand_in,
    chromium,
    install_code_server,
)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
SCREENSHOTS = Path(os.environ.get("AFFINE_LSP_SCREENSHOTS", ROOT / "build" / "vscode-e2e"))
NESTS = "producer_consumer.mlir"
MISTAKES = "mistakes.mlir"
FIRST_NEST_LINE = 9  # `affine.for %i` of the producer nest in examples/producer_consumer.mlir
STEP_ZERO = (18, 32)  # the `0` of `step 0` in examples/mistakes.mlir, which has a quick fix
# Bounds a hang only (milliseconds); a loaded machine answers well within them.
UI_TIMEOUT_MS = 90_000


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRED_VARIABLE) == "1":
        pytest.fail(f"{REQUIRED_VARIABLE}=1 but {reason}")
    pytest.skip(reason)


@dataclass
class Workbench:
    """A VS Code window on a workspace folder."""

    page: Any  # a playwright Page (an optional dependency: left untyped)
    folder: Path

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path))
        return path

    def open_file(self, name: str) -> None:
        """Quick Open (Ctrl+P) and wait until the editor shows the file."""
        page = self.page
        page.keyboard.press("Escape")
        page.keyboard.press("Control+P")
        page.wait_for_selector(".quick-input-widget input", state="visible", timeout=UI_TIMEOUT_MS)
        page.keyboard.type(name)
        page.wait_for_selector(
            f'.quick-input-list .monaco-list-row[aria-label*="{name}"]', timeout=UI_TIMEOUT_MS
        )
        page.keyboard.press("Enter")
        page.wait_for_selector(
            f'.tabs-container .tab.active[aria-label*="{name}"]', timeout=UI_TIMEOUT_MS
        )
        page.wait_for_selector(".monaco-editor .view-lines", timeout=UI_TIMEOUT_MS)
        page.click(".monaco-editor .view-lines")

    def go_to_line(self, line: int, column: int = 1) -> None:
        page = self.page
        page.keyboard.press("Control+G")
        page.wait_for_selector(".quick-input-widget input", state="visible", timeout=UI_TIMEOUT_MS)
        page.keyboard.type(f"{line}:{column}")
        page.keyboard.press("Enter")
        page.wait_for_selector(".quick-input-widget", state="hidden", timeout=UI_TIMEOUT_MS)

    def choose_action(self, title: str) -> None:
        """Moves the open code-action menu's focus to `title` with the arrow keys, then Enter."""
        page = self.page
        rows = page.locator(".action-widget .monaco-list-row")
        for _ in range(rows.count() + 1):
            focused = page.get_attribute(".action-widget .monaco-list-row.focused", "aria-label")
            if focused == title:
                page.keyboard.press("Enter")
                page.wait_for_selector(".action-widget", state="hidden", timeout=UI_TIMEOUT_MS)
                return
            page.keyboard.press("ArrowDown")
        raise AssertionError(f"{title!r} is not in the menu: {rows.all_inner_texts()}")

    def line_tokens(self, line: int) -> list[list[str]]:
        """[text, colour] of the spans on 1-based `line`, as the editor renders them."""
        return self.page.evaluate(
            """(line) => {
              const number = [...document.querySelectorAll('.monaco-editor .line-numbers')]
                .find((element) => element.textContent.trim() === String(line));
              if (!number) return [];
              const top = number.getBoundingClientRect().top;
              const row = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')]
                .find((element) => Math.abs(element.getBoundingClientRect().top - top) < 2);
              return row ? [...row.querySelectorAll('span > span')]
                .map((e) => [e.textContent, getComputedStyle(e).color]) : [];
            }""",
            line,
        )

    def token_box(self, line: int, text: str) -> dict:
        """The on-screen box of the first token `text` on 1-based `line`."""
        box = self.page.evaluate(
            """([line, text]) => {
              const number = [...document.querySelectorAll('.monaco-editor .line-numbers')]
                .find((element) => element.textContent.trim() === String(line));
              if (!number) return null;
              const top = number.getBoundingClientRect().top;
              const row = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')]
                .find((element) => Math.abs(element.getBoundingClientRect().top - top) < 2);
              if (!row) return null;
              const span = [...row.querySelectorAll('span span')]
                .find((element) => element.textContent === text);
              if (!span) return null;
              const r = span.getBoundingClientRect();
              return {x: r.x + r.width / 2, y: r.y + r.height / 2};
            }""",
            [line, text],
        )
        assert box is not None, f"no token {text!r} on line {line} on screen"
        return box


@pytest.fixture(scope="module")
def vsix(request) -> Path:
    """The .vsix check.sh builds, or a ready one named by $AFFINE_LSP_VSIX."""
    if os.environ.get("AFFINE_LSP_VSIX"):
        return Path(os.environ["AFFINE_LSP_VSIX"])
    vscode_extension_build = request.getfixturevalue("vscode_extension_build")
    if not vscode_extension_build.ok:
        pytest.fail("the .vsix did not build:\n" + vscode_extension_build.output)
    return vscode_extension_build.vsix


@pytest.fixture(scope="module")
def code_server_entry() -> Path:
    try:
        chromium()
        entry = install_code_server()
    except Unavailable as missing:
        _unavailable(str(missing))
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("the playwright package is not installed (pip install playwright)")
    return entry


@pytest.fixture(scope="module")
def browser(code_server_entry) -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (one per module)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@contextmanager
def open_workbench(browser, server: CodeServer, folder: Path) -> Iterator[Workbench]:
    url = server.start(folder)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector(".monaco-workbench .part.editor", timeout=UI_TIMEOUT_MS)
        page.wait_for_selector("#status\\.problems", timeout=UI_TIMEOUT_MS)
        yield Workbench(page, folder)
    finally:
        context.close()


@pytest.fixture(scope="module")
def workbench(tmp_path_factory, code_server_entry, browser, vsix) -> Iterator[Workbench]:
    home = tmp_path_factory.mktemp("code-server")
    folder = home / "workspace"
    folder.mkdir()
    for name in (NESTS, MISTAKES):
        shutil.copy(EXAMPLES / name, folder / name)
    shutil.copy(EXAMPLES / NESTS, folder / "fuse_me.mlir")
    server = CodeServer(code_server_entry, home)
    server.install_extension(vsix)
    try:
        with open_workbench(browser, server, folder) as opened:
            yield opened
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def screenshot_on_failure(request) -> Iterator[None]:
    """A failed test leaves a picture of its window as it was (failed-<test>.png)."""
    yield
    report = getattr(request.node, "report_call", None)
    shown = request.node.funcargs.get("workbench")
    if report is not None and report.failed and shown is not None:
        shown.screenshot(f"failed-{request.node.name}")


# -- what the project itself says the editor should show ------------------------------


def _offset_of_line(text: str, line: int) -> int:
    """Byte offset of the first non-blank character of 1-based `line`."""
    lines = text.encode().split(b"\n")
    start = sum(len(row) + 1 for row in lines[: line - 1])
    return start + len(lines[line - 1]) - len(lines[line - 1].lstrip())


def expected_problem_counts(path: Path) -> tuple[int, int]:
    diagnostics = list(check_document(SourceDocument(path.read_text())))
    errors = sum(d.severity == Severity.ERROR for d in diagnostics)
    warnings = sum(d.severity == Severity.WARNING for d in diagnostics)
    return errors, warnings


def expected_refactorings(path: Path, line: int) -> list[str]:
    """The titles of the enabled refactorings the ide layer offers at `line`."""
    text = path.read_text()
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    offset = _offset_of_line(text, line)
    found = code_actions.code_actions(analysis, offset, offset, only=["refactor"])
    return [a.title for a in found if a.kind != code_actions.QUICKFIX and not a.disabled_reason]


def expected_domain(path: Path, line: int) -> str:
    text = path.read_text()
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    domain, message = iteration_domain(analysis, _offset_of_line(text, line))
    assert domain is not None, message
    return domain


def cli_fuse(path: Path, line: int, depth: int) -> str:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "affine_lsp",
            "fuse",
            str(path),
            "--line",
            str(line),
            "--depth",
            str(depth),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return result.stdout


# -- the tests --------------------------------------------------------------------------


def _status_counts(page) -> tuple[int, int]:
    """(errors, warnings) as the status bar's problems item shows them."""
    numbers = [int(n) for n in re.findall(r"\d+", page.inner_text("#status\\.problems"))]
    assert len(numbers) >= 2, f"unexpected problems item: {numbers}"
    return numbers[0], numbers[1]


def test_problems_count_of_a_file_with_several_errors(workbench):
    errors, warnings = expected_problem_counts(workbench.folder / MISTAKES)
    assert errors >= 3, "the example is meant to have several errors"
    workbench.open_file(MISTAKES)
    page = workbench.page
    page.wait_for_function(
        """([errors, warnings]) => {
          const item = document.querySelector('#status\\\\.problems');
          if (!item) return false;
          const numbers = (item.innerText.match(/\\d+/g) || []).map(Number);
          return numbers[0] === errors && numbers[1] === warnings;
        }""",
        arg=[errors, warnings],
        timeout=UI_TIMEOUT_MS,
    )
    workbench.screenshot("problems")
    assert _status_counts(page) == (errors, warnings)
    assert f"Errors: {errors}" in (page.get_attribute("#status\\.problems", "aria-label") or "")


def _wait_for_lightbulb(workbench: Workbench):
    return workbench.page.wait_for_selector(
        ".monaco-editor .lightBulbWidget.codicon", state="visible", timeout=UI_TIMEOUT_MS
    )


def test_lightbulb_appears_at_a_quick_fix_by_itself(workbench):
    """The control for the next test: the lightbulb as VS Code shows it for a fix."""
    line, column = STEP_ZERO
    workbench.open_file(MISTAKES)
    workbench.go_to_line(line, column)
    assert _wait_for_lightbulb(workbench).is_visible()


def test_lightbulb_appears_at_a_fusable_nest_by_itself(workbench):
    assert expected_refactorings(workbench.folder / NESTS, FIRST_NEST_LINE)
    workbench.open_file(NESTS)
    workbench.go_to_line(FIRST_NEST_LINE, 3)
    # Nothing is pressed: VS Code asks for code actions on its own when the cursor
    # rests, and the lightbulb shows when the answer has any.
    lightbulb = _wait_for_lightbulb(workbench)
    workbench.screenshot("lightbulb")
    assert lightbulb.is_visible()


def test_ctrl_dot_lists_fuse_and_every_refactoring_the_server_offers(workbench):
    titles = expected_refactorings(workbench.folder / NESTS, FIRST_NEST_LINE)
    assert any(title.startswith("Fuse") for title in titles), titles
    workbench.open_file(NESTS)
    workbench.go_to_line(FIRST_NEST_LINE, 3)
    page = workbench.page
    page.keyboard.press("Control+.")
    page.wait_for_selector(".action-widget .monaco-list-row", timeout=UI_TIMEOUT_MS)
    rows = page.locator(".action-widget .monaco-list-row").all_inner_texts()
    workbench.screenshot("code-actions")
    page.keyboard.press("Escape")
    shown = [" ".join(row.split()) for row in rows]
    for title in titles:
        assert any(title in row for row in shown), f"{title!r} not in the menu: {shown}"


def test_hover_on_a_loop_shows_its_iteration_domain(workbench):
    domain = expected_domain(workbench.folder / NESTS, FIRST_NEST_LINE)
    workbench.open_file(NESTS)
    page = workbench.page
    box = workbench.token_box(FIRST_NEST_LINE, "affine.for")
    page.mouse.move(box["x"], box["y"])
    hover = page.wait_for_selector(
        ".monaco-hover:not(.hidden) .hover-contents", state="visible", timeout=UI_TIMEOUT_MS
    )
    page.wait_for_function(
        "(domain) => [...document.querySelectorAll('.monaco-hover')]"
        ".some((element) => element.innerText.includes(domain))",
        arg=domain,
        timeout=UI_TIMEOUT_MS,
    )
    workbench.screenshot("hover")
    assert domain in hover.inner_text() or domain in page.inner_text(".monaco-hover")
    page.mouse.move(5, 5)


def test_choosing_fuse_changes_the_text_to_the_cli_result(workbench):
    path = workbench.folder / "fuse_me.mlir"
    original = path.read_text()
    titles = expected_refactorings(path, FIRST_NEST_LINE)
    title = next(t for t in titles if t.startswith("Fuse with the next loop nest"))
    found = re.search(r"depth (\d+)", title)
    assert found is not None, title
    depth = int(found.group(1))
    expected = cli_fuse(path, FIRST_NEST_LINE, depth)
    assert expected != original
    workbench.open_file(path.name)
    workbench.go_to_line(FIRST_NEST_LINE, 3)
    page = workbench.page
    page.keyboard.press("Control+.")
    page.wait_for_selector(".action-widget .monaco-list-row", timeout=UI_TIMEOUT_MS)
    workbench.choose_action(title)
    # The editor's text is what Save writes.
    page.keyboard.press("Control+S")
    page.wait_for_selector(
        f'.tabs-container .tab.active[aria-label*="{path.name}"]:not(.dirty)',
        timeout=UI_TIMEOUT_MS,
    )
    workbench.screenshot("fused")
    assert path.read_text() == expected


# -- beside LLVM's MLIR extension --------------------------------------------------------

NOTICE = "LLVM's MLIR extension is also active"


def test_beside_llvm_mlir_extension(tmp_path, code_server_entry, browser, vsix):
    """With a stand-in of LLVM's MLIR extension (same id, language and grammar scope,
    errors under the source `mlir`): its grammar is the one used whatever the install
    order, our errors on the lines it reports are left out, and the user is told once."""
    folder = tmp_path / "workspace"
    folder.mkdir()
    shutil.copy(EXAMPLES / MISTAKES, folder / MISTAKES)
    text = (folder / MISTAKES).read_text()
    marked = {n for n, row in enumerate(text.split("\n"), 1) if STUB_DIAGNOSTIC_MARKER in row}
    ours = [d for d in check_document(SourceDocument(text)) if d.severity == Severity.ERROR]
    ours_on_marked = [
        d for d in ours if text.encode()[: d.span.start_byte].count(b"\n") + 1 in marked
    ]
    assert len(ours_on_marked) >= 2, "the example must have several errors on a marked line"
    expected_errors = len(ours) - len(ours_on_marked) + len(marked)
    # Semantic highlighting off, so the colours are the TextMate grammar's alone.
    server = CodeServer(
        code_server_entry, tmp_path / "home", {"editor.semanticHighlighting.enabled": False}
    )
    server.install_extension(build_llvm_mlir_stand_in(tmp_path))
    server.install_extension(vsix)
    try:
        with open_workbench(browser, server, folder) as workbench:
            page = workbench.page
            workbench.open_file(MISTAKES)
            page.wait_for_function(
                """(errors) => {
                  const item = document.querySelector('#status\\\\.problems');
                  const numbers = ((item ? item.innerText : '').match(/\\d+/g) || []).map(Number);
                  return numbers[0] === errors;
                }""",
                arg=expected_errors,
                timeout=UI_TIMEOUT_MS,
            )
            page.wait_for_selector(
                f'.notification-list-item:has-text("{NOTICE}")', timeout=UI_TIMEOUT_MS
            )
            workbench.screenshot("beside-llvm-mlir")
            notices = page.locator(".notification-list-item", has_text=NOTICE).count()
            assert notices == 1
            assert "affineLsp.diagnostics.besideLlvmMlir" in page.inner_text(
                ".notification-list-item"
            )
            # The stand-in's grammar gives a whole line one scope, so one colour; ours
            # colours `func.func`, `@mistakes`, `%A` and the types differently.
            function_line = next(
                n for n, row in enumerate(text.split("\n"), 1) if "func.func" in row
            )
            tokens = workbench.line_tokens(function_line)
            assert tokens, "the function's line is not on screen"
            assert len({colour for _, colour in tokens}) == 1, tokens
            assert "func.func" not in [token for token, _ in tokens]
    finally:
        server.stop()
