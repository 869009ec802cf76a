"""What issue 28's 3x goal leaves for the passes, per model, against what they cost now and
what building and verifying the lowered model once costs (a script, not a test).

For each model of the models folder (as `bench_compile.py`), `--pairs` alternating runs of:

- "floor": `xdsl-opt FILE` (parse + verify + print; CPU seconds, start-up included);
- "whole": `physlayout-opt FILE -p PIPELINE --time-passes` (CPU seconds): the same
  pipeline as `xdsl-opt` runs it, with a driver whose verifications are faster, and which
  prints each pass's seconds and the verification's after it (wall seconds of a
  single-threaded run: about its CPU seconds). From that same run: "passes" and "verify"
  (the pipeline's passes and the verifications after them) and "outside" = whole - the
  top-level passes' seconds (start-up, parsing, the driver's own verifications, printing
  the output);
- "budget" = 3 * floor - outside: what the passes and their verifications together may
  cost for whole / floor <= 3.

The table gives the median of each over the pairs, and ratios of those medians. "once":
building the output module once (a clone: xDSL building every op of the result, with
nothing to decide) and one verification of it as the pipelines verify (a fresh memo), in
this process; "budget / once" says how many times a pipeline within the goal could build
and verify a module of the output's size.

Run: ``python bench/bench_budget.py [--models DIR] [--only NAME,...] [--pairs N]
[--no-write]``; writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench_compile import PIPELINE, TARGET
from results import cpu_seconds, cpu_seconds_and_output, machine, models_main

TITLE = "## What the 3x goal leaves for the passes (bench_budget.py)"
BIN = Path(sys.executable).parent
_TOOK = re.compile(
    r"^(?P<indent> *)Pass \S+ took (?P<seconds>[0-9.e+-]+) seconds"
    r"(?: \(verified in (?P<verify>[0-9.e+-]+) seconds\))?"
)


def pass_seconds(printed: str) -> tuple[float, float, float]:
    """From `--time-passes` lines: the seconds of the top-level passes, and of the passes
    of the declared pipelines under them and of the verifications after those."""
    top = inner = verify = 0.0
    for line in printed.splitlines():
        match = _TOOK.match(line)
        if match is None:
            continue
        if not match["indent"]:
            top += float(match["seconds"])
            continue
        inner += float(match["seconds"])
        verify += float(match["verify"] or 0.0)
    return top, inner, verify


@dataclass(frozen=True)
class Budget:
    """One model's seconds (CPU; medians over the pairs) and what the goal leaves of them."""

    name: str
    floor: float
    whole: float
    outside: float
    """What the whole run spends besides the top-level passes (start-up, parsing, the
    driver's verifications, printing)."""
    passes: float
    verify: float
    build_once: float
    verify_once: float

    @property
    def budget(self) -> float:
        """What the passes and their verifications may cost for whole / floor <= TARGET."""
        return TARGET * self.floor - self.outside

    @property
    def once(self) -> float:
        """Building and verifying the output module once."""
        return self.build_once + self.verify_once


def build_and_verify_once(module: object) -> tuple[float, float]:
    """CPU seconds of cloning `module` and of verifying the clone with a fresh memo, the
    survivors frozen out of the collector's scans as the pipelines freeze them."""
    from xdsl.ir import Operation

    from physlayout.lowering.pipelines import survivors_frozen
    from physlayout.verification import PassedChecks, verify_module

    assert isinstance(module, Operation)
    with survivors_frozen() as freeze_survivors:
        start = time.process_time()
        copy = module.clone()
        built = time.process_time()
        freeze_survivors()
        verify_module(copy, PassedChecks())
        return built - start, time.process_time() - built


def measure(path: Path, timeout: float, pairs: int) -> Budget | str:
    """The budget of the model at `path` (`pairs` alternating floor and whole runs), or why
    there is none."""
    from xdsl.parser import Parser

    from physlayout.universe import make_context

    floors: list[float] = []
    samples: list[tuple[float, float, float, float]] = []  # whole, outside, passes, verify
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "out.mlir"
        whole_command = [
            str(BIN / "physlayout-opt"), str(path), "-p", PIPELINE, "--time-passes",
            "-o", str(output),
        ]  # fmt: skip
        for _ in range(pairs):  # alternating, so that a busy moment weighs on both alike
            floor = cpu_seconds([str(BIN / "xdsl-opt"), str(path), "-o", os.devnull], timeout)
            whole = cpu_seconds_and_output(whole_command, timeout)
            if floor is None or whole is None:
                return f"{path.stem}: a run failed"
            top, passes, verify = pass_seconds(whole[1])
            floors.append(floor)
            samples.append((whole[0], whole[0] - top, passes, verify))
        module = Parser(make_context(), output.read_text(), str(output)).parse_module()
    build, verify_once = build_and_verify_once(module)
    whole, outside, passes, verify = (
        statistics.median(column) for column in zip(*samples, strict=True)
    )
    return Budget(
        path.stem, statistics.median(floors), whole, outside, passes, verify, build, verify_once
    )


def section(rows: Sequence[Budget | str], models: Path) -> list[str]:
    """The RESULTS.md section: one row per model."""
    lines = [
        machine(),
        f'Models: `{models.name}/*.mlir`. Seconds, medians of alternating runs: "floor" '
        f'`xdsl-opt FILE` (CPU, start-up included), "whole" `physlayout-opt FILE -p {PIPELINE} '
        '--time-passes` (CPU, start-up included); from the same run, "passes" and '
        '"verify" (the pipeline\'s passes and the verifications after them, as '
        '`--time-passes` prints them) and "outside" (whole less the top-level passes: '
        f'start-up, parsing, the driver\'s own verifications, printing); "budget" = {TARGET:g} '
        f"* floor - outside, what the passes and their verifications may cost for whole / "
        f'floor <= {TARGET:g}; "once": building the output module once (a clone) + '
        "verifying it once (a fresh memo), in process.",
        "",
        "| model | floor | whole | whole / floor | outside | budget | passes | verify "
        "| verify / budget | (passes + verify) / budget | passes / budget "
        "| once (build + verify) | budget / once |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if isinstance(row, str):
            continue

        def of_budget(seconds: float, row: Budget = row) -> str:
            return "-" if row.budget <= 0 else f"{seconds / row.budget:.2f}"

        lines.append(
            f"| {row.name} | {row.floor:.2f} | {row.whole:.2f} | {row.whole / row.floor:.2f}x | "
            f"{row.outside:.2f} | {row.budget:.2f} | {row.passes:.2f} | {row.verify:.2f} | "
            f"{of_budget(row.verify)} | {of_budget(row.passes + row.verify)} | "
            f"{of_budget(row.passes)} | "
            f"{row.once:.2f} ({row.build_once:.2f} + {row.verify_once:.2f}) | "
            f"{'-' if row.budget <= 0 else f'{row.budget / row.once:.1f}'} |"
        )
    lines += [f"- {row}" for row in rows if isinstance(row, str)]
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    models_main((__doc__ or "").splitlines()[0], TITLE, measure, section, argv)


if __name__ == "__main__":
    main()
