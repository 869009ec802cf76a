"""The launch plan: everything a host program does to run one compiled function on an
OpenCL device, as data (docs/deploy.md; JSON Schema `docs/plan.schema.json`).

`build_plan(compiled, entry)` is the ONE interpretation of a host function: it walks the
lowered entry (a kernel, or a host function that allocates buffers and calls kernels and
other host functions) and records

- `storages`: every device buffer and image (element type, physical shape, scope, bytes;
  images are `CL_RGBA` of `CL_FLOAT` or `CL_HALF_FLOAT`, width = cols / 4, height = rows
  of the flattened [rows, cols] texture);
- `steps`, in order, each in a phase: `input` (allocate the parameters, write the caller's
  data, relayout it), `body` (the host function: allocations filled with zeros, kernel
  launches with their argument bindings, global and local sizes) and `output` (relayout
  back, read the results);
- `prepare`: the steps run once before the first run: for an entry that
  `lift-transform-params` split, the input steps of its parameters and `@ENTRY_prepare`
  (phase `prepare`: the prepared storages, its allocations and launches);
- `params`: the entry's parameters with their direction (`in`, `out`, `inout`: whether
  some launch reads / writes their storage), the shape and layout in which the caller
  gives and gets them;
- `requirements`: the device extensions the kernels enable, image support and the largest
  image the plan uses.

The Python runtime (`runtime/host.py`) executes plans; the generated C host
(`runtime/host_c.py`) executes the same plan compiled into tables; `runtime/plan_json.py`
writes and reads plan.json.

Layouts at the boundary (`io_layout`): `physical` plans take every buffer in its physical
layout (the transformed shape, padding included; a texture's rows and columns): the
caller converts, as `physlayout run FILE.mlir` does on the host with numpy. `logical`
plans take buffers in the entry's logical layout: a parameter with pending transforms
gets a logical staging buffer and the boundary kernels of `runtime/boundary.py` (fill the
padding with the pad value, scatter into the physical layout, copy to the image for a
texture; and back after the body). An `out` parameter is not an input: it starts filled
with its pad value (0 without one).

Raises `OpenCLRuntimeError` for anything the plan cannot express (a view of a texture at an
offset, overlapping written buffers, a constant that does not fit a kernel's C type).
"""

from __future__ import annotations

import re
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
from physlayout.lowering.opencl import KernelArg, KernelInfo
from physlayout.runtime.boundary import BoundaryFunctions
from physlayout.runtime.opencl import (
    LoweredModule,
    OpenCLRuntimeError,
    ParamLayout,
    numpy_dtype,
    work_group_shape,
)

PLAN_SCHEMA = "physlayout-plan"
PLAN_VERSION = 1
"""The plan schema's version: a reader refuses any other."""

C_SCALARS: dict[str, str] = {
    "int": "int32", "long": "int64", "float": "float32", "double": "float64",
    "short": "int16", "char": "int8", "uint": "uint32", "ulong": "uint64",
    "ushort": "uint16", "uchar": "uint8", "half": "float16",
}  # fmt: skip
"""The numpy dtype of each C type a scalar kernel argument may have."""


def artifact_line(artifact_id: str) -> str:
    """The first line of an artifact's kernels.cl: the artifact's id and plan schema version
    (the Python runner and the C host refuse a kernels.cl of another artifact)."""
    return f"// physlayout artifact {artifact_id} (plan schema {PLAN_VERSION})"


class PlanError(OpenCLRuntimeError):
    """A plan that cannot be read or run: another schema version, a missing field, a
    kernel its kernels.cl lacks, a device without what it requires."""


# The plan ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Storage:
    """A device buffer (`kind` "buffer", shape [elements]) or RGBA image (`kind` "image",
    shape [rows, cols]: width cols / 4 texels, height rows)."""

    name: str
    kind: str
    scope: str
    element_type: str
    dtype: str
    shape: tuple[int, ...]
    role: str
    """`param` (a parameter's storage), `staging` (a boundary buffer), `allocation`, or
    `prepared` (a value `@ENTRY_prepare` makes once, which the body reads)."""

    @property
    def elements(self) -> int:
        """The number of elements."""
        return prod(self.shape)

    @property
    def bytes(self) -> int:
        """The bytes of device memory (a buffer has at least one element)."""
        return max(1, self.elements) * np.dtype(self.dtype).itemsize

    @property
    def image_size(self) -> tuple[int, int]:
        """Images: (width, height) in texels."""
        rows, cols = self.shape
        return cols // 4, rows

    @property
    def channel_type(self) -> str:
        """Images: the OpenCL channel type of the texels."""
        return "CL_HALF_FLOAT" if self.dtype == "float16" else "CL_FLOAT"


