"""Run physlayout kernels on an OpenCL device with pyopencl.

Device selection
----------------
`select_device(spec)` (and `OpenCLRuntime(spec)`) pick the device from `spec`, else from
the environment variable `PHYSLAYOUT_OPENCL_DEVICE`, else automatically:

- `"PLATFORM[:INDEX]"`: the INDEX-th device (default 0) of the first platform whose name
  contains PLATFORM (case-insensitive), e.g. `"portable:0"`, `"nvidia"`;
- `":INDEX"`: the INDEX-th device over all platforms;
- automatic: the first GPU of any platform, else the first device of a "Portable Computing
  Language" platform that builds a trivial kernel (pip `pocl-binary-distribution` or
  Debian's `pocl-opencl-icd`; a PoCL whose LLVM does not know the host CPU fails every
  build with "unknown target CPU 'generic'" and is skipped), else the first device.

`DeviceLimits` reports image support and the image2d limits; the target is given those
limits, so texture rules are checked against the real device.

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
Global-scope buffers are
`cl.Buffer`s; texture-scope buffers are RGBA FLOAT (f16: HALF_FLOAT) `image2d`s of width cols/4 and height
rows (a contiguous [rows, cols] float32 array has exactly the image's bytes).

Running a function (a kernel or a host function) is `runtime/host.py`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, VectorType
from xdsl.parser import Parser
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.universe import Universe
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    PassFailedException,
    VerifyException,
)

from physlayout.dialects.buffer_layout import PendingLayout, flattened_type
from physlayout.dialects.layout import BufferType, is_texture_scope
from physlayout.lowering.opencl import ImageLimits, OpenCLProgram, generate_opencl
from physlayout.lowering.pipelines import PhyslayoutOpenCLPass, verify_after
from physlayout.runtime.program_cache import build_program
from physlayout.semantics.evaluator_values import EvaluationError, dtype_of
from physlayout.transforms.pass_options import pipeline_passes
from physlayout.transforms.schedule_heuristic import WORK_GROUP_TARGET, work_group_shape
from physlayout.universe import get_all_passes, make_context

ENV_VAR = "PHYSLAYOUT_OPENCL_DEVICE"
POCL_PLATFORM = "Portable Computing Language"


class OpenCLRuntimeError(DiagnosticException):
    """No usable OpenCL device, a build failure, or bad arguments for a run."""


def _cl() -> Any:
    try:
        import pyopencl  # pyright: ignore[reportMissingImports]
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise OpenCLRuntimeError(
            "pyopencl is not installed: pip install 'physlayout[opencl]'"
        ) from err
    return pyopencl


# Devices ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceLimits:
    """What the texture path needs to know about a device."""

    image_support: bool
    max_image_width: int
    max_image_height: int
    fp16: bool = False
    """The device reports cl_khr_fp16 (half arithmetic; HALF_FLOAT images and half buffers
    need no extension)."""
    fp64: bool = False
    """The device reports cl_khr_fp64 (f64 values)."""
    compute_units: int = 2
    """The device's compute units (`apply-schedules`' heuristic keeps work for each)."""
    max_work_group_size: int = 256
    """The device's largest work-group."""

    def image_limits(self) -> ImageLimits:
        """The device's 2-D image limits (0 x 0 without image support)."""
        if not self.image_support:
            return ImageLimits(0, 0)
        return ImageLimits(self.max_image_width, self.max_image_height)


def all_devices() -> list[tuple[Any, Any]]:
    """Every (platform, device) pyopencl sees, in platform order."""
    cl = _cl()
    found: list[tuple[Any, Any]] = []
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        return []
    for platform in platforms:
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        found.extend((platform, device) for device in devices)
    return found


_PROBE_KERNEL = "__kernel void probe(__global float *a) { a[get_global_id(0)] += 1.0f; }"
_builds: dict[int, bool] = {}


def device_builds(device: Any) -> bool:
    """Whether `device` compiles a trivial kernel (memoized per device)."""
    key = int(device.int_ptr)
    if key not in _builds:
        cl = _cl()
        try:
            cl.Program(cl.Context([device]), _PROBE_KERNEL).build()
            _builds[key] = True
        except cl.Error:
            _builds[key] = False
    return _builds[key]


