"""`build_plan(compiled, entry)`: the ONE interpretation of a host function as a launch
plan (`runtime/plan.py`). It walks the lowered entry (a kernel, or a host function that
allocates buffers and calls kernels and other host functions) and records its storages,
steps, parameters and requirements; for an entry that `lift-transform-params` split, the
prepare phase.

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
from physlayout.runtime.device import OpenCLRuntimeError
from physlayout.runtime.opencl import LoweredModule, ParamLayout, numpy_dtype
from physlayout.runtime.plan import (
    Allocate,
    Arg,
    Check,
    CopyBufferToImage,
    CopyImageToBuffer,
    Fill,
    InputArg,
    Launch,
    Plan,
    PlanError,
    PlanParam,
    Read,
    Requirements,
    Step,
    Storage,
    StorageArg,
    ValueArg,
    Write,
    c_scalar,
)
from physlayout.transforms.schedule_heuristic import work_group_shape


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
    elide_fills: bool = True,
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
    if elide_fills:
        steps = _without(steps, dead_fills(steps, builder.overwrites))
        prepare_steps = list(_without(prepare_steps, dead_fills(prepare_steps, builder.overwrites)))
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


def _storage_kind(builder: _PlanBuilder, layout: ParamLayout) -> str:
    """The plan's storage kind of a parameter: an image for a texture, unless the kernels
    hold textures as buffers (`OpenCLProgram.texture_storage`)."""
    images = builder.compiled.program.texture_storage == "image"
    return "image" if layout.kind == "texture" and images else "buffer"


def _param_value(
    builder: _PlanBuilder, function: func.FuncOp, index: int, layout: ParamLayout | None
) -> _Value:
    """A new parameter storage for argument `index` of `function` (a scalar: its input)."""
    arg = function.body.blocks[0].args[index]
    name = arg.name_hint or str(index)
    if layout is None:
        return _Input(name)
    kind = _storage_kind(builder, layout)
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
            kind = _storage_kind(builder, layout)
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
    overwrites: dict[tuple[str, tuple[Arg, ...]], frozenset[int]] = field(
        default_factory=dict[tuple[str, tuple[Arg, ...]], frozenset[int]]
    )
    """Per call (kernel function, arguments): the storages its launches overwrite whole
    without reading them (`KernelArg.covers`, bound at offset 0 to all of the storage)."""
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
            kind = "image" if self.compiled.program.texture_storage == "image" else "buffer"
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
        self.overwrites[(info.name, tuple(args))] = self.overwritten(info, values)
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

    def overwritten(self, info: KernelInfo, values: list[_Value]) -> frozenset[int]:
        """The storages a call of `info` on `values` writes whole and does not read: bound
        once, at offset 0, to a parameter the kernel covers and never reads, whose flat
        shape is the whole storage."""
        views = [v for v in values if isinstance(v, _View)]
        found: set[int] = set()
        for arg, value in zip(info.args, values, strict=True):
            if not isinstance(value, _View) or not arg.covers or arg.read or value.offset:
                continue
            alone = sum(1 for v in views if v.storage == value.storage) == 1
            if alone and prod(arg.physical_shape) == self.storages[value.storage].elements:
                found.add(value.storage)
        return frozenset(found)

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


def dead_fills(
    steps: Sequence[Step], overwrites: Mapping[tuple[str, tuple[Arg, ...]], frozenset[int]]
) -> set[int]:
    """The positions in `steps` of the fills nothing can observe: the next step that
    touches the filled storage is a launch of a call that overwrites all of it without
    reading it (`overwrites`, by kernel function and arguments). A fill followed by any
    other use, or by none, is kept."""
    dead: set[int] = set()
    pending: dict[int, int] = {}
    for position, step in enumerate(steps):
        full = frozenset[int]()
        if isinstance(step, Launch):
            full = overwrites.get((step.function, step.args), full)
        for storage in _touched(step):
            fill = pending.pop(storage, None)
            if fill is not None and storage in full:
                dead.add(fill)
        if isinstance(step, Fill):
            pending[step.storage] = position
    return dead


def _touched(step: Step) -> list[int]:
    """The storages a step reads or writes (an allocation touches none)."""
    match step:
        case Launch():
            return [a.storage for a in step.args if isinstance(a, StorageArg)]
        case CopyBufferToImage() | CopyImageToBuffer():
            return [step.src, step.dst]
        case Allocate():
            return []
        case _:
            return [step.storage]


def _without(steps: Sequence[Step], positions: set[int]) -> tuple[Step, ...]:
    return tuple(s for k, s in enumerate(steps) if k not in positions)


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