@dataclass(frozen=True)
class StorageArg:
    """A buffer or image kernel argument."""

    storage: int


@dataclass(frozen=True)
class ValueArg:
    """A scalar kernel argument known when the plan is built."""

    c_type: str
    value: int | float


@dataclass(frozen=True)
class InputArg:
    """A scalar kernel argument: the value of scalar parameter `input`."""

    c_type: str
    input: str


Arg = StorageArg | ValueArg | InputArg


@dataclass(frozen=True)
class Allocate:
    """Device memory for the storage (`clCreateBuffer` / `clCreateImage`)."""

    phase: str
    storage: int


@dataclass(frozen=True)
class Fill:
    """Every element of the storage (every channel of every texel) set to `value`."""

    phase: str
    storage: int
    value: int | float


@dataclass(frozen=True)
class Write:
    """The caller's data of parameter `input` copied to the storage."""

    phase: str
    storage: int
    input: str


@dataclass(frozen=True)
class Read:
    """The storage copied back to the caller as parameter `output`."""

    phase: str
    storage: int
    output: str


@dataclass(frozen=True)
class Launch:
    """One NDRange launch of `kernel` (a kernel of function `function`)."""

    phase: str
    function: str
    kernel: str
    args: tuple[Arg, ...]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    """The work-group shape for a device that allows 256 work-items per group
    (`work_group_shape`); a device (or kernel) that allows fewer uses
    `work_group_shape(global_size, its limit)`."""


@dataclass(frozen=True)
class CopyBufferToImage:
    """The whole image `dst` from buffer `src` (its rows x cols elements, row-major)."""

    phase: str
    src: int
    dst: int


@dataclass(frozen=True)
class CopyImageToBuffer:
    """The whole image `src` into buffer `dst` (rows x cols elements, row-major)."""

    phase: str
    src: int
    dst: int


@dataclass(frozen=True)
class Check:
    """`layout.check`: after the launches so far, read `count` integer flags of buffer
    `storage` from element `offset` on; the run fails with `message` unless all are
    non-zero."""

    phase: str
    storage: int
    offset: int
    count: int
    message: str


Step = Allocate | Fill | Write | Read | Launch | CopyBufferToImage | CopyImageToBuffer | Check


@dataclass(frozen=True)
class PlanParam:
    """A parameter of the entry function as the caller sees it."""

    name: str
    index: int
    kind: str
    """`buffer` or `scalar`."""
    direction: str
    """`in`, `out` or `inout` (scalars are `in`)."""
    element_type: str
    dtype: str
    shape: tuple[int, ...]
    """The shape of the caller's array: the logical shape, or the transformed shape
    (padding included) when `layout` is `physical`; () for scalars."""
    layout: str
    """`logical` or `physical`."""
    storage: int | None = None
    """The parameter's device storage (in its physical layout)."""
    host_storage: int | None = None
    """The storage the caller's data is written to and read from."""
    transform: str | None = None
    """The composed index map of the parameter's transforms (None: none)."""
    pad_value: int | float | None = None
    physical_shape: tuple[int, ...] = ()
    """The transformed shape (the logical shape without transforms)."""


@dataclass(frozen=True)
class Requirements:
    """What a device must offer to run the plan."""

    extensions: tuple[str, ...] = ()
    image_support: bool = False
    max_image_width: int = 0
    """The widest image of the plan (texels); 0 without images."""
    max_image_height: int = 0


