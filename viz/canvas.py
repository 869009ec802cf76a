"""A tiny recorded drawing (rectangles, lines, text) written as SVG text or, when matplotlib
is installed, as a PNG.

The SVG is hand-written and deterministic: the same drawing gives byte-identical text
(coordinates are integers, colours hex strings), so pictures can be golden-file tested.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

FONT = "DejaVu Sans Mono, monospace"
"""The font family of every text (a monospace font keeps label widths predictable)."""

CHAR_WIDTH = 7
"""Approximate width in pixels of one character at the default font size (12)."""

EM_PER_CHAR = 0.62
"""Advance width of one character of `FONT` in ems (DejaVu Sans Mono: 0.602), rounded up so
an estimated text width is never less than the drawn one."""


def text_width(text: str, size: int = 12) -> int:
    """The width in pixels of `text` at font `size`, never less than the drawn width (so
    the canvas grown to contain it clips nothing)."""
    return math.ceil(len(text) * size * EM_PER_CHAR)


def element_colour(ident: int) -> str:
    """The fill colour of logical element `ident`: hues a golden angle apart, so
    neighbouring elements differ and the same element has one colour everywhere."""
    hue = (ident * 0.618033988749895) % 1.0
    red, green, blue = colorsys.hls_to_rgb(hue, 0.78, 0.65)
    return f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"


@dataclass(frozen=True)
class Rect:
    """A rectangle; `title` becomes an SVG tooltip."""

    x: int
    y: int
    width: int
    height: int
    fill: str = "none"
    stroke: str = "#999999"
    stroke_width: int = 1
    title: str = ""


@dataclass(frozen=True)
class Line:
    """A straight line."""

    x1: int
    y1: int
    x2: int
    y2: int
    stroke: str = "#333333"
    stroke_width: int = 1


@dataclass(frozen=True)
class Text:
    """A text whose baseline starts (`anchor="start"`), is centred (`"middle"`) or ends
    (`"end"`) at `(x, y)`."""

    x: int
    y: int
    text: str
    size: int = 12
    anchor: str = "start"
    bold: bool = False
    italic: bool = False
    fill: str = "#000000"


@dataclass
class Canvas:
    """A drawing of `width` x `height` pixels on a white background."""

    width: int = 0
    height: int = 0
    items: list[Rect | Line | Text] = field(default_factory=list[Rect | Line | Text])

    def add(self, item: Rect | Line | Text) -> None:
        """Record `item` and grow the canvas to contain it (with a 10 px margin)."""
        self.items.append(item)
        if isinstance(item, Rect):
            right, bottom = item.x + item.width, item.y + item.height
        elif isinstance(item, Line):
            right, bottom = max(item.x1, item.x2), max(item.y1, item.y2)
        else:
            length = text_width(item.text, item.size)
            right = item.x + (length if item.anchor == "start" else length // 2)
            bottom = item.y + 4
        self.width = max(self.width, right + 10)
        self.height = max(self.height, bottom + 10)

    def to_svg(self) -> str:
        """The drawing as SVG text."""
        lines = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
            f'height="{self.height}" viewBox="0 0 {self.width} {self.height}" '
            f'font-family="{FONT}">',
            f'<rect x="0" y="0" width="{self.width}" height="{self.height}" fill="#ffffff"/>',
        ]
        for item in self.items:
            if isinstance(item, Rect):
                body = (
                    f'<rect x="{item.x}" y="{item.y}" width="{item.width}" '
                    f'height="{item.height}" fill="{item.fill}" stroke="{item.stroke}" '
                    f'stroke-width="{item.stroke_width}"'
                )
                if item.title:
                    lines.append(f"{body}><title>{escape(item.title)}</title></rect>")
                else:
                    lines.append(f"{body}/>")
            elif isinstance(item, Line):
                lines.append(
                    f'<line x1="{item.x1}" y1="{item.y1}" x2="{item.x2}" y2="{item.y2}" '
                    f'stroke="{item.stroke}" stroke-width="{item.stroke_width}"/>'
                )
            else:
                style = ' font-weight="bold"' if item.bold else ""
                style += ' font-style="italic"' if item.italic else ""
                lines.append(
                    f'<text x="{item.x}" y="{item.y}" font-size="{item.size}" '
                    f'text-anchor="{item.anchor}" fill="{item.fill}"{style}>'
                    f"{escape(item.text)}</text>"
                )
        lines.append("</svg>")
        return "\n".join(lines) + "\n"

    def to_png(self, path: str | Path) -> None:
        """Write the drawing as a PNG with matplotlib.

        Raises:
            ImportError: matplotlib is not installed (the `physlayout[viz]` extra).
        """
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        dpi = 100
        figure = plt.figure(figsize=(self.width / dpi, self.height / dpi), dpi=dpi)
        axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
        axes.set_xlim(0, self.width)
        axes.set_ylim(self.height, 0)
        axes.axis("off")
        points = 72 / dpi
        for item in self.items:
            if isinstance(item, Rect):
                axes.add_patch(
                    Rectangle(
                        (item.x, item.y), item.width, item.height,
                        facecolor="none" if item.fill == "none" else item.fill,
                        edgecolor=item.stroke, linewidth=item.stroke_width * points,
                    )
                )
            elif isinstance(item, Line):
                axes.plot(
                    [item.x1, item.x2], [item.y1, item.y2],
                    color=item.stroke, linewidth=item.stroke_width * points,
                )
            else:
                axes.text(
                    item.x, item.y, item.text, fontsize=item.size * points,
                    ha={"start": "left", "middle": "center", "end": "right"}[item.anchor],
                    va="baseline", family="monospace", color=item.fill,
                    fontweight="bold" if item.bold else "normal",
                    fontstyle="italic" if item.italic else "normal",
                )
        figure.savefig(str(path), dpi=dpi)
        plt.close(figure)
