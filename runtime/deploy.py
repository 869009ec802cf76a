"""Artifacts: `physlayout compile FILE.mlir -o OUT/` and `physlayout run OUT/`.

An artifact is a directory holding
- `kernels.cl`: the OpenCL C of every kernel, its first line `artifact_line(id)`;
- `plan.json`: the launch plan (`runtime/plan.py`, JSON Schema `docs/plan.schema.json`);
- `host.c`: the standalone C99 host of the plan (`runtime/host_c.py`);
- `README.txt`: how to build and run host.c;
- `source.mlir`: the source module (what `physlayout run OUT/ --check` compares with);
- `kernels.json`: per kernel function, the multiplies one launch executes and the source
  lines it came from (`runtime/kernel_stats.py`; what `physlayout run OUT/ --profile` reads).

`compile_artifact` needs no OpenCL device: the image limits and the fp16/fp64 switches are
the target's (given, or read from a local device by the caller). The artifact's id is a hash
of its plan and kernels, so a kernels.cl of another compile is refused by both runners.
`load_artifact` reads one back (refusing another schema version or a kernels.cl of another
artifact); `check_device` refuses a device without what the plan requires. The plan runs
on a device through `runtime/session.Session`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.utils.exceptions import DiagnosticException

from physlayout.runtime.boundary import add_boundary_functions
from physlayout.runtime.host_c import BUILD_COMMAND, host_c
from physlayout.runtime.kernel_stats import KernelStats, kernel_stats
from physlayout.runtime.opencl import (
    DeviceLimits,
    OpenCLRuntime,
    apply_verified_once,
    device_pipeline,
    lower_module,
    module_text,
)
from physlayout.runtime.plan import (
    Plan,
    PlanError,
    artifact_line,
    build_plan,
)
from physlayout.runtime.plan_json import dumps, plan_from_json
from physlayout.universe import make_context

KERNELS_FILE = "kernels.cl"
PLAN_FILE = "plan.json"
HOST_FILE = "host.c"
README_FILE = "README.txt"
SOURCE_FILE = "source.mlir"
STATS_FILE = "kernels.json"


@dataclass(frozen=True)
class Artifact:
    """A compiled artifact in memory."""

    plan: Plan
    kernels: str
    """kernels.cl's text (its first line names the artifact)."""
    source: str | None
    """source.mlir's text (None when the artifact has none)."""
    stats: Mapping[str, KernelStats] | None = None
    """kernels.json: what each kernel function does per launch (`runtime/kernel_stats.py`;
    None when the artifact has none)."""

    def files(self) -> dict[str, str]:
        """The artifact's files by name."""
        files = {
            KERNELS_FILE: self.kernels,
            PLAN_FILE: dumps(self.plan),
            HOST_FILE: host_c(self.plan, self.plan.artifact_id),
            README_FILE: readme(self.plan),
        }
        if self.source is not None:
            files[SOURCE_FILE] = self.source
        if self.stats is not None:
            entries = {name: stats.to_json() for name, stats in sorted(self.stats.items())}
            files[STATS_FILE] = json.dumps(entries, indent=1) + "\n"
        return files


