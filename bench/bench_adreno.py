"""End-to-end benchmark of the Adreno pipeline (not a test): the RFC example
`examples/rfc_conv_relu_conv.mlir` (x 2x64x56x56, conv -> relu -> conv, NCHW in and out).

1. Compile time: each pass of `physlayout-adreno` (CPU seconds in this process) and the
   OpenCL build.
2. Standalone layout kernels after folding: the layout-rewrite and copy kernels left in the
   host function (only graph-boundary rewrites should remain).
3. Each generated kernel's device time (median over REPEATS runs of the host function,
   OpenCL profiling events), the bytes it moves (every buffer it reads or writes, once) as
   effective bandwidth, as a ratio to a hand-written float4 copy kernel of the same bytes
   (`bench_opencl.COPY4`, the bandwidth bound), and the whole graph against numpy (einsum
   conv -> relu -> conv in float32).

Results go to a section of bench/RESULTS.md (other sections are kept). Usage:
`python bench/bench_adreno.py [--device SPEC] [--no-write]`.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections import defaultdict
from math import prod
from pathlib import Path

import numpy as np
from bench_opencl import RESULTS, _copy4_seconds  # pyright: ignore[reportPrivateUsage]
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from physlayout.runtime.demo import conv_relu_conv, demo_source
from physlayout.runtime.host import execute
from physlayout.runtime.opencl import OpenCLRuntime, compile_module, parse_module
from physlayout.transforms.adreno_pipeline import adreno_pipeline
from physlayout.universe import make_context

REPEATS = 5
SECTION = "## Adreno pipeline end to end: the RFC example (bench_adreno.py)"
LAYOUT_KINDS = ("_transform_", "_copy", "_crop_", "_pad_")


def _compile(runtime: OpenCLRuntime) -> tuple[object, list[tuple[str, float]], ModuleOp]:
    source = parse_module(demo_source())
    lowered = source.clone()
    times: list[tuple[str, float]] = []
    clock = [time.process_time()]

    def tick(previous: ModulePass | None, _module: ModuleOp, _next: ModulePass | None) -> None:
        now = time.process_time()
        if previous is not None:
            times.append((previous.name, now - clock[0]))
        clock[0] = time.process_time()

    limits = runtime.limits.image_limits()
    adreno_pipeline(
        tick, max_image_width=limits.max_width, max_image_height=limits.max_height
    ).apply(make_context(), lowered)
    start = time.perf_counter()
    compiled = compile_module(lowered, runtime)
    times.append(("OpenCL build (wall)", time.perf_counter() - start))
    return compiled, times, lowered


def run(device: str | None) -> list[str]:
    warnings.filterwarnings("ignore", message=".*retrieved more than once.*")
    runtime = OpenCLRuntime(device)
    compiled, compile_times, lowered = _compile(runtime)
    host = next(op for op in lowered.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    calls = [op.callee.root_reference.data for op in host.walk() if isinstance(op, func.CallOp)]
    layout_kernels = [c for c in calls if any(kind in c for kind in LAYOUT_KINDS)]
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (2, 64, 56, 56)).astype(np.float32)
    w1 = rng.uniform(-1, 1, (32, 64, 3, 3)).astype(np.float32)
    w2 = rng.uniform(-1, 1, (32, 32, 3, 3)).astype(np.float32)
    y = np.zeros((2, 32, 52, 52), dtype=np.float32)
    samples: dict[str, list[float]] = defaultdict(list)
    totals: list[float] = []
    for _ in range(REPEATS):
        result = execute(compiled, "main", [x, w1, w2, y])  # type: ignore[arg-type]
        totals.append(result.total_seconds)
        for launch in result.times:
            samples[launch.kernel].append(launch.seconds)
    reference = conv_relu_conv(x, w1, w2)
    error = float(np.max(np.abs(y - reference)) / np.max(np.abs(reference)))
    numpy_times: list[float] = []
    for _ in range(3):
        start = time.perf_counter()
        conv_relu_conv(x, w1, w2)
        numpy_times.append(time.perf_counter() - start)
    program = compiled.program  # type: ignore[attr-defined]
    moved = {
        launch.kernel: sum(4 * prod(arg.physical_shape) for arg in info.args if arg.kind != "scalar")
        for info in program.kernels.values()
        for launch in info.launches
    }
    lines = [
        SECTION,
        "",
        f"Device: {runtime.describe()}. Median of {REPEATS} runs of the host function; the",
        "copy column is a float4 copy kernel moving the same bytes (half read, half written).",
        "",
        "| kernel | device time | bytes moved | GB/s | vs copy of the same bytes |",
        "|---|---|---|---|---|",
    ]
    for kernel, seconds in samples.items():
        median = statistics.median(seconds)
        size = moved[kernel]
        copy = _copy4_seconds(runtime, max(4, (size // 8) // 4 * 4))
        lines.append(
            f"| {kernel} | {median * 1e3:.3f} ms | {size / 1e6:.2f} MB | "
            f"{size / median / 1e9:.2f} | {copy / median:.2f}x |"
        )
    total = statistics.median(totals)
    lines += [
        "",
        f"Whole graph: {total * 1e3:.1f} ms on the device vs {statistics.median(numpy_times) * 1e3:.1f}"
        f" ms for numpy (einsum, float64); max relative error {error:.2g}.",
        f"Standalone layout kernels left: {len(layout_kernels)} of {len(calls)} launches "
        f"({', '.join(layout_kernels)}): the graph-boundary rewrites of x, w1, w2 and the result.",
        "The convs are compute-bound (about 107M and 50M multiply-adds): each output texel",
        "reads one input texel per input channel (4 lanes used one at a time) and one weight",
        "texel per (channel, kh, kw), all software-emulated image reads on PoCL.",
        "",
        "| compile stage | seconds |",
        "|---|---|",
        *(f"| {name} | {seconds:.2f} |" for name, seconds in compile_times),
        "",
    ]
    return lines


def write_section(lines: list[str]) -> None:
    """Replace this benchmark's section of RESULTS.md (or append it), keeping the others."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    start = text.find(SECTION)
    if start >= 0:
        end = text.find("\n## ", start + len(SECTION))
        text = text[:start] + (text[end + 1 :] if end >= 0 else "")
    text = text.rstrip("\n") + "\n\n" + "\n".join(lines)
    Path(RESULTS).write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default=None, help="PLATFORM[:INDEX] (see runtime/opencl.py)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    lines = run(args.device)
    print("\n".join(lines))
    if not args.no_write:
        write_section(lines)


if __name__ == "__main__":
    main()
