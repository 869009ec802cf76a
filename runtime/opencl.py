"""Run physlayout kernels on an OpenCL device with pyopencl.

Compilation
-----------
`compile_module(module, runtime)` runs the declared `physlayout-opencl` pipeline
(`lowering/pipelines.py`; `remarks=true` on request) on a copy of the module (not with
`lowered_already=True`, for a module that `physlayout-adreno` has lowered), generates
OpenCL C (`lowering/opencl.py`) with the device's image limits, whether it has
cl_khr_fp64 (f64 values on a device without it are refused before anything is built) and
whether f16 computes in half (`OpenCLRuntime.half_arithmetic` on a device with
cl_khr_fp16; otherwise f16 is storage only, computed in float, on any device) and builds it (one
`cl.Program` per distinct source text, cached per runtime). The layout of every function
parameter (`ParamLayout`) is read from the module it was given: the parameter's type there
(its logical shape and pending transforms, `PendingLayout.of`) and in the lowered copy;
no source text is parsed again. `device_pipeline(spec, limits)` is a user's pass pipeline
with the device's image limits filled in where it leaves them out.

Data movement
-------------
`ParamLayout.to_physical` turns a LOGICAL numpy array into the physical one (the layout's
`PendingLayout.map_ndarray`, padding filled with the pad value, or with a given value: tests
upload garbage there to check that kernels fill the padding of buffers they write, then
flattened row-major per axis group); `to_logical` inverts it (`PendingLayout.unmap_ndarray`).
Device selection, limits and memory are `runtime/device.py`.

Running a function (a kernel or a host function) is `runtime/host.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, VectorType
from xdsl.parser import Parser
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    PassFailedException,
    VerifyException,
)

from physlayout.dialects.buffer_layout import PendingLayout, flattened_type
from physlayout.dialects.layout import BufferType, is_texture_scope
from physlayout.lowering.opencl import OpenCLProgram, generate_opencl
from physlayout.lowering.pipelines import PhyslayoutOpenCLPass, verify_after
from physlayout.runtime.device import DeviceLimits, OpenCLRuntime, OpenCLRuntimeError
from physlayout.semantics.evaluator_values import EvaluationError, dtype_of
from physlayout.transforms.contract_fma import ContractFmaPass
from physlayout.transforms.pass_options import pipeline_passes
from physlayout.universe import get_all_passes, make_context, multiverse

# Layouts of parameters --------------------------------------------------------------------

def numpy_dtype(type_: Any, where: str) -> Any:
    """The numpy scalar type of an element type on the device: the evaluator's (`dtype_of`:
    `index` is int64, as the kernels' `long` index elements, `uiN` is unsigned); vector
    element types have none."""
    try:
        if not isinstance(type_, VectorType):
            return dtype_of(type_).type
    except EvaluationError:
        pass
    raise OpenCLRuntimeError(f"{where}: no numpy dtype for {type_}")


@dataclass(frozen=True)
class ParamLayout:
    """How one buffer parameter's logical array becomes device data and back."""

    name: str
    logical_shape: tuple[int, ...]
    dtype: Any
    layout: PendingLayout | None
    kind: str
    """'global' or 'texture'."""
    physical_shape: tuple[int, ...]
    """The flattened physical shape ([rows, cols] for textures)."""

    @staticmethod
    def of(name: str, source_type: BufferType, lowered_type: BufferType) -> ParamLayout:
        """The layout of parameter `%name`: its source type (pending transforms) and the type it has
        after lowering."""
        try:
            layout = PendingLayout.of(source_type)
        except ValueError as err:
            raise OpenCLRuntimeError(f"parameter %{name}: {err}") from None
        kind = "texture" if is_texture_scope(lowered_type.get_scope()) else "global"
        physical = (
            flattened_type(lowered_type).get_shape()
            if kind == "texture"
            else (lowered_type.num_elements(),)
        )
        return ParamLayout(
            name,
            source_type.get_shape(),
            numpy_dtype(source_type.element_type, f"parameter %{name}"),
            layout,
            kind,
            tuple(physical),
        )

    def to_physical(self, logical: np.ndarray, padding: Any = None) -> np.ndarray:
        """The flattened physical array of `logical`; padding positions hold `padding`
        (default: the pad value; tests pass garbage to see that kernels fill it)."""
        array = np.asarray(logical, dtype=self.dtype)
        if tuple(array.shape) != self.logical_shape:
            raise OpenCLRuntimeError(
                f"parameter %{self.name}: expected an array of shape {list(self.logical_shape)}, "
                f"got {list(array.shape)}"
            )
        if self.layout is not None:
            array = self.layout.map_ndarray(array, pad_value=padding)
        return np.ascontiguousarray(array).reshape(self.physical_shape)

    def transformed(self, physical: np.ndarray) -> np.ndarray:
        """A downloaded physical array in the transformed (unflattened) shape."""
        shape = self.logical_shape if self.layout is None else self.layout.shape
        return np.asarray(physical).reshape(shape)

    def to_logical(self, physical: np.ndarray) -> np.ndarray:
        """The logical array read back from `physical` (padding dropped)."""
        if self.layout is None:
            return np.asarray(physical).reshape(self.logical_shape)
        return self.layout.unmap_ndarray(np.asarray(physical).reshape(self.layout.shape))