def compile_artifact(
    source: ModuleOp,
    entry: str,
    limits: DeviceLimits,
    *,
    pipeline: str = "physlayout-adreno",
    physical_io: bool = False,
    remarks: bool = False,
    source_text: str | None = None,
    precision: str = "f32",
    schedules: str = "",
) -> Artifact:
    """Compile function `entry` of `source` (buffer-level, or graph-level: then `pipeline`
    first) for a device with `limits`. Inputs and outputs are in the entry's logical layout
    (boundary kernels, `runtime/boundary.py`), or in their physical layout with
    `physical_io`. `precision` "f16" (graph-level only) first applies `to-mixed-precision`:
    f16 storage, f32 arithmetic, f32 inputs and results; parameters the pipeline lifts into
    `@ENTRY_prepare` are rounded there, once. `schedules` (graph-level only): given
    schedules by kernel signature (`transforms/given_schedules.py`, the tuning cache's)
    for the passes that take them (`apply-schedules`)."""
    from physlayout.transforms.legalize_layout import is_graph_function

    graph = any(isinstance(op, func.FuncOp) and is_graph_function(op) for op in source.ops)
    if precision not in ("f32", "f16"):
        raise DiagnosticException(f"precision must be f32 or f16, got '{precision}'")
    if precision != "f32" and not graph:
        raise DiagnosticException(
            f"precision {precision} applies to graph-level IR (functions over tensors); "
            "buffer-level kernels run in the element types they declare"
        )
    module = source
    shapes: dict[int, tuple[int, ...]] = {}
    if graph:

        def mixed_precision(graph: ModuleOp) -> None:
            apply_precision(graph, pipeline, limits, precision)

        module = apply_verified_once(pipeline, limits, source, mixed_precision, schedules)
        signature = _function(source, entry).function_type
        types = [*signature.inputs.data, *signature.outputs.data]
        shapes = {i: tuple(t.get_shape()) for i, t in enumerate(types) if isinstance(t, TensorType)}
    else:
        module = source.clone()
    boundary = [] if physical_io else add_boundary_functions(module, _function(module, entry))
    # an entry lift-transform-params split: its parameters go to @ENTRY_prepare, run once
    prepare = f"{entry}_prepare"
    split = graph and any(isinstance(op, func.FuncOp) and op.sym_name.data == prepare for op in module.ops)
    prepare_boundary = (
        add_boundary_functions(module, _function(module, prepare)) if split and not physical_io else []
    )
    graph_args = [a.name_hint or str(a.index) for a in _function(source, entry).body.blocks[0].args]
    lowered = lower_module(module, limits, remarks=remarks)
    options: dict[str, Any] = {
        "pipeline": pipeline if graph else None,
        "max_image_width": limits.max_image_width,
        "max_image_height": limits.max_image_height,
        "fp16": limits.fp16,
        "fp64": limits.fp64,
        "physical_io": physical_io,
        "precision": precision,
    }
    plan = build_plan(
        lowered,
        entry,
        io_layout="physical" if physical_io else "logical",
        boundary=boundary,
        level="graph" if graph else "buffer",
        shapes=shapes,
        options=options,
        graph_args=graph_args if split else None,
        prepare_boundary=prepare_boundary,
    )
    digest = hashlib.sha256((dumps(plan) + lowered.program.source).encode()).hexdigest()[:16]
    plan = dataclasses.replace(plan, artifact_id=digest)
    kernels = artifact_line(digest) + "\n" + lowered.program.source
    text = source_text if source_text is not None else module_text(source)
    stats = kernel_stats(lowered.lowered, lowered.program.kernels)
    return Artifact(plan, kernels, text, stats)


def apply_precision(graph: ModuleOp, pipeline: str, limits: DeviceLimits, precision: str) -> None:
    """Before the graph pipeline `pipeline`: with `precision` "f16", `to-mixed-precision`
    on `graph` (the lifted parameters in f16 when the pipeline lifts them)."""
    if precision == "f16":
        from physlayout.lowering.pipelines import lifts_params
        from physlayout.transforms.to_mixed_precision import ToMixedPrecisionPass

        lifted = lifts_params(device_pipeline(pipeline, limits))
        ToMixedPrecisionPass(params_f16=lifted).apply(make_context(), graph)


def _function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name and op.body.blocks:
            return op
    raise PlanError(f"no function @{name} in the module")


