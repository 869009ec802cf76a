"""f16 against f32 on the example graphs (not a test): each graph of `examples/` run through
`physlayout-adreno` as written (f32) and after `to-mixed-precision` (f16 storage, f32
arithmetic and accumulation, f32 inputs and results: what `physlayout run --precision f16`
runs), on the same device in the same process.

Both go through the Python API as a user calls it (`physlayout.compile(source, entry=...,
precision=..., prepare=False)`, the compile cache off). Per graph and precision: the kernel
launches, the bytes they move per inference (every storage a launch binds, read or written,
once: what `physlayout run --profile` counts), the wall and device time per call (medians
of REPEATS calls after a warm-up, `CompiledModel.time`), and the error of the f16 result
against the f32 one (max |f16 - f32| / max |f32|, same inputs). Without cl_khr_fp16 (PoCL) f16 is storage only:
kernels compute in float and round to half where the IR rounds (docs/f16.md).

Results go to a section of bench/RESULTS.md (other sections are kept). Usage:
`python bench/bench_f16.py [--device SPEC] [--no-write]`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from results import device_main, machine

import physlayout
from physlayout.api import Timing
from physlayout.runtime.profile import kernel_profiles

REPEATS = 5
SECTION = "## f16 storage against f32 on the example graphs (bench_f16.py)"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GRAPHS = (("rfc_conv_relu_conv.mlir", "main"), ("graph_conv_bias_conv.mlir", "conv_bias_conv"))


def _measure(
    model: physlayout.CompiledModel, inputs: dict[str, np.ndarray]
) -> tuple[np.ndarray, Timing, int]:
    """(the result, the timing of REPEATS calls, the bytes one call's launches bind)."""
    result = model.run(inputs)
    moved = sum(p.bytes for p in kernel_profiles(model.plan, model.artifact.stats, result))
    timing = model.time(inputs, repeat=REPEATS, warmup=1)
    return result.outputs[model.outputs[0].name], timing, moved


def run(device: str | None) -> list[str]:
    warnings.filterwarnings("ignore", message=".*retrieved more than once.*")
    lines: list[str] = []
    for file, name in GRAPHS:
        text = (EXAMPLES / file).read_text()
        models = {
            precision: physlayout.compile(
                text, entry=name, precision=precision, device=device, prepare=False, cache=False
            )
            for precision in ("f32", "f16")
        }
        if not lines:
            runtime = models["f32"].session.runtime
            lines = [
                f"Device: {runtime.describe()} (cl_khr_fp16: "
                f"{'yes' if runtime.limits.fp16 else 'no'}; f16 is "
                f"{'half arithmetic' if runtime.half_arithmetic else 'storage only, computed in float'}; "
                f"textures as {runtime.limits.texture_storage}s). Medians of {REPEATS} calls per row.",
                machine(),
                "",
                "| graph | precision | launches | bytes moved per inference | wall ms per call | device ms per call | max abs error / max abs f32 |",
                "|---|---|---:|---:|---:|---:|---:|",
            ]
        rng = np.random.default_rng(0)
        inputs = {
            p.name: rng.uniform(-1, 1, p.shape).astype(np.float32) for p in models["f32"].inputs
        }
        exact, f32, f32_bytes = _measure(models["f32"], inputs)
        half, f16, f16_bytes = _measure(models["f16"], inputs)
        error = float(np.max(np.abs(half - exact)) / np.max(np.abs(exact)))
        lines += [
            f"| {file} @{name} | f32 | {f32.launches} | {f32_bytes / 1e6:.2f} MB "
            f"| {f32.wall_ms:.2f} | {f32.device_ms:.2f} | |",
            f"| {file} @{name} | f16 | {f16.launches} | {f16_bytes / 1e6:.2f} MB "
            f"({f16_bytes / f32_bytes:.2f}x) | {f16.wall_ms:.2f} ({f16.wall_ms / f32.wall_ms:.2f}x) "
            f"| {f16.device_ms:.2f} ({f16.device_ms / f32.device_ms:.2f}x) | {error:.2e} |",
        ]
    lines += [
        "",
        "to-mixed-precision adds no kernel: parameters and accumulators are rounded by the ops",
        "that read them. The bytes barely drop on these graphs because their parameters stay",
        "f32 (keep-io-f32) and are laid out on every inference (`prepare=False`); with the",
        "parameters prepared once (the default) the weights are f16 textures: see the",
        "f16-prepared section of bench_models.py. On a device without cl_khr_fp16 (PoCL)",
        "an f16 texture held as a buffer is read with `vload_half4`, which this driver",
        "converts in software: f16 storage saves bytes there but not time.",
    ]
    return lines


def main() -> None:
    device_main(__doc__, SECTION, run)


if __name__ == "__main__":
    main()
