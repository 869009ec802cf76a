"""The on-device schedule tuner (issue 42, not a test): per distinct convolution of the RFC
example and of a couple of shared models, GMAC/s of the unscheduled kernel, of
`apply-schedules`' heuristic and of the tuned schedule, all three timed in one tuning run
(`runtime/tuner.py`: each kernel alone on seeded inputs, median of its profiling events),
against the device's measured FMA peak (`runtime/profile.measure_peaks`); and the tuning
time per model (the pipeline up to `apply-schedules`, then the candidates within the
budget).

Models: `examples/rfc_conv_relu_conv.mlir` (conv1: 107.5M multiply-adds),
`examples/models/bottleneck.mlir` and the shared `squeezenet1_1`. Kernels: those the tuner
tunes with at least `MIN_MACS` multiply-adds per launch. The tuning cache is a temporary
file (the user's is not touched). Textures are held as `physlayout tune` holds them by
default (`auto`: buffers on a CPU device); each model is tuned twice, as compiled by
default (bit-exact) and with contracted multiply-adds (`fp_contract`: `fma`, within 1e-5;
the tuning cache keeps the two apart).

Results go to a section of bench/RESULTS.md. Usage: `python bench/bench_tune.py [--device
SPEC] [--budget SECONDS] [--only NAMES] [--no-write]`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

from results import MODELS, machine, write_section

from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.opencl import parse_module
from physlayout.runtime.profile import measure_peaks
from physlayout.runtime.tuner import tune_model
from physlayout.transforms.given_schedules import schedule_text

SECTION = "## Schedule tuner: conv GMAC/s unscheduled, heuristic, tuned (bench_tune.py)"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODELS = (
    ("rfc_conv_relu_conv", ROOT / "examples" / "rfc_conv_relu_conv.mlir"),
    ("bottleneck", ROOT / "examples" / "models" / "bottleneck.mlir"),
    ("squeezenet1_1", MODELS / "squeezenet1_1.mlir"),
)
PIPELINE = "physlayout-adreno{lift-params=true}"
MIN_MACS = 50_000
DEFAULT_BUDGET = 45.0


def run(device_spec: str | None, only: list[str], budget: float) -> list[str]:
    warnings.filterwarnings("ignore")
    runtime = OpenCLRuntime(device_spec, texture_storage="auto")
    contracting = OpenCLRuntime(device_spec, texture_storage="auto", fp_contract=True)
    peak = measure_peaks(runtime).gmacs
    rows: list[str] = []
    times: list[str] = []
    cache = Path(tempfile.mkdtemp(prefix="bench-tune-")) / "tuning.json"
    for name, path in DEFAULT_MODELS:
        if only and name not in only:
            continue
        if not path.exists():
            rows.append(f"| {name} | (no file at {path}) | | | | | | |")
            continue
        source = parse_module(path.read_text())
        started = time.perf_counter()
        report = tune_model(source, "main", runtime, pipeline=PIPELINE, budget=budget, cache=cache)
        total = time.perf_counter() - started
        fused = tune_model(
            source, "main", contracting, pipeline=PIPELINE, budget=budget, cache=cache
        )
        fused_best = {k.case.signature: k for k in fused.kernels}
        before = sum(k.unscheduled_seconds * k.case.launches for k in report.kernels)
        heuristic = sum(k.heuristic_seconds * k.case.launches for k in report.kernels)
        after = sum(k.best_seconds * k.case.launches for k in report.kernels)
        times.append(
            f"| {name} | {len(report.kernels)} | {report.timed} | {report.discarded} | "
            f"{report.seconds:.1f} s | {total:.1f} s | {before * 1e3:.2f} | "
            f"{heuristic * 1e3:.2f} | {after * 1e3:.2f} |"
        )
        for k in report.kernels:
            macs = k.case.multiplies or 0
            if macs < MIN_MACS:
                continue

            def rate(seconds: float, macs: int = macs) -> str:
                return f"{seconds * 1e3:.3f} ms, {macs / seconds / 1e9:.2f}"

            other = fused_best.get(k.case.signature)
            contracted = (
                f"{schedule_text(other.best)}: {rate(other.best_seconds)}" if other else "-"
            )
            rows.append(
                f"| {name} | {k.case.name} | {k.case.launches} | {macs / 1e6:.2f} | "
                f"{rate(k.unscheduled_seconds)} | {schedule_text(k.heuristic)}: "
                f"{rate(k.heuristic_seconds)} | {schedule_text(k.best)}: {rate(k.best_seconds)} | "
                f"{k.unscheduled_seconds / k.best_seconds:.1f}x | "
                f"{macs / k.best_seconds / 1e9 / peak:.0%} | {k.timed} | {contracted} |"
            )
        print(f"{name}: {total:.0f} s", flush=True)
    return [
        f"Device: {runtime.describe()}, driver {runtime.device.driver_version}, textures as "
        f"{runtime.limits.texture_storage}s (`auto`). {machine()}",
        "",
        f"Measured f32 FMA peak (runtime/profile.py): {peak:.1f} GMAC/s. Tuning budget "
        f"{budget:g} s per model (`physlayout tune --budget`), pipeline {PIPELINE}.",
        "",
        "Per distinct conv (at least 50k multiply-adds per launch), each kernel alone, median "
        "of 5 launches (profiling events), all three timed in the same tuning run. Schedules "
        "as the tuning cache writes them: `TILE/WORKGROUP[/uUNROLL]` per axis of the "
        "kernel's loop (batch, channel blocks, rows, columns). `contracted`: the model tuned "
        "again with `fp_contract` (its best schedule and time).",
        "",
        "| model | kernel | launches | MMAC | unscheduled: ms, GMAC/s | heuristic | tuned | "
        "tuned vs unscheduled | tuned of peak | candidates timed | contracted, tuned |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Tuning time per model (tuning: the candidates; total: with the pipeline up to "
        "apply-schedules), and the tuned kernels' device ms per call (launches x time):",
        "",
        "| model | distinct kernels | timed | discarded | tuning | total | unscheduled ms | "
        "heuristic ms | tuned ms |",
        "|---|---|---|---|---|---|---|---|---|",
        *times,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="PLATFORM[:INDEX] (see runtime/opencl.py)")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET, help="seconds per model")
    parser.add_argument("--only", default="", help="models to include (comma-separated)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    only = [m for m in args.only.split(",") if m]
    lines = run(args.device, only, args.budget)
    print("\n".join(lines))
    if not args.no_write:
        write_section(SECTION, lines)


if __name__ == "__main__":
    main()
