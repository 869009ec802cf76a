"""Execute a compiled function on OpenCL: run its launch plan (`runtime/plan.py`) with
pyopencl.

A *host function* is a `func.func` whose body only holds `layout.allocate`,
`layout.decl_buffer` / `layout.data`, `arith.constant` and `func.call`s of kernels (or of
other host functions), then `func.return`. Its parameters are the inputs and outputs.
`build_plan` turns it (or a kernel) into a launch plan: storages, and steps that allocate,
fill, launch kernels with their argument bindings, copy and read/write the caller's data.
`run_plan` executes a plan's steps in order (those of the phases asked for) on a runtime,
whether the plan was just built or read from an artifact's plan.json.

`execute(compiled, name, args)`:

1. uploads every buffer argument (a LOGICAL numpy array) to a device buffer or image in the
   parameter's physical layout (`ParamLayout.to_physical`; `padding={index: value}` puts
   `value` instead of the pad value into the padding of those parameters: tests upload
   garbage into buffers a kernel writes, whose padding the kernel must fill);
2. runs the `body` steps of the function's physical-layout plan: its allocations are device
   storage in their scope filled with zeros, or with `allocation_fill` (a texture
   allocation is an image of the 2-D shape its declared buffer flattens to), then the
   launches in order; a `layout.check` reads its flags back after the launches so far and
   raises `CheckFailed` unless all are non-zero;
3. downloads every buffer argument, maps it back to the logical layout and writes it into
   the caller's array in place (as the numpy evaluator does); the downloaded arrays, in the
   transformed shape and padding included, are kept in `RunResult.physical`.

Work-groups are the plan's (`work_group_shape`), smaller where the kernel allows fewer
work-items. Kernel times come from OpenCL profiling events (end - start of each launch).
Overlapping views of one storage passed to two buffer parameters of a kernel that writes
one of them are refused when the plan is built (kernel buffer parameters are assumed not
to overlap: see `lowering/opencl_parallel.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from physlayout.runtime.device import (
    DeviceStorage,
    OpenCLRuntime,
    OpenCLRuntimeError,
    pyopencl_module,
)
from physlayout.runtime.opencl import CompiledModule, numpy_dtype
from physlayout.runtime.plan import (
    C_SCALARS,
    Allocate,
    Check,
    CopyBufferToImage,
    CopyImageToBuffer,
    Fill,
    InputArg,
    Launch,
    Plan,
    PlanError,
    Read,
    Step,
    StorageArg,
    ValueArg,
    Write,
    c_scalar,
)
from physlayout.runtime.plan_builder import build_plan
from physlayout.semantics.evaluator_values import check_flags
from physlayout.transforms.schedule_heuristic import work_group_shape


@dataclass(frozen=True)
class DeviceView:
    """A buffer the caller allocated, bound to a parameter (`execute_physical`): `storage`
    from element `offset` on (only 0 is supported)."""

    storage: DeviceStorage
    offset: int = 0


@dataclass(frozen=True)
class KernelTime:
    """The device time of one launch."""

    function: str
    kernel: str
    seconds: float
    global_size: tuple[int, ...] = ()
    start: float = 0.0
    """When the launch started, in seconds of the device's clock (profiling events)."""


@dataclass
class RunResult:
    """What a run did: the launches in order with their device times."""

    times: list[KernelTime] = field(default_factory=list[KernelTime])
    physical: dict[int, np.ndarray] = field(default_factory=dict[int, np.ndarray])
    """Per buffer parameter (by index), its downloaded array in the transformed shape."""
    outputs: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])
    """Per `read` step, the array it read (the caller's shape of the output)."""
    pending: list[tuple[Launch, Any]] = field(default_factory=list[tuple[Launch, Any]])
    """Launches whose profiling events are not read into `times` yet (`resolve`)."""
    transfers: list[Any] = field(default_factory=list[Any])
    """The events of the inputs' uploads and the outputs' downloads, kept until the queue
    has finished (`DeviceStorage.upload`)."""

    def resolve(self) -> RunResult:
        """Read the pending launches' device times (their events have completed) into
        `times`, in launch order; returns self."""
        for step, event in self.pending:
            start, end = event.profile.start, event.profile.end
            self.times.append(
                KernelTime(step.function, step.kernel, (end - start) * 1e-9, step.global_size,
                           start * 1e-9)
            )  # fmt: skip
        self.pending.clear()
        return self

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
    values: list[DeviceView | int | float] = []
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