def select_device(spec: str | None = None) -> Any:
    """The device `spec` (or $PHYSLAYOUT_OPENCL_DEVICE, or the automatic choice) names."""
    cl = _cl()
    spec = spec if spec is not None else os.environ.get(ENV_VAR) or None
    devices = all_devices()
    if not devices:
        raise OpenCLRuntimeError(
            "no OpenCL device found (pip install pocl-binary-distribution for a CPU device)"
        )
    if spec is None:
        for _, device in devices:
            if device.type & cl.device_type.GPU:
                return device
        for platform, device in devices:
            if platform.name == POCL_PLATFORM and device_builds(device):
                return device
        return devices[0][1]
    platform_part, _, index_part = spec.partition(":")
    try:
        index = int(index_part) if index_part else 0
    except ValueError:
        raise OpenCLRuntimeError(
            f"bad device spec '{spec}': expected PLATFORM[:INDEX] or :INDEX"
        ) from None
    if platform_part:
        needle = platform_part.lower()
        platform = next((p for p, _ in devices if needle in p.name.lower()), None)
        if platform is None:
            names = sorted({p.name for p, _ in devices})
            raise OpenCLRuntimeError(f"no OpenCL platform matches '{platform_part}' in {names}")
        matching = [d for p, d in devices if p == platform]
    else:
        matching = [d for _, d in devices]
    if not 0 <= index < len(matching):
        raise OpenCLRuntimeError(
            f"device index {index} is out of range: '{spec}' matches {len(matching)} device(s)"
        )
    return matching[index]


@dataclass
class OpenCLRuntime:
    """A device, its context and profiling queue, and a cache of built programs."""

    spec: str | None = None
    device: Any = None
    context: Any = None
    queue: Any = None
    limits: DeviceLimits = field(default_factory=lambda: DeviceLimits(False, 0, 0))
    half_arithmetic: bool = False
    """Compute f16 in `half` (`-t opencl{fp16=true}`) when the device has cl_khr_fp16; by
    default, and on devices without it, f16 is storage only and computed in float."""
    program_cache: bool = True
    """Keep built programs as device binaries on disk (`runtime/program_cache.py`)."""
    _programs: dict[str, Any] = field(default_factory=dict[str, Any])

    def __post_init__(self) -> None:
        cl = _cl()
        if self.device is None:
            self.device = select_device(self.spec)
        self.context = cl.Context([self.device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE
        )
        device = self.device
        extensions = device.extensions.split()
        self.limits = DeviceLimits(
            bool(device.image_support),
            int(device.image2d_max_width),
            int(device.image2d_max_height),
            "cl_khr_fp16" in extensions,
            "cl_khr_fp64" in extensions,
            int(device.max_compute_units),
            int(device.max_work_group_size),
        )

    def describe(self) -> str:
        """The device and platform names, for reports."""
        device = self.device
        return f"{device.name.strip()} ({device.platform.name.strip()})"

    def build(self, source: str) -> Any:
        """The built program for `source` (cached by text in this runtime and, with
        `program_cache`, as a binary on disk)."""
        cached = self._programs.get(source)
        if cached is not None:
            return cached
        cl = _cl()
        try:
            if self.program_cache:
                program = build_program(cl, self.context, self.device, source)
            else:
                program = cl.Program(self.context, source).build()
        except cl.Error as err:
            raise OpenCLRuntimeError(f"OpenCL build failed: {err}") from None
        self._programs[source] = program
        return program

    def local_size(self, kernel: Any, global_size: Sequence[int]) -> tuple[int, ...]:
        """The work-group shape used for `kernel` (see `work_group_shape`)."""
        cl = _cl()
        limit = kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device)
        return work_group_shape(global_size, min(int(limit), WORK_GROUP_TARGET))

    # Storage ----------------------------------------------------------------------------

    def allocate(self, kind: str, physical_shape: Sequence[int], dtype: Any) -> DeviceStorage:
        """Device memory for a buffer of `physical_shape`: an RGBA image for kind "texture" (shape
        [rows, cols], cols a multiple of 4, `dtype` float32 or float16: other element types
        are refused), else a plain buffer."""
        cl = _cl()
        mf = cl.mem_flags
        dtype = np.dtype(dtype)
        if kind == "texture":
            if dtype.kind != "f" or dtype.itemsize not in (2, 4):
                raise OpenCLRuntimeError(
                    f"a texture holds f32 or f16 texels (RGBA FLOAT or HALF_FLOAT images), "
                    f"not {dtype} values"
                )
            rows, cols = physical_shape
            width, height = cols // 4, rows
            channels = cl.channel_type.HALF_FLOAT if dtype == np.float16 else cl.channel_type.FLOAT
            image_format = cl.ImageFormat(cl.channel_order.RGBA, channels)
            image = cl.create_image(self.context, mf.READ_WRITE, image_format, shape=(width, height))
            return DeviceStorage(self, kind, tuple(physical_shape), dtype, image)
        size = max(1, prod(physical_shape)) * dtype.itemsize
        return DeviceStorage(
            self, kind, tuple(physical_shape), dtype, cl.Buffer(self.context, mf.READ_WRITE, size)
        )