@dataclass(frozen=True)
class Plan:
    """A compiled function's launch plan (see the module docstring)."""

    entry: str
    level: str
    """`buffer` (buffer-level source) or `graph` (graph-level source)."""
    io_layout: str
    storages: tuple[Storage, ...]
    params: tuple[PlanParam, ...]
    steps: tuple[Step, ...]
    requirements: Requirements
    prepare: tuple[Step, ...] = ()
    """Steps run once before the first run: the parameters' input steps and
    `@ENTRY_prepare` of an entry `lift-transform-params` split (else none)."""
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """How the artifact was compiled (pipeline, image limits, fp16/fp64)."""
    artifact_id: str = ""
    """The artifact's id (a hash of its plan and kernels; empty for a plan not saved)."""

    @property
    def kernels(self) -> tuple[str, ...]:
        """Every kernel the plan launches, in first-launch order."""
        names: dict[str, None] = {}
        for step in (*self.prepare, *self.steps):
            if isinstance(step, Launch):
                names[step.kernel] = None
        return tuple(names)

    @property
    def inputs(self) -> tuple[PlanParam, ...]:
        """The parameters the caller gives (`in`, `inout`)."""
        return tuple(p for p in self.params if p.direction != "out")

    @property
    def outputs(self) -> tuple[PlanParam, ...]:
        """The buffer parameters the caller gets back (`out`, `inout`)."""
        return tuple(p for p in self.params if p.direction != "in")

    def param(self, name: str) -> PlanParam:
        """The parameter `name`."""
        for param in self.params:
            if param.name == name:
                return param
        raise PlanError(f"the plan has no parameter '{name}'")


# Building ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _View:
    storage: int
    offset: int = 0
    base: int = 0


@dataclass(frozen=True)
class _Handle:
    storage: int
    base: int = 0


@dataclass(frozen=True)
class _Input:
    name: str


_Value = _View | _Handle | _Input | int | float


def build_plan(
    compiled: LoweredModule,
    entry: str,
    *,
    io_layout: str = "physical",
    boundary: Sequence[BoundaryFunctions] = (),
    allocation_fill: Any = 0,
    level: str = "buffer",
    shapes: Mapping[int, tuple[int, ...]] | None = None,
    options: Mapping[str, Any] | None = None,
    graph_args: Sequence[str] | None = None,
    prepare_boundary: Sequence[BoundaryFunctions] = (),
) -> Plan:
    """The launch plan of function `entry` of `compiled`. `io_layout` "logical" needs the
    boundary functions (`runtime/boundary.py`) of every parameter with pending transforms,
    compiled into `compiled`; `allocation_fill` is the value the body's allocations start
    with (tests: garbage); `shapes` overrides a parameter's caller shape (a graph's tensor
    shape; the element count must match).

    When `lift-transform-params` split the entry (`@ENTRY_prepare` exists) and `graph_args`
    names the graph's arguments, the plan takes those arguments (and returns the results):
    its `prepare` steps write the parameters and run `@ENTRY_prepare` once into the
    prepared storages (phase `prepare`), and its steps run `@ENTRY` on the other arguments
    and the prepared storages. `prepare_boundary` are the boundary functions of
    `@ENTRY_prepare`'s parameters; `shapes` is then keyed by the graph's signature (its
    arguments, then its results)."""
    if io_layout not in ("logical", "physical"):
        raise PlanError(f"io_layout must be 'logical' or 'physical', not '{io_layout}'")
    builder = _PlanBuilder(compiled, allocation_fill)
    function = compiled.function(entry)
    layouts = compiled.params.get(entry)
    if layouts is None:
        raise PlanError(f"no function @{entry} in the source module")
    prepare = f"{entry}_prepare"
    by_index = {b.index: b for b in boundary}
    bound: list[_Bound]
    prepare_steps: list[Step] = []
    if graph_args is not None and prepare in compiled.params:
        bound, prepare_steps = _prepared_entry(
            builder, entry, graph_args, by_index, {b.index: b for b in prepare_boundary}
        )
        names = list(graph_args)
    else:
        names = []
        bound = []
        for index, layout in enumerate(layouts):
            value = _param_value(builder, function, index, layout)
            bound.append((function, index, value, layout, by_index.get(index)))
        builder.call(entry, [v for _, _, v, _, _ in bound])
    body = builder.steps
    builder.steps = []
    params: list[PlanParam] = []
    output_steps: list[Step] = []
    lifted: list[Step] = []
    for position, (owner, index, value, layout, functions) in enumerate(bound):
        name = owner.body.blocks[0].args[index].name_hint or str(index)
        key = names.index(name) if name in names else position if names else index
        shape = (shapes or {}).get(key)
        if isinstance(value, _Input):
            params.append(builder.scalar_param(value.name, index, owner))
            continue
        assert isinstance(value, _View) and layout is not None
        before = len(builder.steps)
        param, outputs = builder.boundary(value.storage, key, layout, io_layout, functions, shape)
        if owner is not function:  # a parameter of @ENTRY_prepare: written once, before it
            lifted += builder.steps[before:]
            del builder.steps[before:]
        params.append(param)
        output_steps += outputs
    inputs = builder.steps
    prepare_steps = [*lifted, *prepare_steps] if prepare_steps else []
    steps = (*inputs, *body, *output_steps)
    return Plan(
        entry=entry,
        level=level,
        io_layout=io_layout,
        storages=tuple(builder.storages),
        params=tuple(params),
        steps=steps,
        requirements=_requirements(compiled.program.source, builder.storages),
        prepare=tuple(prepare_steps),
        options=dict(options or {}),
    )


