"""Pictures of iteration spaces: `poly.space.IterationSpace` as a small SVG.

One `<circle>` per drawn integer point (nothing else in the picture is a
circle), one `<path class="dep">` per dependence arrow, grouped by kind
(`<g class="deps RAW">`); points where an `affine.if` region runs are in their
own groups (`points then`, `points else`), and so are the points a transformation
moved (`points moved`, with a `ghost` ring where each was); tiles are outlined
(`<rect class="tile">`). 1-D spaces are a row (wrapped), 2-D
spaces a plane with the outer loop across and the inner one up, deeper spaces
one panel per value of the outer loops. Everything the picture leaves out or
assumes is written on it: symbol values that were not given, sampling, folded
inner loops, thinned arrows, why dependences are missing.

Self-contained SVG (no script, no external reference), in mid-tone colours
that read on light and dark backgrounds; the hover embeds it as a base64
`data:` image, which VS Code renders (inline `<svg>` is stripped from hovers).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from math import ceil, hypot
from xml.sax.saxutils import escape

from affine_lsp.ide.describe import loop_header
from affine_lsp.ir import ModuleModel, Operation
from affine_lsp.poly import (
    LOOPS,
    Budget,
    IterationSpace,
    Level,
    PictureLimits,
    Point,
    Unknown,
    iteration_space,
)
from affine_lsp.syntax import SourceDocument

KINDS = ("RAW", "WAR", "WAW")
DEFAULT_KINDS = ("RAW",)
"""The kinds of dependence pictures draw unless asked for others: what a value
depends on (the others are listed in the legend, with their distances)."""
KIND_WORDS = {"RAW": "read after write", "WAR": "write after read", "WAW": "write after write"}
COLOURS = {"RAW": "#e5534b", "WAR": "#3b8eea", "WAW": "#2da44e"}
DASHES = {"RAW": "", "WAR": "4 2", "WAW": "1.5 2"}
BENDS = {"RAW": 0.0, "WAR": 0.2, "WAW": -0.2}
ROW_BENDS = {"RAW": 0.3, "WAR": -0.3, "WAW": 0.5}
"""1-D: every arrow bends, or it would run over the points between its ends."""
PANEL_BENDS = {"RAW": 1.0, "WAR": -1.0, "WAW": 1.6}
"""Between panels: the bow, in cells."""
POINT_COLOUR = "#8b96a3"
THEN_COLOUR = "#e3a21a"
ELSE_COLOUR = "#a371f7"
MOVED_COLOUR = "#1f9e89"
TILE_COLOUR = "#b8860b"
TEXT_COLOUR = "#808a96"
MAX_DISTANCES_LISTED = 6


@dataclass(frozen=True)
class Style:
    plot: int  # the largest side of a 1-D/2-D plot, in pixels
    panel: int  # the largest side of one panel (3-D and deeper)
    width: int  # the widest a picture grows for its text
    cell_max: int
    cell_min: float
    font: int
    wrap: int  # points per row of a 1-D space
    titled: bool  # title and domain text on the picture (the hover has them around it)
    beside: bool  # the words to the right of the plot rather than above and below it
    assumed_hint: str  # how to give a symbol a value, `{name}` for its name
    kinds_hint: str = "not drawn"  # what the legend says of kinds whose arrows are not drawn
    toggled: bool = False  # a client shows and hides kinds: their swatches go with their arrows


FULL = Style(
    plot=640,
    panel=176,
    width=960,
    cell_max=28,
    cell_min=4,
    font=12,
    wrap=64,
    titled=True,
    beside=False,
    assumed_hint="give --param {name}=VALUE",
    kinds_hint="not drawn: give --dependences {kind}",
)
PANEL = Style(
    plot=400,
    panel=120,
    width=560,
    cell_max=24,
    cell_min=3,
    font=11,
    wrap=40,
    titled=False,
    beside=False,
    assumed_hint="assumed",
    toggled=True,
)
"""The editor's panel: pictures side by side in half a window (the panel writes the
loop's header and domain beside them, as text). It toggles the kinds of dependence
shown: each kind's legend swatch is in the kind's group (`deps KIND`), as its arrows."""
SMALL = Style(
    plot=176,
    panel=72,
    width=560,
    cell_max=18,
    cell_min=2,
    font=10,
    wrap=32,
    titled=False,
    beside=True,
    assumed_hint="assumed",
)


def _num(value: float) -> str:
    """A coordinate to a tenth of a pixel, short."""
    return format(round(value, 1), "g")


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _tuple(values: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


class _Layout:
    """Where every point goes: (x, y) in pixels, relative to the plot's corner."""

    def __init__(self, space: IterationSpace, style: Style) -> None:
        self.space = space
        self.style = style
        self.k = len(space.ivs)
        self.box = space.box
        self.strides = space.strides
        self.panels: dict[Point, tuple[float, float]] = {}
        self.labels: list[tuple[float, float, str, str]] = []  # x, y, text, anchor
        self.lines: list[tuple[float, float, float, float]] = []
        self.width = 0.0
        self.height = 0.0
        if self.k >= 2:
            self.x_low = self.box[-2][0]
            self.y_top = self.box[-1][0] + (self._steps(self.k - 1) - 1) * self.strides[-1]
        if self.k == 1:
            self._row()
        elif self.k == 2:
            self._plane()
        else:
            self._panels()
        self.radius = max(0.8, min(self.cell * 0.24, 5.0))

    def _steps(self, dim: int) -> int:
        low, high = self.box[dim]
        return (high - low) // self.strides[dim] + 1

    def _cell(self, side: int, count: int) -> float:
        return max(self.style.cell_min, min(self.style.cell_max, side / max(count, 1)))

    # 1-D: a row of points, wrapped every `wrap` points.
    def _row(self) -> None:
        count = self._steps(0)
        self.per_row = min(count, self.style.wrap)
        rows = ceil(count / self.per_row)
        self.cell = self._cell(self.style.plot, self.per_row)
        self.row_gap = max(self.cell * 3, self.style.font * 2.4)
        first = f"{self.space.ivs[0]} = {self.box[0][0]}"
        self.left = max(self.style.font * 4.5, _text_width(first, self.style.font) + 10)
        self.top = self.cell * 0.6  # room for the arcs above the first row
        self.width = self.left + self.per_row * self.cell + self.cell
        self.height = self.top + (rows - 1) * self.row_gap + self.cell * 1.6
        low, _ = self.box[0]
        stride = self.strides[0]
        name = self.space.ivs[0]
        for row in range(rows):
            y = self.top + row * self.row_gap + self.cell / 2
            first = low + row * self.per_row * stride
            label = f"{name} = {first}" if row == 0 else str(first)
            self.labels.append((self.left - 6, y + self.style.font * 0.35, label, "end"))
        self.lines.append(
            (self.left, self.height, self.left + self.per_row * self.cell, self.height)
        )
        last = low + (count - 1) * stride
        self.labels.append(
            (
                self.left + self.per_row * self.cell / 2,
                self.height + self.style.font + 2,
                f"{name} → {low} … {last}",
                "middle",
            )
        )
        self.height += self.style.font + 4

    # 2-D: the outer iv across, the inner one up.
    def _plane(self) -> None:
        columns, rows = self._steps(0), self._steps(1)
        self.cell = self._cell(self.style.plot, max(columns, rows))
        # Room for the inner iv's name and its values left of the vertical axis.
        y_name, (y_low, y_high) = self.space.ivs[-1], self.box[-1]
        widest = max(f"{y_name} ↑", str(y_low), str(y_high), key=len)
        self.left = max(self.style.font * 4, _text_width(widest, self.style.font) + 9)
        self.top = self.style.font * 0.5
        plot_w, plot_h = columns * self.cell, rows * self.cell
        self.panels[()] = (self.left, self.top)
        self._axes(self.left, self.top, plot_w, plot_h, full=True)
        self.width = self.left + plot_w + self.style.font
        self.height = self.top + plot_h + self.style.font * 3.4

    def _axes(self, left: float, top: float, w: float, h: float, full: bool) -> None:
        x_name, y_name = self.space.ivs[-2], self.space.ivs[-1]
        x_low, y_low = self.box[-2][0], self.box[-1][0]
        x_last = x_low + (self._steps(self.k - 2) - 1) * self.strides[-2]
        y_last = y_low + (self._steps(self.k - 1) - 1) * self.strides[-1]
        bottom = top + h
        self.lines.append((left, bottom + 2, left + w, bottom + 2))
        self.lines.append((left - 2, top, left - 2, bottom))
        font = self.style.font
        self.labels.append((left + self.cell / 2, bottom + font + 3, str(x_low), "middle"))
        if x_last != x_low:
            self.labels.append((left + w - self.cell / 2, bottom + font + 3, str(x_last), "middle"))
        self.labels.append((left - 5, bottom - self.cell / 2 + font * 0.35, str(y_low), "end"))
        if y_last != y_low:
            self.labels.append((left - 5, top + self.cell / 2 + font * 0.35, str(y_last), "end"))
        if full:
            self.labels.append((left + w / 2, bottom + font * 2.4 + 2, f"{x_name} →", "middle"))
            self.labels.append((left - 5, top + h / 2 + font * 0.35, f"{y_name} ↑", "end"))

    # 3-D and deeper: one 2-D panel per value of the outer ivs.
    def _panels(self) -> None:
        prefixes = sorted({point[:-2] for point in self.space.points})
        columns_x, rows_y = self._steps(self.k - 2), self._steps(self.k - 1)
        self.cell = self._cell(self.style.panel, max(columns_x, rows_y))
        font = self.style.font
        panel_w, panel_h = columns_x * self.cell, rows_y * self.cell
        box_w = panel_w + font * 4.5
        box_h = panel_h + font * 4.2
        across = max(1, min(len(prefixes), int(self.style.width // box_w) or 1))
        self.left = font * 3.5
        self.top = font * 1.4
        names = self.space.ivs[:-2]
        for index, prefix in enumerate(prefixes):
            column, row = index % across, index // across
            left = self.left + column * box_w
            top = self.top + row * box_h
            self.panels[prefix] = (left, top)
            title = ", ".join(f"{n} = {v}" for n, v in zip(names, prefix, strict=True))
            self.labels.append((left, top - font * 0.5, title, "start"))
            self._axes(left, top, panel_w, panel_h, full=False)
        rows = ceil(len(prefixes) / across) if prefixes else 1
        self.width = self.left + across * box_w
        self.height = self.top + rows * box_h - font * 1.2
        x_name, y_name = self.space.ivs[-2], self.space.ivs[-1]
        self.labels.append(
            (self.left, self.height, f"in each panel: {x_name} → across, {y_name} ↑ up", "start")
        )
        self.height += font * 0.8

    def position(self, point: Point) -> tuple[float, float] | None:
        """Pixel centre of a point (also of a point between sampled ones); None when
        its panel is not drawn."""
        if self.k == 1:
            index = (point[0] - self.box[0][0]) / self.strides[0]
            row = int(index // self.per_row)
            column = index - row * self.per_row
            return (
                self.left + (column + 0.5) * self.cell,
                self.top + row * self.row_gap + self.cell / 2,
            )
        corner = self.panels.get(point[:-2])
        if corner is None:
            return None
        x = corner[0] + ((point[-2] - self.x_low) / self.strides[-2] + 0.5) * self.cell
        y = corner[1] + ((self.y_top - point[-1]) / self.strides[-1] + 0.5) * self.cell
        return x, y


CHARACTER_WIDTH = 0.56
"""The width of an average character of a sans-serif font, in ems (an estimate)."""


def _text_width(text: str, font: int) -> float:
    return len(text) * font * CHARACTER_WIDTH


def _wrap(text: str, limit: int) -> list[str]:
    """Lines of at most `limit` characters, broken at spaces where possible."""
    lines: list[str] = []
    while len(text) > limit:
        cut = text.rfind(" ", 0, limit)
        if cut <= limit // 3:
            cut = limit
        lines.append(text[:cut].rstrip())
        text = "  " + text[cut:].lstrip()
    lines.append(text)
    return lines


def describe_points(space: IterationSpace) -> str:
    """'81 points' or how the sample was taken."""
    if not space.sampled:
        return _plural(space.total, "point")
    by_stride: dict[int, list[str]] = {}
    for name, stride in zip(space.ivs, space.strides, strict=True):
        by_stride.setdefault(stride, []).append(name)
    parts = []
    for stride, names in sorted(by_stride.items(), reverse=True):
        every = "every value" if stride == 1 else f"every {_ordinal(stride)} value"
        parts.append(f"{every} of {', '.join(names)}")
    return f"{len(space.points):,} of {space.total:,} points drawn (sampled: {'; '.join(parts)})"


def render_svg(
    space: IterationSpace,
    style: Style = FULL,
    title: str | None = None,
    line_of: Callable[[Operation], int] | None = None,
    shown: Sequence[str] | None = None,
) -> str:
    """The picture as SVG text. `title` goes on top (FULL style); `line_of` gives the
    line of an op, for the notes. The arrows of the kinds not in `shown` (default:
    all those drawn) are in the picture but hidden (`display="none"` on their group,
    which a client may toggle)."""
    layout = _Layout(space, style) if space.points else None
    visible = tuple(space.kinds if shown is None else (k for k in space.kinds if k in shown))
    font = style.font
    line_height = font * 1.45

    def where(op: Operation) -> str:
        return f" (line {line_of(op)})" if line_of is not None else ""

    header: list[tuple[str, str]] = []  # (text, class)
    if style.titled and title:
        header.append((title, "title"))
    if style.titled:
        header.append((f"domain: {space.domain}", ""))
    given = [p for p in space.parameters if not p.assumed]
    assumed = [p for p in space.parameters if p.assumed]
    if given:
        header.append(("symbols: " + ", ".join(f"%{p.name} = {p.value}" for p in given), ""))
    for p in assumed:
        hint = style.assumed_hint.format(name=p.name)
        header.append((f"%{p.name} = {p.value} ({hint})", "note"))
    header.append((describe_points(space), "note" if space.sampled else ""))
    if space.folded:
        loops = ", ".join(f"{_iv_names(op)}{where(op)}" for op in space.folded[:4]) + (
            " …" if len(space.folded) > 4 else ""
        )
        header.append((f"inner loops folded onto each point: {loops}", "note"))

    footer: list[tuple[str, str, str]] = []  # (text, class, swatch)
    if space.then_points or space.else_points:
        guards = ", ".join(f"affine.if{where(op)}" for op in space.guards[:3])
        if space.then_points:
            footer.append((f"then region of {guards} runs", "", "then"))
        if space.else_points:
            footer.append((f"else region of {guards} runs", "", "else"))
    if space.tiles:
        tiles = len(set(space.tiles.values()))
        names = ", ".join(space.tile_ivs)
        footer.append((f"{_plural(tiles, 'tile')} outlined (one per value of {names})", "", "tile"))
    if space.moved:
        footer.append(
            (
                f"{_plural(len(space.moved), 'point')} moved; rings: where they were",
                "",
                "moved",
            )
        )
    if space.marks_unavailable is not None:
        footer.append((f"affine.if regions not marked: {space.marks_unavailable}", "note", ""))
    drawn_kinds = [k for k in visible if k in space.carried]
    if space.dependences_unavailable is not None:
        footer.append((f"dependences not drawn: {space.dependences_unavailable}", "note", ""))
    elif space.points and not space.carried:
        footer.append(("no loop-carried dependences", "", ""))
    elif space.points and not drawn_kinds:
        kinds = " or ".join(visible) if visible else "any kind drawn"
        footer.append((f"no loop-carried dependence of {kinds}", "", ""))
    elif space.points and not any(a.kind in visible for a in space.arrows):
        kinds = ", ".join(drawn_kinds)
        footer.append((f"{kinds}: no arrow starts at a drawn point", "note", ""))
    groups = space.distances
    for kind in KINDS:
        for (group_kind, memref), distances in sorted(groups.items()):
            if group_kind != kind:
                continue
            listed = [
                f"{_tuple(d)} ×{n}" for d, n in sorted(distances.items())[:MAX_DISTANCES_LISTED]
            ]
            more = len(distances) - len(listed)
            if more > 0:
                listed.append(f"+{more} more")
            line = f"{kind} ({KIND_WORDS[kind]}) on {memref}: {', '.join(listed)}"
            if style.toggled:
                footer.append((line, "", f"deps {kind}{'' if kind in visible else ' hidden'}"))
            elif kind in visible:
                footer.append((line, "", kind))
            else:
                footer.append((f"{line} ({style.kinds_hint.format(kind=kind)})", "note", ""))
    if any(a.kind in visible for a in space.arrows):
        footer += [(note, "note", "") for note in _arrow_notes(space)]

    if style.beside and (layout is None or layout.width * 2 <= style.width):
        return _beside(space, style, layout, header, footer, visible)
    plot_w = layout.width if layout else 0.0
    text_w = max(
        [_text_width(t, font) for t, _ in header]
        + [_text_width(t, font) + font * 2.5 for t, _, _ in footer]
        + [0.0]
    )
    width = max(plot_w, min(text_w, style.width), 120) + font
    limit = int((width - font) / (font * CHARACTER_WIDTH))
    header_lines = [(line, cls) for text, cls in header for line in _wrap(text, limit)]
    footer_lines = _footer_lines(footer, limit)

    parts: list[str] = []
    y = font * 1.3
    for text, cls in header_lines:
        parts.append(_text(font / 2, y, text, cls=cls))
        y += line_height
    if layout is not None:
        plot_top = y - font * 0.4
        parts += _plot(space, layout, plot_top, font / 2, visible)
        y = plot_top + layout.height + font * 0.6
    else:
        parts.append(_text(font / 2, y, EMPTY, cls="note"))
        y += line_height
    y += font * 0.3
    parts += _legend(footer_lines, font / 2, y, font)
    y += line_height * len(footer_lines)
    return _document(width, y - font * 0.6, style, parts, _head(layout, font))


EMPTY = "the domain is empty for these values"


def _arrow_notes(space: IterationSpace) -> list[str]:
    """What the arrows leave out: later targets, thinning, sampling."""
    notes = []
    if space.nearest_only:
        notes.append("each arrow goes to the first later point of its dependence")
    if space.arrow_stride > 1:
        axes = (
            f"along {', '.join(space.ivs[d] for d in space.thinned)} in every panel"
            if len(space.ivs) >= 3
            else "along each axis"
        )
        notes.append(
            f"{len(space.arrows):,} of {space.arrow_total:,} arrows drawn: those from every "
            f"{_ordinal(space.arrow_stride)} drawn point {axes}"
        )
    if space.snapped:
        notes.append(
            "sampled: an arrow joins a drawn point to the next drawn point in the direction "
            "of its dependence (the distances listed are exact)"
        )
    elif space.sampled:
        notes.append("arrows from the sampled points only")
    return notes


def _footer_lines(footer: list[tuple[str, str, str]], limit: int) -> list[tuple[str, str, str]]:
    """Legend lines wrapped to `limit` characters, the swatch on the first of each."""
    return [
        (line, cls, swatch if n == 0 else "")
        for text, cls, swatch in footer
        for n, line in enumerate(_wrap(text, limit - 3))
    ]


def _legend(lines: list[tuple[str, str, str]], x: float, y: float, font: int) -> list[str]:
    parts = []
    for text, cls, swatch in lines:
        if swatch:
            parts.append(_swatch(x, y, font, swatch))
        parts.append(_text(x + font * 2.2, y, text, cls=cls))
        y += font * 1.45
    return parts


def _beside(
    space: IterationSpace,
    style: Style,
    layout: _Layout | None,
    header: list[tuple[str, str]],
    footer: list[tuple[str, str, str]],
    visible: tuple[str, ...],
) -> str:
    """The words in a column to the right of the plot: a wide, short picture (hovers
    are short and scroll)."""
    font = style.font
    line_height = font * 1.45
    plot_w = layout.width if layout is not None else 0.0
    column = font + plot_w + font
    limit = max(24, int((style.width - column) / (font * CHARACTER_WIDTH)))
    lines = [(line, cls, "") for text, cls in header for line in _wrap(text, limit + 3)]
    if layout is None:
        lines.append((EMPTY, "note", ""))
    lines += _footer_lines(footer, limit)
    text_w = max([_text_width(t, font) + (font * 2.2 if s else 0) for t, _, s in lines] + [0])
    parts: list[str] = []
    plot_h = 0.0
    if layout is not None:
        parts += _plot(space, layout, font * 0.2, font / 2, visible)
        plot_h = layout.height + font * 0.2
    y = font * 1.3
    for text, cls, swatch in lines:
        if swatch:
            parts += _legend([(text, cls, swatch)], column, y, font)
        else:
            parts.append(_text(column, y, text, cls=cls))
        y += line_height
    width = column + text_w + font / 2
    height = max(plot_h + font * 0.4, y - font * 0.6)
    return _document(width, height, style, parts, _head(layout, font))


def _text(x: float, y: float, content: str, anchor: str = "start", cls: str = "") -> str:
    attributes = f' x="{_num(x)}" y="{_num(y)}"'
    if anchor != "start":
        attributes += f' text-anchor="{anchor}"'
    if cls:
        attributes += f' class="{cls}"'
    return f"<text{attributes}>{escape(content)}</text>"


def _iv_names(op: Operation) -> str:
    return ", ".join(iv.display_name for iv in Level(op).ivs)


def _swatch(x: float, y: float, font: int, kind: str) -> str:
    if kind.startswith("deps "):  # "deps KIND [hidden]": in the group a client toggles
        _, name, *hidden = kind.split()
        display = ' display="none"' if hidden else ""
        return f'<g class="deps {name}"{display}>{_swatch(x, y, font, name)}</g>'
    mid = y - font * 0.35
    if kind in COLOURS:
        dash = f' stroke-dasharray="{DASHES[kind]}"' if DASHES[kind] else ""
        return (
            f'<path class="legend" d="M{_num(x)} {_num(mid)}h{_num(font * 1.6)}" '
            f'stroke="{COLOURS[kind]}" stroke-width="2"{dash} marker-end="url(#head-{kind})"/>'
        )
    size = font * 0.7
    if kind == "tile":
        return (
            f'<rect class="tile" x="{_num(x + font * 0.2)}" y="{_num(mid - size / 2 - 1)}" '
            f'width="{_num(size * 1.8)}" height="{_num(size + 2)}" rx="2"/>'
        )
    colour = {"then": THEN_COLOUR, "else": ELSE_COLOUR, "moved": MOVED_COLOUR}[kind]
    return (
        f'<rect class="swatch" x="{_num(x + font * 0.5)}" y="{_num(mid - size / 2)}" '
        f'width="{_num(size)}" height="{_num(size)}" rx="{_num(size / 2)}" fill="{colour}"/>'
    )


def _stroke(layout: _Layout) -> float:
    """The width of the arrows: thin between small points, never a hairline."""
    return max(0.9, min(layout.cell * 0.08, 2.0))


def _head(layout: _Layout | None, font: int) -> float:
    """The side of the arrowheads, in pixels (the same in the legend): a fixed share of
    a cell, legible on small cells, never larger than a point's spacing allows."""
    if layout is None:
        return font * 0.6
    return max(3.5, min(layout.cell * 0.45, 8.0))


def _plot(
    space: IterationSpace, layout: _Layout, top: float, left: float, visible: Sequence[str]
) -> list[str]:
    parts = [f'<g transform="translate({_num(left)} {_num(top)})">']
    for x1, y1, x2, y2 in layout.lines:
        parts.append(f'<path class="axis" d="M{_num(x1)} {_num(y1)}L{_num(x2)} {_num(y2)}"/>')
    for x, y, text, anchor in layout.labels:
        parts.append(_text(x, y, text, anchor))
    r = _num(layout.radius)
    groups: dict[str, list[str]] = {"": [], "then": [], "else": [], "moved": []}
    written: dict[float, str] = {}  # coordinates repeat along rows and columns

    def number(value: float) -> str:
        text = written.get(value)
        if text is None:
            text = written[value] = _num(value)
        return text

    if space.tiles:
        parts += _tile_outlines(space, layout)
    if space.ghosts:
        parts += _ghost_rings(space, layout)
    for point in space.points:
        position = layout.position(point)
        if position is None:
            continue
        group = (
            "then"
            if point in space.then_points
            else "else"
            if point in space.else_points
            else "moved"
            if point in space.moved
            else ""
        )
        x, y = number(position[0]), number(position[1])
        groups[group].append(f'<circle cx="{x}" cy="{y}" r="{r}"/>')
    for name, circles in groups.items():
        if circles:
            parts.append(f'<g class="points{" " + name if name else ""}">{"".join(circles)}</g>')
    by_kind: dict[str, list[str]] = {kind: [] for kind in KINDS}
    across: dict[str, list[str]] = {kind: [] for kind in KINDS}  # between panels
    gap = layout.radius + 0.8
    for arrow in space.arrows:
        start, end = layout.position(arrow.source), layout.position(arrow.target)
        if start is None or end is None:
            continue
        if layout.k == 1:
            path = _arrow_path(start, end, gap, ROW_BENDS[arrow.kind])
        elif layout.k > 2 and arrow.source[:-2] != arrow.target[:-2]:
            # Between panels: bow by about a cell, to run between the rows of points.
            length = hypot(end[0] - start[0], end[1] - start[1]) or 1.0
            side = PANEL_BENDS[arrow.kind]
            across[arrow.kind].append(_arrow_path(start, end, gap, side * layout.cell / length))
            continue
        else:
            path = _arrow_path(start, end, gap, BENDS[arrow.kind])
        by_kind[arrow.kind].append(path)
    width = _num(_stroke(layout))
    for groups_of, extra in ((across, ' opacity="0.4"'), (by_kind, "")):
        for kind, paths in groups_of.items():
            if paths:
                dash = f' stroke-dasharray="{DASHES[kind]}"' if DASHES[kind] else ""
                hidden = "" if kind in visible else ' display="none"'
                parts.append(
                    f'<g class="deps {kind}" stroke="{COLOURS[kind]}" stroke-width="{width}"'
                    f'{dash}{extra}{hidden} marker-end="url(#head-{kind})">{"".join(paths)}</g>'
                )
    parts.append("</g>")
    return parts


def _tile_outlines(space: IterationSpace, layout: _Layout) -> list[str]:
    """One rounded rectangle around the drawn points of each tile (per panel, per row of
    a 1-D space)."""
    boxes: dict[tuple[Point, Point | float], list[float]] = {}
    for point, tile in space.tiles.items():
        position = layout.position(point)
        if position is None:
            continue
        x, y = position
        frame: Point | float = point[:-2] if layout.k > 2 else y if layout.k == 1 else ()
        box = boxes.setdefault((tile, frame), [x, y, x, y])
        box[0], box[1] = min(box[0], x), min(box[1], y)
        box[2], box[3] = max(box[2], x), max(box[3], y)
    pad = layout.cell * 0.44
    rects = [
        f'<rect x="{_num(x1 - pad)}" y="{_num(y1 - pad)}" width="{_num(x2 - x1 + 2 * pad)}" '
        f'height="{_num(y2 - y1 + 2 * pad)}" rx="{_num(pad * 0.6)}"/>'
        for x1, y1, x2, y2 in boxes.values()
    ]
    return [f'<g class="tile">{"".join(rects)}</g>']


def _ghost_rings(space: IterationSpace, layout: _Layout) -> list[str]:
    """A ring where each moved point was (not a circle: circles are the points)."""
    side = layout.radius * 2
    rings = []
    for ghost in sorted(space.ghosts):
        position = layout.position(ghost)
        if position is None:
            continue
        x, y = position
        rings.append(
            f'<rect x="{_num(x - side / 2)}" y="{_num(y - side / 2)}" width="{_num(side)}" '
            f'height="{_num(side)}" rx="{_num(side / 2)}"/>'
        )
    return [f'<g class="ghost">{"".join(rings)}</g>'] if rings else []


def _arrow_path(
    start: tuple[float, float], end: tuple[float, float], gap: float, bend: float
) -> str:
    (x1, y1), (x2, y2) = start, end
    dx, dy = x2 - x1, y2 - y1
    length = hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    # Control point off the middle, perpendicular to the arrow.
    cx, cy = (x1 + x2) / 2 - uy * bend * length, (y1 + y2) / 2 + ux * bend * length
    # Leave the circles free at both ends (along the curve's end tangents).
    sx, sy = cx - x1, cy - y1
    ex, ey = x2 - cx, y2 - cy
    start_length, end_length = hypot(sx, sy) or 1.0, hypot(ex, ey) or 1.0
    ax, ay = x1 + sx / start_length * gap, y1 + sy / start_length * gap
    bx, by = x2 - ex / end_length * gap, y2 - ey / end_length * gap
    return (
        f'<path class="dep" d="M{_num(ax)} {_num(ay)}Q{_num(cx)} {_num(cy)} '
        f'{_num(bx)} {_num(by)}"/>'
    )


def _document(width: float, height: float, style: Style, parts: list[str], head: float) -> str:
    font = style.font
    size = _num(head)
    markers = "".join(
        f'<marker id="head-{kind}" viewBox="0 0 6 6" refX="5" refY="3" markerWidth="{size}" '
        f'markerHeight="{size}" markerUnits="userSpaceOnUse" orient="auto">'
        f'<path d="M0 0L6 3L0 6z" fill="{COLOURS[kind]}"/></marker>'
        for kind in KINDS
    )
    css = (
        f"text{{font:{font}px sans-serif;fill:{TEXT_COLOUR}}}"
        ".title{font-weight:bold}.note{font-style:italic}"
        f".axis{{stroke:{TEXT_COLOUR};stroke-width:1;fill:none}}"
        f".points{{fill:{POINT_COLOUR}}}.points.then{{fill:{THEN_COLOUR}}}"
        f".points.else{{fill:{ELSE_COLOUR}}}.points.moved{{fill:{MOVED_COLOUR}}}"
        f".ghost{{fill:none;stroke:{MOVED_COLOUR};stroke-width:1;stroke-dasharray:1.5 1.5}}"
        f".tile{{fill:{TILE_COLOUR};fill-opacity:0.08;stroke:{TILE_COLOUR};stroke-width:1.2}}"
        ".deps,.legend{fill:none}"
        "@media (prefers-color-scheme:dark){text{fill:#a2abb6}.axis{stroke:#a2abb6}}"
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{ceil(width)}" height="{ceil(height)}" '
        f'viewBox="0 0 {ceil(width)} {ceil(height)}">'
        f"<style>{css}</style><defs>{markers}</defs>{''.join(parts)}</svg>\n"
    )


def data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode("ascii")


_SIZE = re.compile(r'<svg [^>]*width="(\d+)" height="(\d+)"')


def markdown_image(space: IterationSpace, svg: str) -> str:
    """The picture as a Markdown image with words for its alternative text. Its size
    follows the link (`|width=W,height=H`, which VS Code reads): a hover sized before
    the image loads would otherwise cut it off."""
    alt = f"iteration space: {describe_points(space)}, {_plural(len(space.arrows), 'arrow')}"
    alt = alt.replace("[", "(").replace("]", ")")
    size = _SIZE.match(svg)
    dimensions = f"|width={size.group(1)},height={size.group(2)}" if size else ""
    return f"![{alt}]({data_uri(svg)}{dimensions})"


# -- finding and drawing a nest ------------------------------------------------------------


def loop_on_line(
    model: ModuleModel, line: int, line_of_offset: Callable[[int], int]
) -> Operation | None:
    """The outermost affine.for/affine.parallel whose text, or its op name (results may
    be written on the lines before), starts on 0-based `line`."""
    for op in model.walk():
        if isinstance(op, LOOPS) and line in (
            line_of_offset(op.span.start_byte),
            line_of_offset(op.name_span.start_byte),
        ):
            return op
    return None


def draw(
    op: Operation,
    model: ModuleModel,
    document: SourceDocument,
    values: Mapping[str, int] | None = None,
    *,
    style: Style = FULL,
    limits: PictureLimits | None = None,
    budget: Budget | None = None,
    first_line: int = 0,
    kinds: Sequence[str] = DEFAULT_KINDS,
) -> tuple[IterationSpace, str] | Unknown:
    """The iteration space of the nest headed by `op` and its SVG picture, with the
    arrows of the dependences of `kinds`; lines are counted from `first_line` (where
    a `// -----` chunk starts in its file)."""
    space = iteration_space(op, model, values, limits=limits, budget=budget, kinds=kinds)
    if isinstance(space, Unknown):
        return space
    return space, render(space, document, style, first_line)


def render(
    space: IterationSpace,
    document: SourceDocument,
    style: Style = FULL,
    first_line: int = 0,
    shown: Sequence[str] | None = None,
) -> str:
    """The SVG of a space of `document`, titled with its loop's header and line (lines
    counted from `first_line`); the arrows of kinds not `shown` are hidden."""

    def line_of(target: Operation) -> int:
        return first_line + document.point(target.span.start_byte)[0] + 1

    title = f"{loop_header(document, space.loop)} (line {line_of(space.loop)})"
    return render_svg(space, style, title, line_of, shown)