def run_prepare(
    compiled: CompiledModule, entry: str, names: Sequence[str], args: Sequence[Any]
) -> tuple[list[Any], RunResult | None]:
    """When `lift-transform-params` split `@entry`, run `@entry_prepare` once on the
    parameters among `args` (the graph's arguments, named `names`) and return the arguments
    of `@entry` (its other graph arguments, then the prepared values: the prepare
    function's out-parameters, in order) with the prepare run's result. Without a prepare
    function: `args` as they are, and None."""
    from physlayout.dialects.layout import BufferType

    name = f"{entry}_prepare"
    if name not in compiled.params:
        return list(args), None
    block = compiled.function(name).body.blocks[0]
    params = [a for a in block.args if a.name_hint in names]
    outputs = [
        np.zeros(a.type.get_shape(), dtype=numpy_dtype(a.type.element_type, "prepared value"))
        for a in block.args[len(params) :]
        if isinstance(a.type, BufferType)
    ]
    by_name = dict(zip(names, args, strict=True))
    result = execute(compiled, name, [*(by_name[str(a.name_hint)] for a in params), *outputs])
    lifted = {a.name_hint for a in params}
    kept = [x for n, x in zip(names, args, strict=True) if n not in lifted]
    return [*kept, *outputs], result


def execute_physical(
    compiled: CompiledModule,
    name: str,
    values: Sequence[DeviceView | int | float],
    allocation_fill: Any = 0,
) -> RunResult:
    """Run function `name` of `compiled` on device storage the caller allocated and filled
    in the physical layout (`OpenCLRuntime.allocate`, `DeviceStorage.upload`), e.g. to
    check that a kernel writes every element, padding included: the `body` steps of its
    physical-layout plan; `allocation_fill` as in `execute`."""
    plan = build_plan(compiled, name, allocation_fill=allocation_fill)
    if len(values) != len(plan.params):
        raise OpenCLRuntimeError(f"@{name} takes {len(plan.params)} arguments, got {len(values)}")
    bound: dict[int, DeviceStorage] = {}
    scalars: dict[str, Any] = {}
    for param, value in zip(plan.params, values, strict=True):
        if param.storage is None:
            if isinstance(value, DeviceView):
                raise OpenCLRuntimeError(f"@{name}: %{param.name}: expected a scalar, got a buffer")
            scalars[param.name] = value
            continue
        if not isinstance(value, DeviceView):
            raise OpenCLRuntimeError(f"@{name}: %{param.name}: expected a buffer, got {value!r}")
        if value.offset:
            raise OpenCLRuntimeError(
                f"@{name}: %{param.name}: a parameter is bound to its storage from offset 0, "
                f"got a view at offset {value.offset}"
            )
        _check_bound(plan, param.storage, value.storage, f"@{name}: %{param.name}")
        bound[param.storage] = value.storage
    return run_plan(plan, compiled.runtime, compiled.cl_program, scalars, bound, ("body",),
                    compiled.cl_kernels)  # fmt: skip


def _check_bound(plan: Plan, index: int, storage: DeviceStorage, where: str) -> None:
    want = plan.storages[index]
    kind = "texture" if want.kind == "image" else "global"
    if storage.kind != kind or storage.physical_shape != want.shape:
        raise OpenCLRuntimeError(
            f"{where}: expected {kind} storage of shape {list(want.shape)}, got "
            f"{storage.kind} storage of shape {list(storage.physical_shape)}"
        )


def _scalar(value: Any, arg_type: Any, where: str) -> int | float:
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise OpenCLRuntimeError(f"@{where}: expected a scalar for a {arg_type} parameter")
    dtype = numpy_dtype(arg_type, f"@{where}")
    return np.asarray(value, dtype=dtype).item()


def run_plan(
    plan: Plan,
    runtime: OpenCLRuntime,
    program: Any,
    inputs: Mapping[str, Any],
    bound: Mapping[int, DeviceStorage] | None = None,
    phases: Collection[str] = ("input", "prepare", "body", "output"),
    kernels: dict[str, Any] | None = None,
) -> RunResult:
    """Execute the steps of `plan` in the given `phases`, in order, on `runtime` with the
    built `program` (kernels.cl). `inputs` holds the caller's value of every input the
    steps write (arrays of the parameter's shape and dtype) and of every scalar parameter;
    `bound` maps storage ids to storage the caller allocated (their `allocate` steps are
    skipped); `kernels` caches the kernel objects. `read` steps fill `RunResult.outputs`."""
    runner = PlanRunner(plan, runtime, program, bound, kernels)
    steps = tuple(s for s in (*plan.prepare, *plan.steps) if s.phase in phases)
    return runner.run(steps, inputs)


