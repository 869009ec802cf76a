"""Benchmark: memref layout normalization, `xdsl-opt -p apply-layout` against upstream
`mlir-opt -normalize-memrefs`.

Generated modules: N functions with 10 accesses each (affine loads/stores and memref
loads/stores on two layout-mapped memref arguments, plus a call to the previous function),
and one function with many accesses. Each tool runs once per module as a subprocess (its
CPU time, including start-up, parsing and printing). With `--baseline`, `xdsl-opt` is also
timed without passes, so the `pass` column (the difference) estimates the whole pass (both
halves: pending buffer transforms and memref layouts). `normalize` is the memref half
alone (`normalize_memref_layouts`, in-process). The upstream column is skipped when
`mlir-opt-22`/`mlir-opt` is not installed.

Usage: `python bench/bench_normalize_memrefs.py [--sizes 50,200,800] [--accesses 2000]
[--baseline]` (about 80 s of CPU time with the defaults, 2 minutes with `--baseline`).
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from results import cpu_seconds, machine, plot, write_section
from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, func, memref
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.parser import Parser

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


def parse(text: str) -> ModuleOp:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, affine.Affine, memref.MemRef):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def many_functions_module(count: int) -> ModuleOp:
    """`many_functions(count)` built in-process by cloning (faster than parsing it)."""
    first, other = parse(many_functions(2)).ops
    assert isinstance(other, func.FuncOp)
    functions: list[Operation] = [first.clone()]
    for f in range(1, count):
        function = other.clone()
        function.sym_name = StringAttr(f"f{f}")
        for call in function.walk():
            if isinstance(call, func.CallOp):
                call.callee = SymbolRefAttr(f"f{f - 1}")
        functions.append(function)
    return ModuleOp(functions)


def normalize_cpu_time(module: ModuleOp) -> float:
    """CPU time of `normalize_memref_layouts` alone (the memref half of apply-layout)."""
    from physlayout.transforms.normalize_memrefs import normalize_memref_layouts

    gc.collect()
    start = time.process_time()
    normalize_memref_layouts(module)
    return time.process_time() - start


@dataclass
class Row:
    case: str
    functions: int
    accesses: int
    xdsl: float
    baseline: float | None
    normalize: float
    mlir: float | None

    @property
    def ratio(self) -> float | None:
        return None if self.mlir is None else self.xdsl / self.mlir


def _tools() -> tuple[str, str | None]:
    here = Path(sys.executable).parent
    xdsl_opt = str(here / "xdsl-opt") if (here / "xdsl-opt").exists() else "xdsl-opt"
    mlir_opt = shutil.which("mlir-opt-22") or shutil.which("mlir-opt")
    return xdsl_opt, mlir_opt


def run_case(
    case: str,
    text: str,
    module: ModuleOp,
    functions: int,
    accesses: int,
    timeout: float,
    baseline: bool,
) -> Row:
    xdsl_opt, mlir_opt = _tools()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{case}.mlir"
        path.write_text(text)
        xdsl = cpu_seconds([xdsl_opt, str(path), "-p", "apply-layout", "-o", "/dev/null"], timeout)
        parse_print = cpu_seconds([xdsl_opt, str(path), "-o", "/dev/null"], timeout) if baseline else None
        mlir = None
        if mlir_opt is not None:
            mlir = cpu_seconds([mlir_opt, str(path), "-normalize-memrefs", "-o", "/dev/null"], timeout)
    if xdsl is None:
        raise SystemExit(f"xdsl-opt failed on {case}")
    normalize = normalize_cpu_time(module)
    return Row(case, functions, accesses, xdsl, parse_print, normalize, mlir)


def _format(rows: list[Row], has_mlir: bool) -> str:
    header = f"{'case':<10}{'funcs':>6}{'accesses':>10}{'xdsl-opt':>10}{'parse+print':>13}"
    header += f"{'pass':>8}{'normalize':>11}"
    if has_mlir:
        header += f"{'mlir-opt':>10}{'xdsl/mlir':>11}"
    lines = [header, "-" * len(header)]
    for row in rows:
        line = f"{row.case:<10}{row.functions:>6}{row.functions * row.accesses:>10}"
        line += f"{row.xdsl:>9.2f}s"
        if row.baseline is None:
            line += f"{'-':>13}{'-':>8}"
        else:
            line += f"{row.baseline:>12.2f}s{row.xdsl - row.baseline:>7.2f}s"
        line += f"{row.normalize:>10.2f}s"
        if has_mlir:
            mlir = "timeout" if row.mlir is None else f"{row.mlir:.2f}s"
            ratio = "-" if row.ratio is None else f"{row.ratio:.2f}"
            line += f"{mlir:>10}{ratio:>11}"
        lines.append(line)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="50,200,800", help="numbers of functions")
    parser.add_argument("--accesses", type=int, default=2000, help="accesses in one function")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per tool run")
    parser.add_argument(
        "--baseline", action="store_true", help="also time xdsl-opt without passes (slower)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    _, mlir_opt = _tools()
    if mlir_opt is None:
        print("mlir-opt not found: the upstream column is skipped")
    print("CPU seconds per run (start-up, parsing and printing included except in `normalize`)")
    print(_format([], mlir_opt is not None), flush=True)
    rows: list[Row] = []
    for count in (int(s) for s in args.sizes.split(",") if s):
        module = many_functions_module(count)
        text = many_functions(count)
        rows.append(run_case(f"{count}x10", text, module, count, 10, args.timeout, args.baseline))
        print(_format(rows[-1:], mlir_opt is not None).splitlines()[-1], flush=True)
    text = one_function(args.accesses)
    module = parse(text)
    rows.append(
        run_case(f"1x{args.accesses}", text, module, 1, args.accesses, args.timeout, args.baseline)
    )
    print(_format(rows[-1:], mlir_opt is not None).splitlines()[-1], flush=True)
    if mlir_opt is not None and len(rows) > 2:
        print(
            "\ngrowth from the smallest to the largest N (time ratio):"
            f" xdsl-opt {rows[-2].xdsl / rows[0].xdsl:.1f}x,"
            f" normalize {rows[-2].normalize / rows[0].normalize:.1f}x,"
            f" mlir-opt {(rows[-2].mlir or 0) / (rows[0].mlir or 1):.1f}x"
            f" for {rows[-2].functions // rows[0].functions}x the functions"
        )
    if not args.no_write:
        write_section(TITLE, _section(rows, mlir_opt is not None))


TITLE = (
    "## apply-layout memref normalization vs mlir-opt -normalize-memrefs "
    "(bench_normalize_memrefs.py)"
)
PLOT = Path(__file__).resolve().parent / "compile_time.png"


def _section(rows: list[Row], has_mlir: bool) -> list[str]:
    """The RESULTS.md section: table, growth sentence and (matplotlib) the plot."""
    lines = [
        machine(),
        "CPU seconds of one run per tool. \"normalize only\" is the in-process normalization",
        "without parsing/printing; `xdsl-opt` totals include start-up, parse and print.",
        "",
        "| case (functions x accesses) | xdsl-opt -p apply-layout | normalize only | "
        "mlir-opt-22 -normalize-memrefs |",
        "|---|---|---|---|",
    ]
    for row in rows:
        mlir = "not installed" if not has_mlir else (
            "timeout" if row.mlir is None else f"{row.mlir:.2f}"
        )
        lines.append(
            f"| {row.functions} x {row.accesses} | {row.xdsl:.2f} | {row.normalize:.2f} | {mlir} |"
        )
    many = [row for row in rows if row.accesses == 10]
    if len(many) >= 2:
        first, last = many[0], many[-1]
        growth = (
            f"From {first.functions} to {last.functions} functions "
            f"({last.functions / first.functions:.0f}x) the normalization grows "
            f"{last.normalize / first.normalize:.0f}x"
        )
        if has_mlir and first.mlir and last.mlir:
            growth += (
                f", upstream {last.mlir / first.mlir:.0f}x; at {last.functions} functions the "
                f"normalization alone takes {last.normalize / last.mlir:.2f}x the time of "
                "`mlir-opt`"
            )
        lines += ["", growth + "."]
        series = {
            "xdsl-opt -p apply-layout (total)": (
                [r.functions * r.accesses for r in many], [r.xdsl for r in many]
            ),
            "normalize only": ([r.functions * r.accesses for r in many],
                               [r.normalize for r in many]),
        }
        measured = [r for r in many if r.mlir is not None]
        if has_mlir and measured:
            series["mlir-opt-22 -normalize-memrefs"] = (
                [r.functions * r.accesses for r in measured], [r.mlir or 0.0 for r in measured]
            )
        if plot(PLOT, "Compile time against module size", "accesses in the module (10 per "
                "function)", "CPU seconds", series):
            lines += ["", f"![compile time against module size]({PLOT.name})"]
    return lines


if __name__ == "__main__":
    main()