# Compilation ------------------------------------------------------------------------------


def parse_module(text: str, name: str = "<input>") -> ModuleOp:
    """Parse and verify `text` with every dialect physlayout knows."""
    module = Parser(make_context(), text, name).parse_module()
    module.verify()
    return module


def device_pipeline(
    spec: str, limits: DeviceLimits, verify_each: bool = True, schedules: str = ""
) -> PassPipeline:
    """The pass pipeline `spec` (xDSL syntax, any registered pass) with the device's image
    limits given to every pass that takes `max-image-width`/`max-image-height` (e.g.
    `physlayout-adreno`, `annotate-texture-scope`, `verify-buffers`), whether it has
    cl_khr_fp64 to every pass that takes `fp64`, and its compute units and largest
    work-group to every pass that takes `compute-units`/`max-work-group-size`
    (`apply-schedules`), its register budget (`DeviceLimits.registers`, where it has one)
    to every pass that takes `registers`, `vector-items` where the device vectorizes its
    work-items (`DeviceLimits.vector_items`), its vector width (`DeviceLimits.vector_width`,
    where it has one) to every pass that takes `vector-width`, whether to contract multiply-adds
    (`DeviceLimits.fp_contract`) to every pass that takes `fp-contract`, and the given `schedules` (a table by kernel signature,
    `transforms/given_schedules.py`: the tuning cache's) to every pass that takes
    `schedules`, where `spec` does not give them. Raises a
    DiagnosticException naming `spec` when it does not parse. Without `verify_each` nothing
    is verified between the passes (the declared pipelines get `verify-each=false` where
    `spec` does not set it): the caller verifies the result (`apply_verified_once`)."""
    image = limits.image_limits()
    device: dict[str, tuple[Any, ...]] = {
        "max_image_width": (image.max_width,),
        "max_image_height": (image.max_height,),
        "fp64": (limits.fp64,),
        "compute_units": (limits.compute_units,),
        "max_work_group_size": (limits.max_work_group_size,),
        "fp_contract": (limits.fp_contract,),
    }
    if limits.registers is not None:
        device["registers"] = (limits.registers,)
    if limits.vector_items:
        device["vector_items"] = (True,)
    if limits.vector_width is not None:
        device["vector_width"] = (limits.vector_width,)
    if not verify_each:
        device["verify_each"] = (False,)
    if schedules:
        device["schedules"] = (schedules,)
    available = multiverse().all_passes | get_all_passes()
    try:
        passes = pipeline_passes(available, spec, device)
    except (Exception, ArgSpecParseError) as err:  # ArgSpecParseError is a BaseException
        raise OpenCLRuntimeError(f"pipeline '{spec}': {err}") from None
    return PassPipeline(passes, verify_after if verify_each else None)


def apply_verified_once(
    spec: str,
    limits: DeviceLimits,
    module: ModuleOp,
    prepare: Callable[[ModuleOp], None],
    schedules: str = "",
) -> ModuleOp:
    """Run the pipeline `spec` (`device_pipeline`, with the given `schedules`) on a clone of `module` prepared by
    `prepare` and verify the result once: the policy of the user-facing drivers
    (`physlayout run`, `physlayout compile`, `physlayout.compile`). When that verification
    fails, the pipeline runs again on a fresh clone with verification after each pass, so
    the error names the pass that produced invalid IR (`PassFailedException`)."""
    from physlayout.verification import verify_module

    lowered = module.clone()
    prepare(lowered)
    device_pipeline(spec, limits, False, schedules).apply(make_context(), lowered)
    try:
        verify_module(lowered)
    except VerifyException as err:
        again = module.clone()
        prepare(again)
        device_pipeline(spec, limits, True, schedules).apply(make_context(), again)
        raise PassFailedException(f"the graph pipeline produced invalid IR: {err}") from None
    return lowered


def module_text(module: ModuleOp) -> str:
    """The custom-form text of `module`."""
    from io import StringIO

    stream = StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


@dataclass
class LoweredModule:
    """A source module lowered to OpenCL C (no device needed)."""

    source: ModuleOp
    lowered: ModuleOp
    program: OpenCLProgram
    params: dict[str, list[ParamLayout | None]]
    """Per function, per parameter: its layout (None for scalars)."""
    stages: list[tuple[str, str]]
    """(pass name, module text after it) for each lowering pass."""

    def function(self, name: str) -> func.FuncOp:
        """The lowered function `@name`."""
        for op in self.lowered.ops:
            if isinstance(op, func.FuncOp) and op.sym_name.data == name:
                return op
        raise OpenCLRuntimeError(f"no function @{name} in the module")


