"""Execute a compiled function on OpenCL: a kernel, or a host function that allocates
buffers and launches kernels in order.

A *host function* is a `func.func` whose body only holds `layout.allocate`,
`layout.decl_buffer` / `layout.data`, `arith.constant` and `func.call`s of kernels (or of
other host functions), then `func.return`. Its parameters are the inputs and outputs.
Buffers are views of device storage (`DeviceView`): a `layout.decl_buffer %h offset k`
starts `k` elements after the handle `%h`, `layout.data %b` is the handle `%b` was declared
over, and a parameter's handle starts at the parameter's first element (as in the numpy
evaluator). A global buffer at a non-zero offset reaches a kernel through its offset
argument (`KernelArg.offset_argument`); a texture view must start at offset 0.
`execute(compiled, name, args)`:

1. uploads every buffer argument (a LOGICAL numpy array) to a device buffer or image in the
   parameter's physical layout (`ParamLayout.to_physical`; `padding={index: value}` puts
   `value` instead of the pad value into the padding of those parameters: tests upload
   garbage into buffers a kernel writes, whose padding the kernel must fill);
2. runs the function: a kernel's launches in order, or the host body op by op (a
   `layout.check` reads its flags back and raises `CheckFailed` unless all are non-zero; each
   allocation becomes device storage in its scope filled with zeros, or with
   `allocation_fill`: a texture allocation is an image of the 2-D shape its declared
   buffer flattens to);
3. downloads every buffer argument, maps it back to the logical layout and writes it into
   the caller's array in place (as the numpy evaluator does); the downloaded arrays, in the
   transformed shape and padding included, are kept in `RunResult.physical`.

Work-groups are chosen by `OpenCLRuntime.local_size`. Kernel times come from OpenCL
profiling events (end - start of each launch). Overlapping views of one storage passed to
two buffer parameters of a kernel that writes one of them are refused (kernel buffer
parameters are assumed not to overlap: see `lowering/opencl_parallel.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import SSAValue

from physlayout.dialects.buffer_layout import flattened_type
from physlayout.dialects.layout import (
    AllocateOp,
    BufferType,
    DataOp,
    DeclBufferOp,
    PtrType,
    is_texture_scope,
)
from physlayout.dialects.layout_check import CheckOp
from physlayout.lowering.opencl import KernelArg, KernelInfo, Launch
from physlayout.runtime.opencl import (
    CompiledModule,
    DeviceStorage,
    OpenCLRuntimeError,
    _cl,  # pyright: ignore[reportPrivateUsage]
    numpy_dtype,
)
from physlayout.semantics.evaluator_values import check_flags

_SCALARS: dict[str, Any] = {
    "int": np.int32, "long": np.int64, "float": np.float32, "double": np.float64,
    "short": np.int16, "char": np.int8, "uint": np.uint32, "ulong": np.uint64,
    "ushort": np.uint16, "uchar": np.uint8, "half": np.float16,
}  # fmt: skip
"""The numpy type of each C type a scalar kernel argument may have."""



@dataclass(frozen=True)
class DeviceView:
    """A buffer of a host function: `storage` from element `offset` on; `base` is where the
    data handle it was declared over starts (what `layout.data` of it yields)."""

    storage: DeviceStorage
    offset: int = 0
    base: int = 0

    def as_parameter(self) -> DeviceView:
        """This buffer bound to a function parameter: its handle starts at its offset."""
        return DeviceView(self.storage, self.offset, self.offset)


@dataclass(frozen=True)
class DeviceHandle:
    """A data handle of a host function: `storage` from element `base` on."""

    storage: DeviceStorage
    base: int = 0


Value = DeviceView | DeviceHandle | int | float


@dataclass(frozen=True)
class KernelTime:
    """The device time of one launch."""

    function: str
    kernel: str
    seconds: float


@dataclass
class RunResult:
    """What a run did: the launches in order with their device times."""

    times: list[KernelTime] = field(default_factory=list[KernelTime])
    physical: dict[int, np.ndarray] = field(default_factory=dict[int, np.ndarray])
    """Per buffer parameter (by index), its downloaded array in the transformed shape."""

    @property
    def total_seconds(self) -> float:
        """The device time of all launches, in seconds."""
        return sum(t.seconds for t in self.times)


def execute(
    compiled: CompiledModule,
    name: str,
    args: Sequence[Any],
    padding: Mapping[int, Any] | None = None,
    allocation_fill: Any = 0,
) -> RunResult:
    """Run function `name` of `compiled` on `args` (logical arrays are updated in place);
    `padding` maps parameter indices to the value uploaded into their padding;
    `allocation_fill` is the initial value of host-function allocations (tests: garbage)."""
    function = compiled.function(name)
    layouts = compiled.params[name]
    if len(args) != len(layouts):
        raise OpenCLRuntimeError(f"@{name} takes {len(layouts)} arguments, got {len(args)}")
    runtime = compiled.runtime
    fills = padding or {}
    values: list[Value] = []
    types = function.function_type.inputs.data
    for index, (arg, layout, arg_type) in enumerate(zip(args, layouts, types, strict=True)):
        if layout is None:
            values.append(_scalar(arg, arg_type, name))
            continue
        storage = runtime.allocate(layout.kind, layout.physical_shape, layout.dtype)
        storage.upload(layout.to_physical(arg, fills.get(index)))
        values.append(DeviceView(storage))
    result = execute_physical(compiled, name, values, allocation_fill)
    for index, (arg, layout, value) in enumerate(zip(args, layouts, values, strict=True)):
        if layout is None or not isinstance(value, DeviceView):
            continue
        physical = value.storage.download()
        result.physical[index] = layout.transformed(physical)
        logical = layout.to_logical(physical)
        if isinstance(arg, np.ndarray) and arg.flags.writeable:
            np.copyto(arg, logical.astype(arg.dtype, copy=False))
    return result


def execute_physical(
    compiled: CompiledModule, name: str, values: Sequence[Value], allocation_fill: Any = 0
) -> RunResult:
    """Run function `name` of `compiled` on device storage the caller allocated and filled
    in the physical layout (`OpenCLRuntime.allocate`, `DeviceStorage.upload`), e.g. to
    check that a kernel writes every element, padding included; `allocation_fill` as in
    `execute`."""
    result = RunResult()
    _Executor(compiled, result, allocation_fill).call(name, list(values))
    compiled.runtime.queue.finish()
    return result


def _scalar(value: Any, arg_type: Any, where: str) -> int | float:
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise OpenCLRuntimeError(f"@{where}: expected a scalar for a {arg_type} parameter")
    dtype = numpy_dtype(arg_type, f"@{where}")
    return np.asarray(value, dtype=dtype).item()


@dataclass
class _Executor:
    compiled: CompiledModule
    result: RunResult
    allocation_fill: Any = 0

    def call(self, name: str, values: list[Value]) -> None:
        info = self.compiled.program.kernels.get(name)
        if info is not None:
            self.launch_all(info, values)
            return
        self.host(name, values)

    def host(self, name: str, values: list[Value]) -> None:
        function = self.compiled.function(name)
        bound = [v.as_parameter() if isinstance(v, DeviceView) else v for v in values]
        env: dict[SSAValue, Value] = dict(zip(function.body.blocks[0].args, bound, strict=True))
        for op in function.body.blocks[0].ops:
            where = f"@{name}: '{op.name}'"
            match op:
                case AllocateOp():
                    env[op.ptr] = DeviceHandle(self.allocate(op, where))
                case DeclBufferOp():
                    env[op.buffer] = _declare(op, env[op.ptr], where)
                case DataOp():
                    view = env[op.buffer]
                    assert isinstance(view, DeviceView)
                    env[op.ptr] = DeviceHandle(view.storage, view.base)
                case arith.ConstantOp(value=FloatAttr() | IntegerAttr() as attr):
                    env[op.result] = attr.value.data
                case func.CallOp():
                    callee = op.callee.root_reference.data
                    self.call(callee, [env[v] for v in op.arguments])
                case CheckOp():
                    self.check(op, env[op.flags])
                case func.ReturnOp():
                    return
                case _:
                    raise OpenCLRuntimeError(
                        f"{where}: host functions may only allocate, declare buffers, call "
                        "kernels and check flags"
                    )

    def check(self, op: CheckOp, view: Value) -> None:
        """`layout.check` on the host: read the flags back (after the launches so far) and
        raise `CheckFailed` with the op's message unless all are non-zero."""
        assert isinstance(view, DeviceView) and isinstance(op.flags.type, BufferType)
        self.compiled.runtime.queue.finish()
        count = op.flags.type.num_elements()
        flat = view.storage.download().reshape(-1)
        check_flags(flat[view.offset : view.offset + count], op.message.data)

    def allocate(self, op: AllocateOp, where: str) -> DeviceStorage:
        ptr_type = op.ptr.type
        assert isinstance(ptr_type, PtrType)
        dtype = numpy_dtype(ptr_type.element_type, where)
        runtime = self.compiled.runtime
        if not is_texture_scope(ptr_type.get_scope()):
            storage = runtime.allocate("global", (op.num_elements(),), dtype)
        else:
            shapes = {
                flattened_type(use.operation.buffer.type).get_shape()
                for use in op.ptr.uses
                if isinstance(use.operation, DeclBufferOp)
                and isinstance(use.operation.buffer.type, BufferType)
            }
            if len(shapes) != 1:
                raise OpenCLRuntimeError(
                    f"{where}: a texture allocation needs exactly one image shape, got "
                    f"{sorted(shapes)}"
                )
            (shape,) = shapes
            storage = runtime.allocate("texture", shape, dtype)
        storage.upload(np.full(storage.physical_shape, self.allocation_fill, dtype=dtype))
        return storage

    def kernel(self, name: str) -> Any:
        kernels = self.compiled.cl_kernels
        if name not in kernels:
            kernels[name] = _cl().Kernel(self.compiled.cl_program, name)
        return kernels[name]

    def launch_all(self, info: KernelInfo, values: list[Value]) -> None:
        _check_arguments(info, values)
        for launch in info.launches:
            self.launch(info, launch, values)

    def launch(self, info: KernelInfo, launch: Launch, values: list[Value]) -> None:
        cl = _cl()
        kernel = self.kernel(launch.kernel)
        position = 0
        for arg, value in zip(info.args, values, strict=True):
            if isinstance(value, DeviceView):
                kernel.set_arg(position, value.storage.memory)
                if arg.offset_argument:
                    position += 1
                    kernel.set_arg(position, np.int32(value.offset))
            else:
                kernel.set_arg(position, _c_scalar(value, arg, info.name))
            position += 1
        runtime = self.compiled.runtime
        local = runtime.local_size(kernel, launch.global_size)
        event = cl.enqueue_nd_range_kernel(runtime.queue, kernel, launch.global_size, local)
        event.wait()
        seconds = (event.profile.end - event.profile.start) * 1e-9
        self.result.times.append(KernelTime(info.name, launch.kernel, seconds))


