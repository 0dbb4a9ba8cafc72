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

import base64
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
from affine_lsp.ide import code_actions, panel
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.extracts import extract_of
from affine_lsp.ide.hover import hover, iteration_domain
from affine_lsp.ide.planning import Planning, refactoring_named, resolve_at
from affine_lsp.ide.settings import Settings
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.edits import apply_edits
from affine_lsp.transforms.loops.actions import LoopOptions

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
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCREENSHOTS = Path(os.environ.get("AFFINE_LSP_SCREENSHOTS", ROOT / "build" / "vscode-e2e"))
NESTS = "producer_consumer.mlir"
MISTAKES = "mistakes.mlir"
WAVEFRONT = "wavefront.mlir"
FIRST_NEST_LINE = 9  # `affine.for %i` of the producer nest in examples/producer_consumer.mlir
STEP_ZERO = (18, 32)  # the `0` of `step 0` in examples/mistakes.mlir, which has a quick fix
WAVE_LINE = 7  # `affine.for %i = 1 to 11 {` in examples/wavefront.mlir
ROWS = FIXTURES / "rows.mlir"  # two nests: 8×6 points (tiling and interchange legal), then 12
ROWS_NEST, ROWS_INNER, ROWS_SECOND = 4, 5, 10  # lines of `%i`, `%j` and `%k` in rows.mlir
KINDS = FIXTURES / "kinds.mlir"  # one nest with RAW and WAR dependences
KINDS_NEST, KINDS_INNER = 5, 6  # lines of `%i` and `%j` in kinds.mlir
SKEW_AND_TILE = "Skew %j by 1 and tile 4×4"
TILE_SIZES = (4,)
# The editor's settings, and what the project's own layers are asked with.
SETTINGS = {"affineLsp.transforms.tileSizes": list(TILE_SIZES)}
LOOP_OPTIONS = LoopOptions(tile_sizes=TILE_SIZES)
# Bounds a hang only (milliseconds); a loaded machine answers well within them.
UI_TIMEOUT_MS = 90_000
HOVER_ATTEMPT_MS = 10_000


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
        """Quick Open (Ctrl+P) and wait until the editor shows the file. On a loaded
        machine the list may still be filtering when the row is chosen, so the file
        is chosen by clicking its row, and Quick Open is tried again if no tab opens."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        page = self.page
        row = f'.quick-input-list .monaco-list-row[aria-label*="{name}"]'
        tab = f'.tabs-container .tab.active[aria-label*="{name}"]'
        for attempt in range(3):
            page.keyboard.press("Escape")
            page.keyboard.press("Control+P")
            page.wait_for_selector(
                ".quick-input-widget input", state="visible", timeout=UI_TIMEOUT_MS
            )
            page.keyboard.type(name)
            page.wait_for_selector(row, timeout=UI_TIMEOUT_MS)
            page.click(row)
            try:
                page.wait_for_selector(tab, timeout=UI_TIMEOUT_MS if attempt == 2 else 20_000)
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    raise
        page.wait_for_selector(".monaco-editor .view-lines", timeout=UI_TIMEOUT_MS)
        page.click(".monaco-editor .view-lines")

    def go_to_line(self, line: int, column: int = 1) -> None:
        page = self.page
        page.keyboard.press("Control+G")
        page.wait_for_selector(".quick-input-widget input", state="visible", timeout=UI_TIMEOUT_MS)
        page.keyboard.type(f"{line}:{column}")
        page.keyboard.press("Enter")
        page.wait_for_selector(".quick-input-widget", state="hidden", timeout=UI_TIMEOUT_MS)

    def run_command(self, title: str) -> None:
        """Runs a command from the palette (F1) by its title."""
        page = self.page
        page.keyboard.press("Escape")
        page.keyboard.press("F1")
        page.wait_for_selector(".quick-input-widget input", state="visible", timeout=UI_TIMEOUT_MS)
        page.keyboard.type(title)
        page.wait_for_selector(
            f'.quick-input-list .monaco-list-row[aria-label*="{title}"]', timeout=UI_TIMEOUT_MS
        )
        page.keyboard.press("Enter")
        page.wait_for_selector(".quick-input-widget", state="hidden", timeout=UI_TIMEOUT_MS)

    def panel_frame(self):
        """The frame of the Iteration Space webview (VS Code nests it in two iframes)."""
        page = self.page
        found = None

        def search() -> bool:
            nonlocal found
            for frame in page.frames:
                try:
                    if frame.evaluate("() => !!document.querySelector('main#root')"):
                        found = frame
                        return True
                except Exception:  # a frame navigating or gone
                    continue
            return False

        for _ in range(UI_TIMEOUT_MS // 250):
            if search():
                return found
            page.wait_for_timeout(250)
        raise AssertionError("the Iteration Space webview did not appear")

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
    for name in (NESTS, MISTAKES, WAVEFRONT):
        shutil.copy(EXAMPLES / name, folder / name)
    shutil.copy(EXAMPLES / NESTS, folder / "fuse_me.mlir")
    shutil.copy(EXAMPLES / WAVEFRONT, folder / "typed_in.mlir")
    shutil.copy(EXAMPLES / WAVEFRONT, folder / "skewed_and_tiled.mlir")
    shutil.copy(ROWS, folder / "follow_me.mlir")
    shutil.copy(ROWS, folder / "tile_me.mlir")
    shutil.copy(KINDS, folder / "toggle_me.mlir")
    server = CodeServer(code_server_entry, home, SETTINGS)
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


def expected_refactorings(path: Path, line: int, disabled: bool = False) -> list[str]:
    """The titles of the enabled refactorings the ide layer offers at `line` (and of the
    disabled ones too, if `disabled`)."""
    text = path.read_text()
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    offset = _offset_of_line(text, line)
    found = code_actions.code_actions(
        analysis, offset, offset, only=["refactor"], loop_options=LOOP_OPTIONS
    )
    return [
        a.title
        for a in found
        if a.kind != code_actions.QUICKFIX and (disabled or not a.disabled_reason)
    ]


def expected_hover_picture(path: Path, line: int) -> str:
    """The `data:` URI of the picture in the hover of the loop on `line`."""
    text = path.read_text()
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    found = hover(analysis, _offset_of_line(text, line) + 2, pictures=True)
    assert found is not None
    [uri] = re.findall(r"\((data:image/svg\+xml;base64,[A-Za-z0-9+/=]+)", found.markdown)
    return uri


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


def _menu_with(workbench: Workbench, title: str) -> list[str]:
    """Open the code-action menu (Ctrl+.) until it lists `title`: VS Code shows the
    menu as soon as one provider answers, and the server's answer may come later
    while it warms up after a start (a person presses Ctrl+. again); its rows."""
    page = workbench.page
    rows: list[str] = []
    for _attempt in range(UI_TIMEOUT_MS // HOVER_ATTEMPT_MS):
        page.keyboard.press("Control+.")
        page.wait_for_selector(".action-widget .monaco-list-row", timeout=UI_TIMEOUT_MS)
        try:
            page.wait_for_function(
                "(title) => [...document.querySelectorAll('.action-widget .monaco-list-row')]"
                ".some((row) => row.innerText.includes(title))",
                arg=title,
                timeout=HOVER_ATTEMPT_MS,
            )
        except Exception:  # (playwright's timeout: not listed yet)
            page.keyboard.press("Escape")
            continue
        rows = page.locator(".action-widget .monaco-list-row").all_inner_texts()
        return rows
    raise AssertionError(f"{title!r} never in the menu: {rows}")


def test_ctrl_dot_lists_fuse_and_every_refactoring_the_server_offers(workbench):
    titles = expected_refactorings(workbench.folder / NESTS, FIRST_NEST_LINE)
    assert any(title.startswith("Fuse") for title in titles), titles
    workbench.open_file(NESTS)
    workbench.go_to_line(FIRST_NEST_LINE, 3)
    page = workbench.page
    rows = _menu_with(workbench, titles[0])
    workbench.screenshot("code-actions")
    page.keyboard.press("Escape")
    shown = [" ".join(row.split()) for row in rows]
    for title in titles:
        assert any(title in row for row in shown), f"{title!r} not in the menu: {shown}"


def _hover_until_it_shows(page, box: dict, text: str) -> None:
    """Rest the mouse on `box` until a hover holding `text` shows. VS Code asks once
    per rest: a hover asked before the server has started answers nothing, so the
    mouse leaves and comes back (up to the UI timeout)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _attempt in range(UI_TIMEOUT_MS // HOVER_ATTEMPT_MS):
        page.mouse.move(5, 5)
        page.mouse.move(box["x"], box["y"])
        try:
            page.wait_for_function(
                "(text) => [...document.querySelectorAll('.monaco-hover')]"
                ".some((element) => element.innerText.includes(text))",
                arg=text,
                timeout=HOVER_ATTEMPT_MS,
            )
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"no hover showing {text!r}")