def _param_value(
    builder: _PlanBuilder, function: func.FuncOp, index: int, layout: ParamLayout | None
) -> _Value:
    """A new parameter storage for argument `index` of `function` (a scalar: its input)."""
    arg = function.body.blocks[0].args[index]
    name = arg.name_hint or str(index)
    if layout is None:
        return _Input(name)
    kind = "image" if layout.kind == "texture" else "buffer"
    scope = _scope(function.function_type.inputs.data[index])
    return _View(builder.storage(name, kind, scope, layout, "param"))


_Bound = tuple[func.FuncOp, int, _Value, ParamLayout | None, BoundaryFunctions | None]
"""A plan parameter: the function and argument index it binds, its value, layout and
boundary functions."""


def _prepared_entry(
    builder: _PlanBuilder,
    entry: str,
    graph_args: Sequence[str],
    entry_boundary: Mapping[int, BoundaryFunctions],
    prepare_boundary: Mapping[int, BoundaryFunctions],
) -> tuple[list[_Bound], list[Step]]:
    """Bind the graph's arguments and results of a split entry: the parameters to
    `@ENTRY_prepare`, run once into new `prepared` storages (its launches, phase
    `prepare`, returned), then `@ENTRY` on the other arguments, the prepared storages and
    the results (its launches left in `builder.steps`). Returns each graph argument and
    result in the graph's order: (function, argument index, value, layout, boundary)."""
    prepare = f"{entry}_prepare"
    main, prep = builder.compiled.function(entry), builder.compiled.function(prepare)
    main_layouts, prep_layouts = builder.compiled.params[entry], builder.compiled.params[prepare]
    prep_args = prep.body.blocks[0].args
    lifted = [k for k, a in enumerate(prep_args) if a.name_hint in graph_args]
    made = [k for k in range(len(prep_args)) if k not in lifted]
    values: dict[str, _Bound] = {}
    prep_values: list[_Value] = []
    for k in range(len(prep_args)):
        layout = prep_layouts[k]
        if k in lifted:
            value = _param_value(builder, prep, k, layout)
            values[str(prep_args[k].name_hint)] = (prep, k, value, layout, prepare_boundary.get(k))
        else:
            if layout is None:
                raise PlanError(f"@{prepare} makes a scalar %{prep_args[k].name_hint}")
            name = f"{prep_args[k].name_hint or k}.prepared"
            kind = "image" if layout.kind == "texture" else "buffer"
            scope = _scope(prep.function_type.inputs.data[k])
            value = _View(builder.storage(name, kind, scope, layout, "prepared"))
            builder.steps.append(Allocate("prepare", value.storage))
            pad = layout.layout.pad_value if layout.layout is not None else None
            dtype = builder.storages[value.storage].dtype
            builder.steps.append(Fill("prepare", value.storage, _fill_value(pad or 0, dtype)))
        prep_values.append(value)
    builder.phase = "prepare"
    builder.call(prepare, prep_values)
    builder.phase = "body"
    prepare_steps, builder.steps = builder.steps, []
    main_args = main.body.blocks[0].args
    # @ENTRY's arguments: the graph arguments not lifted, the prepared values, the results
    kept = range(len(graph_args) - len(lifted))
    prepared = iter(prep_values[k] for k in made)
    main_values: list[_Value] = []
    results: list[_Bound] = []
    for k in range(len(main_args)):
        if k in kept:
            value = _param_value(builder, main, k, main_layouts[k])
            values[str(main_args[k].name_hint)] = (
                main, k, value, main_layouts[k], entry_boundary.get(k)
            )
        elif k < len(kept) + len(made):
            value = next(prepared)
        else:
            value = _param_value(builder, main, k, main_layouts[k])
            results.append((main, k, value, main_layouts[k], entry_boundary.get(k)))
        main_values.append(value)
    missing = [n for n in graph_args if n not in values]
    if missing:
        raise PlanError(f"graph arguments {missing} are neither @{entry}'s nor @{prepare}'s")
    builder.call(entry, main_values)
    return [*(values[n] for n in graph_args), *results], prepare_steps


