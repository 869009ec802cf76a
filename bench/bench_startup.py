"""Start-up cost of physlayout's passes and driver against plain `xdsl-opt` (issue 28: within
1.3x on a small file; a script, not a test; about 30 s of CPU time).

Each comparison is a pair of commands run alternately, 7 times each (CPU seconds of the
subprocess, start-up included: the median of each command and the median of the 7
per-pair ratios):

- `xdsl-opt relu_texture.mlir -p apply-layout,flatten-buffers` against `xdsl-opt
  relu_texture.mlir` (plain xdsl-opt on the same file: parse and print with the layout
  dialect), and against plain `xdsl-opt` on a one-function memref file (the issue's
  first measurement);
- `physlayout-opt relu_texture.mlir -p apply-layout,flatten-buffers` against the same;
- `physlayout-opt` and `xdsl-opt` on the one-function memref file (the driver alone).

Python bytecode is compiled first (a warm-up run of each command with bytecode writing
on), so no run pays for compiling a changed module. Then `python -X importtime` of the
pass run lists the imports that cost most (cumulative) and the packages it loads beyond
plain `xdsl-opt` on the same file.

Run: ``python bench/bench_startup.py [--pairs 7] [--no-write]``; writes its section of
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from results import compile_bytecode, cpu_seconds, machine, write_section

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
RELU = ROOT / "examples" / "relu_texture.mlir"
PIPELINE = "apply-layout,flatten-buffers"
TITLE = "## Start-up: passes and physlayout-opt against plain xdsl-opt (bench_startup.py)"
TARGET = 1.3
MEMREF_FUNCTION = """func.func @copy(%a: memref<1x8x8x16xf32>, %b: memref<1x8x8x16xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0, %c0, %c0, %c0] : memref<1x8x8x16xf32>
  memref.store %v, %b[%c0, %c0, %c0, %c0] : memref<1x8x8x16xf32>
  func.return
}
"""
HEAVY = ("islpy", "numpy", "pyopencl", "matplotlib")


@dataclass(frozen=True)
class Pair:
    """A command timed against a baseline command."""

    label: str
    baseline_label: str
    command: list[str]
    baseline: list[str]


@dataclass(frozen=True)
class Timing:
    """The medians of one pair (CPU seconds) and the median of the per-round ratios."""

    pair: Pair
    seconds: float
    baseline: float
    ratio: float


def _tool(name: str) -> str:
    return str(BIN / name)


def pairs(memref_file: Path) -> list[Pair]:
    """The comparisons of the module docstring."""
    relu, small = str(RELU), str(memref_file)
    xdsl_pass = [_tool("xdsl-opt"), relu, "-p", PIPELINE, "-o", os.devnull]
    physlayout_pass = [_tool("physlayout-opt"), relu, "-p", PIPELINE, "-o", os.devnull]
    xdsl_relu = [_tool("xdsl-opt"), relu, "-o", os.devnull]
    xdsl_small = [_tool("xdsl-opt"), small, "-o", os.devnull]
    return [
        Pair(f"xdsl-opt -p {PIPELINE}", "xdsl-opt, same file", xdsl_pass, xdsl_relu),
        Pair(f"xdsl-opt -p {PIPELINE}", "xdsl-opt, memref file", xdsl_pass, xdsl_small),
        Pair(f"physlayout-opt -p {PIPELINE}", "xdsl-opt, same file", physlayout_pass, xdsl_relu),
        Pair(f"physlayout-opt -p {PIPELINE}", "xdsl-opt, memref file", physlayout_pass,
             xdsl_small),
        Pair("physlayout-opt, memref file", "xdsl-opt, memref file",
             [_tool("physlayout-opt"), small, "-o", os.devnull], xdsl_small),
    ]


def time_pair(pair: Pair, rounds: int) -> Timing:
    """`rounds` alternating runs of the pair's two commands."""
    seconds: list[float] = []
    baseline: list[float] = []
    for _ in range(rounds):
        base = cpu_seconds(pair.baseline, 120)
        run = cpu_seconds(pair.command, 120)
        if base is None or run is None:
            raise SystemExit(f"a command failed: {pair.command} / {pair.baseline}")
        baseline.append(base)
        seconds.append(run)
    ratios = [s / b for s, b in zip(seconds, baseline, strict=True)]
    return Timing(pair, statistics.median(seconds), statistics.median(baseline),
                  statistics.median(ratios))