def test_hover_on_a_loop_shows_its_iteration_domain_and_picture(workbench):
    domain = expected_domain(workbench.folder / NESTS, FIRST_NEST_LINE)
    picture = expected_hover_picture(workbench.folder / NESTS, FIRST_NEST_LINE)
    workbench.open_file(NESTS)
    page = workbench.page
    box = workbench.token_box(FIRST_NEST_LINE, "affine.for")
    _hover_until_it_shows(page, box, domain)
    hover = page.wait_for_selector(
        ".monaco-hover:not(.hidden) .hover-contents", state="visible", timeout=UI_TIMEOUT_MS
    )
    # The picture below the domain: the image the server sent, shown (decoded, laid out).
    page.wait_for_function(
        """(src) => [...document.querySelectorAll('.monaco-hover img')]
          .some((img) => img.src === src && img.complete && img.naturalWidth > 0
            && img.getBoundingClientRect().width > 0)""",
        arg=picture,
        timeout=UI_TIMEOUT_MS,
    )
    circles = base64.b64decode(picture.split(",", 1)[1]).decode().count("<circle ")
    assert circles == 1024  # 64×64 points, every 2nd value of each loop in a hover
    page.wait_for_timeout(500)  # the hover fades in (for the screenshot only)
    workbench.screenshot("hover")
    assert domain in hover.inner_text() or domain in page.inner_text(".monaco-hover")
    # The whole picture shows in the hover as it opens (its lower rows and axis were
    # once cut off by the hover's height), under headings that agree.
    shown = page.evaluate(
        """(src) => {
          const img = [...document.querySelectorAll('.monaco-hover img')]
            .find((found) => found.src === src);
          const hover = img.closest('.monaco-hover').getBoundingClientRect();
          const rect = img.getBoundingClientRect();
          return {top: rect.top - hover.top, bottom: hover.bottom - rect.bottom,
                  height: rect.height};
        }""",
        picture,
    )
    assert shown["top"] >= 0 and shown["bottom"] >= 0 and shown["height"] > 100, shown
    text = hover.inner_text()
    assert "Iteration domain of %i" in text and "Iteration domain of the whole nest" in text
    assert "domain of the nest" not in text
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
    _menu_with(workbench, title)
    workbench.choose_action(title)
    # The editor's text is what Save writes.
    page.keyboard.press("Control+S")
    page.wait_for_selector(
        f'.tabs-container .tab.active[aria-label*="{path.name}"]:not(.dirty)',
        timeout=UI_TIMEOUT_MS,
    )
    workbench.screenshot("fused")
    assert path.read_text() == expected


