"""Real models end to end (`make models`; also part of `make bench`): every torch-mlir export
in the models folder through the default `physlayout-adreno` pipeline on the local OpenCL
device, on the inputs its `inputs.py` makes (seed 0), compared with PyTorch's outputs.

Per model: compile seconds (graph passes up to legalize-layout, buffer passes, OpenCL
build), launches per inference, of which layout-transform kernels and copies, bytes moved
per inference (`runtime.model_report.bytes_per_inference`, as bench_f16.py counts), intermediate
tensors in texture / global memory, device milliseconds (OpenCL profiling events) and the
max error relative to max|PyTorch output|. The table is printed and written to a section of
bench/RESULTS.md. A model that fails is a row with its error and makes the script exit 1.

With `--precision f16` (and by default, after the f32 table) the models first go through
`to-mixed-precision` (f16 storage, f32 accumulation; its own section, error bound 2e-2);
`prepared` lifts the work on parameters into `@main_prepare`, and `f16-prepared` does
both, with the weights rounded to f16 once in `@main_prepare` (`params-f16`). Usage:
`python bench/bench_models.py [--models DIR] [--only NAME ...] [--precision
f32|f16|prepared|f16-prepared|all] [--no-write]`; DIR defaults to examples/models.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import traceback
from pathlib import Path
from typing import Any

import numpy as np
from results import machine, write_section

from physlayout.runtime.model_report import ModelReport, run_model
from physlayout.runtime.opencl import OpenCLRuntime

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Real models end to end, {precision} (bench_models.py)"
GRAPH_PASSES = (
    "normalize-graph", "raise-layout-rewrites", "convert-layout", "flow-layout-rewrites",
    "fold-layout-rewrites", "sink-layout-rewrites", "lift-transform-params",
    "annotate-texture-scope", "realize-scopes",
)  # fmt: skip


def models_dir() -> Path:
    """The repository's models folder (all fourteen torch-mlir exports)."""
    return ROOT / "examples" / "models"


