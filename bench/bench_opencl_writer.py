"""The OpenCL writer's time (`generate_opencl`, issue 43): the phase of `physlayout compile`
that turns the lowered module into OpenCL C, written by one process and by two
(`lowering/opencl_workers.py`).

For each model: the module `physlayout compile` hands the writer (the Adreno pipeline
with lifted parameters, run once in this process), then `--pairs` alternating runs of
`generate_opencl(processes=1)` and `generate_opencl(processes=2)`, each after the
`simplify` memo is cleared (so each run simplifies its indices again, as in a cold
compile); the table gives the medians of wall seconds (two processes are about wall
time), the CPU seconds of this process in one-process runs, and checks that both write
the same text.

Run: ``python bench/bench_opencl_writer.py [--models DIR] [--only NAME,...] [--pairs N]
[--no-write]``; writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import statistics
import sys
import time

from results import machine, model_options, selected_models, write_section

TITLE = "## OpenCL writer: generate_opencl in one and two processes (bench_opencl_writer.py)"


def main() -> None:
    args = model_options(__doc__.split("\n\n")[0] if __doc__ else None).parse_args()
    from physlayout.indexing.simplify import clear_simplify_cache
    from physlayout.located import parse_located
    from physlayout.lowering.opencl import generate_opencl
    from physlayout.lowering.opencl_workers import can_fork
    from physlayout.runtime.device import DeviceLimits
    from physlayout.runtime.opencl import apply_verified_once

    limits = DeviceLimits(True, 16384, 16384, False, True)
    lines = [
        machine(),
        "",
        f"Two processes allowed here: {can_fork()}. Medians of {args.pairs} alternating runs.",
        "",
        "| model | kernels | one process: wall s | CPU s | two processes: wall s | speed-up |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for path in selected_models(args):
        module = apply_verified_once(
            "physlayout-adreno{lift-params=true}", limits,
            parse_located(path.read_text(), path.stem), lambda _: None,
        )  # fmt: skip
        walls: dict[int, list[float]] = {1: [], 2: []}
        cpus: list[float] = []
        texts: set[str] = set()
        kernels = 0
        for _ in range(args.pairs):
            for processes in (1, 2):
                clear_simplify_cache()
                wall, cpu = time.perf_counter(), time.process_time()
                program = generate_opencl(module, vectorized=True, processes=processes)
                walls[processes].append(time.perf_counter() - wall)
                if processes == 1:
                    cpus.append(time.process_time() - cpu)
                texts.add(program.source)
                kernels = len(program.kernels)
        if len(texts) != 1:
            sys.exit(f"{path.stem}: one and two processes wrote different programs")
        one, two = statistics.median(walls[1]), statistics.median(walls[2])
        row = (
            f"| {path.stem} | {kernels} | {one:.2f} | {statistics.median(cpus):.2f} | "
            f"{two:.2f} | {one / two:.2f}x |"
        )
        print(row, flush=True)
        lines.append(row)
    if not args.no_write:
        write_section(TITLE, lines)


if __name__ == "__main__":
    main()
