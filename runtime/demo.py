"""`make demo` / `physlayout demo`: the Adreno texture pipeline on the RFC's example, end to
end.

`examples/rfc_conv_relu_conv.mlir` is an NCHW graph: conv (2x64x56x56 * 32x64x3x3) -> relu
-> conv (32x32x3x3), NCHW in and out. The demo runs `physlayout-adreno` on it and prints
one line per graph-level stage (its ops, the layout rewrites that remain, the copies between
scopes and the scopes chosen), the kernels `legalize-layout` makes and the source of one of
them, then runs the host function on the selected OpenCL device (PoCL on machines without a
GPU) with seeded random inputs, prints each kernel's device time and compares the result
with a plain numpy conv -> relu -> conv in a verdict line (`OK: max |opencl - numpy| = ...`).
With `verbose` (`physlayout demo --verbose`) it prints each stage's whole IR, the host
function and all the generated OpenCL C instead.
"""

from __future__ import annotations

from collections import Counter
from importlib import resources
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from physlayout.dialects.layout_scopes import producer_scope
from physlayout.lowering.graph_stages import GRAPH_STAGES
from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.host import execute
from physlayout.runtime.opencl import OpenCLRuntime, compile_module, module_text, parse_module
from physlayout.universe import make_context

EXAMPLE = "rfc_conv_relu_conv.mlir"


def demo_source() -> str:
    """The text of `examples/rfc_conv_relu_conv.mlir`."""
    return (resources.files("physlayout") / "examples" / EXAMPLE).read_text()


RTOL = 1e-4
"""The largest relative error (max |opencl - numpy| / max |numpy|) the demo accepts."""

SHOWN_KERNEL = "transform_x"
"""The demo prints the kernel whose name contains this (all of them with --verbose): the
input's NCHW -> NCHW4c texture transform."""


def _banner(title: str) -> None:
    print(f"\n{'=' * 8} {title} {'=' * max(4, 70 - len(title))}")


def graph_summary(module: ModuleOp) -> str:
    """Layout rewrites, copies and scopes of a graph-level module, in one line."""
    counts = Counter(op.name for op in module.walk())
    scopes = Counter(
        producer_scope(result)
        for op in module.walk()
        for result in op.results
        if isinstance(result.type, TensorType) and op.name != "tensor.empty"
    )
    shown = ", ".join(f"{scope}: {n}" for scope, n in sorted(scopes.items()))
    return (
        f"layout.transform: {counts['layout.transform']}, layout.crop: {counts['layout.crop']}, "
        f"layout.copy: {counts['layout.copy']}, frozen convs: "
        f"{sum(1 for op in module.walk() if 'layout.frozen' in op.attributes)}; "
        f"tensors by scope: {shown}"
    )


def stage_line(stage: str, module: ModuleOp) -> str:
    """One line for the graph after `stage`: its op count, the layout rewrites left, the
    copies between scopes and how many tensors each scope holds."""
    counts = Counter(op.name for op in module.walk() if not isinstance(op, ModuleOp))
    scopes = Counter(
        producer_scope(result)
        for op in module.walk()
        for result in op.results
        if isinstance(result.type, TensorType) and op.name != "tensor.empty"
    )
    rewrites = sum(counts[name] for name in ("layout.transform", "layout.pad", "layout.crop"))
    shown = ", ".join(f"{scope} {n}" for scope, n in sorted(scopes.items()))
    return (
        f"  {stage:<23}{counts.total():>4} ops, {rewrites} transforms left, "
        f"{counts['layout.copy']} copies; scopes: {shown}"
    )


def kernel_source(source: str, name: str) -> str:
    """The text of `__kernel void NAME(...) {...}` in the OpenCL C `source` (a kernel ends
    at the first line that is a lone `}`)."""
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"__kernel void {name}("))
    end = next(i for i in range(start, len(lines)) if lines[i] == "}")
    return "\n".join(lines[start : end + 1])