def load_inputs(folder: Path, name: str) -> dict[str, Any]:
    """The model's arguments by name, made by the folder's `inputs.py` (seed 0)."""
    spec = importlib.util.spec_from_file_location("model_inputs", folder / "inputs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_inputs(str(folder / f"{name}.args.txt"), seed=0)


PIPELINES = {
    "f32": "physlayout-adreno",
    "f16": "to-mixed-precision,physlayout-adreno",
    "prepared": "physlayout-adreno{lift-params=true}",
    "f16-prepared": "to-mixed-precision{params-f16=true},physlayout-adreno{lift-params=true}",
}
"""The graph pipeline per `--precision` (f16: f16 storage, f32 accumulation; prepared: f32
with the parameter work lifted into `@main_prepare`, run once; f16-prepared: both, the
weights rounded to f16 in `@main_prepare`, so inference reads f16 weights)."""

_KERNEL_OPS = re.compile(r"linalg\.(conv_|depthwise_conv|pooling_|matmul|batch_matmul)")
_REDUCTIONS = re.compile(r"linalg\.generic \{[^\n]*iterator_types = \[[^\]]*reduction")


_GATHER = re.compile(r"tensor\.extract (%[\w.$-]+)\[")
_GENERIC_END = re.compile(r"^\s*\} -> (tensor<[^>]*>)")
_ARGUMENTS = re.compile(r"func\.func @\w+\(([^)]*)\)")


def resizes(text: str) -> int:
    """Upsamplings, resizes and adaptive-pool windows in the source as torch-mlir prints
    them: the distinct (gathered tensor, result type) pairs of generics whose body gathers
    from a tensor that is not a function argument (a weight flip gathers a parameter; a
    bilinear resize's four corner gathers are one)."""
    arguments = set(re.findall(r"(%[\w.$-]+):", " ".join(_ARGUMENTS.findall(text))))
    pairs: set[tuple[str, str]] = set()
    gathered: list[str] = []
    for line in text.splitlines():
        gathered += [g for g in _GATHER.findall(line) if g not in arguments]
        end = _GENERIC_END.match(line)
        if end:
            pairs.update((g, end.group(1)) for g in gathered)
            gathered = []
    return len(pairs)


def launch_goal(text: str) -> int:
    """#41's goal for one inference: convolutions + poolings (a mean is a generic with a
    reduction loop) + matmuls + upsamplings (`resizes`), + 2 (the input's and the result's
    layout), counted in the source as the frontend printed it."""
    kernels = len(_KERNEL_OPS.findall(text)) + len(_REDUCTIONS.findall(text))
    return kernels + resizes(text) + 2


def measure(folder: Path, name: str, runtime: OpenCLRuntime, precision: str = "f32") -> ModelReport:
    """Compile and run model `name` of `folder` (in `precision`)."""
    text = (folder / f"{name}.mlir").read_text()
    with np.load(folder / f"{name}.expected.npz") as archive:
        expected = {k: archive[k] for k in archive.files}
    inputs = load_inputs(folder, name)
    report = run_model(name, text, inputs, expected, runtime, PIPELINES[precision])
    report.goal = launch_goal(text)
    return report


def row(report: ModelReport) -> str:
    graph = sum(s for p, s in report.pass_seconds.items() if p in GRAPH_PASSES or p == "parse")
    legalize = report.pass_seconds.get("legalize-layout", 0.0)
    buffers = sum(
        s for p, s in report.pass_seconds.items()
        if p not in GRAPH_PASSES and p not in ("parse", "legalize-layout")
    )  # fmt: skip
    return (
        f"| {report.name} | {graph:.1f} | {legalize:.1f} | {buffers:.1f} | "
        f"{report.opencl_seconds:.1f} | {report.compile_seconds:.1f} | {report.launches} | "
        f"{report.goal} | {report.prepare_launches} | "
        f"{report.layout_launches} | {report.copy_launches} | "
        f"{report.texture_tensors} / {report.global_tensors} | "
        f"{report.bytes_moved / 1e6:.2f} | {report.device_ms:.2f} | {report.max_error:.1e} |"
    )


def table(
    folder: Path, names: list[str], runtime: OpenCLRuntime, precision: str
) -> tuple[list[str], bool]:
    """The section's lines for every model in `precision`, and whether one failed (an error,
    or an error above the bound: 1e-4 of max|PyTorch| in f32, 2e-2 in f16)."""
    bound = 2e-2 if precision.startswith("f16") else 1e-4
    lines = [
        machine(),
        f"Device: {runtime.describe()}. Models from `{folder.name}/` "
        "(torch-mlir exports, inputs.py seed 0); error = max|opencl - PyTorch| / max|PyTorch|; "
        f"pipeline `{PIPELINES[precision]}`.",
        "Compile seconds: graph = parse + graph passes up to realize-scopes; legalize; "
        "buffers = apply-layout, flatten-buffers, vectorize-texels, dce; OpenCL = C generation "
        "and build. MB moved: the bytes the launches of one inference move (every buffer or "
        "image argument of every launch once; half 2 bytes, float 4). Launches, layout "
        "kernels, copies, MB and device ms are per inference (`@main`); goal = convolutions + "
        "poolings (means included) + matmuls + upsamplings (and other gathers of computed "
        "tensors) + 2, counted in the source; prepare = the "
        "launches of `@main_prepare`, run once.",
        "",
        "| model | graph s | legalize s | buffers s | OpenCL s | compile s | launches | goal | "
        "prepare | layout kernels | copies | tensors texture / global | MB moved | device ms | "
        "error |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    failed = False
    for name in names:
        print(f"== {name} ({precision})", flush=True)
        try:
            report = measure(folder, name, runtime, precision)
        except Exception as err:  # a failing model is a row of the table, not the end
            traceback.print_exc()
            lines.append(f"| {name} | failed: {type(err).__name__}: {str(err)[:120]} |")
            failed = True
            continue
        lines.append(row(report))
        print(lines[-1], flush=True)
        failed |= report.max_error > bound
    return lines, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--precision", choices=[*sorted(PIPELINES), "all"], default="all",
        help="f32, f16 (to-mixed-precision first), prepared (lift-params), f16-prepared, or "
        "all: one section each",
    )  # fmt: skip
    args = parser.parse_args()
    folder = args.models or models_dir()
    names = args.only or sorted(p.stem for p in folder.glob("*.mlir"))
    runtime = OpenCLRuntime()
    failed = False
    for precision in (
        list(PIPELINES) if args.precision == "all" else [args.precision]
    ):
        lines, bad = table(folder, names, runtime, precision)
        failed |= bad
        print("\n".join(lines))
        if not args.no_write:
            write_section(SECTION.format(precision=precision), lines)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
