"""`physlayout viz`: the command-line front of `viz.layout` and `viz.graph`.

One of: `--type TYPE` (a `!layout.buffer` type), `--shape S --map M` (a logical shape and
IndexMap text, with `--scope`, `--pad-value`, `--element`), `FILE --value NAME` (the type of
`%NAME` in FILE, `--function` narrowing the search) draws a layout; `FILE` alone draws its
graph-level function (`--function`, default the first) before and after `--pipeline`.
`-o OUT` writes a layout as `.svg` or `.png` (matplotlib), a graph as `.dot`, or as `.svg` /
`.png` rendered by Graphviz (an error naming the missing program when it is not installed);
without it the SVG or DOT text goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from physlayout.lowering.graph_stages import GRAPH_STAGES_PIPELINE

if TYPE_CHECKING:  # the drawing modules load when `viz` runs, not when the parser is built
    from xdsl.dialects.builtin import ModuleOp

    from physlayout.dialects.layout import BufferType


def add_viz_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Register `physlayout viz` in `sub`."""
    viz = sub.add_parser(
        "viz",
        help="draw a buffer layout (SVG/PNG) or a graph before and after the layout passes (DOT)",
        description=(__doc__ or "").split("\n\n")[-1].replace("\n", " "),
    )
    viz.add_argument("file", nargs="?", help="an .mlir file (a buffer's function or a graph)")
    viz.add_argument("--value", help="draw the layout of the buffer %%VALUE in FILE")
    viz.add_argument("--function", help="the function to search or draw (default: the first)")
    viz.add_argument("--type", dest="buffer_type", help="draw this !layout.buffer type")
    viz.add_argument("--shape", help="logical shape, comma-separated (with --map)")
    viz.add_argument("--map", help="IndexMap text, '|' marks an axis separator (with --shape)")
    viz.add_argument("--element", default="f32", help="element type (with --shape; default f32)")
    viz.add_argument("--scope", help="memory scope (with --shape), e.g. global.texture")
    viz.add_argument("--pad-value", help="value of the padding (with --shape)")
    viz.add_argument(
        "--pipeline", default=GRAPH_STAGES_PIPELINE,
        help=f"graph mode: the passes of the 'after' picture (default: {GRAPH_STAGES_PIPELINE})",
    )
    viz.add_argument(
        "-o", "--output",
        help="output file: a layout as .svg or .png (needs matplotlib); a graph as .dot, or "
        ".svg/.png (needs Graphviz's dot program)",
    )


def _layout_type(args: argparse.Namespace, parse: Callable[[str, str], ModuleOp]) -> BufferType:
    from physlayout.viz.layout import (
        buffer_type_from_parts,
        buffer_type_of_value,
        parse_buffer_type,
    )

    if args.buffer_type is not None:
        return parse_buffer_type(args.buffer_type)
    if args.shape is not None:
        try:
            shape = [int(extent) for extent in args.shape.split(",")]
        except ValueError:
            raise ValueError(f"--shape '{args.shape}': expected integers separated by commas") from None
        return buffer_type_from_parts(shape, args.map, args.element, args.scope, args.pad_value)
    module = parse(Path(args.file).read_text(), args.file)
    return buffer_type_of_value(module, args.value, args.function)


def viz_command(args: argparse.Namespace, parse: Callable[[str, str], ModuleOp]) -> int:
    """Run `physlayout viz` (`parse(text, name)` parses and verifies a module); errors
    propagate to the caller, which reports them."""
    from physlayout.viz.graph import graph_dot, graph_renderer, render_dot
    from physlayout.viz.layout import layout_canvas

    output = Path(args.output) if args.output else None
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
    if args.buffer_type is not None or args.shape is not None or args.value is not None:
        if args.value is not None and args.file is None:
            raise ValueError("--value needs FILE")
        canvas = layout_canvas(_layout_type(args, parse))
        if output is None:
            sys.stdout.write(canvas.to_svg())
        elif output.suffix == ".png":
            try:
                canvas.to_png(output)
            except ImportError:
                raise ValueError("PNG output needs matplotlib (pip install 'physlayout[viz]')") from None
        else:
            output.write_text(canvas.to_svg())
        if output is not None:
            print(f"wrote {output}")
        return 0
    if args.file is None:
        raise ValueError("give FILE, --type or --shape (see physlayout viz --help)")
    if output is not None:
        graph_renderer(output)  # refuse an output it cannot write before running the passes
    dot = graph_dot(parse(Path(args.file).read_text(), args.file), args.function, args.pipeline)
    if output is None:
        sys.stdout.write(dot)
        return 0
    written = render_dot(dot, output)
    print(f"wrote {written}")
    return 0
