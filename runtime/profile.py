"""Where an inference's device time goes: a per-kernel profile against the device's measured
peaks, and a Chrome/Perfetto trace of one inference.

`measure_peaks(runtime)` runs two micro-kernels on the device and keeps the best of a few
runs: an FMA-bound one (independent `float8` multiply-add chains: 1 MAC per lane per step)
gives GMAC/s, a bandwidth-bound one (a `float4` copy of 64 MiB) gives GB/s (bytes read plus
written). The profile's shares are of these measured numbers, not of a data sheet's.

`profile_lines(plan, stats, result, peaks)` groups the launches of a run by kernel function:
launches, device ms and share of the run, the multiplies its IR executes
(`runtime/kernel_stats.py`) per device second as GMAC/s and their share of the FMA peak,
the bytes of the buffers and images each launch binds (each once: a lower bound of its
traffic) per device second as GB/s and their share of the copy peak, and the source lines
its ops came from. `chrome_trace(result)` is the run's launches as complete events ("X")
on one track, in microseconds from the first launch's start, for chrome://tracing or
Perfetto.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from physlayout.runtime.device import OpenCLRuntime, pyopencl_module
from physlayout.runtime.host import RunResult
from physlayout.runtime.kernel_stats import KernelStats
from physlayout.runtime.plan import Launch, Plan, StorageArg

_FMA_STEPS = 256
_FMA_CHAINS = 8
_FMA_LANES = 8


def _peak_kernels() -> str:
    """The micro-kernels: `fma_peak` keeps `_FMA_CHAINS` independent `float8` multiply-add
    chains per work-item (the fastest shape of those tried on PoCL's AVX2 CPU device;
    arrays of accumulators or `float4` chains measured 2-5x lower), `copy_peak` copies
    `float4`s."""
    t = f"float{_FMA_LANES}"
    chains = range(_FMA_CHAINS)
    first = "\n".join(f"  {t} a{c} = ({t})((float)get_global_id(0) + {c}.0f);" for c in chains)
    step = "\n".join(f"    a{c} = fma(a{c}, x, y);" for c in chains)
    total = " + ".join(f"a{c}" for c in chains)
    return (
        f"__kernel void fma_peak(__global {t} *out, float a, float b) {{\n"
        f"  const {t} x = ({t})(a), y = ({t})(b);\n{first}\n"
        f"  for (int s = 0; s < {_FMA_STEPS}; ++s) {{\n{step}\n  }}\n"
        f"  out[get_global_id(0)] = {total};\n}}\n"
        "__kernel void copy_peak(__global const float4 *src, __global float4 *dst) {\n"
        "  dst[get_global_id(0)] = src[get_global_id(0)];\n}\n"
    )


@dataclass(frozen=True)
class Peaks:
    """The device's measured peaks."""

    gmacs: float
    """f32 multiply-adds per second, in billions."""
    gbs: float
    """Bytes copied (read + written) per second, in billions."""


_MEASURED: dict[str, Peaks] = {}


def measure_peaks(runtime: OpenCLRuntime, repeats: int = 3) -> Peaks:
    """The device's peaks (module docstring), measured once per device and process."""
    key = runtime.describe()
    if key in _MEASURED:
        return _MEASURED[key]
    cl = pyopencl_module()
    program = runtime.build(_peak_kernels())
    items = 16384 * max(1, int(runtime.device.max_compute_units))
    out = cl.Buffer(runtime.context, cl.mem_flags.WRITE_ONLY, items * 4 * _FMA_LANES)
    fma = cl.Kernel(program, "fma_peak")
    fma.set_args(out, np.float32(0.999), np.float32(0.001))
    fma_seconds = _best(runtime, fma, (items,), repeats)
    elements = 4 * 1024 * 1024  # float4s: 64 MiB
    src = cl.Buffer(runtime.context, cl.mem_flags.READ_WRITE, elements * 16)
    dst = cl.Buffer(runtime.context, cl.mem_flags.READ_WRITE, elements * 16)
    cl.enqueue_fill_buffer(runtime.queue, src, np.float32(1.0), 0, elements * 16)
    copy = cl.Kernel(program, "copy_peak")
    copy.set_args(src, dst)
    copy_seconds = _best(runtime, copy, (elements,), repeats)
    macs = items * _FMA_CHAINS * _FMA_STEPS * _FMA_LANES
    peaks = Peaks(macs / fma_seconds * 1e-9, 2 * elements * 16 / copy_seconds * 1e-9)
    _MEASURED[key] = peaks
    return peaks