class PlanRunner:
    """The steps of one plan, run on one runtime as often as asked.

    What the steps allocate stays allocated between runs and keeps what was written into it
    (`Session` uploads bound parameters once and runs `prepare` once). A sequence of steps is
    made ready once (`ready`): its storages allocated in step order (a storage used before
    its allocate step is a `PlanError`, as a C host would fail), every launch given a kernel
    object of its own whose buffer and constant arguments are set then, its work-group
    shape fixed, and every step turned into one call with all of its pyopencl arguments
    bound. A run then sets only the scalar inputs' arguments, enqueues the uploads and
    launches without waiting for them, waits once (for the first read back, or at the
    end); the launches' device times come from their profiling events after that wait."""

    def __init__(
        self,
        plan: Plan,
        runtime: OpenCLRuntime,
        program: Any,
        bound: Mapping[int, DeviceStorage] | None = None,
        kernels: dict[str, Any] | None = None,
    ) -> None:
        self.plan = plan
        self.runtime = runtime
        self.program = program
        self.storage: dict[int, DeviceStorage] = dict(bound or {})
        self.kernels: dict[str, Any] = kernels if kernels is not None else {}
        self._limits: dict[str, int] = {}
        self._ready: dict[int, tuple[tuple[Step, ...], list[_Action]]] = {}
        """Per sequence of steps (by identity: hashing a plan's steps costs more than a
        small model's launches), the sequence and its actions."""

    def run(
        self,
        steps: tuple[Step, ...],
        inputs: Mapping[str, Any],
        skip: Collection[str] = (),
        profile: bool = True,
    ) -> RunResult:
        """Run `steps` (a tuple of this plan's steps) on `inputs` (as `run_plan`); `write`
        steps of the inputs named in `skip` are left out (their storage holds them from an
        earlier run). With `profile` the launches' times are read into `RunResult.times`,
        else they wait in `RunResult.pending` (`RunResult.resolve`)."""
        result = RunResult()
        for action in self.ready(steps):
            if action.input is None or action.input not in skip:
                action.call(inputs, result)
        self.runtime.queue.finish()
        result.transfers.clear()
        if profile:
            result.resolve()
        return result

    def ready(self, steps: tuple[Step, ...]) -> list[_Action]:
        """The actions of `steps`, made once per sequence (see the class docstring); an
        allocate step is done here and has none."""
        known = self._ready.get(id(steps))
        if known is not None and known[0] is steps:
            return known[1]
        # an equal sequence made ready before shares its actions
        actions = next((a for seq, a in self._ready.values() if seq == steps), None)
        if actions is None:
            made = [self._action(step) for step in steps]
            actions = [a for a in made if a is not None]
        self._ready[id(steps)] = (steps, actions)
        return actions

    def _action(self, step: Step) -> _Action | None:
        cl = pyopencl_module()
        queue = self.runtime.queue
        match step:
            case Allocate():
                if step.storage not in self.storage:
                    s = self.plan.storages[step.storage]
                    kind = "texture" if s.kind == "image" else "global"
                    self.storage[step.storage] = self.runtime.allocate(kind, s.shape, s.dtype)
                return None
            case Fill():
                return _fill(cl, queue, self.get(step.storage), step.value)
            case Write():
                return _write(self.get(step.storage), step.input)
            case Read():
                return _read(self.get(step.storage), step.output, self.plan.param(step.output).shape)
            case Launch():
                return self._launch(step)
            case CopyBufferToImage():
                src, dst = self.get(step.src), self.get(step.dst)
                return _copy(cl, queue, dst.memory, src.memory, dst.physical_shape)
            case CopyImageToBuffer():
                src, dst = self.get(step.src), self.get(step.dst)
                return _copy(cl, queue, dst.memory, src.memory, src.physical_shape)
            case Check():
                return _check(self.get(step.storage), step)
        raise PlanError(f"unknown plan step {step!r}")  # pragma: no cover

    def get(self, index: int) -> DeviceStorage:
        """The device storage of plan storage `index` (a PlanError before its allocation)."""
        storage = self.storage.get(index)
        if storage is None:
            raise PlanError(
                f"storage {index} ({self.plan.storages[index].name}) is used before its "
                "allocate step"
            )
        return storage

    def _launch(self, step: Launch) -> _Action:
        cl = pyopencl_module()
        if step.kernel not in self.kernels:
            try:
                self.kernels[step.kernel] = cl.Kernel(self.program, step.kernel)
            except cl.Error:
                raise PlanError(
                    f"kernels.cl has no kernel '{step.kernel}', which the plan launches"
                ) from None
        kernel = cl.Kernel(self.program, step.kernel)  # this launch's own argument state
        scalars: list[tuple[int, InputArg, Any]] = []
        for position, arg in enumerate(step.args):
            match arg:
                case StorageArg():
                    kernel.set_arg(position, self.get(arg.storage).memory)
                case ValueArg():
                    kernel.set_arg(position, np.asarray(arg.value, C_SCALARS[arg.c_type]))
                case InputArg():
                    scalars.append((position, arg, np.dtype(C_SCALARS[arg.c_type])))
        limit = self._limits.get(step.kernel)
        if limit is None:
            info = cl.kernel_work_group_info.WORK_GROUP_SIZE
            limit = int(kernel.get_work_group_info(info, self.runtime.device))
            self._limits[step.kernel] = limit
        local = step.local_size
        if int(np.prod(local)) > limit:
            local = work_group_shape(step.global_size, limit)
        return _enqueue(cl, self.runtime.queue, kernel, step, local, scalars)


