"""Pictures of layouts: `physlayout viz`.

`layout_svg(buffer_type)` draws a `!layout.buffer` type's logical tensor beside its physical
buffer (`viz.layout`); `graph_dot(module)` writes a graph-level function before and after
the graph stages of the layout pipeline as Graphviz DOT (`viz.graph`). Both are
deterministic text; `Canvas.to_png` writes a layout picture as a PNG when matplotlib (the
`physlayout[viz]` extra) is installed.
"""

from physlayout.viz.canvas import Canvas
from physlayout.viz.graph import GRAPH_STAGES, graph_dot, render_dot
from physlayout.viz.layout import (
    buffer_type_from_parts,
    buffer_type_of_value,
    layout_canvas,
    layout_svg,
    parse_buffer_type,
)

__all__ = [
    "GRAPH_STAGES",
    "Canvas",
    "buffer_type_from_parts",
    "buffer_type_of_value",
    "graph_dot",
    "layout_canvas",
    "layout_svg",
    "parse_buffer_type",
    "render_dot",
]