# -- the Iteration Space panel -------------------------------------------------------------

SHOW_ITERATION_SPACE = "Affine LSP: Show Iteration Space"

# What each picture of the panel holds, read from the webview's DOM: the pictures are
# `data:` images, decoded here, their circles (one per point), dependence arrows, tile
# outlines and rings (where moved points were) counted, and the moved points' circles.
PICTURES_JS = """(role) => [...document.querySelectorAll(`img.nest[data-role="${role}"]`)]
  .map((img) => {
    const svg = atob(img.src.split(',')[1]);
    const group = (name) =>
      (svg.match(new RegExp(`<g class="${name}">(.*?)<\\/g>`)) || ['', ''])[1];
    return {
      circles: (svg.match(/<circle /g) || []).length,
      arrows: (svg.match(/class="dep"/g) || []).length,
      tiles: (group('tile').match(/<rect /g) || []).length,
      rings: (group('ghost').match(/<rect /g) || []).length,
      moved: (group('points moved').match(/<circle /g) || []).length,
      stale: !!img.closest('.stale'),
      box: img.getBoundingClientRect().toJSON(),
      column: (img.closest('.side') || img).getBoundingClientRect().toJSON(),
    };
  })"""


def _analysis_at(text: str, line: int) -> tuple[DocumentAnalysis, int]:
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    return analysis, _offset_of_line(text, line)


