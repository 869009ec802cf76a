"""Graphviz DOT of a graph-level function before and after the graph stages of the layout
pipeline.

`graph_dot(module, function, pipeline)` draws the function's dataflow twice, side by side:
as written (cluster "before") and after `pipeline` (default `GRAPH_STAGES_PIPELINE`, the stages of
`physlayout-adreno` that work on tensors, up to and without `legalize-layout`). Nodes are the
function's parameters, its ops (tensor-level ones; the regions of `linalg.generic`s are not
drawn) and its return; edges are SSA uses. Layout rewrites (`layout.transform`, `layout.pad`,
`layout.crop`) are orange boxes with their IndexMap or box, `layout.copy`s blue dashed boxes
with their target scope; an op whose result lives in a texture scope (`layout.scope`) has a
thick blue border and says its scope; an operand a consumer demands in another scope
(`layout.operand_scopes`) labels its edge. The DOT text is deterministic; `render_dot`
writes it, or turns it into SVG or PNG with Graphviz's `dot` (an error, never a silent
`.dot` file, when Graphviz is missing).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError

from physlayout.dialects.layout import is_texture_scope
from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp
from physlayout.dialects.layout_scopes import SCOPE_ATTR, CopyOp, operand_demands
from physlayout.lowering.graph_stages import GRAPH_STAGES_PIPELINE
from physlayout.naming import FreshNames
from physlayout.transforms.pass_options import pipeline_passes
from physlayout.universe import get_all_passes, make_context

REWRITE_STYLE = 'shape=box, style="filled", fillcolor="#ffd8a8"'
COPY_STYLE = 'shape=box, style="filled,dashed", fillcolor="#a5d8ff"'
OP_STYLE = 'shape=box, style="rounded"'
TEXTURE_BORDER = 'color="#1c7ed6", penwidth=3'


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Namer:
    """Names values as the source does (`%name`), numbering the unnamed ones."""

    def __init__(self) -> None:
        self.names: dict[SSAValue, str] = {}
        self.fresh = FreshNames()

    def __call__(self, value: SSAValue) -> str:
        if value not in self.names:
            name = self.fresh.fresh(value.name_hint or str(len(self.names)))
            self.names[value] = f"%{name}"
        return self.names[value]


def _op_label(op: Operation) -> tuple[str, str]:
    """The label lines and the style of `op`'s node."""
    if isinstance(op, TransformOp):
        text = f"layout.transform\n{op.index_map.index_map}"
        if op.pad_value is not None:
            text += f"\npad_value {op.pad_value}"
        return text, REWRITE_STYLE
    if isinstance(op, PadOp):
        low, high = op.low.get_values(), op.high.get_values()
        return f"layout.pad\nlow {list(low)} high {list(high)}", REWRITE_STYLE
    if isinstance(op, CropOp):
        start, sizes = op.start.get_values(), op.sizes.get_values()
        return f"layout.crop\nstart {list(start)} sizes {list(sizes)}", REWRITE_STYLE
    if isinstance(op, CopyOp):
        return f"layout.copy\nto {op.scope.data}", COPY_STYLE
    text = op.name
    if "layout.frozen" in op.attributes:
        text += " (frozen)"
    value = op.properties.get("value") or op.attributes.get("value")
    if isinstance(value, DenseIntOrFPElementsAttr):
        text += " dense"
    return text, OP_STYLE


def _function_dot(function: func.FuncOp, prefix: str) -> list[str]:
    """The nodes and edges of `function`, with ids starting with `prefix`."""
    lines: list[str] = []
    name = _Namer()
    ids: dict[SSAValue, str] = {}
    for k, arg in enumerate(function.body.blocks[0].args if function.body.blocks else ()):
        node = f"{prefix}arg{k}"
        ids[arg] = node
        label = f"{name(arg)}\n{arg.type}"
        lines.append(f"    {node} [label={_quote(label)}, shape=invhouse];")
    count = 0
    for op in function.body.ops:
        node = f"{prefix}op{count}"
        count += 1
        if isinstance(op, func.ReturnOp):
            lines.append(f"    {node} [label=\"return\", shape=house];")
        else:
            text, style = _op_label(op)
            results = ", ".join(name(r) for r in op.results)
            types = ", ".join(str(r.type) for r in op.results)
            label = f"{results} = {text}\n{types}" if results else text
            scope = op.attributes.get(SCOPE_ATTR)
            if isinstance(op, CopyOp):
                scope = op.scope
            if isinstance(scope, StringAttr):
                if not isinstance(op, CopyOp):
                    label += f"\nscope {scope.data}"
                if is_texture_scope(scope.data):
                    style += f", {TEXTURE_BORDER}"
            lines.append(f"    {node} [label={_quote(label)}, {style}];")
        for result in op.results:
            ids[result] = node
        demands = operand_demands(op) or [""] * len(op.operands)
        for operand, demand in zip(op.operands, demands, strict=True):
            source = ids.get(operand)
            if source is None:
                continue
            attrs = f" [label={_quote(demand)}]" if demand else ""
            lines.append(f"    {source} -> {node}{attrs};")
    return lines


