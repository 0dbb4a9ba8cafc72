"""The SVG writer: well-formed, self-contained, one circle per drawn point and one
`dep` element per arrow, and every assumption written on the picture."""

from __future__ import annotations

import re

import pytest

from affine_lsp.ide.picture import FULL, SMALL, render_svg
from affine_lsp.poly.budgets import PictureLimits
from tests.draw.helpers import space_of
from tests.draw.svg import NS, read_svg

CASES = [
    ("stencil", {}),
    ("triangle", {"n": 7}),
    ("reduction", {}),
    ("elementwise", {}),
    ("steps", {}),
    ("guarded", {}),
    ("cube", {}),
    ("parallel", {}),
    ("band", {}),
    ("imperfect", {}),
    ("folded", {}),
    ("large", {}),
    ("opaque", {}),
]


@pytest.mark.parametrize("style", [FULL, SMALL], ids=["full", "small"])
@pytest.mark.parametrize("function, values", CASES)
def test_one_circle_per_point_and_one_dep_per_arrow(function, values, style):
    space = space_of(function, values)
    svg = render_svg(space, style, title=f"@{function}")
    picture = read_svg(svg)
    assert len(picture.circles) == len(space.points)
    assert len(picture.arrows) == len(space.arrows)
    for kind in ("RAW", "WAR", "WAW"):
        assert len(picture.arrows_of(kind)) == sum(a.kind == kind for a in space.arrows)
    assert picture.circles_in("points then") == len(space.then_points)
    assert picture.circles_in("points else") == len(space.else_points)
    width, height = float(picture.root.attrib["width"]), float(picture.root.attrib["height"])
    for circle in picture.circles:
        # Inside the picture (the plot is translated by its group).
        x, y = float(circle.attrib["cx"]), float(circle.attrib["cy"])
        assert 0 < x < width and 0 < y < height


@pytest.mark.parametrize("function, values", CASES)
def test_self_contained_without_script(function, values):
    svg = render_svg(space_of(function, values), FULL, title="t")
    root = read_svg(svg).root
    tags = {element.tag.removeprefix(NS) for element in root.iter()}
    assert "script" not in tags and "foreignObject" not in tags and "image" not in tags
    assert not re.search(r"\bon[a-z]+=", svg)  # no event handlers
    assert "href" not in svg and "http://" not in svg.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    # Only references to its own markers.
    assert set(re.findall(r"url\(([^)]*)\)", svg)) <= {"#head-RAW", "#head-WAR", "#head-WAW"}


def test_legend_names_kinds_and_distance_vectors():
    picture = read_svg(render_svg(space_of("stencil"), FULL, title="stencil"))
    text = picture.text()
    assert "RAW (read after write) on %A: (0, 1) ×72, (1, 0) ×72" in text
    assert "81 points" in text
    assert "domain: { [i, j] : 0 < i <= 9 and 0 < j <= 9 }" in text
    assert "%i →" in text and "%j ↑" in text
    assert "stencil" in text


def test_reduction_legend_has_every_kind_and_the_nearest_note():
    text = read_svg(render_svg(space_of("reduction"), FULL)).text()
    for kind in ("RAW", "WAR", "WAW"):
        assert f"{kind} (" in text and "on %s: (1) ×5" in text
    assert "each arrow goes to the first later point of its dependence" in text


def test_no_dependences_is_said():
    text = read_svg(render_svg(space_of("elementwise"), FULL)).text()
    assert "no loop-carried dependences" in text


def test_assumed_and_given_symbols_are_written():
    assumed = read_svg(render_svg(space_of("triangle"), FULL)).text()
    assert "%n = 8 (give --param n=VALUE)" in assumed
    given = read_svg(render_svg(space_of("triangle", {"n": 5}), FULL)).text()
    assert "symbols: %n = 5" in given and "--param" not in given
    small = read_svg(render_svg(space_of("triangle"), SMALL)).text()
    assert "%n = 8 (assumed)" in small


def test_sampling_is_stated():
    text = read_svg(render_svg(space_of("large"), FULL)).text()
    assert "2,500 of 10,000 points drawn (sampled: every 2nd value of %i, %j)" in text


def test_thinned_arrows_are_stated():
    space = space_of("stencil", limits=PictureLimits(points=4096, panels=64, arrows=40))
    picture = read_svg(render_svg(space, FULL))
    assert len(picture.arrows) == 40
    assert "40 of 144 arrows drawn: those from every 2nd drawn point along each axis" in (
        picture.text()
    )
    # The legend still counts every arrow.
    assert "(0, 1) ×72, (1, 0) ×72" in picture.text()


def test_folded_loops_unavailable_dependences_and_marks_are_stated():
    folded = read_svg(render_svg(space_of("folded"), FULL, line_of=lambda op: 7)).text()
    assert "inner loops folded onto each point: %j (line 7), %k (line 7)" in folded
    opaque = read_svg(render_svg(space_of("opaque"), FULL)).text()
    assert "dependences not drawn: 'func.call' may access memory" in opaque
    guarded = read_svg(render_svg(space_of("guarded"), FULL)).text()
    assert "then region of affine.if runs" in guarded and "else region of affine.if runs" in guarded


def test_panels_for_three_dimensions():
    picture = read_svg(render_svg(space_of("cube"), FULL))
    for value in range(4):
        assert f"%i = {value}" in picture.texts
    assert "in each panel: %j → across, %k ↑ up" in picture.text()


def test_empty_domain():
    space = space_of("triangle", {"n": 0})
    picture = read_svg(render_svg(space, FULL))
    assert picture.circles == [] and picture.arrows == []
    assert "the domain is empty for these values" in picture.text()


def test_one_dimension_wraps_long_rows():
    text = """
func.func @row(%A: memref<200xf32>) {
  affine.for %i = 0 to 150 {
    %v = affine.load %A[%i] : memref<200xf32>
    affine.store %v, %A[%i + 1] : memref<200xf32>
  }
  return
}
"""
    space = space_of("row", text=text)
    picture = read_svg(render_svg(space, FULL))
    assert len(picture.circles) == 150 and len(picture.arrows) == 149
    rows = {circle.get("cy") for circle in picture.circles}
    assert len(rows) == 3  # 64 points a row
    assert {"%i = 0", "64", "128"} <= set(picture.texts)


def test_dependences_between_undrawn_points_are_said():
    from tests.draw.test_space import ODD_ROWS

    text = read_svg(render_svg(space_of("odd", text=ODD_ROWS), FULL)).text()
    assert "no loop-carried dependences" not in text
    assert "RAW: no arrow starts at a drawn point" in text
    assert "RAW (read after write) on %B: (1, 0) ×4900" in text