def _c_scalar(value: Any, arg: KernelArg, function: str) -> Any:
    """`value` as the C type of scalar argument `arg`; an integer that does not fit it (an
    `index` value beyond the kernels' 32-bit `int`) is refused, never wrapped."""
    scalar = _SCALARS[arg.c_type]
    if np.issubdtype(scalar, np.integer):
        limits = np.iinfo(scalar)
        if not limits.min <= int(value) <= limits.max:
            raise OpenCLRuntimeError(
                f"@{function}: argument %{arg.name}: {value} does not fit the kernel's "
                f"{arg.c_type} ({arg.type} values are {arg.c_type} in OpenCL kernels)"
            )
        return scalar(int(value))
    return scalar(value)


def _declare(op: DeclBufferOp, handle: Value, where: str) -> DeviceView:
    """The view `layout.decl_buffer` declares over `handle`."""
    assert isinstance(handle, DeviceHandle)
    offset = handle.base + op.elem_offset.data
    if handle.storage.kind == "texture" and offset:
        raise OpenCLRuntimeError(
            f"{where}: a texture view must start at offset 0 (an image starts at its first "
            f"texel), got {offset}"
        )
    return DeviceView(handle.storage, offset, handle.base)


def _check_arguments(info: KernelInfo, values: list[Value]) -> None:
    seen: list[tuple[KernelArg, DeviceView]] = []
    for arg, value in zip(info.args, values, strict=True):
        where = f"@{info.name}: argument %{arg.name}"
        if arg.kind == "scalar":
            if isinstance(value, DeviceView | DeviceHandle):
                raise OpenCLRuntimeError(f"{where}: expected a scalar, got a buffer")
            continue
        if not isinstance(value, DeviceView):
            raise OpenCLRuntimeError(f"{where}: expected a buffer, got {value!r}")
        storage = value.storage
        if storage.kind != arg.kind:
            raise OpenCLRuntimeError(f"{where}: expected {arg.kind} storage, got {storage.kind}")
        if value.offset + prod(arg.physical_shape) > prod(storage.physical_shape) or (
            arg.kind == "texture" and storage.physical_shape != arg.physical_shape
        ):
            raise OpenCLRuntimeError(
                f"{where}: storage of shape {list(storage.physical_shape)} does not hold "
                f"{list(arg.physical_shape)} at offset {value.offset}"
            )
        if value.offset and not arg.offset_argument:
            raise OpenCLRuntimeError(
                f"{where}: a buffer at offset {value.offset} reaches a parameter compiled "
                "without an offset argument"
            )
        for other, other_value in seen:
            if (other.written or arg.written) and _overlap(other, other_value, arg, value):
                raise OpenCLRuntimeError(
                    f"{where}: it overlaps the storage passed as %{other.name} and one of "
                    "them is written; kernel buffer parameters must not overlap"
                )
        seen.append((arg, value))


def _overlap(a: KernelArg, a_view: DeviceView, b: KernelArg, b_view: DeviceView) -> bool:
    if a_view.storage is not b_view.storage:
        return False
    a_end = a_view.offset + prod(a.physical_shape)
    b_end = b_view.offset + prod(b.physical_shape)
    return a_view.offset < b_end and b_view.offset < a_end
