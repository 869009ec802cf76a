"""Register-tiled schedules (issue 42, not a test): GMAC/s of each distinct convolution-like
kernel with today's schedule (one output texel per work-item, the runtime's work-groups)
and with `apply-schedules`' default heuristic, against the device's measured FMA peak.

Kernels: those `physlayout-adreno{schedule=false}` builds for the RFC example
(`examples/rfc_conv_relu_conv.mlir`: conv1 is 107.5M multiply-adds) and for the shared
models (default: bottleneck, squeezenet1_1, googlenet), each kernel with a reduction of at
least 50k multiply-adds, distinct kernels once, the largest `--per-model` of each model
(default 5). Each kernel runs alone on seeded inputs; its time is the fastest of the
OpenCL profiling events of `REPEATS` runs (after one warm-up run): on this shared 2-core
machine the others' jobs slow a run by up to 4x, and the fastest run is the one they
disturbed least. Multiply-adds are
counted from the IR: every `arith.mulf` inside the reduction loops, times the iterations
around it and its vector lanes.

Textures held as buffers (`texture-storage=buffer`, what `auto` picks on a CPU device) are
timed with the heuristic's schedule for the image register budget (`buffers, 128`: the
default before issue 42's second half), with its schedule for the budget of a CPU device
holding buffers (`buffers`, `CPU_BUFFER_REGISTERS`: today's default there), and that
schedule with contracted multiply-adds (`contracted`: `fp_contract`, one `fma` per
multiply-add; within 1e-5, not bit-exact). All columns of a row come from the same run.

The peak is measured, not assumed: a micro-kernel of 8 independent `fma` chains per
work-item, in `float8`, `float4`, and `float4` as separate multiply and add (what the
generated kernels compute without contraction: `FP_CONTRACT OFF` keeps them bit-exact with
the evaluator).

Results go to a section of bench/RESULTS.md. Usage: `python bench/bench_schedules.py
[--device SPEC] [--only NAMES] [--per-model N] [--no-write]`.
"""

from __future__ import annotations

import argparse
import time
import warnings
from math import prod
from pathlib import Path
from typing import Any

import numpy as np
from results import MODELS, machine, write_section
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ModuleOp, VectorType

from physlayout.dialects.layout import BufferType
from physlayout.dialects.layout_schedule import SCHEDULE, ScheduleAttr
from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.host import execute
from physlayout.runtime.opencl import compile_module, parse_module
from physlayout.semantics.evaluator_values import dtype_of
from physlayout.transforms.apply_schedules import ApplySchedulesPass, kernel_loop
from physlayout.transforms.schedule_heuristic import (
    DeviceModel,
    default_schedule,
    loop_ranges,
    trip_counts,
)
from physlayout.universe import make_context

SECTION = "## Register-tiled schedules: conv GMAC/s (bench_schedules.py)"
RFC = Path(__file__).resolve().parent.parent / "examples" / "rfc_conv_relu_conv.mlir"
DEFAULT_MODELS = ("bottleneck", "squeezenet1_1", "googlenet")
REPEATS = 10
MIN_MACS = 50_000

PEAK_KERNEL = """
__kernel void peak(__global TYPE* out, float b0, float c0) {
  TYPE b = (TYPE)(b0), c = (TYPE)(c0), a0 = (TYPE)((float)get_global_id(0));
  TYPE a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
  for (int i = 0; i < 1024; ++i) {
    a0 = OP(a0); a1 = OP(a1); a2 = OP(a2); a3 = OP(a3);
    a4 = OP(a4); a5 = OP(a5); a6 = OP(a6); a7 = OP(a7);
  }
  out[get_global_id(0)] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
"""


def peak_gmacs(runtime: OpenCLRuntime, vector: str, op: str) -> float:
    """Multiply-adds per second (G) of `PEAK_KERNEL` in type `vector` with `op`."""
    import pyopencl as cl

    lanes = int(vector.removeprefix("float") or 1)
    source = "#pragma OPENCL FP_CONTRACT OFF\n" + PEAK_KERNEL.replace("TYPE", vector).replace(
        "OP(a0)", op.replace("A", "a0")
    )
    for k in range(1, 8):
        source = source.replace(f"OP(a{k})", op.replace("A", f"a{k}"))
    program = cl.Program(runtime.context, source).build()
    items = 8192
    out = cl.Buffer(runtime.context, cl.mem_flags.WRITE_ONLY, items * 4 * lanes)
    kernel = program.peak
    kernel.set_args(out, np.float32(0.999), np.float32(0.001))
    best = float("inf")
    for _ in range(5):
        event = cl.enqueue_nd_range_kernel(runtime.queue, kernel, (items,), (256,))
        event.wait()
        best = min(best, (event.profile.end - event.profile.start) * 1e-9)
    return items * 1024 * 8 * lanes / best / 1e9


