"""Operator fusion benchmark (not a test): each graph through `physlayout-adreno` with
`fuse=false` and `fuse=true` (fuse-elementwise), in one run on one device, twice: with
parameters prepared once (`lift-params=true`; `@main_prepare` runs before, untimed) and with
parameters as plain arguments (every inference re-lays them out):

- launches per inference (kernel launches of one call of the host function);
- layout kernels per inference (the launches of `layout.transform/pad/crop/copy` kernels);
- bytes moved per inference: every `layout.load`/`layout.store` of the launched kernels
  (after `physlayout-opencl`, so a texel access counts 16 bytes) times the trip counts of
  the loops around it (constant bounds), summed: the traffic a machine without caches
  would see, from the kernels' accesses;
- device time per inference: the median over REPEATS calls of the summed OpenCL profiling
  times of its launches (the first call, which builds the kernels, excluded), unfused and
  fused calls alternating so that the machine's load disturbs both alike.

Graphs: `examples/*.mlir` with graph-level functions, and `examples/models/*.mlir` when
they go through the pipeline on this checkout (a model that does not is listed with the
first line of its diagnostic). Results go to a section of bench/RESULTS.md. Usage:
`python bench/bench_fusion.py [--device SPEC] [--models DIR] [--no-write]`.
"""

from __future__ import annotations

import argparse
import statistics
import warnings
from dataclasses import dataclass
from math import prod
from pathlib import Path

import numpy as np
from bench_models import load_inputs
from results import machine, write_section
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, ShapedType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from physlayout.dialects.layout import LoadOp, StoreOp
from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.host import execute, run_prepare
from physlayout.runtime.opencl import OpenCLRuntime, compile_module, numpy_dtype, parse_module
from physlayout.transforms.legalize_layout import is_graph_function
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 9
SECTION = "## Operator fusion: kernels, traffic and device time per inference (bench_fusion.py)"
LAYOUT_KINDS = ("_transform", "_copy", "_crop", "_pad")


