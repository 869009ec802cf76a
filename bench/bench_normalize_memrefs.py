"""Benchmark: memref layout normalization, `xdsl-opt -p apply-layout` against upstream
`mlir-opt -normalize-memrefs`.

Generated modules: N functions with 10 accesses each (affine loads/stores and memref
loads/stores on two layout-mapped memref arguments, plus a call to the previous function),
and one function with many accesses. Each tool runs once per module as a subprocess (its
CPU time, including start-up, parsing and printing); `xdsl-opt` is also timed without
passes, so the `pass` column (the difference) estimates the pass itself. The upstream
column is skipped when `mlir-opt-22`/`mlir-opt` is not installed.

Usage: `python bench/bench_normalize_memrefs.py [--sizes 50,200,800] [--accesses 2000]`
(about 2 minutes of CPU time with the defaults).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

TILE = "affine_map<(d0, d1) -> (d0 floordiv 4, d1 floordiv 4, d0 mod 4, d1 mod 4)>"
TRANSPOSE = "affine_map<(d0, d1) -> (d1, d0)>"
A_TYPE = f"memref<64x64xf32, {TILE}>"
B_TYPE = f"memref<64x64xf32, {TRANSPOSE}>"
SIGNATURE = f"({A_TYPE}, {B_TYPE}) -> ()"


def _accesses(count: int, indent: str) -> list[str]:
    """`count` accesses inside an `affine.for %i, %j` nest: affine loads from %A and
    stores to %B (generic form, dimension maps), then memref.load/store pairs."""
    lines: list[str] = []
    for k in range(count):
        shift = k % 3
        if k % 2 == 0:
            lines.append(
                f'{indent}%a{k} = "affine.load"(%A, %i, %j) <{{map = affine_map<(d0, d1) -> '
                f"(d0, d1 floordiv {shift + 1})>}}> : ({A_TYPE}, index, index) -> f32"
            )
            lines.append(
                f'{indent}"affine.store"(%a{k}, %B, %j, %i) <{{map = affine_map<(d0, d1) -> '
                f"(d0, d1)>}}> : (f32, {B_TYPE}, index, index) -> ()"
            )
        else:
            lines.append(f"{indent}%m{k} = memref.load %B[%i, %j] : {B_TYPE}")
            lines.append(f"{indent}memref.store %m{k}, %A[%j, %i] : {A_TYPE}")
    return lines


def _function(name: str, accesses: int, callee: str | None) -> list[str]:
    lines = [f"func.func @{name}(%A: {A_TYPE}, %B: {B_TYPE}) {{"]
    lines.append("  affine.for %i = 0 to 64 {")
    lines.append("    affine.for %j = 0 to 64 {")
    lines += _accesses(accesses // 2, "      ")
    lines.append("    }")
    lines.append("  }")
    if callee is not None:
        lines.append(f"  func.call @{callee}(%A, %B) : {SIGNATURE}")
    lines.append("  func.return")
    lines.append("}")
    return lines


def many_functions(count: int, accesses: int = 10) -> str:
    """`count` functions of `accesses` accesses; each calls the previous one."""
    lines: list[str] = []
    for f in range(count):
        lines += _function(f"f{f}", accesses, f"f{f - 1}" if f else None)
    return "\n".join(lines) + "\n"


def one_function(accesses: int) -> str:
    return "\n".join(_function("big", accesses, None)) + "\n"


@dataclass
class Row:
    case: str
    functions: int
    accesses: int
    xdsl: float
    baseline: float
    mlir: float | None

    @property
    def ratio(self) -> float | None:
        return None if self.mlir is None else self.xdsl / self.mlir


def _time(command: Sequence[str], timeout: float) -> float | None:
    """CPU time (user + system) of `command`, None if it failed or timed out. CPU time, not
    wall time, so that other processes on the machine disturb the comparison less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.stderr.write(done.stderr.decode(errors="replace")[-2000:])
        return None
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _tools() -> tuple[str, str | None]:
    here = Path(sys.executable).parent
    xdsl_opt = str(here / "xdsl-opt") if (here / "xdsl-opt").exists() else "xdsl-opt"
    mlir_opt = shutil.which("mlir-opt-22") or shutil.which("mlir-opt")
    return xdsl_opt, mlir_opt


def run_case(case: str, text: str, functions: int, accesses: int, timeout: float) -> Row:
    xdsl_opt, mlir_opt = _tools()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{case}.mlir"
        path.write_text(text)
        xdsl = _time([xdsl_opt, str(path), "-p", "apply-layout", "-o", "/dev/null"], timeout)
        baseline = _time([xdsl_opt, str(path), "-o", "/dev/null"], timeout)
        mlir = None
        if mlir_opt is not None:
            mlir = _time([mlir_opt, str(path), "-normalize-memrefs", "-o", "/dev/null"], timeout)
    if xdsl is None or baseline is None:
        raise SystemExit(f"xdsl-opt failed on {case}")
    return Row(case, functions, accesses, xdsl, baseline, mlir)


def _format(rows: list[Row], has_mlir: bool) -> str:
    header = f"{'case (cpu s)':<14}{'funcs':>7}{'accesses':>10}{'xdsl-opt':>11}{'parse+print':>13}"
    header += f"{'pass':>9}"
    if has_mlir:
        header += f"{'mlir-opt':>11}{'xdsl/mlir':>11}"
    lines = [header, "-" * len(header)]
    for row in rows:
        line = f"{row.case:<14}{row.functions:>7}{row.functions * row.accesses:>10}"
        line += f"{row.xdsl:>10.2f}s{row.baseline:>12.2f}s{row.xdsl - row.baseline:>8.2f}s"
        if has_mlir:
            mlir = "timeout" if row.mlir is None else f"{row.mlir:.2f}s"
            ratio = "-" if row.ratio is None else f"{row.ratio:.2f}"
            line += f"{mlir:>11}{ratio:>11}"
        lines.append(line)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="50,200,800", help="numbers of functions")
    parser.add_argument("--accesses", type=int, default=2000, help="accesses in one function")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per tool run")
    args = parser.parse_args(argv)
    _, mlir_opt = _tools()
    if mlir_opt is None:
        print("mlir-opt not found: the upstream column is skipped")
    rows: list[Row] = []
    for count in (int(s) for s in args.sizes.split(",") if s):
        rows.append(run_case(f"{count}x10", many_functions(count), count, 10, args.timeout))
        print(_format(rows[-1:], mlir_opt is not None).splitlines()[-1], flush=True)
    rows.append(
        run_case(
            "1x" + str(args.accesses), one_function(args.accesses), 1, args.accesses, args.timeout
        )
    )
    print()
    print(_format(rows, mlir_opt is not None))


if __name__ == "__main__":
    main()
