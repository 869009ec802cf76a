"""Time per call, side by side with IREE: what a user waits for when calling a compiled model
from Python repeatedly.

Per model of the models folder (default: the shared models beside the repository), in one
run on this machine:
- physlayout through the Python API (`physlayout.compile`, parameters bound: prepared once,
  resident on the device): median wall ms per call (inputs up, every launch, results
  down) and median device ms (the launches' profiling events), launches per call, and the
  wall time per launch spent outside the kernels;
- the same with `prepare=False` (every call relayouts the parameters again) as the
  before/after of prepared parameters;
- IREE (`iree-base-compiler` / `iree-base-runtime`, the optional `peers` extra), llvm-cpu
  for this CPU (`--iree-llvmcpu-target-cpu=host`), `local-sync`, the same file: arguments
  uploaded once with `asdevicearray`, the call plus `.to_host()` of its result timed. Absent
  (or failing to compile a model), its column says so.

On a GPU, `--iree-device cuda` puts IREE's CUDA build beside it instead (`--iree-cuda-target`,
default `sm_80`: this IREE refuses `sm_90` with "missing GPU target"; the driver compiles
the sm_80 PTX for a newer GPU), in a section of its own. `--iree-vmfb DIR` reads `DIR/NAME.vmfb` where it
exists and writes it where it does not, so a machine without the IREE compiler (only its
runtime) can time modules compiled elsewhere: `--iree-vmfb DIR --compile-only` only writes them.

Usage: `python bench/bench_calls.py [--models DIR] [--only a,b] [--no-write] [--pairs N]
[--iree-device local-sync|cuda] [--iree-vmfb DIR [--compile-only]]`
(`--pairs` is the number of timed calls / 10, default 3: 30 calls after 3 warm-up calls).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from results import machine, model_inputs, models_main

import physlayout

TITLE = "## Time per call from Python, side by side with IREE (bench_calls.py)"
GPU_TITLE = "## Time per call on a GPU, side by side with IREE's CUDA build (bench_calls.py)"


@dataclass(frozen=True)
class Peer:
    """How IREE's side is built and run: HAL device, its compile flags, prebuilt modules."""

    device: str = "local-sync"
    cuda_target: str = "sm_80"
    vmfb_dir: Path | None = None
    compile_only: bool = False

    @property
    def label(self) -> str:
        return "IREE CUDA" if self.device == "cuda" else "IREE llvm-cpu"

    def flags(self) -> list[str]:
        if self.device == "cuda":
            return ["--iree-hal-target-device=cuda", f"--iree-cuda-target={self.cuda_target}"]
        return [
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=host",
        ]



@dataclass
class Row:
    model: str
    launches: int | str = "-"
    prepare_launches: int | str = "-"
    wall_ms: float | str = "-"
    device_ms: float | str = "-"
    outside_us: float | str = "-"
    unprepared_wall_ms: float | str = "-"
    unprepared_launches: int | str = "-"
    iree_ms: float | str = "-"
    error: float | str = "-"
    image_wall_ms: float | str = "-"
    image_device_ms: float | str = "-"


def measure(path: Path, timeout: float, pairs: int, peer: Peer) -> Row:
    del timeout
    row = Row(path.stem)
    arrays = model_inputs(path)
    first = next(iter(arrays))
    x = arrays[first]
    params = {k: v for k, v in arrays.items() if k != first}
    expected = np.load(path.with_suffix(".expected.npz"))["result0"]
    repeat = 10 * pairs
    if peer.compile_only:
        row.iree_ms = _iree_ms(path, [], repeat, peer)
        return row
    try:
        model = physlayout.compile(str(path), params=params)
        got = model(x)
        got = got[0] if isinstance(got, tuple) else got
        row.error = float(np.abs(got - expected).max() / np.abs(expected).max())
        timing = model.time({first: x}, repeat=repeat, warmup=3)
        row.launches, row.prepare_launches = model.launches, model.prepare_launches
        row.wall_ms, row.device_ms = timing.wall_ms, timing.device_ms
        row.outside_us = (timing.wall_ms - timing.device_ms) * 1e3 / max(1, timing.launches)
        images = physlayout.compile(str(path), params=params, texture_storage="image")
        image_timing = images.time({first: x}, repeat=repeat, warmup=3)
        row.image_wall_ms, row.image_device_ms = image_timing.wall_ms, image_timing.device_ms
        plain = physlayout.compile(str(path), params=params, prepare=False)
        row.unprepared_launches = plain.launches
        row.unprepared_wall_ms = plain.time({first: x}, repeat=repeat, warmup=3).wall_ms
    except Exception as err:  # a row with the error, not a stopped benchmark
        row.error = f"{type(err).__name__}: {str(err).splitlines()[0][:80]}"
    row.iree_ms = _iree_ms(path, [x, *params.values()], repeat, peer)
    return row