@dataclass
class CompiledModule(LoweredModule):
    """A lowered module built for a runtime."""

    cl_program: Any
    runtime: OpenCLRuntime
    cl_kernels: dict[str, Any] = field(default_factory=dict[str, Any])
    """Kernels retrieved from `cl_program`, by name (retrieved once, reused by every run)."""


def lower_module(
    module: ModuleOp | str,
    limits: DeviceLimits,
    keep_stages: bool = False,
    remarks: bool = False,
    device: str = "the target device",
    half_arithmetic: bool | None = None,
    lowered_already: bool = False,
) -> LoweredModule:
    """Lower `module` (a source module with pending layouts) to OpenCL C for a device with
    `limits`, named `device` in diagnostics (`remarks`: print the lowering passes' remarks
    to stderr; `half_arithmetic`: compute f16 in half, which needs `limits.fp16`; None:
    whenever the device has cl_khr_fp16, else f16 is storage only, computed in float;
    `lowered_already`: `module` is the output of a pipeline that ends with
    `physlayout-opencl`, such as `physlayout-adreno`, so it is not run again: the pipeline
    is idempotent, a second run would only repeat its work; the result's `source` and
    `lowered` are then the same module, not a copy: nothing here changes it). With
    `limits.fp_contract` the kernels' multiply-adds are contracted (`contract-fma`) in
    either case, on a copy: a kernel scheduled alone after the pipeline (the tuner's
    candidates) is contracted too."""
    source = parse_module(module) if isinstance(module, str) else module
    lowered = source if lowered_already and not limits.fp_contract else source.clone()
    stages: list[tuple[str, str]] = []

    def keep(previous: ModulePass | None, module: ModuleOp, _next: ModulePass | None) -> None:
        if keep_stages and previous is not None:
            stages.append((previous.name, module_text(module)))

    if not lowered_already:
        PhyslayoutOpenCLPass(remarks=remarks, fp_contract=limits.fp_contract).pipeline(
            keep
        ).apply(make_context(), lowered)
    elif limits.fp_contract:  # idempotent: a no-op after a pipeline that contracted already
        ContractFmaPass().apply(make_context(), lowered)
    images = limits.texture_storage == "image"
    if images and not limits.image_support and _has_textures(lowered):
        raise OpenCLRuntimeError(f"{device} has no image support")
    half = limits.fp16 if half_arithmetic is None else limits.fp16 and half_arithmetic
    # generate_opencl leaves the modules out of the collector's scans while it writes
    program = generate_opencl(
        lowered, limits.image_limits(), half, limits.fp64, vectorized=True,
        texture_storage=limits.texture_storage,
    )  # fmt: skip
    return LoweredModule(source, lowered, program, _param_layouts(source, lowered), stages)


def compile_module(
    module: ModuleOp | str,
    runtime: OpenCLRuntime,
    keep_stages: bool = False,
    remarks: bool = False,
    lowered_already: bool = False,
) -> CompiledModule:
    """Lower `module` (a source module with pending layouts) and build it for `runtime`
    (`remarks`: print the lowering passes' remarks to stderr; `lowered_already`: `module`
    went through `physlayout-opencl` already, as the last passes of `physlayout-adreno`,
    so it is only generated and built, `lower_module`)."""
    device = f"device {runtime.describe()}"
    lowered = lower_module(
        module, runtime.limits, keep_stages, remarks, device, runtime.half_arithmetic,
        lowered_already,
    )
    program = lowered.program
    cl_program = runtime.build(program.source) if program.kernels else None
    return CompiledModule(
        lowered.source, lowered.lowered, program, lowered.params, lowered.stages, cl_program,
        runtime,
    )


def _has_textures(module: ModuleOp) -> bool:
    for op in module.walk():
        if isinstance(op, func.FuncOp):
            for arg_type in op.function_type.inputs.data:
                if isinstance(arg_type, BufferType) and is_texture_scope(arg_type.get_scope()):
                    return True
    return False


def _param_layouts(source: ModuleOp, lowered: ModuleOp) -> dict[str, list[ParamLayout | None]]:
    lowered_functions = {
        op.sym_name.data: op for op in lowered.ops if isinstance(op, func.FuncOp)
    }
    result: dict[str, list[ParamLayout | None]] = {}
    for op in source.ops:
        if not isinstance(op, func.FuncOp) or not op.body.blocks:
            continue
        name = op.sym_name.data
        lowered_op = lowered_functions[name]
        layouts: list[ParamLayout | None] = []
        for arg, source_type, lowered_type in zip(
            op.body.blocks[0].args,
            op.function_type.inputs.data,
            lowered_op.function_type.inputs.data,
            strict=True,
        ):
            if isinstance(source_type, BufferType) and isinstance(lowered_type, BufferType):
                label = arg.name_hint or str(arg.index)
                layouts.append(ParamLayout.of(label, source_type, lowered_type))
            else:
                layouts.append(None)
        result[name] = layouts
    return result
