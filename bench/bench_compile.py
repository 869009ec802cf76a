"""Whole-model compile time: the Adreno pipeline on real models against `xdsl-opt` parsing
and printing them (issue 28: within 3x; a script, not a test; about a minute of CPU time
per model that gets through).

For each `NAME.mlir` of the models folder (torch-mlir linalg-on-tensors graphs; default
`examples/models`, `--models DIR` otherwise):

- per pass, in this process: CPU seconds of each pass of `raise-layout-rewrites` followed
  by `physlayout-adreno`'s passes, and of the module verification after it (as the
  pipelines verify: after every pass that changed the module, and after the first); a model that a pass refuses stops there (the table says
  where: the pipeline does not handle every model yet);
- as subprocesses (CPU seconds, start-up included, one run each): `xdsl-opt FILE` (parse and
  print, the floor), `xdsl-opt FILE -p raise-layout-rewrites,physlayout-adreno`, the same
  pipeline in `physlayout-opt` (whose driver verifies with indexed symbol lookups, as the
  pipelines do) and in `physlayout-opt` with `physlayout-adreno{verify-each=false}` (only
  the driver verifies, at the end), each with its ratio to the floor (only for models the
  whole pipeline compiles), and `xdsl-opt OUT` on that run's output (the output's own
  parse+print: the lowered model is several times the size of its input).

Run: ``python bench/bench_compile.py [--models DIR] [--only NAME,...] [--no-write]``;
writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from results import cpu_seconds, machine, model_options, selected_models, write_section

BIN = Path(sys.executable).parent
PIPELINE = "raise-layout-rewrites,physlayout-adreno"
UNVERIFIED = "raise-layout-rewrites,physlayout-adreno{verify-each=false}"
TITLE = "## Whole models: physlayout-adreno against xdsl-opt parse+print (bench_compile.py)"
TARGET = 3.0


@dataclass
class ModelTiming:
    """Per-pass seconds of one model, where it stopped, and the subprocess totals."""

    name: str
    ops: int
    parse: float = 0.0
    passes: list[tuple[str, float, float]] = field(default_factory=list[tuple[str, float, float]])
    """(pass, seconds, verification seconds after it)."""
    failure: str | None = None
    floor: float | None = None
    whole: float | None = None
    opt: float | None = None
    """`physlayout-opt -p PIPELINE`."""
    unverified: float | None = None
    """`physlayout-opt -p UNVERIFIED`."""
    whole_ratio: float | None = None
    """The median over the alternating pairs of whole / floor."""
    output_floor: float | None = None
    """`xdsl-opt OUT` (parse + print) of the pipeline's output OUT."""


def pipeline_passes() -> list[object]:
    """The passes of `raise-layout-rewrites,physlayout-adreno`, in order."""
    from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
    from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass

    return [RaiseLayoutRewritesPass(), *PhyslayoutAdrenoPass().passes()]


def time_passes(path: Path) -> ModelTiming:
    """Parse `path`, run each pass and verify after it, timing both (CPU seconds)."""
    from xdsl.parser import Parser
    from xdsl.passes import ModulePass

    from physlayout.lowering.pipelines import survivors_frozen
    from physlayout.transforms.pass_options import apply_and_report
    from physlayout.universe import make_context
    from physlayout.verification import PassedChecks, verify_module

    ctx = make_context()
    text = path.read_text()
    start = time.process_time()
    try:
        module = Parser(ctx, text, str(path)).parse_module()
    except Exception as err:  # xDSL may lack an op of the model
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        message = (lines[-1] if lines else type(err).__name__)[:160]
        return ModelTiming(path.stem, 0, time.process_time() - start, failure=f"parse: {message}")
    timing = ModelTiming(path.stem, sum(1 for _ in module.walk()))
    timing.parse = time.process_time() - start
    passed = PassedChecks()  # as the pipelines verify
    verified = False
    with survivors_frozen() as freeze_survivors:  # as the pipelines run their passes
        for item in pipeline_passes():
            assert isinstance(item, ModulePass)
            start = time.process_time()
            try:
                changed = apply_and_report(item, ctx, module)
                done = time.process_time()
                if changed or not verified:  # as the pipelines verify (`VerifyingPipeline`)
                    verify_module(module, passed)
                    verified = True
            except Exception as err:  # the table reports where the model stops
                message = " ".join(str(err).split())[:160]
                timing.failure = f"{item.name}: {message}"
                return timing
            timing.passes.append((item.name, done - start, time.process_time() - done))
            freeze_survivors()
    return timing


def floor_and_whole(
    path: Path, timeout: float, pairs: int
) -> tuple[float | None, float | None, float | None]:
    """`xdsl-opt FILE` (the floor) and `xdsl-opt FILE -p PIPELINE` (the whole run), `pairs`
    alternating runs of each (CPU seconds): their medians and the median of the pairs'
    ratios whole / floor (all None when a run failed)."""
    xdsl_opt = str(BIN / "xdsl-opt")
    floors: list[float] = []
    wholes: list[float] = []
    for _ in range(pairs):  # alternating, so that a busy moment weighs on both alike
        floor = cpu_seconds([xdsl_opt, str(path), "-o", os.devnull], timeout)
        whole = cpu_seconds([xdsl_opt, str(path), "-p", PIPELINE, "-o", os.devnull], timeout)
        if floor is None or whole is None:
            return None, None, None
        floors.append(floor)
        wholes.append(whole)
    ratio = statistics.median(w / f for w, f in zip(wholes, floors, strict=True))
    return statistics.median(floors), statistics.median(wholes), ratio