def readme(plan: Plan) -> str:
    """README.txt: what the artifact is, the one-line build, a run command."""
    inputs = " ".join(f"--input {p.name}={p.name}.npy" for p in plan.inputs if p.kind == "buffer")
    scalars = " ".join(f"--input {p.name}=1" for p in plan.inputs if p.kind == "scalar")
    outputs = " ".join(f"--output {p.name}={p.name}.out.npy" for p in plan.outputs)
    run = " ".join(x for x in ("./host", inputs, scalars, outputs) if x)
    return (
        f"physlayout artifact {plan.artifact_id}: @{plan.entry} ({plan.level}-level source; "
        f"inputs and outputs in the {plan.io_layout} layout, see plan.json)\n"
        f"Build: {BUILD_COMMAND}\n"
        f"Run:   {run}\n"
        "Files: kernels.cl (OpenCL C, loaded at run time), plan.json (the launch plan), "
        "host.c (this plan's C host), kernels.json (what each kernel computes, for "
        "profiles), source.mlir (the source module)\n"
    )


def write_artifact(artifact: Artifact, directory: str) -> list[str]:
    """Write the artifact's files into `directory` (created if missing); the paths written.
    Every file is generated before the first is written."""
    files = artifact.files()
    os.makedirs(directory, exist_ok=True)
    written: list[str] = []
    for name, text in files.items():
        path = os.path.join(directory, name)
        with open(path, "w") as stream:
            stream.write(text)
        written.append(path)
    return written


def load_artifact(directory: str) -> Artifact:
    """The artifact in `directory`; PlanError when it is not one, is of another schema
    version, or its kernels.cl belongs to another artifact."""
    plan_path = os.path.join(directory, PLAN_FILE)
    if not os.path.isfile(plan_path):
        raise PlanError(f"{directory} is not a physlayout artifact: it has no {PLAN_FILE}")
    with open(plan_path) as stream:
        try:
            data = json.load(stream)
        except json.JSONDecodeError as err:
            raise PlanError(f"{plan_path}: not valid JSON ({err})") from None
    plan = plan_from_json(data, plan_path)
    kernels_path = os.path.join(directory, KERNELS_FILE)
    if not os.path.isfile(kernels_path):
        raise PlanError(f"{directory}: the artifact has no {KERNELS_FILE}")
    with open(kernels_path) as stream:
        kernels = stream.read()
    line = artifact_line(plan.artifact_id)
    first = kernels.split("\n", 1)[0].rstrip("\r")
    if first != line:
        raise PlanError(
            f"{kernels_path} belongs to another artifact (its first line is '{first[:120]}'; "
            f"{PLAN_FILE} expects '{line}'): use the files of one `physlayout compile`"
        )
    source_path = os.path.join(directory, SOURCE_FILE)
    source = None
    if os.path.isfile(source_path):
        with open(source_path) as stream:
            source = stream.read()
    return Artifact(plan, kernels, source, _stats(os.path.join(directory, STATS_FILE)))


def _stats(path: str) -> dict[str, KernelStats] | None:
    """kernels.json's entries (None without the file); PlanError when it is not one."""
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as stream:
            data = json.load(stream)
        if not isinstance(data, dict):
            raise ValueError("expected an object of kernels")
        return {str(k): KernelStats.from_json(v) for k, v in data.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    except (ValueError, OSError) as err:
        raise PlanError(f"{path}: not a kernels.json ({err})") from None


def check_device(plan: Plan, runtime: OpenCLRuntime) -> None:
    """Refuse (PlanError) a device that lacks what `plan` requires: an extension its
    kernels enable, image support, or images as large as the plan's."""
    device = runtime.describe()
    extensions = set(runtime.device.extensions.split())
    for extension in plan.requirements.extensions:
        if extension not in extensions:
            raise PlanError(
                f"device {device} lacks the OpenCL extension {extension}, which the plan's "
                "kernels need"
            )
    requirements = plan.requirements
    if requirements.image_support:
        limits = runtime.limits
        if not limits.image_support:
            raise PlanError(f"device {device} has no image support; the plan uses images")
        if (
            requirements.max_image_width > limits.max_image_width
            or requirements.max_image_height > limits.max_image_height
        ):
            raise PlanError(
                f"the plan uses images up to {requirements.max_image_width} x "
                f"{requirements.max_image_height} texels; device {device} allows "
                f"{limits.max_image_width} x {limits.max_image_height}"
            )