def expected_panel_picture(text: str, line: int) -> panel.Picture:
    """The picture of the loop on `line`, as the server draws it for the panel."""
    picture, message = panel.loop_picture(*_analysis_at(text, line))
    assert picture is not None, message
    return picture


def expected_preview(text: str, line: int, title: str) -> panel.Preview:
    """The preview of `title` on `line`, as the server's planning worker computes it."""
    analysis, offset = _analysis_at(text, line)
    record = analysis.record_at(offset)
    assert record is not None
    settings = Settings(tile_sizes=TILE_SIZES)
    at = offset - record.start
    return Planning().preview(extract_of(analysis, record), "loops", at, at, title, settings)


def expected_refactored(text: str, line: int, title: str) -> str:
    analysis, offset = _analysis_at(text, line)
    settings = Settings(tile_sizes=TILE_SIZES)
    loops = refactoring_named("loops")
    edits, reason = resolve_at(analysis, loops, offset, offset, title, settings)
    assert edits, reason
    return apply_edits(text.encode(), edits).decode()


def _pictures(frame, role: str) -> list[dict]:
    return frame.evaluate(PICTURES_JS, role)


def _wait_for_pictures(frame, role: str, circles: int) -> list[dict]:
    """The pictures of `role` once the first has `circles` circles and is current."""
    frame.wait_for_function(
        f"(circles) => ({PICTURES_JS})({role!r}).some((p) => p.circles === circles && !p.stale)",
        arg=circles,
        timeout=UI_TIMEOUT_MS,
    )
    return _pictures(frame, role)


def _open_panel_at(workbench: Workbench, name: str, line: int):
    workbench.open_file(name)
    workbench.go_to_line(line, 3)
    workbench.run_command(SHOW_ITERATION_SPACE)
    return workbench.panel_frame()


def _versions(frame, section: str) -> tuple[int | None, int | None]:
    """The file's version the panel follows and the one its `section` was drawn for."""
    found = frame.evaluate(
        """(section) => {
          const element = document.querySelector(`section.${section}`);
          const number = (name) => element && element.hasAttribute(name)
            ? Number(element.getAttribute(name)) : null;
          return [number('data-version'), number('data-drawn-for')];
        }""",
        section,
    )
    return found[0], found[1]


def _caption(frame, role: str) -> str:
    """The caption (the loop's header and line) above the first picture of `role`."""
    return frame.evaluate(
        """(role) => document.querySelector(`img.nest[data-role="${role}"]`)
          .closest('figure').querySelector('figcaption button').textContent""",
        role,
    )


def _wait_for_caption(frame, role: str, caption: str) -> None:
    frame.wait_for_function(
        """([role, caption]) => {
          const img = document.querySelector(`img.nest[data-role="${role}"]`);
          return !!img && !img.closest('.stale') &&
            img.closest('figure').querySelector('figcaption button').textContent === caption;
        }""",
        arg=[role, caption],
        timeout=UI_TIMEOUT_MS,
    )


def _enabled_previews(frame, count: int) -> list[str]:
    """The titles of the refactorings listed, once `count` of them can be previewed."""
    frame.wait_for_function(
        "(n) => document.querySelectorAll('button[data-command=\"preview\"]:not([disabled])')"
        ".length === n",
        arg=count,
        timeout=UI_TIMEOUT_MS,
    )
    return frame.locator('button[data-command="preview"]').all_inner_texts()


