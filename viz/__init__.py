"""Pictures of layouts: `physlayout viz`.

`layout_svg(buffer_type)` draws a `!layout.buffer` type's logical tensor beside its physical
buffer (`viz.layout`); `graph_dot(module)` writes a graph-level function before and after
the graph stages of the layout pipeline as Graphviz DOT (`viz.graph`). Both are
deterministic text; `Canvas.to_png` writes a layout picture as a PNG when matplotlib (the
`physlayout[viz]` extra) is installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from physlayout.viz.canvas import Canvas
    from physlayout.viz.graph import GRAPH_STAGES_PIPELINE, graph_dot, render_dot
    from physlayout.viz.layout import (
        buffer_type_from_parts,
        buffer_type_of_value,
        layout_canvas,
        layout_svg,
        parse_buffer_type,
    )

_HOMES = {
    "Canvas": "canvas", "GRAPH_STAGES_PIPELINE": "graph", "graph_dot": "graph",
    "render_dot": "graph", "buffer_type_from_parts": "layout", "buffer_type_of_value": "layout",
    "layout_canvas": "layout", "layout_svg": "layout", "parse_buffer_type": "layout",
}  # fmt: skip
"""Where each name lives: loaded on first use, so that `physlayout` starts without them."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'physlayout.viz' has no attribute {name!r}")
    return getattr(importlib.import_module(f"physlayout.viz.{home}"), name)

__all__ = [
    "GRAPH_STAGES_PIPELINE",
    "Canvas",
    "buffer_type_from_parts",
    "buffer_type_of_value",
    "graph_dot",
    "layout_canvas",
    "layout_svg",
    "parse_buffer_type",
    "render_dot",
]