def macs(kernel: func.FuncOp) -> int:
    """Multiply-adds of one launch: every `arith.mulf` inside the reduction loops (`scf.for`
    with `iter_args`) times the iterations around it and its lanes."""
    loop = kernel_loop(kernel)
    ranges = loop_ranges(loop) if loop is not None else None
    if loop is None or ranges is None:
        return 0
    total = 0
    outer = prod(trip_counts(ranges))
    for op in loop.body.block.walk():
        if not isinstance(op, arith.MulfOp):
            continue
        count, reduced, parent = outer, False, op.parent_op()
        while parent is not None and parent is not loop:
            if isinstance(parent, scf.ForOp):
                bounds = loop_ranges_of_for(parent)
                if bounds is None:
                    return 0
                count *= bounds
                reduced = reduced or bool(parent.iter_args)
            parent = parent.parent_op()
        kind = op.result.type
        lanes = prod(kind.get_shape()) if isinstance(kind, VectorType) else 1
        total += count * lanes if reduced else 0
    return total


def loop_ranges_of_for(op: scf.ForOp) -> int | None:
    from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

    lower, upper, step = (const_evaluate_operand(v) for v in (op.lb, op.ub, op.step))
    if lower is None or upper is None or step is None or step <= 0:
        return None
    return max(0, -(-(upper - lower) // step))


def kernel_seconds(
    runtime: OpenCLRuntime, kernel: func.FuncOp, schedule: ScheduleAttr | None
) -> tuple[float, float]:
    """Median device seconds of `kernel` alone (with `schedule` applied) and its build time."""
    module = ModuleOp([kernel.clone()])
    copy = next(iter(module.ops))
    assert isinstance(copy, func.FuncOp)
    if schedule is not None:
        copy.attributes[SCHEDULE] = schedule
        ApplySchedulesPass().apply(make_context(), module)
    start = time.perf_counter()
    compiled = compile_module(module, runtime, lowered_already=True)
    build = time.perf_counter() - start
    rng = np.random.default_rng(0)
    args: list[Any] = []
    for arg in copy.body.block.args:
        if isinstance(arg.type, BufferType):
            shape = tuple(arg.type.get_shape())
            args.append(rng.uniform(-1, 1, shape).astype(dtype_of(arg.type.element_type)))
        else:
            args.append(1)
    samples: list[float] = []
    for _ in range(REPEATS + 1):
        result = execute(compiled, copy.sym_name.data, args)
        samples.append(sum(t.seconds for t in result.times))
    return min(samples[1:]), build


def distinct_kernels(path: Path, device: DeviceModel, per_model: int) -> list[func.FuncOp]:
    """The reduction kernels of `path` with at least `MIN_MACS`, each distinct body once,
    the `per_model` largest."""
    module = parse_module(path.read_text())
    options = {
        "compute_units": device.compute_units,
        "max_work_group_size": device.max_work_group_size,
    }
    PhyslayoutAdrenoPass(schedule=False, **options).apply(make_context(), module)
    found: dict[str, func.FuncOp] = {}
    for op in module.ops:
        if not isinstance(op, func.FuncOp) or macs(op) < MIN_MACS:
            continue
        body = str(op).replace(op.sym_name.data, "K")
        found.setdefault(body, op)
    return sorted(found.values(), key=macs, reverse=True)[:per_model]


def run(device_spec: str | None, only: list[str], per_model: int) -> list[str]:
    warnings.filterwarnings("ignore")
    runtime = OpenCLRuntime(device_spec)
    buffers = OpenCLRuntime(device_spec, texture_storage="buffer")
    contracting = OpenCLRuntime(device_spec, texture_storage="buffer", fp_contract=True)
    limits = runtime.limits
    device = DeviceModel(limits.compute_units, limits.max_work_group_size)
    budget = buffers.limits.registers or device.registers
    buffer_device = DeviceModel(
        limits.compute_units, limits.max_work_group_size, budget, buffers.limits.vector_items
    )
    peaks = {
        "float8 fma": peak_gmacs(runtime, "float8", "fma(A, b, c)"),
        "float4 fma": peak_gmacs(runtime, "float4", "fma(A, b, c)"),
        "float4 mul + add": peak_gmacs(runtime, "float4", "A * b + c"),
    }
    peak = max(peaks.values())
    paths = [("rfc_conv_relu_conv", RFC)] + [
        (m, MODELS / f"{m}.mlir") for m in only if m != "rfc_conv_relu_conv"
    ]
    rows: list[str] = []
    for name, path in paths:
        if not path.exists():
            rows.append(f"| {name} | (no file at {path}) | | | | | | |")
            continue
        started = time.perf_counter()
        for kernel in distinct_kernels(path, device, per_model):
            loop = kernel_loop(kernel)
            assert loop is not None
            schedule = default_schedule(loop, device)
            count = macs(kernel)
            old, _ = kernel_seconds(runtime, kernel, None)
            new, build = kernel_seconds(runtime, kernel, schedule) if schedule else (old, 0.0)
            flat_wide, _ = kernel_seconds(buffers, kernel, schedule)
            buffer_schedule = default_schedule(loop, buffer_device)
            flat, _ = kernel_seconds(buffers, kernel, buffer_schedule)
            fused, _ = kernel_seconds(contracting, kernel, buffer_schedule)
            ranges = loop_ranges(loop)
            trips = "x".join(str(t) for t in trip_counts(ranges or []))

            def tile_of(schedule: ScheduleAttr | None) -> str:
                return "none" if schedule is None else "x".join(str(t) for t in schedule.tile)

            def rate(seconds: float, count: int = count) -> str:
                return f"{seconds * 1e3:.2f} ms, {count / seconds / 1e9:.2f}"

            rows.append(
                f"| {name} | {kernel.sym_name.data} | {trips} | {count / 1e6:.1f} | "
                f"{tile_of(schedule)} | {rate(old)} | {rate(new)} | {old / new:.1f}x | "
                f"{build:.1f} s | {rate(flat_wide)} | {tile_of(buffer_schedule)} | {rate(flat)} | "
                f"{rate(fused)} | {count / fused / 1e9 / peak:.0%} |"
            )
        print(f"{name}: {time.perf_counter() - started:.0f} s", flush=True)
    return [
        f"Device: {runtime.describe()}, {limits.compute_units} compute units. {machine()}",
        "",
        "Measured peak (8 independent chains per work-item, GMAC/s): "
        + ", ".join(f"{k} {v:.1f}" for k, v in peaks.items())
        + ". The generated kernels multiply and add separately in float4 (bit-exact with the "
        "evaluator), so `float4 mul + add` is their ceiling; contracted (`fp_contract`), "
        "`float4 fma` is.",
        "",
        f"Each kernel alone, fastest of {REPEATS} runs (OpenCL profiling events; the machine "
        "is shared: the fastest run is the least disturbed one); GMAC/s "
        "counted from the IR's multiplies. `old`: images, one output texel per work-item; "
        "`default`: images, `apply-schedules`' heuristic (tile per parallel axis of the "
        "kernel's loop, image register budget 128). Build: PoCL's build time of that "
        "kernel. `buffers, 128`: that tile with textures held as buffers "
        "(`texture-storage=buffer`: the same texels, plain vector loads instead of the "
        f"driver's software image reads); `buffers`: the heuristic's tile for the register "
        f"budget of a CPU device holding buffers ({budget} 32-bit lanes: the default of "
        "`auto` here), and `vector-items` where the device runs work-items as SIMD lanes "
        f"({'on' if buffers.limits.vector_items else 'off'} here); `contracted`: that tile with `fp_contract` (`fma`, within 1e-5).",
        "",
        "| model | kernel | work-items (loop axes) | MMAC | image tile | old: ms, GMAC/s | "
        "default: ms, GMAC/s | speed-up | build | buffers, 128: ms, GMAC/s | buffer tile | "
        "buffers: ms, GMAC/s | contracted: ms, GMAC/s | contracted of peak |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="PLATFORM[:INDEX] (see runtime/opencl.py)")
    parser.add_argument("--only", default=",".join(DEFAULT_MODELS), help="shared models to include")
    parser.add_argument(
        "--per-model", type=int, default=5, help="largest distinct kernels per model"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    only = [m for m in args.only.split(",") if m]
    lines = run(args.device, only, args.per_model)
    print("\n".join(lines))
    if not args.no_write:
        write_section(SECTION, lines)


if __name__ == "__main__":
    main()