def time_whole(path: Path, timing: ModelTiming, timeout: float, pairs: int) -> None:
    """The subprocess CPU seconds of parse+print and of the whole pipeline (`pairs`
    alternating runs of each: medians, and the median of the pairs' ratios), then one run
    of each other command."""
    xdsl_opt = str(BIN / "xdsl-opt")
    if timing.failure is not None and timing.failure.startswith("parse:"):
        return
    floor_command = [xdsl_opt, str(path), "-o", os.devnull]
    if timing.failure is not None:
        timing.floor = cpu_seconds(floor_command, timeout)
        return
    timing.floor, timing.whole, timing.whole_ratio = floor_and_whole(path, timeout, pairs)
    opt = str(BIN / "physlayout-opt")
    timing.opt = cpu_seconds([opt, str(path), "-p", PIPELINE, "-o", os.devnull], timeout)
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "out.mlir"
        timing.unverified = cpu_seconds(
            [opt, str(path), "-p", UNVERIFIED, "-o", str(output)], timeout
        )
        timing.output_floor = cpu_seconds([xdsl_opt, str(output), "-o", os.devnull], timeout)


def section(timings: list[ModelTiming], models: Path) -> list[str]:
    """The RESULTS.md section: one row per model, then the per-pass table."""
    lines = [
        machine(),
        f"Models: `{models.name}/*.mlir` (torch-mlir linalg-on-tensors). CPU seconds. "
        f"\"floor\" is `xdsl-opt FILE` (parse + print), \"whole\" `xdsl-opt FILE -p {PIPELINE}` "
        "(floor and whole: medians of alternating runs, \"whole / floor\" the median of their "
        "pairs' ratios), "
        f"\"physlayout-opt\" the same pipeline in `physlayout-opt`, \"no verify-each\" "
        f"`physlayout-opt FILE -p {UNVERIFIED}` (only the driver verifies, at the end), all "
        f"subprocesses with start-up; the target is whole / floor <= {TARGET}. \"out floor\" "
        "is `xdsl-opt OUT` on the pipeline's output (what any tool must at least do to print "
        "it, parse included). Pass times are in-process (the survivors of each pass frozen out of "
        "the garbage collector's scans, as the pipelines run them); \"verify\" is the module verification "
        "after each pass (0 after a pass that changed nothing: the pipelines skip it).",
        "",
        "| model | ops | floor | whole | whole / floor | physlayout-opt | / floor "
        "| no verify-each | / floor | out floor | parse | passes | verify | stops at |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def seconds(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    def ratio(value: float | None, floor: float | None) -> str:
        return "-" if value is None or floor is None else f"{value / floor:.2f}x"

    for t in timings:
        passes = sum(s for _, s, _ in t.passes)
        verify = sum(v for _, _, v in t.passes)
        stops = "-" if t.failure is None else t.failure.split(":")[0]
        lines.append(
            f"| {t.name} | {t.ops} | {seconds(t.floor)} | {seconds(t.whole)} | "
            f"{'-' if t.whole_ratio is None else f'{t.whole_ratio:.2f}x'} | {seconds(t.opt)} | {ratio(t.opt, t.floor)} | "
            f"{seconds(t.unverified)} | {ratio(t.unverified, t.floor)} | "
            f"{seconds(t.output_floor)} | {t.parse:.2f} | "
            f"{passes:.2f} | {verify:.2f} | {stops} |"
        )
    names = [name for name, _, _ in max((t.passes for t in timings), key=len, default=[])]
    lines += [
        "",
        "Seconds per pass (pass + verification after it; blank where the model stopped):",
        "",
        "| pass | " + " | ".join(t.name for t in timings) + " |",
        "|---|" + "---|" * len(timings),
    ]
    for k, name in enumerate(names):
        cells = [
            f"{t.passes[k][1]:.3f} + {t.passes[k][2]:.3f}" if k < len(t.passes) else ""
            for t in timings
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    stopped = [t for t in timings if t.failure is not None]
    if stopped:
        lines += ["", "Where the pipeline stops (not a compile-time matter):", ""]
        lines += [f"- {t.name}: {t.failure}" for t in stopped]
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    args = model_options((__doc__ or "").splitlines()[0]).parse_args(argv)
    timings: list[ModelTiming] = []
    for path in selected_models(args):
        timing = time_passes(path)
        time_whole(path, timing, args.timeout, args.pairs)
        timings.append(timing)
        print(section([timing], args.models)[5], flush=True)
    if not timings:
        return
    print("\n".join(section(timings, args.models)[4:]))
    if not args.no_write:
        write_section(TITLE, section(timings, args.models))


if __name__ == "__main__":
    main()