def _iree_ms(path: Path, args: Sequence[np.ndarray], repeat: int, peer: Peer) -> float | str:
    """Median ms per call of IREE's llvm-cpu build of `path` (a reason string instead)."""
    try:
        import iree.runtime as rt  # pyright: ignore[reportMissingImports]
    except ImportError:
        return "not installed"
    with tempfile.TemporaryDirectory() as tmp:
        folder = peer.vmfb_dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        vmfb = folder / f"{path.stem}.vmfb"
        if peer.vmfb_dir is None or not vmfb.exists():
            done = subprocess.run(
                [sys.executable, "-m", "iree.compiler.tools.scripts.iree_compile", str(path),
                 *peer.flags(), "-o", str(vmfb)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                vmfb.unlink(missing_ok=True)
                return "fails to compile"
        if peer.compile_only:
            return "compiled"
        config = rt.Config(peer.device)
        context = rt.SystemContext(config=config)
        context.add_vm_module(rt.VmModule.mmap(config.vm_instance, str(vmfb)))
        function: Any = context.modules.module["main"]
        device_args = [rt.asdevicearray(config.device, a) for a in args]
        for _ in range(3):
            _to_host(function(*device_args))
        walls: list[float] = []
        for _ in range(repeat):
            start = time.perf_counter()
            _to_host(function(*device_args))
            walls.append(time.perf_counter() - start)
        return statistics.median(walls) * 1e3


def _to_host(result: Any) -> None:
    for value in result if isinstance(result, tuple | list) else (result,):
        value.to_host()


def _cell(value: float | int | str, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def section(rows: Sequence[Row], models: Path, peer: Peer) -> list[str]:
    lines = [
        machine(),
        f"OpenCL device: {_device_name()}.",
        "",
        f"Models: {models.name}/. Default compile (`physlayout.compile`, parameters bound and "
        "prepared once); medians of repeated calls after 3 warm-up calls. `outside` is (wall - "
        "device) per launch: Python, pyopencl and the copies of inputs and results. The "
        "default holds textures as `auto` chooses for this device (buffers of the same "
        'texels on a CPU device); `images` forces `texture_storage="image"`.',
        "",
        "| model | launches | prepare launches | wall ms | device ms | outside us/launch | "
        f"wall ms, not prepared (launches) | images: wall ms, device ms | {peer.label} ms | "
        "wall / IREE | device / IREE | max rel. error |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = device_ratio = "-"
        if isinstance(r.wall_ms, float) and isinstance(r.iree_ms, float):
            ratio = f"{r.wall_ms / r.iree_ms:.2f}x"
        if isinstance(r.device_ms, float) and isinstance(r.iree_ms, float):
            device_ratio = f"{r.device_ms / r.iree_ms:.2f}x"
        error = f"{r.error:.1e}" if isinstance(r.error, float) else r.error
        lines.append(
            f"| {r.model} | {r.launches} | {r.prepare_launches} | {_cell(r.wall_ms)} | "
            f"{_cell(r.device_ms)} | {_cell(r.outside_us, 0)} | {_cell(r.unprepared_wall_ms)} "
            f"({r.unprepared_launches}) | {_cell(r.image_wall_ms)}, {_cell(r.image_device_ms)} | "
            f"{_cell(r.iree_ms)} | {ratio} | {device_ratio} | {error} |"
        )
    return lines


def _device_name() -> str:
    try:
        from physlayout.runtime.device import device_label, select_device

        return device_label(select_device())
    except Exception as err:  # the section still names what is known
        return f"none ({type(err).__name__})"


def main(argv: Sequence[str] | None = None) -> None:
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--iree-device", choices=["local-sync", "cuda"], default="local-sync")
    options.add_argument("--iree-cuda-target", default="sm_80")
    options.add_argument("--iree-vmfb", type=Path, default=None)
    options.add_argument("--compile-only", action="store_true")
    known, rest = options.parse_known_args(argv)
    peer = Peer(known.iree_device, known.iree_cuda_target, known.iree_vmfb, known.compile_only)
    if peer.compile_only:
        rest = [*rest, "--no-write"]
    title = GPU_TITLE if peer.device == "cuda" else TITLE
    models_main(__doc__, title, partial(measure, peer=peer), partial(section, peer=peer), rest)


if __name__ == "__main__":
    main()
