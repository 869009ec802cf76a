"""Compile time as a user waits for it, side by side with IREE, and the compile cache.

For each model of the models folder (default: the shared models beside the repository), in
one run, wall seconds of whole commands (start-up included), median of `--pairs` runs
(physlayout's modules compiled to bytecode first, as an installed package has them):
- `physlayout compile FILE -o OUT --no-cache` (the defaults: the prepared Adreno pipeline,
  verified once after it): a cold compile;
- `iree-compile FILE` for llvm-cpu on this CPU (the optional `peers` extra; a model IREE
  fails on says so): the peer's cold compile, and the ratio;
- `physlayout compile FILE -o OUT` a second time, served from the compile cache, against
  `xdsl-opt FILE` (parse and print, with xDSL's start-up): the goal is a second compile
  within 1.5x of that.

Usage: `python bench/bench_compile_peer.py [--models DIR] [--only a,b] [--no-write]
[--pairs N]` (default 1 pair: the cold compiles of the large models take a minute each).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from results import compile_bytecode, machine, models_main

BIN = Path(sys.executable).parent
TITLE = "## Compile time beside iree-compile, and the compile cache (bench_compile_peer.py)"


@dataclass
class Row:
    model: str
    cold: float | None = None
    iree: float | str = "-"
    warm: float | None = None
    parse: float | None = None


def _wall(command: Sequence[str], env: dict[str, str], timeout: float) -> float | None:
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - start if done.returncode == 0 else None


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if len(known) == len(values) and known else None


def measure(path: Path, timeout: float, pairs: int) -> Row:
    row = Row(path.stem)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PHYSLAYOUT_CACHE_DIR": os.path.join(tmp, "cache")}
        out = os.path.join(tmp, "out")
        compile_ = [str(BIN / "physlayout"), "compile", str(path), "-o", out]
        iree = [str(BIN / "iree-compile"), str(path), "--iree-hal-target-device=local",
                "--iree-hal-local-target-device-backends=llvm-cpu",
                "--iree-llvmcpu-target-cpu=host", "-o", os.path.join(tmp, "m.vmfb")]  # fmt: skip
        compile_bytecode([[*compile_, "--no-cache"]])
        colds: list[float | None] = []
        irees: list[float | None] = []
        for _ in range(pairs):
            colds.append(_wall([*compile_, "--no-cache"], env, timeout))
            if (BIN / "iree-compile").exists():
                irees.append(_wall(iree, env, timeout))
        row.cold = _median(colds)
        if not (BIN / "iree-compile").exists():
            row.iree = "not installed"
        else:
            median = _median(irees)
            row.iree = median if median is not None else "fails"
        _wall(compile_, env, timeout)  # fills the cache
        row.warm = _median([_wall(compile_, env, timeout) for _ in range(max(3, pairs))])
        row.parse = _median(
            [_wall([str(BIN / "xdsl-opt"), str(path)], env, timeout) for _ in range(max(3, pairs))]
        )
    return row


def _cell(value: float | str | None) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else value


def section(rows: Sequence[Row], models: Path) -> list[str]:
    lines = [
        machine(),
        "",
        f"Models: {models.name}/. Wall seconds of whole commands (start-up included).",
        "",
        "| model | physlayout compile, cold s | iree-compile s | cold / iree | second compile "
        "(cache) s | xdsl-opt parse+print s | second / parse |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = (
            f"{r.cold / r.iree:.2f}x"
            if isinstance(r.iree, float) and r.cold is not None else "-"
        )  # fmt: skip
        warm = f"{r.warm / r.parse:.2f}x" if r.warm is not None and r.parse else "-"
        lines.append(
            f"| {r.model} | {_cell(r.cold)} | {_cell(r.iree)} | {ratio} | {_cell(r.warm)} | "
            f"{_cell(r.parse)} | {warm} |"
        )
    return lines


if __name__ == "__main__":
    models_main(__doc__, TITLE, measure, section, [*sys.argv[1:], "--pairs", "1"]
                if "--pairs" not in sys.argv else None)  # fmt: skip