Call = Callable[[Mapping[str, Any], RunResult], None]


class _Action:
    """One ready step: `call(inputs, result)` does it; `input` names the input a `write`
    step uploads."""

    __slots__ = ("call", "input")

    def __init__(self, call: Call, input: str | None = None) -> None:
        self.call = call
        self.input = input


def _fill(cl: Any, queue: Any, storage: DeviceStorage, value: int | float) -> _Action:
    memory = storage.memory
    if storage.kind == "texture":
        rows, cols = storage.physical_shape
        color = np.full(4, value, dtype=np.float32)
        region = (cols // 4, rows)

        def fill_image(_inputs: Mapping[str, Any], _result: RunResult) -> None:
            cl.enqueue_fill_image(queue, memory, color, (0, 0), region)

        return _Action(fill_image)
    size = max(1, int(np.prod(storage.physical_shape))) * storage.dtype.itemsize
    pattern = np.asarray(value, dtype=storage.dtype)

    def fill_buffer(_inputs: Mapping[str, Any], _result: RunResult) -> None:
        cl.enqueue_fill_buffer(queue, memory, pattern, 0, size)

    return _Action(fill_buffer)


def _write(storage: DeviceStorage, name: str) -> _Action:
    shape = storage.physical_shape

    def write(inputs: Mapping[str, Any], result: RunResult) -> None:
        # not waited for: the queue is in order and the run waits before it returns
        result.transfers.append(storage.upload(np.asarray(inputs[name]).reshape(shape), wait=False))

    return _Action(write, name)


def _read(storage: DeviceStorage, name: str, shape: tuple[int, ...]) -> _Action:
    def read(_inputs: Mapping[str, Any], result: RunResult) -> None:
        # filled when the queue has run the copy: the run waits before it returns
        physical, event = storage.enqueue_download()
        result.transfers.append(event)
        result.outputs[name] = physical.reshape(shape)

    return _Action(read)


def _copy(cl: Any, queue: Any, dst: Any, src: Any, image_shape: tuple[int, ...]) -> _Action:
    rows, cols = image_shape
    where = {"offset": 0, "origin": (0, 0), "region": (cols // 4, rows)}

    def copy(_inputs: Mapping[str, Any], _result: RunResult) -> None:
        cl.enqueue_copy(queue, dst, src, **where)

    return _Action(copy)


def _check(storage: DeviceStorage, step: Check) -> _Action:
    def check(_inputs: Mapping[str, Any], _result: RunResult) -> None:
        flat = storage.download().reshape(-1)
        check_flags(flat[step.offset : step.offset + step.count], step.message)

    return _Action(check)


def _enqueue(
    cl: Any, queue: Any, kernel: Any, step: Launch, local: tuple[int, ...],
    scalars: list[tuple[int, InputArg, Any]],
) -> _Action:  # fmt: skip
    enqueue = cl.enqueue_nd_range_kernel
    size = step.global_size
    if not scalars:

        def launch(_inputs: Mapping[str, Any], result: RunResult) -> None:
            result.pending.append((step, enqueue(queue, kernel, size, local)))

        return _Action(launch)

    def launch_with_scalars(inputs: Mapping[str, Any], result: RunResult) -> None:
        for position, arg, dtype in scalars:
            value = c_scalar(inputs[arg.input], arg.c_type, step.function, arg.input)
            kernel.set_arg(position, np.asarray(value, dtype))
        result.pending.append((step, enqueue(queue, kernel, size, local)))

    return _Action(launch_with_scalars)
