"""Pictures of a buffer layout: the logical tensor beside its physical buffer.

`layout_canvas(buffer_type)` draws a `!layout.buffer` type: on the left its logical
elements (the last axis across, the others down), on the right the same elements where the
layout puts them. Every logical element has one number (its row-major logical index) and one
colour in both panels; padding cells are grey and show the pad value. The physical panel
shows the transformed buffer (the pending transforms resolved by `PendingLayout`, the one
definition `apply-layout` uses) as it flattens: the axes after the last axis separator go
across, the others down; axis-separator groups and innermost axes are outlined. A texture
buffer is drawn as its RGBA image: one row per image row, texels of four lanes (r, g, b, a)
across. Tensors with more than `MAX_ROWS` rows or `MAX_COLUMNS` columns are summarized: the
first rows and columns (whole tiles where possible) are drawn, and the captions state the
full extents. An element one panel draws and the other does not (it lies outside the other's
summary) is drawn white with a grey number, and a caption counts such elements, so the two
sides never seem to disagree.

The mapping is never recomputed here: element numbers are sent through
`PendingLayout.map_ndarray` (each step's `IndexMap.map_ndarray`), so the picture shows what
the engine computes.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.parser import Parser

from physlayout.dialects.buffer_layout import (
    TEXEL_LANES,
    PendingLayout,
    flattening_separators,
    image_size,
    texel_lanes_per_element,
)
from physlayout.dialects.layout import BufferType, is_texture_scope
from physlayout.indexing.shapes import flatten_shape
from physlayout.universe import make_context
from physlayout.viz.canvas import Canvas, Line, Rect, Text, element_colour, text_width

MAX_ROWS = 16
"""Rows drawn per panel; larger tensors are summarized."""

MAX_COLUMNS = 32
"""Columns drawn per panel (a multiple of the four texel lanes)."""

CELL_WIDTH = 30
CELL_HEIGHT = 20
PAD_FILL = "#d0d0d0"
OUTLINE = "#222222"
ELIDED_FILL = "#ffffff"
"""Fill of an element that the other panel does not draw (it is summarized there)."""
INNER = "#777777"


def parse_buffer_type(text: str) -> BufferType:
    """The `!layout.buffer` type written in `text`.

    Raises:
        ParseError: `text` is not a type.
        ValueError: it is a type, but not a `!layout.buffer`.
    """
    parsed = Parser(make_context(), text, "<type>").parse_type()
    if not isinstance(parsed, BufferType):
        raise ValueError(f"{parsed} is not a !layout.buffer type")
    return parsed


def buffer_type_from_parts(
    shape: list[int],
    index_map: str | None = None,
    element_type: str = "f32",
    scope: str | None = None,
    pad_value: str | None = None,
) -> BufferType:
    """The buffer type of logical `shape` with the pending transform `index_map` (IndexMap
    text, `|` between two results is an axis separator), memory `scope` and `pad_value`
    (a number, written as an attribute of `element_type`)."""
    parts = ["x".join([*map(str, shape), element_type])]
    if index_map is not None:
        parts.append(f"transform = #layout.index_map<{index_map}>")
    if pad_value is not None:
        parts.append(f"pad_value = {pad_value} : {element_type}")
    if scope is not None:
        parts.append(f'scope = "{scope}"')
    return parse_buffer_type(f"!layout.buffer<{', '.join(parts)}>")


def buffer_type_of_value(module: ModuleOp, name: str, function: str | None = None) -> BufferType:
    """The type of the value `%name` (a function parameter or an op result) in `module`,
    searched in the function `@function` when given, else in every function in order.

    Raises:
        ValueError: no such value, or its type is not a `!layout.buffer`.
    """
    wanted = name.removeprefix("%")
    where = f" in @{function}" if function is not None else ""
    for op in module.ops:
        if not isinstance(op, func.FuncOp):
            continue
        if function is not None and op.sym_name.data != function:
            continue
        values: list[SSAValue] = [arg for block in op.body.blocks for arg in block.args]
        values += [result for inner in op.walk() for result in inner.results]
        for value in values:
            if value.name_hint == wanted:
                if not isinstance(value.type, BufferType):
                    raise ValueError(f"%{wanted} has type {value.type}, not a !layout.buffer")
                return value.type
    raise ValueError(f"no value %{wanted}{where}")


@dataclass(frozen=True)
class Panel:
    """One side of the picture: element numbers (-1 for padding) in an N-D array whose
    axes before `split` go down and the others across; `groups` are the row axes at
    which an axis-separator group starts."""

    title: str
    ids: np.ndarray
    split: int
    groups: tuple[int, ...]
    captions: tuple[str, ...]
    texture: bool = False
    pad_label: str = ""


def _shape(values: tuple[int, ...] | list[int]) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def _pad_label(value: float | int | None) -> str:
    if value is None:
        return "pad"
    if isinstance(value, float) and value.is_integer():
        return f"{value:.1f}"
    return f"{value:g}"


def layout_panels(buffer_type: BufferType) -> tuple[Panel, Panel, str]:
    """The logical and physical panels of `buffer_type`, and the text of its transform.

    Raises:
        ValueError: the transform is not a valid layout of the buffer (`PendingLayout.of`).
    """
    logical_shape = tuple(buffer_type.get_shape())
    if not logical_shape:
        raise ValueError(f"{buffer_type} has rank 0: one element, no layout to draw")
    ids = np.arange(prod(logical_shape), dtype=np.int64).reshape(logical_shape)
    layout = PendingLayout.of(buffer_type)
    element = str(buffer_type.element_type)
    scope = buffer_type.get_scope()
    if layout is None:
        physical_type = buffer_type
        physical = ids
        transform = "(no pending transform)"
        pad_label = ""
        padding = None
    else:
        physical_type = layout.applied_type(buffer_type)
        physical = layout.map_ndarray(ids, pad_value=-1)
        steps = [step.to_string(layout.axis_separators if k == len(layout.steps) - 1 else ())
                 for k, step in enumerate(layout.steps)]
        transform = " then ".join(steps)
        pad_label = _pad_label(layout.pad_value)
        padding = layout.padding
    separators = flattening_separators(physical_type)
    default = not physical_type.get_axis_separators() and bool(separators)
    physical_shape = tuple(physical_type.get_shape())
    flat = flatten_shape(list(physical_shape), list(separators))
    texture = (
        is_texture_scope(scope)
        and texel_lanes_per_element(buffer_type.element_type) == 1
        and len(flat) == 2
        and physical_shape[-1] == TEXEL_LANES
    )
    logical_split = max(len(logical_shape) - 1, 0)
    logical = Panel(
        title=f"logical {_shape(logical_shape)} x {element}",
        ids=ids,
        split=logical_split,
        groups=(),
        captions=(f"{prod(logical_shape)} elements, numbered row-major",),
    )
    captions = [f"transformed shape {_shape(physical_shape)}"]
    if separators:
        source = f"{scope}'s default" if default else "axis separators"
        captions.append(
            f"flattened {_shape(flat)} ({source} {_shape(list(separators))})"
        )
    else:
        captions.append(f"flattened to 1-D {_shape(flat)}, drawn in rows of {physical_shape[-1]}")
    texel_elements = (
        is_texture_scope(scope)
        and texel_lanes_per_element(buffer_type.element_type) == TEXEL_LANES
        and len(flat) == 2
    )
    if texture or texel_elements:
        width, height = image_size(physical_type)
        captions.append(f"{scope}: RGBA image {width} x {height} texels (width x height)"
                        + (f", one {element} per texel" if texel_elements else ""))
    if padding is not None:
        captions.append(f"padding = {pad_label} where {padding}")
    split = separators[-1] if separators else max(len(physical_shape) - 1, 0)
    physical_panel = Panel(
        title="physical" + (f' (scope "{scope}")' if scope != "global" else ""),
        ids=physical,
        split=split,
        groups=tuple(s for s in separators if s < split),
        captions=tuple(captions),
        texture=texture,
        pad_label=pad_label,
    )
    return logical, physical_panel, transform


def _row_label(panel: Panel, row: int) -> str:
    if panel.texture:
        return f"y={row}"
    shape = panel.ids.shape[: panel.split]
    if not shape:
        return ""
    index = [str(int(i)) for i in np.unravel_index(row, shape)]
    # `|` between two axes of different separator groups, as in IndexMap text.
    return "".join(("|" if k in panel.groups else ",") + v for k, v in enumerate(index))[1:]


def _column_label(panel: Panel, column: int) -> str:
    shape = panel.ids.shape[panel.split :]
    return ",".join(str(int(i)) for i in np.unravel_index(column, shape))


@dataclass(frozen=True)
class Window:
    """The part of a panel that is drawn: its first `shown_rows` of `rows` and first
    `shown_columns` of `columns` (whole innermost tiles where possible)."""

    rows: int
    columns: int
    shown_rows: int
    shown_columns: int

    @property
    def summarized(self) -> bool:
        """Whether some rows or columns are not drawn."""
        return self.shown_rows < self.rows or self.shown_columns < self.columns


def panel_window(panel: Panel) -> Window:
    """Which rows and columns of `panel` are drawn (at most `MAX_ROWS` x `MAX_COLUMNS`)."""
    shape = panel.ids.shape
    rows = prod(shape[: panel.split])
    columns = prod(shape[panel.split :])
    inner = shape[-1] if shape else 1
    shown_columns = columns
    if columns > MAX_COLUMNS:
        shown_columns = max(MAX_COLUMNS // inner, 1) * inner if inner <= MAX_COLUMNS else MAX_COLUMNS
    return Window(rows, columns, min(rows, MAX_ROWS), shown_columns)


def drawn_elements(panel: Panel) -> set[int]:
    """The element numbers `panel` draws (inside its window; padding excluded)."""
    window = panel_window(panel)
    grid = panel.ids.reshape(window.rows, window.columns)
    shown = grid[: window.shown_rows, : window.shown_columns]
    return {int(i) for i in np.unique(shown) if i >= 0}


def _draw_panel(
    canvas: Canvas,
    panel: Panel,
    x0: int,
    y0: int,
    places: dict[int, str],
    elsewhere: tuple[str, set[int]] | None = None,
) -> tuple[int, int]:
    """Draw `panel` with its top-left corner at (x0, y0); `places` gives each element's
    place in the other panel (tooltips); `elsewhere` names the other panel and the elements
    it draws: an element drawn here but not there is drawn white, and a caption counts
    them. Returns the panel's width and height."""
    shape = panel.ids.shape
    window = panel_window(panel)
    grid = panel.ids.reshape(window.rows, window.columns)
    shown_rows, shown_columns = window.shown_rows, window.shown_columns
    inner = shape[-1] if shape else 1
    labels = [_row_label(panel, r) for r in range(shown_rows)]
    label_width = max(text_width(label, 10) for label in [*labels, "0"]) + 8
    header = 2 if panel.texture else 1
    canvas.add(Text(x0, y0 + 14, panel.title, size=13, bold=True))
    top = y0 + 22 + header * 14
    left = x0 + label_width
    for c in range(shown_columns):
        cx = left + c * CELL_WIDTH + CELL_WIDTH // 2
        if panel.texture:
            canvas.add(Text(cx, top - 4, "rgba"[c % TEXEL_LANES], size=10, anchor="middle"))
            if c % TEXEL_LANES == 0:
                canvas.add(Text(left + c * CELL_WIDTH + 2 * CELL_WIDTH, top - 18,
                                f"x={c // TEXEL_LANES}", size=10, anchor="middle"))
        else:
            canvas.add(Text(cx, top - 4, _column_label(panel, c), size=9, anchor="middle"))
    missing = 0
    for r in range(shown_rows):
        y = top + r * CELL_HEIGHT
        canvas.add(Text(left - 4, y + 14, labels[r], size=10, anchor="end"))
        for c in range(shown_columns):
            x = left + c * CELL_WIDTH
            ident = int(grid[r, c])
            index = _row_label(panel, r) if not panel.texture else ""
            here = f"[{','.join(filter(None, [index, _column_label(panel, c)]))}]"
            if panel.texture:
                here = f"texel (x={c // TEXEL_LANES}, y={r}) lane {'rgba'[c % TEXEL_LANES]}"
            if ident < 0:
                canvas.add(Rect(x, y, CELL_WIDTH, CELL_HEIGHT, fill=PAD_FILL,
                                title=f"padding {here} = {panel.pad_label}"))
                canvas.add(Text(x + CELL_WIDTH // 2, y + 14, panel.pad_label, size=9,
                                anchor="middle", italic=True, fill="#555555"))
                continue
            shown_there = elsewhere is None or ident in elsewhere[1]
            missing += not shown_there
            canvas.add(Rect(x, y, CELL_WIDTH, CELL_HEIGHT,
                            fill=element_colour(ident) if shown_there else ELIDED_FILL,
                            title=f"element {ident}: {here} {places.get(ident, '')}"))
            canvas.add(Text(x + CELL_WIDTH // 2, y + 14, str(ident), size=10,
                            anchor="middle", fill="#000000" if shown_there else "#888888"))
    bottom = top + shown_rows * CELL_HEIGHT
    right = left + shown_columns * CELL_WIDTH
    # Innermost axes: a line after every tile of the last axis (texels) and of the last row axis.
    if len(shape) - panel.split > 1 or panel.texture:
        for c in range(inner, shown_columns, inner):
            canvas.add(Line(left + c * CELL_WIDTH, top, left + c * CELL_WIDTH, bottom,
                            stroke=INNER, stroke_width=2))
    if panel.split > 1:
        step = shape[panel.split - 1]
        for r in range(step, shown_rows, step):
            canvas.add(Line(left, top + r * CELL_HEIGHT, right, top + r * CELL_HEIGHT,
                            stroke=INNER, stroke_width=2))
    # Axis-separator groups among the row axes: a dark line between two groups' blocks.
    for group in panel.groups:
        step = prod(shape[group : panel.split])
        for r in range(step, shown_rows, step):
            canvas.add(Line(left, top + r * CELL_HEIGHT, right, top + r * CELL_HEIGHT,
                            stroke=OUTLINE, stroke_width=3))
    canvas.add(Rect(left, top, right - left, bottom - top, stroke=OUTLINE, stroke_width=3))
    captions = list(panel.captions)
    if window.summarized:
        captions.append(
            f"summarized: rows 0-{shown_rows - 1} of {window.rows}, "
            f"columns 0-{shown_columns - 1} of {window.columns}"
        )
    if missing and elsewhere is not None:
        captions.append(
            f"white: {missing} element{'s' if missing > 1 else ''} the {elsewhere[0]} side "
            "does not draw (it is summarized)"
        )
    y = bottom + 16
    for caption in captions:
        canvas.add(Text(x0, y, caption, size=11))
        y += 15
    width = max(right - x0, *(text_width(c, 11) for c in captions))
    return width, y - y0


