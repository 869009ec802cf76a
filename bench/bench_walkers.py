"""Pattern walkers with and without their roots (issue 28: compile time).

For each model of the models folder (default `examples/models`,
`--models DIR` otherwise), `raise-layout-rewrites` then `physlayout-adreno` in this process,
with `RootedWalker`'s own worklist population ("rooted") and with xDSL's
(`PatternRewriteWalker._populate_worklist`, "every op"):

- worklist visits: the ops the walkers popped, counted (the same on every run);
- CPU seconds of the passes, medians over alternating runs (`--pairs N`, default 8: this
  machine's times vary by 10-15% between identical runs), and
  the median of the pairs' ratios;
- with `--callgrind NAME,...` (valgrind installed): for those models, the instructions of
  one whole run of each kind (start-up and parsing included), counted by callgrind, which
  does not vary with the machine's load as times do (about five minutes a run for
  squeezenet1_1, twenty for efficientnet_b0).

The output of both kinds is compared too: the script fails if it differs.

Run: ``python bench/bench_walkers.py [--models DIR] [--only NAME,...] [--pairs N]
[--callgrind NAME,...] [--no-write]``; writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import gc
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from results import machine, write_section

ROOT = Path(__file__).resolve().parent.parent
TITLE = "## Pattern walkers: rooted worklists against every op (bench_walkers.py)"
DEFAULT = "bottleneck,efficientnet_b0,googlenet,squeezenet1_1"

ONE_RUN = """
import sys
from pathlib import Path
from xdsl.parser import Parser
from xdsl.pattern_rewriter import PatternRewriteWalker
from physlayout.transforms.rooted_walker import RootedWalker
from physlayout.universe import make_context
from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass
if sys.argv[2] == "every":
    RootedWalker._populate_worklist = PatternRewriteWalker._populate_worklist
ctx = make_context()
module = Parser(ctx, Path(sys.argv[1]).read_text()).parse_module()
RaiseLayoutRewritesPass().apply(ctx, module)
PhyslayoutAdrenoPass().apply(ctx, module)
"""
"""One whole run, of kind `argv[2]` (`rooted` or `every`) on `argv[1]`, for callgrind."""


@contextmanager
def population(rooted: bool) -> Iterator[None]:
    """Within the block, `RootedWalker` populates as itself (`rooted`) or as xDSL."""
    from xdsl.pattern_rewriter import PatternRewriteWalker

    from physlayout.transforms.rooted_walker import RootedWalker

    own = RootedWalker.__dict__["_populate_worklist"]
    if not rooted:
        RootedWalker._populate_worklist = PatternRewriteWalker._populate_worklist  # pyright: ignore[reportAttributeAccessIssue]
    try:
        yield
    finally:
        RootedWalker._populate_worklist = own  # pyright: ignore[reportAttributeAccessIssue]


def run_pipeline(text: str, rooted: bool, count: list[int] | None = None) -> tuple[float, str]:
    """CPU seconds of the passes on `text` and the printed result; `count[0]` is increased
    by the worklist visits when given."""
    from xdsl.parser import Parser
    from xdsl.utils.worklist import Worklist

    from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
    from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass
    from physlayout.universe import make_context

    pop = Worklist.pop

    def counting_pop(self: Worklist) -> object:
        assert count is not None
        count[0] += 1
        return pop(self)

    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    gc.collect()
    if count is not None:
        Worklist.pop = counting_pop  # pyright: ignore[reportAttributeAccessIssue]
    try:
        with population(rooted):
            start = time.process_time()
            RaiseLayoutRewritesPass().apply(ctx, module)
            PhyslayoutAdrenoPass().apply(ctx, module)
            seconds = time.process_time() - start
    finally:
        Worklist.pop = pop
    return seconds, str(module)


def instructions(path: Path, kind: str) -> int | None:
    """Callgrind's instruction count of one whole run of `kind` on `path`."""
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "one_run.py"
        script.write_text(ONE_RUN)
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={scratch}/out",
                sys.executable,
                str(script),
                str(path),
                kind,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    found = re.search(r"Collected : (\d+)", done.stderr)
    return int(found.group(1)) if done.returncode == 0 and found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, default=ROOT / "examples" / "models")
    parser.add_argument("--only", default=DEFAULT, help="comma-separated model names")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--callgrind", default="", help="models to count instructions of")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if not args.models.is_dir():
        print(f"no models folder at {args.models}; nothing measured")
        return
    counted_models = set(args.callgrind.split(",")) if shutil.which("valgrind") else set[str]()
    rows: list[str] = []
    for name in args.only.split(","):
        path = args.models / f"{name}.mlir"
        if not path.exists():
            continue
        text = path.read_text()
        visits = {True: [0], False: [0]}
        outputs = {kind: run_pipeline(text, kind, visits[kind])[1] for kind in (True, False)}
        if outputs[True] != outputs[False]:
            raise SystemExit(f"{name}: the rooted walkers changed the output")
        seconds: dict[bool, list[float]] = {True: [], False: []}
        for pair in range(args.pairs):
            for kind in (True, False) if pair % 2 == 0 else (False, True):
                seconds[kind].append(run_pipeline(text, kind)[0])
        ratio = statistics.median(
            rooted / every for rooted, every in zip(seconds[True], seconds[False], strict=True)
        )
        counted = ""
        if name in counted_models:
            rooted_count, every_count = instructions(path, "rooted"), instructions(path, "every")
            if rooted_count and every_count:
                counted = (
                    f" | {every_count / 1e9:.2f} G | {rooted_count / 1e9:.2f} G"
                    f" | {rooted_count / every_count:.3f}"
                )
        rows.append(
            f"| {name} | {visits[False][0]:,} | {visits[True][0]:,}"
            f" | {statistics.median(seconds[False]):.2f} | {statistics.median(seconds[True]):.2f}"
            f" | {ratio:.3f}{counted or ' | - | - | -'} |"
        )
        print(rows[-1], flush=True)
    lines = [
        machine(),
        "",
        "`raise-layout-rewrites` then `physlayout-adreno` in process, every walker populating "
        "its worklist with every op (xDSL's `PatternRewriteWalker`) or with the ops its "
        "pattern can match (`RootedWalker`): worklist visits (counted), CPU seconds of the "
        f"passes (medians of {args.pairs} alternating runs each; the ratio is the median of "
        "the pairs' ratios) and, for the models given to `--callgrind`, callgrind's "
        "instructions of one whole process each (start-up and parsing included). The output "
        "of both is the same (checked).",
        "",
        "| model | visits, every op | visits, rooted | s, every op | s, rooted | rooted / every"
        " | instructions, every op | instructions, rooted | rooted / every |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]
    if not args.no_write:
        write_section(TITLE, lines)


if __name__ == "__main__":
    main()