_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)")


def import_times(command: Sequence[str]) -> list[tuple[str, int, int, int]]:
    """(module, self us, cumulative us, depth) of each import of `command` (a Python
    console script run as `python -X importtime SCRIPT ARGS`)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command], capture_output=True, text=True,
        check=False,
    )
    found: list[tuple[str, int, int, int]] = []
    for line in done.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            found.append((match[4], int(match[1]), int(match[2]), len(match[3]) // 2))
    return found


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] in ("physlayout", "xdsl") else parts[0]


def import_lines(pass_command: Sequence[str], plain_command: Sequence[str]) -> list[str]:
    """The RESULTS.md lines about imports: top cumulative entries of the pass run and the
    packages it loads beyond the plain run."""
    loaded = import_times(pass_command)
    plain = {module for module, *_ in import_times(plain_command)}
    lines = [
        "`python -X importtime` of `xdsl-opt relu_texture.mlir -p " + PIPELINE + "` (one run,"
        " microseconds; the top imports by cumulative time, depth 0 or 1):",
        "",
        "| import | cumulative | self |",
        "|---|---|---|",
    ]
    top = sorted((e for e in loaded if e[3] <= 1), key=lambda e: -e[2])[:12]
    lines += [f"| {'  ' * depth}`{m}` | {cum} | {own} |" for m, own, cum, depth in top]
    extra: dict[str, int] = {}
    for module, own, _, _ in loaded:
        if module not in plain:
            extra[_package(module)] = extra.get(_package(module), 0) + own
    shown = ", ".join(
        f"`{p}` {us / 1000:.1f} ms" for p, us in sorted(extra.items(), key=lambda e: -e[1])[:10]
    )
    heavy = [h for h in HEAVY if any(m.split(".")[0] == h for m, *_ in loaded)]
    lines += [
        "",
        f"Loaded beyond plain `xdsl-opt` on the same file (self time by package): {shown}.",
        f"Heavy packages loaded: {', '.join(heavy) if heavy else 'none'} (of {', '.join(HEAVY)}).",
    ]
    return lines


def section(timings: list[Timing], rounds: int, imports: list[str]) -> list[str]:
    """The RESULTS.md section."""
    lines = [
        machine(),
        f"CPU seconds (user + system) of one run, start-up included; {rounds} alternating "
        "pairs, medians; ratio = median of the per-pair ratios. Target: at most "
        f"{TARGET}x plain `xdsl-opt` on a small file.",
        "",
        "| command | baseline | command s | baseline s | ratio |",
        "|---|---|---|---|---|",
    ]
    for t in timings:
        lines.append(
            f"| `{t.pair.label}` | `{t.pair.baseline_label}` | {t.seconds:.3f} | "
            f"{t.baseline:.3f} | {t.ratio:.2f}x |"
        )
    return [*lines, "", *imports]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7, help="alternating runs per pair")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        memref_file = Path(tmp) / "copy.mlir"
        memref_file.write_text(MEMREF_FUNCTION)
        comparisons = pairs(memref_file)
        compile_bytecode([c for p in comparisons for c in (p.command, p.baseline)])
        timings: list[Timing] = []
        for pair in comparisons:
            timings.append(time_pair(pair, args.pairs))
            t = timings[-1]
            print(f"{t.ratio:5.2f}x  {t.seconds:.3f} s  {t.pair.label}  against  "
                  f"{t.baseline:.3f} s  {t.pair.baseline_label}", flush=True)
        imports = import_lines(comparisons[0].command, comparisons[0].baseline)
    print("\n".join(imports))
    if not args.no_write:
        write_section(TITLE, section(timings, args.pairs, imports))


if __name__ == "__main__":
    main()
