"""Plot of kernel time against the copy bound, from the tables `bench_opencl.py` and
`bench_adreno.py` wrote into bench/RESULTS.md (run last by `make bench`).

The copy bound of a kernel is the time the hand-written float4 copy kernel of
`bench_opencl.py` needs to move the kernel's bytes at its measured bandwidth: a layout
kernel on the diagonal runs at copy speed; compute-bound kernels (the convolutions) lie far
above it. Writes bench/kernel_vs_copy.png (matplotlib, `physlayout[viz]`) and its section of
RESULTS.md; without matplotlib the section says so.
"""

from __future__ import annotations

import re
from pathlib import Path

from results import RESULTS, plot, write_section

TITLE = "## Kernel time against the copy bound (plots.py)"
PLOT = Path(__file__).resolve().parent / "kernel_vs_copy.png"


def table(text: str, heading: str) -> list[list[str]]:
    """The rows (cells) of the first table in the section whose heading starts with
    `heading`, without its header and rule."""
    start = text.find(heading)
    if start < 0:
        return []
    end = text.find("\n## ", start + len(heading))
    rows: list[list[str]] = []
    for line in text[start : end if end >= 0 else len(text)].splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]


def number(cell: str) -> float:
    match = re.match(r"[-\d.]+", cell)
    if match is None:
        raise ValueError(f"not a number: {cell!r}")
    return float(match.group(0))


def main() -> None:
    text = RESULTS.read_text()
    opencl = table(text, "## OpenCL: generated layout transform and texture relu")
    adreno = table(text, "## Adreno pipeline end to end")
    copy = [row for row in opencl if row[0].startswith("float4 copy")]
    if not copy:
        write_section(TITLE, ["No OpenCL results yet (run bench_opencl.py)."])
        return
    copy_gbps = number(copy[0][2])
    series: dict[str, tuple[list[float], list[float]]] = {}
    labels: dict[str, list[str]] = {}
    # bench_opencl.py: time (ms) and bandwidth (GB/s) give the bytes moved.
    for row in opencl:
        if "generated" not in row[0]:
            continue
        time_ms, gbps = number(row[1]), number(row[2])
        bound_ms = time_ms * gbps / copy_gbps
        series.setdefault("bench_opencl.py", ([], []))
        series["bench_opencl.py"][0].append(bound_ms)
        series["bench_opencl.py"][1].append(time_ms)
        labels.setdefault("bench_opencl.py", []).append(row[0].split(" (")[0])
    # bench_adreno.py: device time (ms) and bytes moved (MB).
    for row in adreno:
        time_ms, megabytes = number(row[1]), number(row[2])
        bound_ms = megabytes * 1e6 / (copy_gbps * 1e9) * 1e3
        series.setdefault("bench_adreno.py (RFC conv -> relu -> conv)", ([], []))
        series["bench_adreno.py (RFC conv -> relu -> conv)"][0].append(bound_ms)
        series["bench_adreno.py (RFC conv -> relu -> conv)"][1].append(time_ms)
        labels.setdefault("bench_adreno.py (RFC conv -> relu -> conv)", []).append(row[0])
    lines = [
        f"Copy bound: the kernel's bytes at the float4 copy's {copy_gbps:.2f} GB/s "
        "(bench_opencl.py); on the diagonal a kernel runs at copy speed.",
    ]
    if plot(PLOT, "Kernel time against the copy bound", "copy bound (ms)",
            "kernel device time (ms)", series, diagonal=True, labels=labels):
        lines += ["", f"![kernel time against the copy bound]({PLOT.name})"]
    else:
        lines += ["", "(matplotlib is not installed: no plot; `pip install 'physlayout[viz]'`)"]
    write_section(TITLE, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
