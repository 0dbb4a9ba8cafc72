"""The Iteration Space panel's data (`ide.panel`): the picture of the loop at a
position, and a refactoring's pictures before and after as the planning worker
computes them, on nests with known point, arrow, tile and moved-point counts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from affine_lsp.ide import panel
from affine_lsp.ide.extracts import extract_of
from affine_lsp.ide.planning import Planning
from affine_lsp.ide.settings import Settings
from affine_lsp.poly import IterationSpace, Point, group_tiles
from affine_lsp.poly.transformed import tile_dims
from tests.draw.svg import NS, read_svg
from tests.ide.helpers import analysed

ROOT = Path(__file__).resolve().parents[2]
WAVEFRONT = (ROOT / "examples" / "wavefront.mlir").read_text()
ROWS = (ROOT / "tests" / "editors" / "fixtures" / "rows.mlir").read_text()
SETTINGS = Settings(tile_sizes=(4,))


def _line_offset(text: str, line: int) -> int:
    """The offset of the first non-blank character of 1-based `line`."""
    start = sum(len(row.encode()) + 1 for row in text.split("\n")[: line - 1])
    row = text.split("\n")[line - 1]
    return start + len(row) - len(row.lstrip())


def _picture(text: str, line: int) -> panel.Picture:
    picture, message = panel.loop_picture(analysed(text), _line_offset(text, line))
    assert picture is not None, message
    assert message == picture.caption
    return picture


def _preview(text: str, line: int, title: str, refactoring: str = "loops") -> panel.Preview:
    analysis = analysed(text)
    offset = _line_offset(text, line)
    record = analysis.record_at(offset)
    assert record is not None
    at = offset - record.start
    return Planning().preview(extract_of(analysis, record), refactoring, at, at, title, SETTINGS)


def _group(svg: str, name: str, element: str) -> int:
    """`element`s inside the groups of class `name` of a picture."""
    root = read_svg(svg).root
    return sum(
        len(list(group.iter(f"{NS}{element}")))
        for group in root.iter(f"{NS}g")
        if group.get("class") == name
    )


def _counts(picture: panel.Picture) -> tuple[int, int, int, int]:
    return picture.points, picture.arrows, picture.tiles, picture.moved


def test_the_loop_at_the_cursor_is_drawn_with_its_counts_and_domain():
    picture = _picture(WAVEFRONT, 7)
    assert _counts(picture) == (100, 171, 0, 0)
    assert picture.total == 100
    assert picture.caption == "affine.for %i = 1 to 11 (line 7)"
    assert picture.line == 6
    assert picture.domain == "{ [i, j] : 0 < i <= 10 and 0 < j <= 10 }"
    drawn = read_svg(picture.svg)
    assert (len(drawn.circles), len(drawn.arrows)) == (100, 171)
    assert set(picture.as_json()) == {
        "svg",
        "caption",
        "domain",
        "line",
        "points",
        "total",
        "arrows",
        "tiles",
        "moved",
        "dependences",
        "shown",
    }
    # Every kind's arrows are in the picture, each kind a group a client may show or
    # hide; RAW shows, the others' groups are hidden.
    assert picture.shown == ("RAW",)
    assert sum(picture.dependences.values()) == picture.arrows
    for kind, count in picture.dependences.items():
        assert len(drawn.arrows_of(kind)) == count
        groups = [
            g for g in drawn.root.iter(f"{NS}g") if g.get("class", "").split() == ["deps", kind]
        ]
        assert all((g.get("display") == "none") == (kind != "RAW") for g in groups), kind


def test_each_kinds_legend_swatch_is_in_its_group_so_that_a_client_toggles_both():
    text = (ROOT / "tests" / "editors" / "fixtures" / "kinds.mlir").read_text()
    picture = _picture(text, 5)
    assert picture.dependences == {"RAW": 30, "WAR": 30, "WAW": 0}
    drawn = read_svg(picture.svg)
    for kind, hidden in (("RAW", None), ("WAR", "none")):
        groups = [g for g in drawn.root.iter(f"{NS}g") if g.get("class") == f"deps {kind}"]
        # The arrows' group and the legend's swatch, hidden alike.
        assert [g.get("display") for g in groups] == [hidden, hidden], kind
        assert [e.get("class") for e in groups[1]] == ["legend"]
    # The legend lists the hidden kind as the shown one (the client says which show).
    assert "WAR (write after read) on %A: (0, 1) ×30</text>" in picture.svg
    assert "not drawn" not in picture.svg


def test_the_loop_at_the_cursor_is_the_one_on_its_line_else_the_innermost_around():
    # The inner loop's header: the nest is drawn, named by the inner loop.
    inner = _picture(WAVEFRONT, 8)
    assert inner.caption == "affine.for %j = 1 to 11 (line 8)" and inner.points == 100
    # In the body: the innermost loop around.
    assert _picture(WAVEFRONT, 9).caption == inner.caption
    # Another nest of the file, and its own counts.
    second = _picture(ROWS, 10)
    assert second.caption == "affine.for %k = 1 to 13 (line 10)"
    assert _counts(second) == (12, 11, 0, 0)
    assert _counts(_picture(ROWS, 4)) == (48, 42, 0, 0)


def test_no_picture_outside_loops():
    analysis = analysed(ROWS)
    assert panel.loop_picture(analysis, _line_offset(ROWS, 3)) == (None, panel.NO_LOOP)
    assert panel.loop_picture(analysis, _line_offset(ROWS, 14)) == (None, panel.NO_LOOP)


def test_a_tiling_preview_outlines_the_tiles_and_moves_nothing():
    preview = _preview(ROWS, 4, "Tile 4×4")
    assert preview.reason is None and preview.notes == ()
    [before], [after] = preview.before, preview.after
    assert _counts(before) == (48, 42, 0, 0)
    assert _counts(after) == (48, 42, 4, 0)
    assert after.caption == "affine.for %i_tile = 1 to 9 step 4 (line 4)"
    assert len(read_svg(after.svg).circles) == 48
    assert _group(after.svg, "tile", "rect") == 4
    assert _group(after.svg, "ghost", "rect") == 0


def test_an_interchange_preview_moves_the_points_off_the_diagonal():
    preview = _preview(ROWS, 4, "Interchange %i and %j")
    [after] = preview.after
    # 1 <= i <= 8, 0 <= j <= 5: (i, j) stays where i == j, five points.
    assert _counts(after) == (48, 42, 0, 43)
    assert after.caption.startswith("affine.for %j = 0 to 6")
    assert _group(after.svg, "points moved", "circle") == 43
    assert _group(after.svg, "ghost", "rect") == 43


def test_skew_and_tile_moves_every_point_and_outlines_twelve_tiles():
    preview = _preview(WAVEFRONT, 7, "Skew %j by 1 and tile 4×4")
    assert preview.reason is None
    [before], [after] = preview.before, preview.after
    assert _counts(before) == (100, 171, 0, 0)
    assert _counts(after) == (100, 171, 12, 100)
    assert _group(after.svg, "tile", "rect") == 12
    assert _group(after.svg, "ghost", "rect") == 100


@pytest.mark.parametrize("title", ["Tile 4×4", "Interchange %i and %j"])
def test_a_refused_refactoring_is_drawn_before_only_with_the_reason(title):
    preview = _preview(WAVEFRONT, 7, title)
    [before] = preview.before
    assert before.points == 100
    assert preview.after == ()
    assert preview.reason is not None and "skew %j by 1 first" in preview.reason


def test_a_fusion_preview_draws_both_nests_before_and_the_fused_one_after():
    title = "Fuse with the next loop nest (depth 1, +0% compute)"
    preview = _preview(ROWS, 4, title, "fusion")
    assert preview.reason is None, preview.reason
    assert [p.points for p in preview.before] == [48, 12]
    assert [p.caption.split(" (")[0] for p in preview.before] == [
        "affine.for %i = 1 to 9",
        "affine.for %k = 1 to 13",
    ]
    # The fused loop %k runs %i's iterations too (i = k): %i only repeats %k, so it is
    # left out of the axes without being taken for a tile loop.
    [after] = preview.after
    assert after.caption.startswith("affine.for %k = 1 to 13")
    assert after.domain == "{ [k, i = k, j] : 0 < k <= 8 and 0 <= j <= 5 }"
    assert (after.points, after.tiles, after.moved) == (48, 0, 0)
    # Both memrefs' dependences, %A's as before and %B's folded onto the points.
    assert after.arrows == 42 + 7
    assert _group(after.svg, "tile", "rect") == 0


def test_tile_loops_group_points_and_copies_of_a_loop_do_not():
    tiled: list[Point] = [(t, i, j) for t in (0, 4) for i in range(t, t + 4) for j in range(2)]
    assert tile_dims(tiled, 3) == [0]
    copied: list[Point] = [(k, k, j) for k in range(4) for j in range(2)]
    assert tile_dims(copied, 3) == [0]
    both: list[Point] = [(t, i, i, j) for t in (0, 4) for i in range(t, t + 4) for j in range(2)]
    space = IterationSpace(
        loop=None,  # type: ignore[arg-type]
        loops=[],
        ivs=["%i_tile", "%k", "%i", "%j"],
        domain="",
        parameters=[],
        total=len(both),
        points=both,
        strides=(1, 1, 1, 1),
        box=[(0, 4), (0, 7), (0, 7), (0, 1)],
    )
    grouped = group_tiles(space)
    assert grouped.ivs == ["%i", "%j"] and grouped.tile_ivs == ["%i_tile"]
    assert len(set(grouped.tiles.values())) == 2
    copies = replace(space, ivs=["%k", "%i", "%j"], points=copied, strides=(1, 1, 1))
    only_copies = group_tiles(replace(copies, box=[(0, 3), (0, 3), (0, 1)]))
    assert only_copies.ivs == ["%i", "%j"]
    assert (only_copies.tile_ivs, only_copies.tiles) == ([], {})