@dataclass
class DeviceStorage:
    """A device buffer or image holding a physical array."""

    runtime: OpenCLRuntime
    kind: str
    physical_shape: tuple[int, ...]
    dtype: np.dtype[Any]
    memory: Any

    def upload(self, physical: np.ndarray) -> None:
        """Copy `physical` (an array in the physical layout) to the device."""
        cl = _cl()
        data = np.ascontiguousarray(physical, dtype=self.dtype).reshape(self.physical_shape)
        if self.kind == "texture":
            rows, cols = self.physical_shape
            cl.enqueue_copy(
                self.runtime.queue, self.memory, data, origin=(0, 0), region=(cols // 4, rows)
            )
        else:
            cl.enqueue_copy(self.runtime.queue, self.memory, data)

    def download(self) -> np.ndarray:
        """The device contents as an array of the physical shape."""
        cl = _cl()
        out = np.empty(self.physical_shape, dtype=self.dtype)
        if self.kind == "texture":
            rows, cols = self.physical_shape
            cl.enqueue_copy(
                self.runtime.queue, out, self.memory, origin=(0, 0), region=(cols // 4, rows)
            )
        else:
            cl.enqueue_copy(self.runtime.queue, out, self.memory)
        self.runtime.queue.finish()
        return out


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


def device_pipeline(spec: str, limits: DeviceLimits, verify_each: bool = True) -> PassPipeline:
    """The pass pipeline `spec` (xDSL syntax, any registered pass) with the device's image
    limits given to every pass that takes `max-image-width`/`max-image-height` (e.g.
    `physlayout-adreno`, `annotate-texture-scope`, `verify-buffers`), whether it has
    cl_khr_fp64 to every pass that takes `fp64`, and its compute units and largest
    work-group to every pass that takes `compute-units`/`max-work-group-size`
    (`apply-schedules`), where `spec` does not give them. Raises a
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
    }
    if not verify_each:
        device["verify_each"] = (False,)
    available = Universe.get_multiverse().all_passes | get_all_passes()
    try:
        passes = pipeline_passes(available, spec, device)
    except (Exception, ArgSpecParseError) as err:  # ArgSpecParseError is a BaseException
        raise OpenCLRuntimeError(f"pipeline '{spec}': {err}") from None
    return PassPipeline(passes, verify_after if verify_each else None)


def apply_verified_once(
    spec: str, limits: DeviceLimits, module: ModuleOp, prepare: Callable[[ModuleOp], None]
) -> ModuleOp:
    """Run the pipeline `spec` (`device_pipeline`) on a clone of `module` prepared by
    `prepare` and verify the result once: the policy of the user-facing drivers
    (`physlayout run`, `physlayout compile`, `physlayout.compile`). When that verification
    fails, the pipeline runs again on a fresh clone with verification after each pass, so
    the error names the pass that produced invalid IR (`PassFailedException`)."""
    from physlayout.verification import verify_module

    lowered = module.clone()
    prepare(lowered)
    device_pipeline(spec, limits, verify_each=False).apply(make_context(), lowered)
    try:
        verify_module(lowered)
    except VerifyException as err:
        again = module.clone()
        prepare(again)
        device_pipeline(spec, limits).apply(make_context(), again)
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
    is idempotent, a second run would only repeat its work)."""
    source = parse_module(module) if isinstance(module, str) else module
    lowered = source.clone()
    stages: list[tuple[str, str]] = []

    def keep(previous: ModulePass | None, module: ModuleOp, _next: ModulePass | None) -> None:
        if keep_stages and previous is not None:
            stages.append((previous.name, module_text(module)))

    if not lowered_already:
        PhyslayoutOpenCLPass(remarks=remarks).pipeline(keep).apply(make_context(), lowered)
    if not limits.image_support and _has_textures(lowered):
        raise OpenCLRuntimeError(f"{device} has no image support")
    half = limits.fp16 if half_arithmetic is None else limits.fp16 and half_arithmetic
    program = generate_opencl(lowered, limits.image_limits(), half, limits.fp64, vectorized=True)
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
