"""How `physlayout-opt` scales with the number of layout accesses in one function, against
the floor that xDSL itself sets (a script, not a test; about 3 minutes of CPU time).

For N accesses (N/2 `layout.load` from a buffer with a pending tiling transform and N/2
`layout.store` to a plain one, as in test_hostile_inputs.py's many-accesses test) it times,
as subprocesses (CPU seconds, start-up, parsing and printing included):

- "pipeline": `physlayout-opt -p apply-layout,flatten-buffers,verify-buffers`;
- "parse+print": `physlayout-opt` without passes;
- "xdsl-opt": stock `xdsl-opt` parsing and printing the memref equivalent (N/2
  `memref.load` and N/2 `memref.store` on `memref<64x64xf32>`), xDSL's own round trip.

It reports the ratios to stock xdsl-opt and the time per access, whose growth with N shows
whether anything is super-linear (constant per-access time: linear).

Run: ``python bench/bench_scale.py [--sizes 2000,10000,20000] [--no-write]``; writes its
section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from results import cpu_seconds, machine, write_section

BIN = Path(sys.executable).parent
PIPELINE = "apply-layout,flatten-buffers,verify-buffers"
TILED = (
    "!layout.buffer<64x64xf32, transform = "
    "#layout.index_map<(i, j) -> (j floordiv 4, i, j mod 4)>>"
)
PLAIN = "!layout.buffer<64x64xf32>"
MEMREF = "memref<64x64xf32>"
TITLE = "## Many accesses in one function: physlayout-opt vs stock xdsl-opt (bench_scale.py)"


def layout_module(accesses: int) -> str:
    """One function with `accesses` layout accesses: loads from a tiled buffer, stores to a
    plain one."""
    lines = [f"func.func @many(%a: {TILED}, %b: {PLAIN}, %i: index, %j: index) {{"]
    for k in range(accesses // 2):
        lines.append(f"  %x{k} = layout.load %a[%i, %j] : {TILED}, f32")
        lines.append(f"  layout.store %x{k}, %b[%j, %i] : {PLAIN}, f32")
    return "\n".join([*lines, "  func.return", "}"]) + "\n"


def memref_module(accesses: int) -> str:
    """The same function on memrefs (what stock xdsl-opt parses and prints)."""
    lines = [f"func.func @many(%a: {MEMREF}, %b: {MEMREF}, %i: index, %j: index) {{"]
    for k in range(accesses // 2):
        lines.append(f"  %x{k} = memref.load %a[%i, %j] : {MEMREF}")
        lines.append(f"  memref.store %x{k}, %b[%j, %i] : {MEMREF}")
    return "\n".join([*lines, "  func.return", "}"]) + "\n"


@dataclass
class Row:
    accesses: int
    pipeline: float | None
    parse_print: float | None
    stock: float | None


def measure(accesses: int, directory: Path, timeout: float) -> Row:
    """The three CPU times for `accesses` accesses."""
    layout = directory / f"many{accesses}.mlir"
    layout.write_text(layout_module(accesses))
    memref = directory / f"mem{accesses}.mlir"
    memref.write_text(memref_module(accesses))
    opt = str(BIN / "physlayout-opt")
    return Row(
        accesses,
        cpu_seconds([opt, str(layout), "-p", PIPELINE, "-o", "/dev/null"], timeout),
        cpu_seconds([opt, str(layout), "-o", "/dev/null"], timeout),
        cpu_seconds([str(BIN / "xdsl-opt"), str(memref), "-o", "/dev/null"], timeout),
    )


def _seconds(value: float | None) -> str:
    return "failed" if value is None else f"{value:.1f}"


def _ratio(ours: float | None, stock: float | None) -> str:
    return "-" if ours is None or not stock else f"{ours / stock:.2f}"


def _per_access(value: float | None, accesses: int) -> str:
    return "-" if value is None else f"{1000 * value / accesses:.2f}"


def table(rows: Sequence[Row]) -> list[str]:
    """The Markdown table of `rows`."""
    lines = [
        "| accesses | pipeline | parse+print | stock xdsl-opt | pipeline / stock | "
        "parse+print / stock | ms per access: pipeline | parse+print | stock |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        n = row.accesses
        lines.append(
            f"| {n} | {_seconds(row.pipeline)} | {_seconds(row.parse_print)} | "
            f"{_seconds(row.stock)} | {_ratio(row.pipeline, row.stock)} | "
            f"{_ratio(row.parse_print, row.stock)} | {_per_access(row.pipeline, n)} | "
            f"{_per_access(row.parse_print, n)} | {_per_access(row.stock, n)} |"
        )
    return lines


def growth(rows: Sequence[Row]) -> str:
    """How the time per access grows from the smallest to the largest N (1.0: linear)."""
    first, last = rows[0], rows[-1]

    def factor(name: str) -> str:
        low, high = getattr(first, name), getattr(last, name)
        if low is None or high is None:
            return "-"
        return f"{(high / last.accesses) / (low / first.accesses):.2f}"

    return (
        f"Time per access at {last.accesses} over time per access at {first.accesses} "
        f"(1.00: linear): pipeline {factor('pipeline')}, parse+print "
        f"{factor('parse_print')}, stock xdsl-opt {factor('stock')}."
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="2000,10000,20000", help="numbers of accesses")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per tool run")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as directory:
        for accesses in (int(s) for s in args.sizes.split(",") if s):
            rows.append(measure(accesses, Path(directory), args.timeout))
            print(table(rows)[-1], flush=True)
    lines = [
        machine(),
        f"CPU seconds of one run per command: `physlayout-opt -p {PIPELINE}` (pipeline),",
        "`physlayout-opt` without passes (parse+print), stock `xdsl-opt` on the memref",
        "equivalent (xDSL's own parse and print, the floor); start-up included.",
        "",
        *table(rows),
        "",
        growth(rows),
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section(TITLE, lines)


if __name__ == "__main__":
    main()
