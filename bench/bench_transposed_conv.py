"""Transposed convolutions over their contributing taps (`fuse-transposed-conv`, #41): the
shipped autoencoder_transpose (a ConvTranspose2d(32, 16, 3, stride 2, padding 1,
output_padding 1) that torch-mlir prints as a zero-spread insert_slice and a stride-1 conv)
through `physlayout-adreno` with and without the pass, f32 and f16, on the local OpenCL
device.

Per run: launches per inference, the multiplies the launches execute (`kernel_stats`, summed
over one inference's launches), of which the transposed conv's (the difference between the
runs is all its: nothing else changes), and the error against PyTorch's outputs. The source's
MACs of the transposed conv are ``C_in * C_out * K * K * H_in * W_in`` (every input pixel
times every tap, PyTorch's count, including the products output_padding/padding crop); the
zero-spread conv executes ``C_in * C_out * K * K * H_out * W_out``, the pass the taps that
land on the spread grid only (its tap guard skips the (phase, tap) nest's padded taps, which
``C_in * C_out * ceil(K/s)^2 * H_out * W_out`` would count). `|on - off|`: the largest
difference between the outputs with and without the pass (0: bit-identical). Writes its
section of bench/RESULTS.md.
Usage: `python bench/bench_transposed_conv.py [--no-write]`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from bench_models import load_inputs
from results import machine, write_section

from physlayout.runtime.model_report import ModelReport, run_model
from physlayout.runtime.opencl import OpenCLRuntime

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "examples" / "models"
SECTION = "## Transposed convolutions over contributing taps (bench_transposed_conv.py)"
NAME = "autoencoder_transpose"
C_IN, C_OUT, K, S, H_IN, H_OUT = 32, 16, 3, 2, 8, 16
"""dec1 of the model: ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1) on 8x8."""

SOURCE_MACS = C_IN * C_OUT * K * K * H_IN * H_IN
SPREAD_MACS = C_IN * C_OUT * K * K * H_OUT * H_OUT
NEST_MACS = C_IN * C_OUT * (-(-K // S)) ** 2 * H_OUT * H_OUT
"""The rectangular (phase, tap) nest, padded taps included (the pass without its guard)."""
PAD = K - 1 - 1  # the insert's offset: K - 1 - padding
TAPS_PER_AXIS = sum((oy + ky - PAD) % S == 0 for oy in range(H_OUT) for ky in range(K))
TAPS_MACS = C_IN * C_OUT * TAPS_PER_AXIS**2
"""The taps on the spread grid: per axis 8 rows of 2 taps and 8 of 1 (24 of 48)."""


def run(runtime: OpenCLRuntime, precision: str, transposed: bool) -> ModelReport:
    text = (MODELS / f"{NAME}.mlir").read_text()
    with np.load(MODELS / f"{NAME}.expected.npz") as archive:
        expected = {k: archive[k] for k in archive.files}
    option = "" if transposed else "{transposed-conv=false}"
    pipeline = f"physlayout-adreno{option}"
    if precision == "f16":
        pipeline = f"to-mixed-precision,{pipeline}"
    return run_model(NAME, text, load_inputs(MODELS, NAME), expected, runtime, pipeline)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    runtime = OpenCLRuntime()
    lines = [
        machine(),
        f"Device: {runtime.describe()}. `{NAME}` (examples/models, inputs.py seed 0); its "
        f"transposed conv: {C_IN} -> {C_OUT} channels, {K}x{K}, stride {S}, {H_IN}x{H_IN} -> "
        f"{H_OUT}x{H_OUT}. Source MACs of the transposed conv (C_in*C_out*K*K*H_in*W_in): "
        f"{SOURCE_MACS}; the zero-spread stride-1 conv: {SPREAD_MACS}; the (phase, tap) nest "
        f"with its padded taps (ceil(K/s)^2 per output): {NEST_MACS}; the contributing taps "
        f"only: {TAPS_MACS}. Multiplies: kernel_stats over one inference's launches (guarded "
        "ones by how often they run); error = max|opencl - PyTorch| / max|PyTorch|.",
        "",
        "| precision | fuse-transposed-conv | launches | multiplies / inference | "
        "transposed conv's multiplies (difference) | error | max abs on - off |",
        "|---|---|---|---|---|---|---|",
    ]
    failed = False
    for precision in ("f32", "f16"):
        before = run(runtime, precision, transposed=False)
        after = run(runtime, precision, transposed=True)
        bound = 2e-2 if precision == "f16" else 1e-4
        failed |= max(before.max_error, after.max_error) > bound
        difference = max(
            float(np.max(np.abs(a.astype(np.float64) - b))) for a, b in zip(before.outputs, after.outputs, strict=True)
        )
        for report, on in ((before, "off"), (after, "on")):
            conv = SPREAD_MACS if on == "off" else None
            if on == "on" and before.multiplies is not None and after.multiplies is not None:
                conv = SPREAD_MACS - (before.multiplies - after.multiplies)
            lines.append(
                f"| {precision} | {on} | {report.launches} | {report.multiplies} | {conv} | "
                f"{report.max_error:.1e} | {difference if on == 'on' else '-'} |"
            )
            print(lines[-1], flush=True)
    print("\n".join(lines))
    if not args.no_write:
        write_section(SECTION, lines)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