def test_the_panel_draws_the_loop_at_the_cursor(workbench):
    text = (workbench.folder / WAVEFRONT).read_text()
    expected = expected_panel_picture(text, WAVE_LINE)
    assert expected.points == expected.total == 100  # 1 <= i, j <= 10
    frame = _open_panel_at(workbench, WAVEFRONT, WAVE_LINE)
    [shown] = _wait_for_pictures(frame, "current", expected.points)
    assert shown["arrows"] == expected.arrows > 0
    assert _caption(frame, "current") == expected.caption
    assert expected.domain in frame.inner_text("main#root")
    version, drawn_for = _versions(frame, "current")
    assert version is not None and drawn_for == version
    listed = expected_refactorings(workbench.folder / WAVEFRONT, WAVE_LINE, disabled=True)
    assert SKEW_AND_TILE in listed
    assert _enabled_previews(frame, len(listed)) == listed
    workbench.screenshot("iteration-space")


# The `display` of each kind's groups (arrows, legend swatch) in the first current picture
# of `role`, decoded from its data: URL ('' where shown); null while none is current.
KIND_GROUPS_JS = """(role) => {
  const img = document.querySelector(`img.nest[data-role="${role}"]`);
  if (!img || img.closest('.stale')) return null;
  const svg = atob(img.src.split(',')[1]);
  const found = {};
  for (const match of svg.matchAll(/<g class="deps (\\w+)"[^>]*>/g)) {
    const display = /display="([^"]*)"/.exec(match[0]);
    (found[match[1]] = found[match[1]] || []).push(display ? display[1] : '');
  }
  return found;
}"""