def _places(panel: Panel) -> dict[int, str]:
    """Each element's index in `panel` (for the other panel's tooltips)."""
    places: dict[int, str] = {}
    flat = panel.ids.reshape(-1)
    limit = MAX_ROWS * MAX_COLUMNS * 64
    for position in range(min(flat.size, limit)):
        ident = int(flat[position])
        if ident >= 0:
            index = np.unravel_index(position, panel.ids.shape)
            places[ident] = "<-> [" + ",".join(str(int(i)) for i in index) + "]"
    return places


def layout_canvas(buffer_type: BufferType, title: str | None = None) -> Canvas:
    """The picture of `buffer_type`'s layout (see the module docstring)."""
    logical, physical, transform = layout_panels(buffer_type)
    canvas = Canvas()
    canvas.add(Text(10, 18, title if title is not None else str(buffer_type), size=12))
    canvas.add(Text(10, 36, f"transform: {transform}", size=12, bold=True))
    on_logical, on_physical = drawn_elements(logical), drawn_elements(physical)
    width, _ = _draw_panel(
        canvas, logical, 10, 46, _places(physical), ("physical", on_physical)
    )
    canvas.add(Text(10 + width + 30, 46 + 60, "->", size=16, bold=True, anchor="middle"))
    _draw_panel(
        canvas, physical, 10 + width + 60, 46, _places(logical), ("logical", on_logical)
    )
    return canvas


def layout_svg(buffer_type: BufferType, title: str | None = None) -> str:
    """`layout_canvas(buffer_type)` as SVG text (deterministic)."""
    return layout_canvas(buffer_type, title).to_svg()


__all__ = [
    "MAX_COLUMNS",
    "MAX_ROWS",
    "Panel",
    "buffer_type_from_parts",
    "buffer_type_of_value",
    "layout_canvas",
    "layout_panels",
    "layout_svg",
    "parse_buffer_type",
]