@dataclass(frozen=True)
class Measure:
    launches: int
    layout: int
    bytes: int
    seconds: float


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _trips(op: Operation) -> int:
    """The product of the trip counts of the loops around `op` (constant bounds)."""
    count = 1
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.ForOp):
            lower, upper, step = (_constant(v) for v in (parent.lb, parent.ub, parent.step))
            if lower is not None and upper is not None and step:
                count *= max(0, -(-(upper - lower) // step))
        elif isinstance(parent, scf.ParallelOp):
            for lb, ub, st in zip(parent.lowerBound, parent.upperBound, parent.step, strict=True):
                lower, upper, step = _constant(lb), _constant(ub), _constant(st)
                if lower is not None and upper is not None and step:
                    count *= max(0, -(-(upper - lower) // step))
        parent = parent.parent_op()
    return count


def _bytes_of(type_: Attribute) -> int:
    if isinstance(type_, ShapedType):
        return prod(type_.get_shape()) * _bytes_of(type_.get_element_type())  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return int(np.dtype(numpy_dtype(type_, "bench_fusion")).itemsize)


def kernel_bytes(kernel: func.FuncOp) -> int:
    """Bytes one launch of `kernel` loads and stores (module docstring)."""
    total = 0
    for op in kernel.walk():
        if isinstance(op, LoadOp):
            total += _trips(op) * _bytes_of(op.results[0].type)
        elif isinstance(op, StoreOp):
            total += _trips(op) * _bytes_of(op.operands[0].type)
    return total


@dataclass
class Compiled:
    """One graph compiled one way, with its static counts."""

    compiled: object
    entry: str
    args: list[np.ndarray]
    launches: int = 0
    layout: int = 0
    bytes: int = 0


def compile_graph(
    text: str,
    runtime: OpenCLRuntime,
    fuse: bool,
    inputs: dict[str, np.ndarray] | None = None,
    prepared: bool = False,
) -> Compiled:
    """Compile `text` (entry @main, else its first graph function); one call counts its
    launches, layout kernels and bytes (and builds the kernels). Arguments: `inputs` by
    name where given (a model's real inputs: its asserts hold), else uniform in [-1, 1].
    `prepared`: with `lift-params=true`; `@main_prepare` runs once here, and the counted
    and timed call is the inference alone, on the prepared parameters."""
    source = parse_module(text)
    graphs = [f for f in source.ops if isinstance(f, func.FuncOp) and is_graph_function(f)]
    entry = next((f for f in graphs if f.sym_name.data == "main"), graphs[0])
    lowered = source.clone()
    limits = runtime.limits.image_limits()
    PhyslayoutAdrenoPass(
        max_image_width=limits.max_width,
        max_image_height=limits.max_height,
        fuse=fuse,
        lift_params=prepared,
    ).apply(make_context(), lowered)
    kernels = {f.sym_name.data: f for f in lowered.ops if isinstance(f, func.FuncOp)}
    rng = np.random.default_rng(0)
    args: list[np.ndarray] = []
    names = [str(a.name_hint) for a in entry.body.blocks[0].args]
    for k, t in enumerate(entry.function_type.inputs.data):
        assert isinstance(t, TensorType)
        shape = tuple(t.get_shape()) or (1,)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        if inputs is not None and names[k] in inputs:
            args.append(np.asarray(inputs[names[k]], dtype=np.float32).reshape(shape))
        else:
            args.append(rng.uniform(-1, 1, shape).astype(np.float32))
    outputs = [
        np.zeros(tuple(t.get_shape()) or (1,), dtype=np.float32)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        for t in entry.function_type.outputs.data
        if isinstance(t, TensorType)
    ]
    compiled = compile_module(lowered, runtime)
    args, _ = run_prepare(compiled, entry.sym_name.data, names, args)
    built = Compiled(compiled, entry.sym_name.data, [*args, *outputs])
    launched = [t.function for t in execute(built.compiled, built.entry, built.args).times]  # type: ignore[arg-type]
    built.launches = len(launched)
    built.layout = sum(1 for name in launched if any(kind in name for kind in LAYOUT_KINDS))
    built.bytes = sum(kernel_bytes(kernels[name]) for name in launched if name in kernels)
    return built


def measure(
    text: str,
    runtime: OpenCLRuntime,
    inputs: dict[str, np.ndarray] | None = None,
    prepared: bool = False,
) -> tuple[Measure, Measure]:
    """Unfused and fused, timed in alternating calls (the machine's load hits both alike)."""
    both = [compile_graph(text, runtime, fuse, inputs, prepared) for fuse in (False, True)]
    totals: list[list[float]] = [[], []]
    for _ in range(REPEATS):
        for k, built in enumerate(both):
            result = execute(built.compiled, built.entry, built.args)  # type: ignore[arg-type]
            totals[k].append(result.total_seconds)
    before, after = (
        Measure(b.launches, b.layout, b.bytes, statistics.median(t))
        for b, t in zip(both, totals, strict=True)
    )
    return before, after


def graphs(models: Path | None) -> list[tuple[str, str, dict[str, np.ndarray] | None]]:
    """(name, text, inputs) of the example graphs, then the models (their real inputs, from
    the folder's `inputs.py`, when it has one)."""
    found: list[tuple[str, str, dict[str, np.ndarray] | None]] = []
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        text = path.read_text()
        module = parse_module(text)
        if any(isinstance(f, func.FuncOp) and is_graph_function(f) for f in module.ops):
            found.append((f"examples/{path.name}", text, None))
    if models is not None and models.is_dir():
        real = (models / "inputs.py").is_file()
        found += [
            (f"models/{p.name}", p.read_text(), load_inputs(models, p.stem) if real else None)
            for p in sorted(models.glob("*.mlir"))
        ]
    return found


def _row(name: str, before: Measure, after: Measure) -> str:
    return (
        f"| {name} | {before.launches} -> {after.launches} | {before.layout} -> "
        f"{after.layout} | {before.bytes / 1e6:.2f} -> {after.bytes / 1e6:.2f} | "
        f"{before.seconds * 1e3:.3f} -> {after.seconds * 1e3:.3f} | "
        f"{before.seconds / after.seconds:.2f}x |"
    )


def run(device: str | None, models: Path | None) -> list[str]:
    warnings.filterwarnings("ignore", message=".*retrieved more than once.*")
    runtime = OpenCLRuntime(device)
    header = [
        "| graph | launches unfused -> fused | layout kernels | MB moved | device ms | speed-up |",
        "|---|---|---|---|---|---|",
    ]
    tables: dict[bool, list[str]] = {False: [], True: []}
    skipped: list[str] = []
    for name, text, inputs in graphs(models):
        try:
            rows = {p: _row(name, *measure(text, runtime, inputs, p)) for p in (True, False)}
        except Exception as err:  # a graph this checkout cannot compile is listed, not fatal
            lines_of = [line.strip() for line in str(err).splitlines() if line.strip()]
            skipped.append(f"- {name}: {(lines_of or [type(err).__name__])[-1][:160]}")
            continue
        for prepared, row in rows.items():
            tables[prepared].append(row)
    lines = [
        f"Device: {runtime.describe()}. {machine()}",
        f"Per inference (one call of the host function; device time: median of {REPEATS}, "
        "unfused and fused calls alternating).",
        "Bytes: every kernel load/store times its loops' trip counts (no caches).",
        "",
        "With parameters prepared once (`physlayout-adreno{lift-params=true}`, against",
        "`{lift-params=true fuse=false}`): the weight layout transforms and batch-norm",
        "statistics run once in `@main_prepare`, not counted here. This is how a model is run.",
        "",
        *header,
        *tables[True],
        "",
        "Parameters as plain arguments (`physlayout-adreno` against `{fuse=false}`): every",
        "inference re-lays out the weights, in both columns alike.",
        "",
        *header,
        *tables[False],
    ]
    if skipped:
        lines += ["", "Not run (they do not go through the pipeline on this checkout):", *skipped]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default=None, help="PLATFORM[:INDEX] (see runtime/opencl.py)")
    parser.add_argument(
        "--models", type=Path, default=ROOT / "examples/models",
        help="a folder of graph .mlir files (torch-mlir models) to measure too",
    )  # fmt: skip
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    lines = run(args.device, args.models)
    print("\n".join(lines))
    if not args.no_write:
        write_section(SECTION, lines)


if __name__ == "__main__":
    main()
