"""`compile_artifact`: a module's entry compiled into an `Artifact` (`runtime/artifact.py`):
the graph or buffer pipeline, the OpenCL lowering, the launch plan and its C host.

`compile_artifact` needs no OpenCL device: the image limits and the fp16/fp64 switches are
the target's (given, or read from a local device by the caller). The plan runs on a device
through `runtime/session.Session`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.utils.exceptions import DiagnosticException

from physlayout.lowering.pipelines import ends_lowered_for_opencl
from physlayout.runtime.artifact import Artifact
from physlayout.runtime.boundary import add_boundary_functions
from physlayout.runtime.device import DeviceLimits
from physlayout.runtime.kernel_stats import kernel_stats
from physlayout.runtime.opencl import (
    apply_verified_once,
    device_pipeline,
    lower_module,
    module_text,
)
from physlayout.runtime.plan import (
    PlanError,
    artifact_line,
)
from physlayout.runtime.plan_builder import build_plan
from physlayout.runtime.plan_json import dumps
from physlayout.universe import make_context


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
    lowered_already = False
    if graph:

        def mixed_precision(graph: ModuleOp) -> None:
            apply_precision(graph, pipeline, limits, precision)

        module = apply_verified_once(pipeline, limits, source, mixed_precision, schedules)
        lowered_already = ends_lowered_for_opencl(device_pipeline(pipeline, limits))
        signature = _function(source, entry).function_type
        types = [*signature.inputs.data, *signature.outputs.data]
        shapes = {i: tuple(t.get_shape()) for i, t in enumerate(types) if isinstance(t, TensorType)}
    else:
        module = source.clone()
    lowered_names = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    boundary = [] if physical_io else add_boundary_functions(module, _function(module, entry))
    # an entry lift-transform-params split: its parameters go to @ENTRY_prepare, run once
    prepare = f"{entry}_prepare"
    split = graph and any(isinstance(op, func.FuncOp) and op.sym_name.data == prepare for op in module.ops)
    prepare_boundary = (
        add_boundary_functions(module, _function(module, prepare)) if split and not physical_io else []
    )
    graph_args = [a.name_hint or str(a.index) for a in _function(source, entry).body.blocks[0].args]
    # physlayout-adreno's output needs no physlayout-opencl again, unless functions were
    # added since (boundary kernels; a graph entry's tensors need none, so in practice never)
    added = any(
        isinstance(op, func.FuncOp) and op.sym_name.data not in lowered_names for op in module.ops
    )
    lowered = lower_module(
        module, limits, remarks=remarks, lowered_already=lowered_already and not added
    )
    options: dict[str, Any] = {
        "pipeline": pipeline if graph else None,
        "max_image_width": limits.max_image_width,
        "max_image_height": limits.max_image_height,
        "fp16": limits.fp16,
        "fp64": limits.fp64,
        "physical_io": physical_io,
        "precision": precision,
        "texture_storage": limits.texture_storage,
    }
    if limits.fp_contract:  # recorded only when on: default artifacts keep their ids
        options["fp_contract"] = True
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
