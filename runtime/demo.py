"""`make demo` / `physlayout demo`: the Adreno-style texture pipeline, end to end.

`examples/demo.mlir` holds four functions written against LOGICAL buffers: an NHWC input
becomes an NCHW4c texture (`@to_nchw4c`, a copy whose destination has the layout
schedule), `@relu` runs on the texture, `@conv2d` reads texture activations and OIHW4o
global weights and writes an NCHW4c texture, and the host function `@main` allocates the
intermediate textures and launches the three kernels. The demo prints the source, the IR
after each lowering pass, the generated OpenCL C, runs `@main` on the selected OpenCL
device (see `runtime/opencl.py`; PoCL on machines without a GPU) with seeded random
inputs, and compares every buffer with the numpy evaluator run on the source IR.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from physlayout.runtime.evaluator import run_function
from physlayout.runtime.host import execute
from physlayout.runtime.opencl import OpenCLRuntime, compile_module, module_text, parse_module


def demo_source() -> str:
    """The text of `examples/demo.mlir`."""
    return (resources.files("physlayout") / "examples" / "demo.mlir").read_text()


def _banner(title: str) -> None:
    print(f"\n{'=' * 8} {title} {'=' * max(4, 70 - len(title))}")


def run_demo(device: str | None = None, seed: int = 0) -> float:
    """Run the demo and print every stage; returns the largest relative error."""
    source = parse_module(demo_source(), "examples/demo.mlir")
    _banner("source: logical buffers, layouts and scopes as the schedule")
    print(module_text(source))
    runtime = OpenCLRuntime(device)
    compiled = compile_module(source, runtime, keep_stages=True)
    for name, text in compiled.stages:
        _banner(f"after {name}")
        print(text)
    _banner("generated OpenCL C (-t opencl)")
    print(compiled.program.source)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (1, 16, 16, 16)).astype(np.float32)
    weights = rng.uniform(-1.0, 1.0, (16, 16, 3, 3)).astype(np.float32)
    y = np.zeros((1, 14, 14, 16), dtype=np.float32)
    reference = [x.copy(), weights.copy(), y.copy()]
    _banner(f"run @main on {runtime.describe()}")
    result = execute(compiled, "main", [x, weights, y])
    run_function(source, "main", reference)
    error = float(np.max(np.abs(y - reference[2])))
    relative = error / float(np.max(np.abs(reference[2])))
    for time in result.times:
        print(f"  kernel {time.kernel:<12} {time.seconds * 1e6:10.1f} us")
    print(f"  total               {result.total_seconds * 1e6:10.1f} us")
    print(
        f"  output NHWC {list(y.shape)}: max |opencl - numpy| = {error:.3g} "
        f"(relative {relative:.3g})"
    )
    return relative
