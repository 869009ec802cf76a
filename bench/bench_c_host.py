"""Time per inference through the C host of an artifact, beside the Python runner, in one run.

Per model of the models folder (default: the shared models beside the repository): the
model compiled as `physlayout compile` does (parameters prepared once), saved as an artifact,
its host.c built with gcc; then, on the same machine one after the other,
- the C host: `./host --inputs inputs.npz --repeat N --warmup 3` (its repeat line: median
  wall ms per inference from CLOCK_MONOTONIC around inputs written, every launch and results
  read; of it, the median time until the last step is enqueued; median device ms from the
  launches' profiling events);
- the Python API on the same artifact's model (`CompiledModel.time`, the same N and warm-up),
  parameters bound and resident.
`outside` is (wall - device) per launch; `same output` says whether the C host's result equals
the Python runner's bit for bit. The C host runs on the platform the system's OpenCL ICD
loader finds (point OCL_ICD_VENDORS at pip's PoCL where it finds none: docs/deploy.md).

Usage: `python bench/bench_c_host.py [--models DIR] [--only a,b] [--no-write] [--pairs N]`
(`--pairs` is the number of timed runs / 10, default 3: 30 runs after 3 warm-up runs).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from results import machine, model_inputs, models_main

import physlayout

TITLE = "## Time per inference through the C host, beside the Python runner (bench_c_host.py)"

REPEAT_LINE = re.compile(
    r"^repeat: \d+ run\(s\) after \d+ warm-up: median wall ([\d.]+) ms, median device ([\d.]+) "
    r"ms per inference \((\d+) launch\(es\), -?\d+ us per launch outside the kernels, of which "
    r"([\d.]+) us enqueueing\)", re.MULTILINE,
)  # fmt: skip


@dataclass
class Row:
    model: str
    launches: int | str = "-"
    prepare_launches: int | str = "-"
    c_wall_ms: float | str = "-"
    c_device_ms: float | str = "-"
    c_enqueue_us: float | str = "-"
    py_wall_ms: float | str = "-"
    py_device_ms: float | str = "-"
    same: str = "-"
    runs: int = 0


def measure(path: Path, timeout: float, pairs: int) -> Row:
    repeat = 10 * pairs
    row = Row(path.stem, runs=repeat)
    arrays = model_inputs(path)
    first = next(iter(arrays))
    params = {k: v for k, v in arrays.items() if k != first}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / path.stem
        try:
            model = physlayout.compile(str(path), params=params)
            model.save(str(out))
            row.launches, row.prepare_launches = model.launches, model.prepare_launches
            np.savez(out / "inputs.npz", **arrays)  # pyright: ignore[reportArgumentType]
            built = subprocess.run(
                ["gcc", "-std=c99", "-O2", "-Wall", "-o", "host", "host.c", "-lOpenCL"],
                cwd=out, capture_output=True, text=True, timeout=timeout, check=False,
            )  # fmt: skip
            if built.returncode != 0:
                row.same = "host.c does not build: " + built.stderr.strip().splitlines()[-1][:60]
                return row
            host = subprocess.run(
                ["./host", "--inputs", "inputs.npz", "--repeat", str(repeat), "--warmup", "3",
                 "--output", "result0=c.npy"],
                cwd=out, capture_output=True, text=True, timeout=timeout, check=False,
            )  # fmt: skip
            found = REPEAT_LINE.search(host.stdout)
            if host.returncode != 0 or not found:
                row.same = "host failed: " + (host.stderr.strip().splitlines() or ["?"])[-1][:60]
                return row
            row.c_wall_ms, row.c_device_ms = float(found[1]), float(found[2])
            row.c_enqueue_us = float(found[4])
            timing = model.time({first: arrays[first]}, repeat=repeat, warmup=3)
            row.py_wall_ms, row.py_device_ms = timing.wall_ms, timing.device_ms
            got = model(arrays[first])
            got = got[0] if isinstance(got, tuple) else got
            row.same = "yes" if np.array_equal(np.load(out / "c.npy"), got) else "NO"
        except Exception as err:  # a row with the error, not a stopped benchmark
            row.same = f"{type(err).__name__}: {str(err).splitlines()[0][:80]}"
    return row


def _cell(value: float | int | str, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _outside(wall: float | str, device: float | str, launches: int | str) -> str:
    if not isinstance(wall, float) or not isinstance(device, float) or not isinstance(launches, int):
        return "-"
    return f"{(wall - device) * 1e3 / max(1, launches):.0f}"


def section(rows: Sequence[Row], models: Path) -> list[str]:
    lines = [
        machine(),
        "",
        f"Models: {models.name}/. Default compile (parameters prepared once, resident); "
        f"medians of {max((r.runs for r in rows), default=0)} runs after 3 warm-up runs "
        "(10 x `--pairs`), the C host first, then the Python API, in one run. `outside` is "
        "(wall - device) per launch; `of it enqueueing` is the C host's own share (the time "
        "until its last step is enqueued, per launch), the rest the driver's: scheduling the "
        "queue, copies, waking the host.",
        "",
        "| model | launches | prepare launches | C host wall ms | C host device ms | C host "
        "outside us/launch | of it enqueueing | Python wall ms | Python device ms | Python outside us/launch | "
        "same output |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.model} | {r.launches} | {r.prepare_launches} | {_cell(r.c_wall_ms)} | "
            f"{_cell(r.c_device_ms)} | {_outside(r.c_wall_ms, r.c_device_ms, r.launches)} | "
            f"{_cell(r.c_enqueue_us, 1)} | "
            f"{_cell(r.py_wall_ms)} | {_cell(r.py_device_ms)} | "
            f"{_outside(r.py_wall_ms, r.py_device_ms, r.launches)} | {r.same} |"
        )
    return lines


if __name__ == "__main__":
    models_main(__doc__, TITLE, measure, section)
