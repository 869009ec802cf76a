"""f16 against f32 on the example graphs (not a test): each graph of `examples/` run through
`physlayout-adreno` as written (f32) and after `to-mixed-precision` (f16 storage, f32
arithmetic and accumulation, f32 inputs and results: what `physlayout run --precision f16`
runs), on the same device in the same process.

Per graph and precision: the kernel launches, the bytes they move per inference (every
buffer or image argument of every launch, read or written, once: elements x 2 bytes for
f16, 4 for f32), the device time per inference (median of REPEATS runs of the host
function, OpenCL profiling events), and the error of the f16 result against the f32 one
(max |f16 - f32| / max |f32|, same inputs). Without cl_khr_fp16 (PoCL) f16 is storage only:
kernels compute in float and round to half where the IR rounds (docs/f16.md).

Results go to a section of bench/RESULTS.md (other sections are kept). Usage:
`python bench/bench_f16.py [--device SPEC] [--no-write]`.
"""

from __future__ import annotations

import statistics
import warnings
from pathlib import Path

import numpy as np
from results import device_main, machine
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.host import execute
from physlayout.runtime.model_report import bytes_per_inference
from physlayout.runtime.opencl import CompiledModule, compile_module, parse_module
from physlayout.transforms.to_mixed_precision import ToMixedPrecisionPass
from physlayout.universe import make_context

REPEATS = 3
SECTION = "## f16 storage against f32 on the example graphs (bench_f16.py)"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GRAPHS = (("rfc_conv_relu_conv.mlir", "main"), ("graph_conv_bias_conv.mlir", "conv_bias_conv"))


def _compile(source: ModuleOp, runtime: OpenCLRuntime) -> CompiledModule:
    lowered = source.clone()
    limits = runtime.limits.image_limits()
    PhyslayoutAdrenoPass(
        max_image_width=limits.max_width, max_image_height=limits.max_height
    ).apply(make_context(), lowered)
    return compile_module(lowered, runtime)


def _run(compiled: CompiledModule, name: str, inputs: list[np.ndarray], shapes: list[tuple[int, ...]]) -> tuple[np.ndarray, float, int, int]:
    """(result, median device seconds, bytes moved, launches) of `REPEATS` inferences."""
    totals: list[float] = []
    output = np.zeros(shapes[0], np.float32)
    kernels: list[str] = []
    for _ in range(REPEATS):
        output = np.zeros(shapes[0], np.float32)
        result = execute(compiled, name, [*inputs, output])
        totals.append(result.total_seconds)
        kernels = [t.kernel for t in result.times]
    return output, statistics.median(totals), bytes_per_inference(compiled, kernels), len(kernels)


def run(device: str | None) -> list[str]:
    warnings.filterwarnings("ignore", message=".*retrieved more than once.*")
    runtime = OpenCLRuntime(device)
    lines = [
        f"Device: {runtime.describe()} (cl_khr_fp16: {'yes' if runtime.limits.fp16 else 'no'}; "
        f"f16 is {'half arithmetic' if runtime.half_arithmetic else 'storage only, computed in float'}). "
        f"Median of {REPEATS} inferences per row.",
        machine(),
        "",
        "| graph | precision | launches | bytes moved per inference | device time per inference | max abs error / max abs f32 |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for file, name in GRAPHS:
        source = parse_module((EXAMPLES / file).read_text())
        function = next(
            op for op in source.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name
        )
        single = ModuleOp([function.clone()])
        rng = np.random.default_rng(0)
        inputs = [
            rng.uniform(-1, 1, tuple(t.get_shape())).astype(np.float32)
            for t in function.function_type.inputs.data
            if isinstance(t, TensorType)
        ]
        shapes = [
            tuple(t.get_shape()) for t in function.function_type.outputs.data if isinstance(t, TensorType)
        ]
        mixed = single.clone()
        ToMixedPrecisionPass().apply(make_context(), mixed)
        exact, f32_time, f32_bytes, f32_launches = _run(_compile(single, runtime), name, inputs, shapes)
        half, f16_time, f16_bytes, f16_launches = _run(_compile(mixed, runtime), name, inputs, shapes)
        error = float(np.max(np.abs(half - exact)) / np.max(np.abs(exact)))
        lines += [
            f"| {file} @{name} | f32 | {f32_launches} | {f32_bytes / 1e6:.2f} MB | {f32_time * 1e3:.2f} ms | |",
            f"| {file} @{name} | f16 | {f16_launches} | {f16_bytes / 1e6:.2f} MB ({f16_bytes / f32_bytes:.2f}x) "
            f"| {f16_time * 1e3:.2f} ms ({f16_time / f32_time:.2f}x) | {error:.2e} |",
        ]
    lines += [
        "",
        "to-mixed-precision adds no kernel: parameters and accumulators are rounded by the ops",
        "that read them. The bytes barely drop on these graphs because their parameters stay",
        "f32 (keep-io-f32) and are laid out on every inference; with the parameters prepared",
        "once (`to-mixed-precision{params-f16=true},physlayout-adreno{lift-params=true}`) the",
        "weights are f16 textures: see the f16-prepared section of bench_models.py.",
    ]
    return lines


def main() -> None:
    device_main(__doc__, SECTION, run)


if __name__ == "__main__":
    main()
