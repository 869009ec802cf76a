"""`physlayout tune FILE`: time candidate schedules of each distinct kernel of a graph-level
model on an OpenCL device and keep the fastest in the tuning cache (`runtime/tuner.py`,
`runtime/tuning_cache.py`, docs/schedules.md), which `run` and `compile` then use; and
the tuning options of `run` and `compile` (`--tune`, `--tune-budget`, `--tuning-cache`).

Errors are reported as `physlayout run` reports them: a diagnostic, never a traceback.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from physlayout.cli.common import add_fp_contract, add_texture_storage, reported
from physlayout.cli.run import GRAPH_PIPELINE, add_precision_options, default_pipeline
from physlayout.located import entry_function, parse_located
from physlayout.runtime.tuning_cache import DEFAULT_BUDGET

CACHE_HELP = (
    "the tuning cache (JSON; default $PHYSLAYOUT_CACHE_DIR/tuning.json, else "
    "~/.cache/physlayout/tuning.json)"
)


def add_tune_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add the `tune` sub-command and its options to `sub`."""
    tune = sub.add_parser(
        "tune",
        help="time candidate schedules of FILE's kernels on the device, keep the fastest",
        description=(
            "Compile the graph-level FILE as `physlayout run` does, then for each distinct "
            "kernel (by signature: its unscheduled IR and launch extents) time candidate "
            "schedules on the OpenCL device (register tiles, work-groups, unrolling; each "
            "checked against the unscheduled kernel's values first) within --budget seconds, "
            "and record the fastest in the tuning cache, keyed by device, driver and kernel "
            "signature. `run` and `compile --device` then use them."
        ),
    )
    tune.add_argument("file", help="a graph-level .mlir file (functions over tensors)")
    tune.add_argument(
        "--entry", help="function to tune (default: @main, else the one function no other calls)"
    )
    tune.add_argument(
        "--budget", type=float, default=DEFAULT_BUDGET, metavar="SECONDS",
        help=f"wall seconds to spend on the optional candidates (default {DEFAULT_BUDGET:g}); "
        "the unscheduled kernel and the heuristic's schedule are always timed",
    )  # fmt: skip
    tune.add_argument("--tuning-cache", default=None, metavar="FILE", help=CACHE_HELP)
    tune.add_argument(
        "--device",
        default=None,
        help="PLATFORM[:INDEX] (default: $PHYSLAYOUT_OPENCL_DEVICE, else a GPU, else PoCL)",
    )
    add_texture_storage(tune, "on a CPU device (time the kernels as `run` holds them)")
    add_fp_contract(tune)
    tune.add_argument(
        "--pipeline",
        default=None,
        help=f"the pass pipeline to buffer-level kernels (default: {default_pipeline()}, or "
        f"{GRAPH_PIPELINE} with --no-prepare), as `run` and `compile` take it",
    )
    add_precision_options(tune)


def add_tuning_options(parser: argparse.ArgumentParser) -> None:
    """`--tune`, `--tune-budget` and `--tuning-cache` of `run` and `compile`."""
    parser.add_argument(
        "--tune",
        action="store_true",
        help="graph-level IR only: first tune the kernels on the device (`physlayout tune`; "
        "compile without --device tunes on the default device and takes its limits)",
    )
    parser.add_argument(
        "--tune-budget",
        type=float,
        default=DEFAULT_BUDGET,
        metavar="SECONDS",
        help=f"--tune's budget (default {DEFAULT_BUDGET:g} s)",
    )
    parser.add_argument(
        "--tuning-cache",
        default=None,
        metavar="FILE",
        help=CACHE_HELP + "; its schedules for the device replace the heuristic's",
    )


def schedules_for(
    args: argparse.Namespace, runtime: Any, parse: Callable[[], tuple[Any, str]], pipeline: str
) -> str:
    """The schedule table `run` and `compile` give the compiler for `runtime`'s device:
    with `--tune` the kernels are tuned first (`parse()` gives the module and entry name)
    and the report printed; then the tuning cache's entries (`--tuning-cache`)."""
    from physlayout.runtime.tuner import tune_model
    from physlayout.runtime.tuning_cache import tuned_table

    if args.tune:
        module, entry = parse()
        report = tune_model(
            module, entry, runtime, pipeline=pipeline, precision=args.precision,
            budget=args.tune_budget, cache=args.tuning_cache,
        )  # fmt: skip
        print("\n".join(report.lines()))
    return tuned_table(runtime, args.tuning_cache)


def tune_command(args: argparse.Namespace) -> int:
    """`physlayout tune`: the exit status (0 ok, 1 error)."""
    return reported(lambda: _tune(args))


def _tune(args: argparse.Namespace) -> int:
    from physlayout.runtime.device import OpenCLRuntime
    from physlayout.runtime.tuner import tune_model
    from physlayout.runtime.tuning_cache import tuning_cache_path

    with open(args.file) as stream:
        text = stream.read()
    source = parse_located(text, args.file)
    entry = entry_function(source, args.entry).sym_name.data
    runtime = OpenCLRuntime(
        args.device, texture_storage=args.texture_storage, fp_contract=args.fp_contract
    )
    print(f"device: {runtime.describe()}, driver {runtime.device.driver_version}")
    report = tune_model(
        source, entry, runtime, pipeline=args.pipeline or default_pipeline(not args.no_prepare),
        precision=args.precision, budget=args.budget, cache=args.tuning_cache,
    )  # fmt: skip
    print("\n".join(report.lines()))
    print(f"wrote {args.tuning_cache or tuning_cache_path()}")
    return 0
