"""The picture in a loop hover: a base64 SVG image below the domain, the whole nest's
on the outermost loop, only for clients that show images (setting hover.pictures)."""

from __future__ import annotations

import base64
import re

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from affine_lsp.ide.hover import HOVER_PICTURE_HEIGHT, hover
from affine_lsp.ide.settings import Settings, hover_pictures, parse_settings
from affine_lsp.poly import budgets
from affine_lsp.poly.budgets import Budget
from tests.draw.helpers import NO_IVS, nests_text
from tests.draw.svg import read_svg
from tests.ide.helpers import analysed, offset_of
from tests.server.conftest import CONFIG, start
from tests.server.helpers import open_text, position_of

IMAGE = re.compile(
    r"!\[([^\]]*)\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\|width=(\d+),height=(\d+)\)"
)
TEXT = nests_text()


def _markdown(needle: str, occurrence: int = 0, pictures: bool = True, text: str = TEXT) -> str:
    analysis = analysed(text)
    found = hover(analysis, offset_of(analysis, needle, occurrence, 1), pictures=pictures)
    assert found is not None
    return found.markdown


def _image(markdown: str):
    match = IMAGE.search(markdown)
    assert match is not None, markdown
    picture = read_svg(base64.b64decode(match.group(2)))
    # The size in the link is the picture's.
    assert match.group(3) == picture.root.get("width")
    assert match.group(4) == picture.root.get("height")
    return match.group(1), picture


def _for_of(function: str, occurrence: int = 0) -> tuple[str, int]:
    start = TEXT.index(f"func.func @{function}(")
    return "affine.for", TEXT[:start].count("affine.for") + occurrence


def test_outermost_loop_shows_the_whole_nest_below_the_domain():
    needle, occurrence = _for_of("stencil")
    markdown = _markdown(needle, occurrence)
    assert markdown.index("**Iteration domain**") < markdown.index("![")
    whole = "**Iteration domain of the whole nest**: `{ [i, j] : 0 < i <= 9 and 0 < j <= 9 }`"
    assert markdown.index(whole) < markdown.index("![")
    alt, picture = _image(markdown)
    assert len(picture.circles) == 81
    assert 0 < len(picture.arrows) <= budgets.HOVER_PICTURE_LIMITS.arrows
    assert "81 points" in alt
    # Short and wide: VS Code's hovers are about 250 pixels high (and scroll); the
    # picture comes below three lines of text, and shows whole.
    assert float(picture.root.get("height")) <= HOVER_PICTURE_HEIGHT
    assert float(picture.root.get("width")) <= 600


def test_a_tall_picture_is_shown_smaller_whole():
    needle, occurrence = _for_of("large")
    _alt, picture = _image(_markdown(needle, occurrence))
    width, height = (float(picture.root.get(name)) for name in ("width", "height"))
    assert height == HOVER_PICTURE_HEIGHT
    _x, _y, box_width, box_height = (float(v) for v in picture.root.get("viewBox").split())
    assert box_height > height and abs(width / height - box_width / box_height) < 0.01


def test_innermost_loop_has_no_second_domain():
    needle, occurrence = _for_of("stencil", 1)
    markdown = _markdown(needle, occurrence)
    assert "of the whole nest" not in markdown
    assert len(_image(markdown)[1].circles) == 81


def test_symbols_are_assumed_in_the_picture():
    needle, occurrence = _for_of("triangle")
    _, picture = _image(_markdown(needle, occurrence))
    assert len(picture.circles) == 36
    assert "%n = 8 (assumed)" in picture.text()


def test_no_picture_without_pictures():
    needle, occurrence = _for_of("stencil")
    markdown = _markdown(needle, occurrence, pictures=False)
    assert "data:image" not in markdown and "Iteration space" not in markdown
    assert "**Iteration domain**" in markdown


def test_no_picture_on_induction_variables_or_accesses():
    assert "data:image" not in _markdown("%i", 0)
    assert "data:image" not in _markdown("affine.load", 0)


def test_picture_over_its_budget_leaves_the_text(monkeypatch):
    monkeypatch.setattr(budgets, "HOVER_PICTURE", Budget(max_operations=50, time_limit=None))
    needle, occurrence = _for_of("stencil")
    markdown = _markdown(needle, occurrence)
    assert "**Iteration domain**" in markdown
    assert "Picture unavailable: too complex to analyse" in markdown
    assert "data:image" not in markdown


def test_a_loop_without_induction_variables_has_its_text_and_no_picture():
    markdown = _markdown("affine.parallel", text=NO_IVS)
    assert "affine.parallel" in markdown and "![" not in markdown


def test_hover_pictures_setting():
    assert Settings().hover_pictures == "auto"
    assert hover_pictures("auto", "marked") and not hover_pictures("auto", None)
    assert hover_pictures("always", None) and not hover_pictures("never", "marked")
    settings, problems = parse_settings({"hover": {"pictures": "never"}})
    assert settings.hover_pictures == "never" and not problems
    settings, problems = parse_settings({"affineLsp.hover.pictures": True})
    assert settings.hover_pictures == "always" and not problems
    settings, problems = parse_settings({"hover.pictures": "sometimes"}, settings)
    assert settings.hover_pictures == "always" and "auto, always, never" in problems[0]


# -- through the server -------------------------------------------------------------------

URI = "file:///draw/nests.mlir"


@pytest_lsp.fixture(config=CONFIG)
async def server(lsp_client: LanguageClient):
    yield


async def _hover_markdown(client: LanguageClient) -> str:
    await open_text(client, URI, TEXT)
    needle, occurrence = _for_of("stencil")
    result = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            position=position_of(TEXT, needle, occurrence, 3),
        )
    )
    assert result is not None and isinstance(result.contents, types.MarkupContent)
    await client.shutdown_session()
    return result.contents.value


@pytest.mark.asyncio
async def test_server_sends_pictures_to_clients_that_render_marked_markdown(server):
    markdown = types.MarkdownClientCapabilities(parser="marked", version="1.1.0")
    await start(server, markdown=markdown)
    assert len(_image(await _hover_markdown(server))[1].circles) == 81


@pytest.mark.asyncio
async def test_server_sends_text_alone_to_other_clients(server):
    await start(server)
    markdown = await _hover_markdown(server)
    assert "**Iteration domain**" in markdown and "data:image" not in markdown


@pytest.mark.asyncio
async def test_setting_always_sends_pictures(server):
    await start(server, {"hover": {"pictures": "always"}})
    assert "data:image/svg+xml;base64," in await _hover_markdown(server)