def _scope(type_: Any) -> str:
    return str(type_.get_scope().value) if isinstance(type_, BufferType) else "global"


_EXTENSION = re.compile(r"^#pragma OPENCL EXTENSION (\w+) : enable$", re.MULTILINE)


def _requirements(source: str, storages: Sequence[Storage]) -> Requirements:
    images = [s.image_size for s in storages if s.kind == "image"]
    return Requirements(
        extensions=tuple(sorted(set(_EXTENSION.findall(source)))),
        image_support=bool(images),
        max_image_width=max((w for w, _ in images), default=0),
        max_image_height=max((h for _, h in images), default=0),
    )


@dataclass
class _PlanBuilder:
    compiled: LoweredModule
    allocation_fill: Any
    storages: list[Storage] = field(default_factory=list[Storage])
    steps: list[Step] = field(default_factory=list[Step])
    read: set[int] = field(default_factory=set[int])
    written: set[int] = field(default_factory=set[int])
    phase: str = "body"
    """The phase of the steps `call` records (`prepare` while it runs `@ENTRY_prepare`)."""

    # Storage --------------------------------------------------------------------------

    def add(self, storage: Storage) -> int:
        self.storages.append(storage)
        return len(self.storages) - 1

    def storage(
        self, name: str, kind: str, scope: str, layout: ParamLayout, role: str
    ) -> int:
        dtype = np.dtype(layout.dtype)
        return self.add(
            Storage(name, kind, scope, _element(dtype), dtype.name, layout.physical_shape, role)
        )

    def allocate(self, op: AllocateOp, where: str) -> int:
        ptr_type = op.ptr.type
        assert isinstance(ptr_type, PtrType)
        dtype = np.dtype(numpy_dtype(ptr_type.element_type, where))
        name = op.ptr.name_hint or f"alloc{len(self.storages)}"
        scope = str(ptr_type.get_scope().value)
        element = str(ptr_type.element_type)
        if not is_texture_scope(ptr_type.get_scope()):
            shape: tuple[int, ...] = (op.num_elements(),)
            kind = "buffer"
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
            kind = "image"
            if dtype.kind != "f" or dtype.itemsize not in (2, 4):
                raise OpenCLRuntimeError(
                    f"{where}: a texture holds f32 or f16 texels (RGBA FLOAT or HALF_FLOAT "
                    f"images), not {dtype} values"
                )
        index = self.add(Storage(name, kind, scope, element, dtype.name, tuple(shape), "allocation"))
        self.steps.append(Allocate(self.phase, index))
        self.steps.append(Fill(self.phase, index, _fill_value(self.allocation_fill, dtype)))
        return index

    # The host function -------------------------------------------------------------------

    def call(self, name: str, values: list[_Value]) -> None:
        info = self.compiled.program.kernels.get(name)
        if info is not None:
            self.launch_all(info, values, self.phase)
            return
        self.host(name, values)

    def host(self, name: str, values: list[_Value]) -> None:
        function = self.compiled.function(name)
        bound = [_View(v.storage, v.offset, v.offset) if isinstance(v, _View) else v for v in values]
        env: dict[SSAValue, _Value] = dict(zip(function.body.blocks[0].args, bound, strict=True))
        for op in function.body.blocks[0].ops:
            where = f"@{name}: '{op.name}'"
            match op:
                case AllocateOp():
                    env[op.ptr] = _Handle(self.allocate(op, where))
                case DeclBufferOp():
                    env[op.buffer] = self.declare(op, env[op.ptr], where)
                case DataOp():
                    view = env[op.buffer]
                    assert isinstance(view, _View)
                    env[op.ptr] = _Handle(view.storage, view.base)
                case arith.ConstantOp(value=FloatAttr() | IntegerAttr() as attr):
                    env[op.result] = attr.value.data
                case func.CallOp():
                    callee = op.callee.root_reference.data
                    self.call(callee, [env[v] for v in op.arguments])
                case CheckOp():
                    self.check(op, env[op.flags], where)
                case func.ReturnOp():
                    return
                case _:
                    raise OpenCLRuntimeError(
                        f"{where}: host functions may only allocate, declare buffers, call "
                        "kernels and check flags"
                    )

    def check(self, op: CheckOp, view: _Value, where: str) -> None:
        if not isinstance(view, _View) or not isinstance(op.flags.type, BufferType):
            raise OpenCLRuntimeError(f"{where}: expected a buffer of flags")
        if self.storages[view.storage].kind != "buffer":
            raise OpenCLRuntimeError(f"{where}: flags must be in a global buffer, not an image")
        count = op.flags.type.num_elements()
        self.read.add(view.storage)
        self.steps.append(Check(self.phase, view.storage, view.offset, count, op.message.data))

    def declare(self, op: DeclBufferOp, handle: _Value, where: str) -> _View:
        assert isinstance(handle, _Handle)
        offset = handle.base + op.elem_offset.data
        if self.storages[handle.storage].kind == "image" and offset:
            raise OpenCLRuntimeError(
                f"{where}: a texture view must start at offset 0 (an image starts at its "
                f"first texel), got {offset}"
            )
        return _View(handle.storage, offset, handle.base)

    def launch_all(self, info: KernelInfo, values: list[_Value], phase: str) -> None:
        self.check_arguments(info, values)
        args: list[Arg] = []
        for arg, value in zip(info.args, values, strict=True):
            if isinstance(value, _View):
                args.append(StorageArg(value.storage))
                if arg.read:
                    self.read.add(value.storage)
                if arg.written:
                    self.written.add(value.storage)
                if arg.offset_argument:
                    args.append(ValueArg("int", value.offset))
            elif isinstance(value, _Input):
                args.append(InputArg(arg.c_type, value.name))
            else:
                assert not isinstance(value, _Handle)
                scalar = c_scalar(value, arg.c_type, info.name, arg.name, str(arg.type))
                args.append(ValueArg(arg.c_type, scalar))
        for launch in info.launches:
            self.steps.append(
                Launch(
                    phase,
                    info.name,
                    launch.kernel,
                    tuple(args),
                    tuple(launch.global_size),
                    launch.local_size or work_group_shape(launch.global_size),
                )
            )

    def check_arguments(self, info: KernelInfo, values: list[_Value]) -> None:
        seen: list[tuple[KernelArg, _View]] = []
        for arg, value in zip(info.args, values, strict=True):
            where = f"@{info.name}: argument %{arg.name}"
            if arg.kind == "scalar":
                if isinstance(value, _View | _Handle):
                    raise OpenCLRuntimeError(f"{where}: expected a scalar, got a buffer")
                continue
            if not isinstance(value, _View):
                raise OpenCLRuntimeError(f"{where}: expected a buffer, got {value!r}")
            storage = self.storages[value.storage]
            kind = "texture" if storage.kind == "image" else "global"
            if kind != arg.kind:
                raise OpenCLRuntimeError(f"{where}: expected {arg.kind} storage, got {kind}")
            if value.offset + prod(arg.physical_shape) > storage.elements or (
                arg.kind == "texture" and storage.shape != arg.physical_shape
            ):
                raise OpenCLRuntimeError(
                    f"{where}: storage of shape {list(storage.shape)} does not hold "
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

    # The boundary ------------------------------------------------------------------------

    def scalar_param(self, name: str, index: int, function: func.FuncOp) -> PlanParam:
        type_ = function.function_type.inputs.data[index]
        dtype = np.dtype(numpy_dtype(type_, f"parameter %{name}"))
        return PlanParam(name, index, "scalar", "in", str(type_), dtype.name, (), "logical")

    def boundary(
        self,
        storage: int,
        index: int,
        layout: ParamLayout,
        io_layout: str,
        functions: BoundaryFunctions | None,
        shape: tuple[int, ...] | None,
    ) -> tuple[PlanParam, list[Step]]:
        """The parameter `layout` bound to `storage`: its input steps (appended to
        `self.steps`) and its output steps (returned)."""
        read, written = storage in self.read, storage in self.written
        direction = "inout" if read and written else "out" if written else "in"
        target = self.storages[storage]
        pending = layout.layout
        transformed = layout.logical_shape if pending is None else pending.shape
        pad = None if pending is None else pending.pad_value
        relayout = io_layout == "logical" and pending is not None
        caller_shape = layout.logical_shape if io_layout == "logical" else transformed
        if shape is not None and prod(shape) == prod(caller_shape) and not relayout:
            caller_shape = shape
        host = storage
        output: list[Step] = []
        self.steps.append(Allocate("input", storage))
        if not relayout:
            if direction == "out":
                self.steps.append(Fill("input", storage, _fill_value(pad or 0, target.dtype)))
            else:
                self.steps.append(Write("input", storage, layout.name))
            if direction != "in":
                output.append(Read("output", storage, layout.name))
        else:
            assert pending is not None
            if functions is None:
                raise PlanError(
                    f"parameter %{layout.name} has a transform: a logical-layout plan needs "
                    "its boundary functions (runtime/boundary.py)"
                )
            host = self.add(
                Storage(
                    f"{layout.name}.logical", "buffer", "global", target.element_type,
                    target.dtype, (prod(layout.logical_shape),), "staging",
                )
            )  # fmt: skip
            physical = storage
            if target.kind == "image":
                physical = self.add(
                    Storage(
                        f"{layout.name}.physical", "buffer", "global", target.element_type,
                        target.dtype, (target.elements,), "staging",
                    )
                )  # fmt: skip
            for staging in dict.fromkeys((host, physical)):
                self.steps.append(Allocate("input", staging))
            if direction == "out":
                self.steps.append(Fill("input", storage, _fill_value(pad or 0, target.dtype)))
            else:
                self.steps.append(Write("input", host, layout.name))
                if pending.padding is not None:
                    self.steps.append(Fill("input", physical, _fill_value(pad, target.dtype)))
                self.boundary_launch(functions.to_physical, host, physical, "input")
                if physical != storage:
                    self.steps.append(CopyBufferToImage("input", physical, storage))
            if direction != "in":
                saved = self.steps
                self.steps = output
                if physical != storage:
                    self.steps.append(CopyImageToBuffer("output", storage, physical))
                self.boundary_launch(functions.to_logical, physical, host, "output")
                self.steps.append(Read("output", host, layout.name))
                self.steps = saved
        param = PlanParam(
            name=layout.name,
            index=index,
            kind="buffer",
            direction=direction,
            element_type=target.element_type,
            dtype=target.dtype,
            shape=tuple(caller_shape),
            layout=io_layout if pending is not None else "logical",
            storage=storage,
            host_storage=host,
            transform=None if pending is None else str(pending.index_map),
            pad_value=pad,
            physical_shape=tuple(transformed),
        )
        return param, output

    def boundary_launch(self, function: str, src: int, dst: int, phase: str) -> None:
        info = self.compiled.program.kernels.get(function)
        if info is None:
            raise PlanError(f"the boundary function @{function} was not compiled")
        self.launch_all(info, [_View(src), _View(dst)], phase)


def _element(dtype: np.dtype[Any]) -> str:
    kind = {"f": "f", "i": "i", "u": "ui", "b": "i"}[dtype.kind]
    bits = 1 if dtype.kind == "b" else dtype.itemsize * 8
    return f"{kind}{bits}"


def _fill_value(value: Any, dtype: Any) -> int | float:
    """`value` as a plain number of `dtype`'s kind (NaN allowed for floats)."""
    array = np.asarray(value, dtype=np.dtype(dtype))
    if array.dtype.kind == "b":
        return int(array.item())
    return array.item()


def _overlap(a: KernelArg, a_view: _View, b: KernelArg, b_view: _View) -> bool:
    if a_view.storage != b_view.storage:
        return False
    a_end = a_view.offset + prod(a.physical_shape)
    b_end = b_view.offset + prod(b.physical_shape)
    return a_view.offset < b_end and b_view.offset < a_end


def c_scalar(
    value: Any, c_type: str, function: str, name: str, type_: str | None = None
) -> int | float:
    """`value` as the C type `c_type` of a scalar kernel argument (of MLIR type `type_`);
    an integer that does not fit it (an `index` value beyond the kernels' 32-bit `int`) is
    refused, never wrapped."""
    dtype = np.dtype(C_SCALARS[c_type])
    if dtype.kind in "iu":
        limits = np.iinfo(dtype)
        if not limits.min <= int(value) <= limits.max:
            raise OpenCLRuntimeError(
                f"@{function}: argument %{name}: {value} does not fit the kernel's "
                f"{c_type} ({type_ or c_type} values are {c_type} in OpenCL kernels)"
            )
        return int(value)
    return float(np.asarray(value, dtype=dtype).item())