def _best(runtime: OpenCLRuntime, kernel: Any, size: tuple[int, ...], repeats: int) -> float:
    cl = pyopencl_module()
    best = float("inf")
    for _ in range(repeats + 1):  # the first run warms up
        event = cl.enqueue_nd_range_kernel(runtime.queue, kernel, size, (64,))
        event.wait()
        best = min(best, (event.profile.end - event.profile.start) * 1e-9)
    return best


@dataclass
class KernelProfile:
    """The launches of one kernel function in a run."""

    function: str
    launches: int = 0
    seconds: float = 0.0
    multiplies: int | None = 0
    bytes: int = 0
    sources: tuple[str, ...] = ()


def kernel_profiles(
    plan: Plan, stats: Mapping[str, KernelStats] | None, result: RunResult
) -> list[KernelProfile]:
    """The run's launches grouped by kernel function, most device time first."""
    by_kernel = {s.kernel: s for s in (*plan.prepare, *plan.steps) if isinstance(s, Launch)}
    profiles: dict[str, KernelProfile] = {}
    for time in result.times:
        known = (stats or {}).get(time.function)
        profile = profiles.setdefault(
            time.function,
            KernelProfile(time.function, sources=known.sources if known is not None else ()),
        )
        profile.launches += 1
        profile.seconds += time.seconds
        if profile.multiplies is not None:
            per_launch = known.multiplies if known is not None else None
            profile.multiplies = None if per_launch is None else profile.multiplies + per_launch
        step = by_kernel.get(time.kernel)
        if step is not None:
            bound = {a.storage for a in step.args if isinstance(a, StorageArg)}
            profile.bytes += sum(plan.storages[i].bytes for i in bound)
    return sorted(profiles.values(), key=lambda p: -p.seconds)


def profile_lines(
    plan: Plan, stats: Mapping[str, KernelStats] | None, result: RunResult, peaks: Peaks
) -> list[str]:
    """The profile table of `result` (module docstring)."""
    total = result.total_seconds
    lines = [
        f"profile: @{plan.entry}: {len(result.times)} launch(es), {total * 1e3:.3f} ms device "
        f"time; measured peaks: {peaks.gmacs:.1f} GMAC/s (f32 FMA), {peaks.gbs:.1f} GB/s (copy)",
        f"  {'kernel':<28} {'launches':>8} {'device ms':>10} {'share':>6} {'GMAC/s':>8} "
        f"{'of peak':>7} {'GB/s':>7} {'of peak':>7}  from",
    ]
    for p in kernel_profiles(plan, stats, result):
        seconds = max(p.seconds, 1e-12)
        gmacs = "-" if p.multiplies is None else f"{p.multiplies / seconds * 1e-9:.2f}"
        mac_share = "-" if p.multiplies is None else f"{p.multiplies / seconds * 1e-9 / peaks.gmacs:.1%}"
        gbs = p.bytes / seconds * 1e-9
        share = p.seconds / total if total > 0 else 0.0
        lines.append(
            f"  {p.function:<28} {p.launches:>8} {p.seconds * 1e3:>10.3f} {share:>6.1%} "
            f"{gmacs:>8} {mac_share:>7} {gbs:>7.2f} {gbs / peaks.gbs:>7.1%}  "
            + (" ".join(p.sources) or "-")
        )
    return lines


def chrome_trace(result: RunResult, name: str = "inference") -> dict[str, Any]:
    """The launches of `result` as a Chrome trace (module docstring)."""
    starts = [t.start for t in result.times]
    origin = min(starts) if starts else 0.0
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": name}},
        {"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "device"}},
    ]
    for time in result.times:
        events.append({
            "name": time.kernel, "cat": time.function, "ph": "X", "pid": 0, "tid": 0,
            "ts": (time.start - origin) * 1e6, "dur": time.seconds * 1e6,
            "args": {"global_size": list(time.global_size)},
        })  # fmt: skip
    return {"traceEvents": events, "displayTimeUnit": "ms"}