def _function(module: ModuleOp, name: str | None) -> func.FuncOp:
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    for function in functions:
        if name is None or function.sym_name.data == name:
            return function
    raise ValueError(f"no function @{name}" if name else "the module has no function")


def graph_dot(module: ModuleOp, function: str | None = None, pipeline: str = GRAPH_STAGES_PIPELINE) -> str:
    """DOT text of `@function` (default: the first function with a body) before and after
    the xDSL pass pipeline `pipeline` (see the module docstring). `module` is not changed.

    Raises:
        ValueError: no such function, or `pipeline` is not a valid pipeline.
        PassFailedException, DiagnosticException: a pass refused the module.
    """
    before = _function(module, function)
    after_module = module.clone()
    try:
        passes = PassPipeline(pipeline_passes(get_all_passes(), pipeline))
    except (Exception, ArgSpecParseError) as err:  # ArgSpecParseError is a BaseException
        raise ValueError(f"pipeline '{pipeline}': {err}") from None
    passes.apply(make_context(), after_module)
    after = _function(after_module, before.sym_name.data)
    lines = [
        f"digraph {_quote(before.sym_name.data)} {{",
        "  rankdir=TB;",
        '  node [fontname="monospace", fontsize=10];',
        '  edge [fontname="monospace", fontsize=9];',
        "  subgraph cluster_before {",
        f"    label={_quote('before: @' + before.sym_name.data)};",
        *_function_dot(before, "b_"),
        "  }",
        "  subgraph cluster_after {",
        f"    label={_quote('after: ' + pipeline)};",
        *_function_dot(after, "a_"),
        "  }",
        "}",
    ]
    return "\n".join(lines) + "\n"


def graph_renderer(path: Path) -> str | None:
    """The Graphviz `dot` executable that `render_dot` runs to write the graph file `path`
    (None for a `.dot` file, written as text). Raises ValueError for another suffix, or for
    `.svg`/`.png` when Graphviz is not installed (saying how to get DOT text instead)."""
    if path.suffix == ".dot":
        return None
    if path.suffix not in (".svg", ".png"):
        raise ValueError(f"cannot write a graph to {path}: use a .dot, .svg or .png file")
    executable = shutil.which("dot")
    if executable is None:
        raise ValueError(
            f"cannot write {path}: drawing a graph as {path.suffix[1:].upper()} needs "
            "Graphviz's `dot` program, which is not installed (e.g. `apt-get install "
            f"graphviz`); write DOT text instead with -o {path.with_suffix('.dot')} (or "
            "without -o, to stdout)"
        )
    return executable


def render_dot(dot: str, path: str | Path) -> Path:
    """Write the graph `dot` to `path` and return it: the DOT text itself for a `.dot`
    path; an SVG or PNG rendered by Graphviz's `dot` program for `.svg` / `.png`.

    Raises:
        ValueError: another suffix; or `.svg`/`.png` when Graphviz is not installed (the
            message says how to get DOT text instead; nothing is written), or `dot` fails.
    """
    path = Path(path)
    executable = graph_renderer(path)
    if executable is None:
        path.write_text(dot)
        return path
    done = subprocess.run(
        [executable, f"-T{path.suffix[1:]}"], input=dot.encode(), capture_output=True
    )
    if done.returncode != 0:
        raise ValueError(
            f"Graphviz `dot` failed on the graph: {done.stderr.decode(errors='replace').strip()}"
        )
    path.write_bytes(done.stdout)
    return path