def conv_relu_conv(x: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """The example's semantics in plain numpy (float64)."""

    def conv(a: np.ndarray, w: np.ndarray) -> np.ndarray:
        kh, kw = w.shape[2:]
        windows = np.lib.stride_tricks.sliding_window_view(a, (kh, kw), axis=(2, 3))
        return np.einsum("nchwij,fcij->nfhw", windows, w, optimize=True)

    x64, w164, w264 = (np.asarray(v, dtype=np.float64) for v in (x, w1, w2))
    return conv(np.maximum(conv(x64, w164), 0.0), w264)


def run_demo(
    device: str | None = None, seed: int = 0, text: str | None = None, verbose: bool = False
) -> float:
    """Run the demo (on `text`, default the RFC example) and print it: one line per stage,
    one kernel's OpenCL C, the kernel times and a verdict line (`OK: max |opencl - numpy| =
    ...`, or `MISMATCH: ...` beyond `RTOL`); `verbose` prints every stage's IR and all the
    OpenCL C instead of the one-line summaries. Returns the largest relative error against
    numpy."""
    source = parse_module(text or demo_source(), f"examples/{EXAMPLE}")
    runtime = OpenCLRuntime(device)
    limits = runtime.limits.image_limits()
    kernels: list[str] = []
    if verbose:
        _banner("source: an NCHW graph (conv -> relu -> conv)")
        print(module_text(source))
        print(graph_summary(source))
    else:
        print(f"examples/{EXAMPLE}: an NCHW graph, conv -> relu -> conv, through physlayout-adreno")
        print("(physlayout demo --verbose prints each stage's IR and all the OpenCL C)")
        print("stages:")
        print(stage_line("source", source))

    def show(previous: ModulePass | None, module: ModuleOp, _next: ModulePass | None) -> None:
        if previous is None:
            return
        if previous.name == "legalize-layout":
            kernels.extend(
                op.sym_name.data
                for op in module.ops
                if isinstance(op, func.FuncOp) and op.sym_name.data != "main"
            )
        if not verbose:
            if previous.name in GRAPH_STAGES:
                print(stage_line(previous.name, module))
            elif previous.name == "legalize-layout":
                print(f"  {'legalize-layout':<23}{len(kernels):>4} kernels, launched by host @main")
            return
        if previous.name in GRAPH_STAGES:
            _banner(f"after {previous.name}")
            print(module_text(module))
            print(graph_summary(module))
        elif previous.name == "legalize-layout":
            _banner("after legalize-layout: the host function and its kernels")
            for op in module.ops:
                if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
                    Printer().print_op(op)
                    print()
            print(f"kernels: {', '.join(kernels)}")

    lowered = source.clone()
    adreno = PhyslayoutAdrenoPass(max_image_width=limits.max_width, max_image_height=limits.max_height)
    adreno.pipeline(show).apply(make_context(), lowered)
    compiled = compile_module(lowered, runtime, lowered_already=True)
    if verbose:
        _banner("generated OpenCL C (-t opencl)")
        print(compiled.program.source)
    else:
        lines = compiled.program.source.count("\n")
        print(f"  {'-t opencl':<23}{lines:>4} lines of OpenCL C")
        shown = next((k for k in kernels if SHOWN_KERNEL in k), kernels[0])
        print(f"\none kernel, {shown}:")
        print(kernel_source(compiled.program.source, shown))
    entry = next(op for op in source.ops if isinstance(op, func.FuncOp))
    rng = np.random.default_rng(seed)
    inputs: list[Any] = [
        rng.uniform(-1.0, 1.0, tuple(t.get_shape())).astype(np.float32)
        for t in entry.function_type.inputs.data
        if isinstance(t, TensorType)
    ]
    (out_type,) = entry.function_type.outputs.data
    assert isinstance(out_type, TensorType)
    y = np.zeros(tuple(out_type.get_shape()), dtype=np.float32)
    if verbose:
        _banner(f"run @main on {runtime.describe()}")
    else:
        print(f"\nrun @main on {runtime.describe()}:")
    result = execute(compiled, entry.sym_name.data, [*inputs, y])
    for time in result.times:
        print(f"  kernel {time.kernel:<24} {time.seconds * 1e3:10.3f} ms")
    print(f"  total                           {result.total_seconds * 1e3:10.3f} ms")
    reference = conv_relu_conv(*inputs)
    error = float(np.max(np.abs(y - reference)))
    relative = error / float(np.max(np.abs(reference)))
    verdict = "OK" if relative <= RTOL else "MISMATCH"
    print(
        f"{verdict}: max |opencl - numpy| = {error:.3g} (relative {relative:.3g}, "
        f"rtol {RTOL:g}; output NCHW {list(y.shape)})"
    )
    return relative
