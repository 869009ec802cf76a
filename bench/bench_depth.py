"""Compile time against model depth: the Adreno pipeline on K stacked ResNet bottleneck
blocks (a script, not a test; about a minute of CPU time).

The model is `examples/models/bottleneck.mlir` (torch-mlir's bottleneck block: three convs,
three batch norms, relus, a residual add, the outlined `cf.assert`s) repeated K times in one
`@main`, each block reading the previous block's result and taking its own weights as
arguments, so a model of K blocks has about 127 * K ops, all distinct values, as a deeper
network would. For each K it reports:

- in this process (CPU seconds, the survivors of each pass frozen as the pipelines do):
  `raise-layout-rewrites` then `physlayout-adreno` (its verifications included), in total
  and per op of the input, and each pass's microseconds per input op: a time per op that
  stays flat as K grows says that nothing is super-linear in the depth (issue 28: no
  quadratic walk); it falls where equal blocks share kernels (legalize-layout builds one
  kernel per distinct body, and the lowering passes then see fewer ops per input op);
- as subprocesses (CPU seconds, start-up included): `xdsl-opt FILE` (parse + print, the
  floor) and `xdsl-opt FILE -p raise-layout-rewrites,physlayout-adreno`, and their ratio.

Run: ``python bench/bench_depth.py [--depths 1,4,16,64] [--no-write]``; writes its section of
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from results import cpu_seconds, machine, write_section

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
BLOCK = ROOT / "examples" / "models" / "bottleneck.mlir"
PIPELINE = "raise-layout-rewrites,physlayout-adreno"
TITLE = "## Compile time against model depth: stacked bottleneck blocks (bench_depth.py)"


def stacked_bottlenecks(depth: int) -> str:
    """The text of a module whose `@main` runs `depth` bottleneck blocks in sequence (see the
    module docstring)."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType, ModuleOp
    from xdsl.ir import Block, Region, SSAValue
    from xdsl.parser import Parser
    from xdsl.printer import Printer

    from physlayout.universe import make_context

    source = Parser(make_context(), BLOCK.read_text()).parse_module()
    main = next(op for op in source.ops if isinstance(op, func.FuncOp))
    params = main.body.block.args
    types = [params[0].type] + [p.type for _ in range(depth) for p in params[1:]]
    block = Block(arg_types=types)
    block.args[0].name_hint = params[0].name_hint
    current: SSAValue = block.args[0]
    position = 1
    for index in range(depth):
        mapper: dict[SSAValue, SSAValue] = {params[0]: current}
        for param in params[1:]:
            arg = block.args[position]
            arg.name_hint = f"block{index}_{param.name_hint}"
            mapper[param] = arg
            position += 1
        for op in main.body.block.ops:
            if isinstance(op, func.ReturnOp):
                current = mapper[op.operands[0]]
                break
            block.add_op(op.clone(value_mapper=mapper))
    block.add_op(func.ReturnOp(current))
    function = func.FuncOp(
        "main", FunctionType.from_lists(types, [current.type]), Region(block)
    )
    out = io.StringIO()
    Printer(out).print_op(ModuleOp([function]))
    return out.getvalue() + "\n"


@dataclass
class DepthTiming:
    depth: int
    ops: int = 0
    total: float = 0.0
    passes: dict[str, float] = field(default_factory=dict[str, float])
    """Seconds per pass name (passes that run several times summed), verification included."""
    floor: float | None = None
    whole: float | None = None


def time_in_process(text: str, timing: DepthTiming) -> None:
    """Run the pipeline on `text` in this process (see the module docstring)."""
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.parser import Parser
    from xdsl.passes import ModulePass

    from physlayout.lowering.pipelines import PhyslayoutAdrenoPass, survivors_frozen
    from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass
    from physlayout.universe import make_context

    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    timing.ops = sum(1 for _ in module.walk())
    marks: list[tuple[str, float]] = []
    start = time.process_time()
    RaiseLayoutRewritesPass().apply(ctx, module)
    marks.append((RaiseLayoutRewritesPass.name, time.process_time()))
    with survivors_frozen() as freeze_survivors:

        def mark(previous: ModulePass | None, _module: ModuleOp, _next: ModulePass | None) -> None:
            if previous is not None:
                marks.append((previous.name, time.process_time()))
            freeze_survivors()

        PhyslayoutAdrenoPass().pipeline(mark).apply(ctx, module)
    timing.total = time.process_time() - start
    before = start
    for name, at in marks:
        timing.passes[name] = timing.passes.get(name, 0.0) + at - before
        before = at


def time_subprocesses(text: str, timing: DepthTiming, timeout: float) -> None:
    xdsl_opt = str(BIN / "xdsl-opt")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"stacked_{timing.depth}.mlir"
        path.write_text(text)
        timing.floor = cpu_seconds([xdsl_opt, str(path), "-o", os.devnull], timeout)
        timing.whole = cpu_seconds(
            [xdsl_opt, str(path), "-p", PIPELINE, "-o", os.devnull], timeout
        )


def section(timings: Sequence[DepthTiming]) -> list[str]:
    lines = [
        machine(),
        f"Model: `{BLOCK.relative_to(ROOT)}` repeated K times in one `@main` (each block reads "
        "the previous one's result; its own weights are arguments). \"in process\": CPU seconds "
        f"of `{PIPELINE}` with its verifications, total and per input op; \"floor\" `xdsl-opt "
        f"FILE`, \"whole\" `xdsl-opt FILE -p {PIPELINE}` (one run each, CPU seconds, start-up "
        "included). A flat time per op as K grows: nothing super-linear in the depth.",
        "",
        "| blocks | ops | in process | us / op | floor | whole | whole / floor |",
        "|---|---|---|---|---|---|---|",
    ]

    def seconds(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    for t in timings:
        ratio = "-" if t.floor is None or t.whole is None else f"{t.whole / t.floor:.2f}x"
        lines.append(
            f"| {t.depth} | {t.ops} | {t.total:.2f} | {1e6 * t.total / t.ops:.0f} | "
            f"{seconds(t.floor)} | {seconds(t.whole)} | {ratio} |"
        )
    names = list(timings[0].passes) if timings else []
    lines += [
        "",
        "Microseconds per input op, per pass (its verification included; a pass that runs "
        "several times summed):",
        "",
        "| pass | " + " | ".join(f"{t.depth} blocks" for t in timings) + " |",
        "|---|" + "---|" * len(timings),
    ]
    for name in names:
        cells = [f"{1e6 * t.passes.get(name, 0.0) / t.ops:.0f}" for t in timings]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--depths", default="1,4,16,64", help="comma-separated block counts")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    timings: list[DepthTiming] = []
    for depth in (int(d) for d in args.depths.split(",") if d):
        text = stacked_bottlenecks(depth)
        timing = DepthTiming(depth)
        time_in_process(text, timing)
        time_subprocesses(text, timing, args.timeout)
        timings.append(timing)
        print(section([timing])[4], flush=True)
    print("\n".join(section(timings)))
    if not args.no_write:
        write_section(TITLE, section(timings))


if __name__ == "__main__":
    main()
