"""Pictures that do not mislead: a sampled space shows the dependences of every
panel drawn, with arrows between drawn points (a dependence shorter than the
sampling step included); thinning keeps every panel's arrows; arrows are drawn for
the kinds asked for (RAW by default in the tools), the others listed; arrowheads
stay legible on small cells."""

from __future__ import annotations

import base64
import re

from affine_lsp.ide.hover import hover
from affine_lsp.ide.picture import FULL, render_svg
from affine_lsp.poly.budgets import DRAW_LIMITS, PictureLimits
from affine_lsp.poly.session import Unknown
from affine_lsp.poly.space import iteration_space
from tests.draw.helpers import model_of, outer_loop, space_of
from tests.draw.svg import read_svg
from tests.ide.helpers import analysed

MATMUL = """func.func @matmul(%A: memref<64x64xf32>, %B: memref<64x64xf32>, %C: memref<64x64xf32>) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 64 {
      affine.for %k = 0 to 64 {
        %a = affine.load %A[%i, %k] : memref<64x64xf32>
        %b = affine.load %B[%k, %j] : memref<64x64xf32>
        %c = affine.load %C[%i, %j] : memref<64x64xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %C[%i, %j] : memref<64x64xf32>
      }
    }
  }
  return
}
"""


def _matmul(limits: PictureLimits = DRAW_LIMITS, size: int = 64):
    text = MATMUL.replace("64", str(size))
    return space_of("matmul", limits=limits, text=text)


def test_a_sampled_space_draws_every_panels_dependences_between_drawn_points():
    space = _matmul()
    assert space.sampled and space.strides == (4, 4, 4)
    panels = {point[:-2] for point in space.points}
    assert len(panels) == 16
    raw = [a for a in space.arrows if a.kind == "RAW"]
    assert {a.source[:-2] for a in raw} == panels
    drawn = set(space.points)
    assert all(a.source in drawn and a.target in drawn for a in space.arrows)
    # The dependence is one step of %k, shorter than the sampling step: the arrow
    # joins the next drawn point in its direction, and the exact distance is listed.
    assert {a.distance for a in raw} == {(0, 0, 4)}
    assert space.snapped
    assert space.distances[("RAW", "%C")] == {(0, 0, 1): 64 * 64 * 63}
    text = read_svg(render_svg(space, FULL)).text()
    assert "4,096 of 262,144 points drawn (sampled" in text
    assert "sampled: an arrow joins a drawn point to the next drawn point in the direction" in (
        " ".join(text.split())
    )


def test_thinning_keeps_the_arrows_of_every_panel():
    space = _matmul(PictureLimits(points=4096, panels=64, arrows=40), size=6)
    assert not space.sampled and space.arrow_stride > 1
    panels = {point[:-2] for point in space.points}
    assert {a.source[:-2] for a in space.arrows if a.kind == "RAW"} == panels
    text = " ".join(read_svg(render_svg(space, FULL)).text().split())
    assert "drawn point along %j, %k in every panel" in text


def test_arrows_of_the_kinds_asked_for_and_the_others_listed():
    model = model_of(MATMUL.replace("64", "5"))
    space = iteration_space(outer_loop(model, "matmul"), model, kinds=("WAW",))
    assert not isinstance(space, Unknown)
    assert {a.kind for a in space.arrows} == {"WAW"}
    assert set(space.distances) == {("RAW", "%C"), ("WAR", "%C"), ("WAW", "%C")}
    picture = read_svg(render_svg(space, FULL))
    assert picture.arrows_of("RAW") == [] and len(picture.arrows_of("WAW")) == 100
    text = " ".join(picture.text().split())
    assert "RAW (read after write) on %C: (0, 0, 1) ×100 (not drawn: give --dependences RAW)" in (
        text
    )


def test_arrowheads_and_strokes_are_legible_on_small_cells():
    svg = render_svg(_matmul(), FULL)
    heads = re.findall(r'<marker id="head-\w+"[^>]*markerWidth="([\d.]+)"[^>]*>', svg)
    assert heads and all(float(size) >= 4.5 for size in heads)  # (cells of 10 px)
    assert 'markerUnits="userSpaceOnUse"' in svg
    widths = re.findall(r'<g class="deps \w+" stroke="[^"]+" stroke-width="([\d.]+)"', svg)
    assert widths and all(float(width) >= 0.9 for width in widths)


def test_the_hover_draws_what_values_depend_on():
    """RAW only: matmul's WAR and WAW are in the picture's words, not its arrows."""
    text = MATMUL.replace("64", "6")
    analysis = analysed(text)
    offset = text.index("affine.for") + 1
    found = hover(analysis, offset, pictures=True)
    assert found is not None
    match = re.search(r"base64,([A-Za-z0-9+/=]+)[|)]", found.markdown)
    assert match is not None
    picture = read_svg(base64.b64decode(match.group(1)))
    assert picture.arrows and picture.arrows == picture.arrows_of("RAW")