def _kind_toggles(frame) -> dict[str, str]:
    """Each kind's toggle and whether it is pressed."""
    return frame.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('button[data-kind]')]
          .map((button) => [button.textContent, button.getAttribute('aria-pressed')]))"""
    )


def _wait_for_kind_groups(frame, role: str, groups: dict[str, list[str]]) -> None:
    frame.wait_for_function(
        f"""(groups) => JSON.stringify(({KIND_GROUPS_JS})({role!r})) === JSON.stringify(groups)""",
        arg=groups,
        timeout=UI_TIMEOUT_MS,
    )


def _focus_first_editor(workbench: Workbench) -> None:
    """Back to the editor on the left (a click in the webview leaves the panel's group
    active, where Quick Open would open files)."""
    group = workbench.page.locator(".part.editor .editor-group-container").first
    group.locator(".monaco-editor .view-lines").click()


def test_the_panel_toggles_the_kinds_of_dependence_drawn(workbench):
    name = "toggle_me.mlir"
    text = (workbench.folder / name).read_text()
    expected = expected_panel_picture(text, KINDS_NEST)
    assert expected.shown == ("RAW",)
    assert expected.dependences["RAW"] > 0 and expected.dependences["WAR"] > 0
    frame = _open_panel_at(workbench, name, KINDS_NEST)
    [shown] = _wait_for_pictures(frame, "current", expected.points)
    assert shown["arrows"] == expected.arrows  # every kind's arrows are in the picture
    assert _kind_toggles(frame) == {"RAW": "true", "WAR": "false", "WAW": "false"}
    # RAW's arrows and legend swatch show; WAR's are hidden.
    _wait_for_kind_groups(frame, "current", {"RAW": ["", ""], "WAR": ["none", "none"]})
    frame.click('button[data-kind="WAR"]')
    _wait_for_kind_groups(frame, "current", {"RAW": ["", ""], "WAR": ["", ""]})
    assert _kind_toggles(frame) == {"RAW": "true", "WAR": "true", "WAW": "false"}
    frame.click('button[data-kind="RAW"]')
    _wait_for_kind_groups(frame, "current", {"RAW": ["none", "none"], "WAR": ["", ""]})
    workbench.screenshot("dependence-kinds")
    # The choice stays while the panel redraws for another line.
    inner = expected_panel_picture(text, KINDS_INNER)
    _focus_first_editor(workbench)
    workbench.open_file(name)
    workbench.go_to_line(KINDS_INNER, 5)
    _wait_for_caption(frame, "current", inner.caption)
    _wait_for_kind_groups(frame, "current", {"RAW": ["none", "none"], "WAR": ["", ""]})
    assert _kind_toggles(frame) == {"RAW": "false", "WAR": "true", "WAW": "false"}
    # Back to the default for the tests that follow.
    frame.click('button[data-kind="RAW"]')
    frame.click('button[data-kind="WAR"]')
    _wait_for_kind_groups(frame, "current", {"RAW": ["", ""], "WAR": ["none", "none"]})
    _focus_first_editor(workbench)


def test_the_panel_follows_the_cursor_to_another_loop(workbench):
    name = "follow_me.mlir"
    text = (workbench.folder / name).read_text()
    first = expected_panel_picture(text, ROWS_NEST)
    second = expected_panel_picture(text, ROWS_SECOND)
    inner = expected_panel_picture(text, ROWS_INNER)
    assert (first.points, second.points, inner.points) == (48, 12, 48)
    frame = _open_panel_at(workbench, name, ROWS_NEST)
    [shown] = _wait_for_pictures(frame, "current", first.points)
    assert shown["arrows"] == first.arrows
    assert _caption(frame, "current") == first.caption
    # The cursor goes to the second nest: its picture, and its refactorings.
    workbench.go_to_line(ROWS_SECOND, 3)
    [shown] = _wait_for_pictures(frame, "current", second.points)
    assert shown["arrows"] == second.arrows
    assert _caption(frame, "current") == second.caption
    listed = expected_refactorings(workbench.folder / name, ROWS_SECOND, disabled=True)
    assert _enabled_previews(frame, len(listed)) == listed
    workbench.screenshot("iteration-space-followed")
    # The inner loop of the first nest: the nest is drawn again, named by the inner loop.
    workbench.go_to_line(ROWS_INNER, 5)
    _wait_for_caption(frame, "current", inner.caption)
    assert [p["circles"] for p in _pictures(frame, "current")] == [inner.points]


def test_the_panel_redraws_as_the_user_types(workbench):
    path = workbench.folder / "typed_in.mlir"
    text = path.read_text()
    before = expected_panel_picture(text, WAVE_LINE)
    typed = text.replace("affine.for %i = 1 to 11 {", "affine.for %i = 1 to 5 {", 1)
    after = expected_panel_picture(typed, WAVE_LINE)
    assert after.points == 40 != before.points
    frame = _open_panel_at(workbench, path.name, WAVE_LINE)
    _wait_for_pictures(frame, "current", before.points)
    version, drawn_for = _versions(frame, "current")
    assert version is not None and drawn_for == version
    # Select the `11` of the header and type 5 over it.
    header = text.split("\n")[WAVE_LINE - 1]
    column = header.index("11") + 1
    workbench.go_to_line(WAVE_LINE, column)
    page = workbench.page
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.type("5")
    [shown] = _wait_for_pictures(frame, "current", after.points)
    assert shown["arrows"] == after.arrows
    assert _caption(frame, "current") == after.caption
    assert after.domain in frame.inner_text("main#root")
    # Drawn for the new text, the one the editor has.
    typed_version, typed_drawn_for = _versions(frame, "current")
    assert typed_version is not None and typed_version > version
    assert typed_drawn_for == typed_version
    workbench.screenshot("iteration-space-typed")


def _preview(frame, title: str, after: panel.Picture) -> tuple[dict, dict]:
    """Previews `title` from the list; its pictures before and after, once drawn."""
    frame.click(f'button[data-command="preview"]:text-is("{title}")')
    frame.wait_for_function(
        "(title) => document.querySelector('section.preview h2')?.textContent === title",
        arg=title,
        timeout=UI_TIMEOUT_MS,
    )
    [shown_after] = _wait_for_pictures(frame, "after", after.points)
    [shown_before] = _pictures(frame, "before")
    # Side by side: the column after is to the right of the column before, at its height.
    left, right = shown_before["column"], shown_after["column"]
    assert right["x"] >= left["x"] + left["width"]
    assert right["y"] == left["y"]
    assert shown_after["box"]["x"] >= left["x"] + left["width"]
    version, drawn_for = _versions(frame, "current")
    assert _versions(frame, "preview")[1] == drawn_for == version
    # Scrolled to the preview's title for the screenshots (the list was clicked below it).
    frame.evaluate("() => document.querySelector('section.preview').scrollIntoView()")
    return shown_before, shown_after


def _apply_and_save(workbench: Workbench, frame, path: Path, expected: str) -> None:
    """Apply in the panel, then Save in the editor (VS Code saves a file a refactoring
    edits by itself, a moment later: Save makes sure), and wait until the file holds
    `expected`, or its text when it does not after the UI timeout."""
    version, _ = _versions(frame, "current")
    frame.click('button[data-command="apply"]')
    # Applied: the preview goes, and the panel follows the new text (a newer version).
    frame.wait_for_function(
        """(version) => {
          const current = document.querySelector('section.current');
          return !document.querySelector('section.preview') && !!current
            && Number(current.getAttribute('data-version')) > version;
        }""",
        arg=version,
        timeout=UI_TIMEOUT_MS,
    )
    page = workbench.page
    page.click(f'.tabs-container .tab[aria-label*="{path.name}"]')
    page.wait_for_selector(
        f'.tabs-container .tab.active[aria-label*="{path.name}"]', timeout=UI_TIMEOUT_MS
    )
    page.click(".monaco-editor .view-lines")
    page.keyboard.press("Control+S")
    page.wait_for_selector(
        f'.tabs-container .tab.active[aria-label*="{path.name}"]:not(.dirty)',
        timeout=UI_TIMEOUT_MS,
    )
    for _ in range(UI_TIMEOUT_MS // 250):
        if path.read_text() == expected:
            return
        page.wait_for_timeout(250)
    assert path.read_text() == expected


def test_the_panel_previews_skew_and_tile_side_by_side_and_applies_it(workbench):
    path = workbench.folder / "skewed_and_tiled.mlir"
    text = path.read_text()
    expected = expected_preview(text, WAVE_LINE, SKEW_AND_TILE)
    assert expected.reason is None, expected.reason
    [before], [after] = expected.before, expected.after
    assert (before.points, after.points, after.tiles, after.moved) == (100, 100, 12, 100)
    frame = _open_panel_at(workbench, path.name, WAVE_LINE)
    _enabled_previews(frame, len(expected_refactorings(path, WAVE_LINE, disabled=True)))
    shown_before, shown_after = _preview(frame, SKEW_AND_TILE, after)
    assert (shown_before["circles"], shown_before["arrows"]) == (before.points, before.arrows)
    assert (shown_before["tiles"], shown_before["moved"]) == (0, 0)
    assert shown_after["arrows"] == after.arrows
    # Tiles outlined, and the skewed points moved, with a ring where each was.
    assert shown_after["tiles"] == after.tiles
    assert shown_after["moved"] == shown_after["rings"] == after.moved
    workbench.screenshot("iteration-space-preview")
    # What the code action's resolve computes (the CLI has no skew-and-tile in one step).
    _apply_and_save(workbench, frame, path, expected_refactored(text, WAVE_LINE, SKEW_AND_TILE))


def cli_transform(path: Path, line: int, *how: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "affine_lsp", "transform", str(path), "--line", str(line), *how],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_panel_previews_interchange_and_tiling_and_applies_as_the_cli(workbench):
    path = workbench.folder / "tile_me.mlir"
    text = path.read_text()
    tiled = cli_transform(path, ROWS_NEST, "--tile", ",".join(map(str, TILE_SIZES * 2)))
    assert tiled != text
    interchange = expected_preview(text, ROWS_NEST, "Interchange %i and %j")
    tile = expected_preview(text, ROWS_NEST, "Tile 4×4")
    assert interchange.reason is None and tile.reason is None
    assert (interchange.after[0].moved, tile.after[0].tiles, tile.after[0].moved) == (43, 4, 0)
    frame = _open_panel_at(workbench, path.name, ROWS_NEST)
    _enabled_previews(frame, len(expected_refactorings(path, ROWS_NEST, disabled=True)))
    # Interchange: every point off the diagonal is drawn moved, with a ring where it was.
    _, shown = _preview(frame, "Interchange %i and %j", interchange.after[0])
    assert shown["moved"] == shown["rings"] == 43
    assert (shown["tiles"], shown["arrows"]) == (0, interchange.after[0].arrows)
    # Tiling: the points stay, four tiles are outlined.
    before, shown = _preview(frame, "Tile 4×4", tile.after[0])
    assert (before["circles"], shown["circles"]) == (48, 48)
    assert (shown["tiles"], shown["moved"], shown["rings"]) == (4, 0, 0)
    workbench.screenshot("iteration-space-tiling")
    _apply_and_save(workbench, frame, path, tiled)


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
