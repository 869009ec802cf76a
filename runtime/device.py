"""OpenCL devices through pyopencl: choosing one, its limits, building programs, and device
memory. Nothing here knows the IR: the compile cache, artifacts and plans need a device's
limits and errors without loading the compiler (`runtime/opencl.py` compiles modules).

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

Device memory
-------------
`OpenCLRuntime.allocate` gives a `DeviceStorage`: global-scope buffers are `cl.Buffer`s;
texture-scope buffers are RGBA FLOAT (f16: HALF_FLOAT) `image2d`s of width cols/4 and height
rows (a contiguous [rows, cols] float32 array has exactly the image's bytes).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.utils.exceptions import DiagnosticException

from physlayout.runtime.program_cache import build_options, build_program, quietly

if TYPE_CHECKING:
    from physlayout.lowering.opencl import ImageLimits

ENV_VAR = "PHYSLAYOUT_OPENCL_DEVICE"
POCL_PLATFORM = "Portable Computing Language"


class OpenCLRuntimeError(DiagnosticException):
    """No usable OpenCL device, a build failure, or bad arguments for a run."""


def pyopencl_module() -> Any:
    """The pyopencl module (an `OpenCLRuntimeError` naming the extra when it is missing)."""
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
    texture_storage: str = "image"
    """How kernels hold texture-scoped buffers on this device: "image" (`image2d_t`, the
    texture path) or "buffer" (`__global` arrays of the same texels, for devices whose
    image reads are emulated in software: `OpenCLRuntime.texture_storage`)."""
    registers: int | None = None
    """The register budget `apply-schedules`' heuristic plans one work-item's accumulators
    in (32-bit values; None: the pipeline's default, `schedule_heuristic.REGISTERS`):
    `OpenCLRuntime` gives `CPU_BUFFER_REGISTERS` to a CPU device holding textures as
    buffers, whose kernels are plain SIMD code."""
    fp_contract: bool = False
    """Contract each f32 vector multiply feeding only an add into one `fma` (`contract-fma`,
    `OpenCLRuntime.fp_contract`): faster, no longer bit-exact with the uncontracted IR."""
    vector_items: bool = False
    """The driver runs neighbouring work-items as SIMD lanes (a CPU device: PoCL
    vectorizes its work-groups): `apply-schedules`' heuristic then leaves the work-item
    axis of dimension 0 untiled (`DeviceModel.vector_items`)."""
    vector_width: int | None = None
    """The lanes of the vectors `vectorize-texels` computes a block of output columns of a
    plain-buffer reduction kernel in (a matmul's; None: the pipeline's default, four):
    `OpenCLRuntime` gives a CPU device its preferred float vector width (8 with AVX2: a
    `float4` fills half of a register there, and PoCL's `exp`/`tanh` of a `float8` cost
    what those of a `float4` do)."""

    def image_limits(self) -> ImageLimits:
        """The device's 2-D image limits (0 x 0 without image support)."""
        from physlayout.lowering.opencl import ImageLimits

        if not self.image_support:
            return ImageLimits(0, 0)
        return ImageLimits(self.max_image_width, self.max_image_height)


def all_devices() -> list[tuple[Any, Any]]:
    """Every (platform, device) pyopencl sees, in platform order."""
    cl = pyopencl_module()
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


def device_label(device: Any) -> str:
    """`NAME (PLATFORM)` of a pyopencl device, for reports."""
    return f"{device.name.strip()} ({device.platform.name.strip()})"


_PROBE_KERNEL = "__kernel void probe(__global float *a) { a[get_global_id(0)] += 1.0f; }"
_builds: dict[int, bool] = {}


def device_builds(device: Any) -> bool:
    """Whether `device` compiles a trivial kernel (memoized per device)."""
    key = int(device.int_ptr)
    if key not in _builds:
        cl = pyopencl_module()
        try:
            quietly(cl, lambda: cl.Program(cl.Context([device]), _PROBE_KERNEL).build())
            _builds[key] = True
        except cl.Error:
            _builds[key] = False
    return _builds[key]


def select_device(spec: str | None = None) -> Any:
    """The device `spec` (or $PHYSLAYOUT_OPENCL_DEVICE, or the automatic choice) names."""
    cl = pyopencl_module()
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
    texture_storage: str = "image"
    """How textures are held (`DeviceLimits.texture_storage`): "image", "buffer", or
    "auto": buffers on a CPU device (its OpenCL driver reads images through software
    samplers; the same texels in a buffer are plain vector loads), images elsewhere."""
    fp_contract: bool = False
    """Contract `a * b + c` into `fma(a, b, c)` (one rounding instead of two) where an f32
    vector multiply's only use is an add (`DeviceLimits.fp_contract`, the pipelines'
    `fp-contract` option, `transforms/contract_fma.py`). Off by default: the kernels then
    round every multiply and add as the numpy evaluator does, bit-exact."""
    _programs: dict[str, Any] = field(default_factory=dict[str, Any])

    def __post_init__(self) -> None:
        from physlayout.transforms.schedule_heuristic import CPU_BUFFER_REGISTERS

        cl = pyopencl_module()
        if self.device is None:
            self.device = select_device(self.spec)
        self.context = cl.Context([self.device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE
        )
        device = self.device
        extensions = device.extensions.split()
        storage = self._texture_storage()
        cpu_buffers = storage == "buffer" and self._is_cpu()
        self.limits = DeviceLimits(
            bool(device.image_support),
            int(device.image2d_max_width),
            int(device.image2d_max_height),
            "cl_khr_fp16" in extensions,
            "cl_khr_fp64" in extensions,
            int(device.max_compute_units),
            int(device.max_work_group_size),
            storage,
            CPU_BUFFER_REGISTERS if cpu_buffers else None,
            self.fp_contract,
            cpu_buffers,
            self._cpu_vector_width(),
        )

    def _cpu_vector_width(self) -> int | None:
        """A CPU device's preferred float vector width (a power of two, 4 to 16), else None."""
        if not self._is_cpu():
            return None
        preferred = int(self.device.preferred_vector_width_float)
        return next((w for w in (16, 8, 4) if w <= preferred), 4)

    def _is_cpu(self) -> bool:
        return bool(int(self.device.type) & pyopencl_module().device_type.CPU)

    def _texture_storage(self) -> str:
        from physlayout.lowering.opencl_kernels import TEXTURE_STORAGES

        if self.texture_storage == "auto":
            return "buffer" if self._is_cpu() else "image"
        if self.texture_storage not in TEXTURE_STORAGES:
            raise OpenCLRuntimeError(
                f"texture storage must be image, buffer or auto, got '{self.texture_storage}'"
            )
        return self.texture_storage

    def describe(self) -> str:
        """The device and platform names, for reports."""
        return device_label(self.device)

    def build(self, source: str) -> Any:
        """The built program for `source` (cached by text in this runtime and, with
        `program_cache`, as a binary on disk)."""
        cached = self._programs.get(source)
        if cached is not None:
            return cached
        cl = pyopencl_module()
        try:
            if self.program_cache:
                program = build_program(cl, self.context, self.device, source)
            else:
                options = build_options(self.device)
                program = quietly(cl, lambda: cl.Program(self.context, source).build(options))
        except cl.Error as err:
            raise OpenCLRuntimeError(f"OpenCL build failed: {err}") from None
        self._programs[source] = program
        return program

    def local_size(self, kernel: Any, global_size: Sequence[int]) -> tuple[int, ...]:
        """The work-group shape used for `kernel` (see `work_group_shape`)."""
        from physlayout.transforms.schedule_heuristic import WORK_GROUP_TARGET, work_group_shape

        cl = pyopencl_module()
        limit = kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device)
        return work_group_shape(global_size, min(int(limit), WORK_GROUP_TARGET))

    # Storage ----------------------------------------------------------------------------

    def allocate(self, kind: str, physical_shape: Sequence[int], dtype: Any) -> DeviceStorage:
        """Device memory for a buffer of `physical_shape`: an RGBA image for kind "texture" (shape
        [rows, cols], cols a multiple of 4, `dtype` float32 or float16: other element types
        are refused), else a plain buffer (a texture too when this device holds textures as
        buffers, `texture_storage`)."""
        cl = pyopencl_module()
        mf = cl.mem_flags
        dtype = np.dtype(dtype)
        if kind == "texture" and self.limits.texture_storage == "buffer":
            kind = "global"
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

    def upload(self, physical: np.ndarray, wait: bool = True) -> Any:
        """Copy `physical` (an array in the physical layout) to the device; without `wait`
        the copy is only enqueued and its event returned: the caller keeps the event until
        the queue has run the copy and must not change `physical` before then (pyopencl's
        event of a copy from host memory holds the array, and freeing the event waits for
        the copy: dropped at once, it made every upload wait for the driver, 40 of the
        45 us of a small upload on PoCL)."""
        cl = pyopencl_module()
        data = np.ascontiguousarray(physical, dtype=self.dtype).reshape(self.physical_shape)
        if self.kind == "texture":
            rows, cols = self.physical_shape
            return cl.enqueue_copy(
                self.runtime.queue, self.memory, data, origin=(0, 0), region=(cols // 4, rows),
                is_blocking=wait,
            )  # fmt: skip
        return _buffer_copies(cl)[0](self.runtime.queue, self.memory, data, is_blocking=wait)

    def download(self) -> np.ndarray:
        """The device contents as an array of the physical shape."""
        out, _event = self.enqueue_download()
        self.runtime.queue.finish()
        return out

    def enqueue_download(self) -> tuple[np.ndarray, Any]:
        """A new array of the physical shape that the device contents are copied into once
        the queue has run the copy, and the copy's event (keep it until then: as `upload`)."""
        cl = pyopencl_module()
        out = np.empty(self.physical_shape, dtype=self.dtype)
        if self.kind == "texture":
            rows, cols = self.physical_shape
            event = cl.enqueue_copy(
                self.runtime.queue, out, self.memory, origin=(0, 0), region=(cols // 4, rows),
                is_blocking=False,
            )  # fmt: skip
            return out, event
        return out, _buffer_copies(cl)[1](self.runtime.queue, self.memory, out, is_blocking=False)


def _buffer_copies(cl: Any) -> tuple[Any, Any]:
    """(write, read) between host arrays and buffers, each called as `(queue, buffer, array,
    is_blocking=...)`: pyopencl's own functions under `enqueue_copy`, which first asks the
    driver for both objects' types on every call (a quarter of a small upload), else
    wrappers of `enqueue_copy`."""
    found = getattr(cl, "_cl", None)
    write = getattr(found, "_enqueue_write_buffer", None)
    read = getattr(found, "_enqueue_read_buffer", None)
    if write is not None and read is not None:
        return write, read

    def write_copy(queue: Any, memory: Any, data: Any, is_blocking: bool) -> Any:
        return cl.enqueue_copy(queue, memory, data, is_blocking=is_blocking)

    def read_copy(queue: Any, memory: Any, out: Any, is_blocking: bool) -> Any:
        return cl.enqueue_copy(queue, out, memory, is_blocking=is_blocking)

    return write_copy, read_copy
