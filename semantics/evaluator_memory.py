"""Reference semantics of the `layout` and `memref` memory ops over SIMT lanes.

Loads gather and stores scatter at the active lanes (the last lane in row-major lane
order wins when several write one element); allocations inside a parallel loop are
private to each lane; memref view ops build strided `View`s of the same storage, checked
to stay inside it. See `physlayout.semantics.evaluator` for the storage model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    VectorType,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from physlayout.dialects import layout
from physlayout.dialects.layout import BufferType, DeclBufferOp, PtrType
from physlayout.dialects.layout_check import CheckOp
from physlayout.semantics.evaluator_access import (
    element_offsets,
    gather,
    is_scalar_access,
    read_scalar,
    scatter,
    whole_view_offsets,
    write_scalar,
)
from physlayout.semantics.evaluator_frame import (
    mem,
    name_of,
    num,
    segments,
    simt,
    uniform_int,
    view,
)
from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    Handle,
    Lanes,
    View,
    active_values,
    any_active,
    check_flags,
    check_view,
    dtype_of,
    fills_padding,
    layout_map_of,
    memory_element,
    new_storage,
    row_major_strides,
    uniform_value,
    vector_shape,
    with_trailing,
)

# Memory access ----------------------------------------------------------------------------


def access_width(value_type: Attribute, view: View) -> int:
    """Elements an access of `value_type` touches along the innermost axis."""
    if view.vshape or not isinstance(value_type, VectorType):
        return 1
    shape = value_type.get_shape()
    return shape[-1] if shape else 1


def read(op: Operation, view: View, indices: Sequence[Array], lanes: Lanes) -> Array:
    """The value `op` loads from `view` at `indices` (its result type gives the width)."""
    width = access_width(op.results[0].type, view)
    if is_scalar_access(view, indices, lanes):
        return read_scalar(view, indices, width, f"'{op.name}'")
    flat, tail = element_offsets(view, indices, width, lanes, f"'{op.name}'")
    return gather(view.storage, flat, lanes, tail, view.dtype)


def write(op: Operation, value: Any, view: View, indices: Sequence[Array], lanes: Lanes) -> None:
    """Store `value` (operand 0 of `op`, whose type gives the width) to `view` at `indices`
    for the active lanes."""
    if not any_active(lanes):
        return
    if isinstance(value, View | Handle):
        raise EvaluationError(f"evaluator: {name_of(op.operands[0])} is not a number here")
    width = access_width(op.operands[0].type, view)
    if is_scalar_access(view, indices, lanes):
        write_scalar(view, indices, width, value.astype(view.dtype), f"'{op.name}'")
        return
    flat, tail = element_offsets(view, indices, width, lanes, f"'{op.name}'")
    scatter(view.storage, flat, value.astype(view.dtype), lanes, tail, view.dtype, f"'{op.name}'")


def load(interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
    """`layout.load`, `memref.load`, `vector.load`: buffer, then indices."""
    indices = [num(op, args, i) for i in range(1, len(args))]
    return (read(op, view(op, args, 0), indices, simt(interpreter).lanes),)


def store(interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
    """`layout.store`, `memref.store`, `vector.store`: value, buffer, then indices."""
    indices = [num(op, args, i) for i in range(2, len(args))]
    write(op, args[0], view(op, args, 1), indices, simt(interpreter).lanes)
    return ()


# layout ops -------------------------------------------------------------------------------


def allocated_elements(op: Operation) -> int:
    """The elements a `layout.allocate` provides. Allocations are physical: extents that
    are the logical shape of a buffer with a pending transform declared over the handle
    stand for that transform's extents (`apply-layout` resizes such an allocation)."""
    extents_attr = op.properties.get("extents")
    extents = tuple(getattr(e, "data", 0) for e in getattr(extents_attr, "data", ()))
    count = prod(extents)
    for use in op.results[0].uses:
        if not isinstance(use.operation, DeclBufferOp):
            continue
        layout_map = layout_map_of(use.operation.buffer.type, f"'{op.name}'")
        if layout_map is not None and layout_map.layout.logical_shape == extents:
            count = max(count, prod(layout_map.layout.shape))
    return count


@register_impls
class LayoutFunctions(InterpreterFunctions):
    """`layout.allocate/decl_buffer/data/load/store` (the storage model of the evaluator)."""

    @impl(layout.AllocateOp)
    def run_allocate(
        self, interpreter: Interpreter, op: layout.AllocateOp, args: PythonValues
    ) -> PythonValues:
        ptr_type = op.results[0].type
        if not isinstance(ptr_type, PtrType):
            raise EvaluationError(f"'{op.name}': expected a !layout.ptr result")
        lanes_per = prod(vector_shape(ptr_type.element_type))
        storage = new_storage(
            allocated_elements(op) * lanes_per,
            dtype_of(ptr_type.element_type),
            simt(interpreter).lanes,
            name_of(op.results[0]),
        )
        return (Handle(storage, lanes_per),)

    @impl(layout.DeclBufferOp)
    def run_decl_buffer(
        self, interpreter: Interpreter, op: layout.DeclBufferOp, args: PythonValues
    ) -> PythonValues:
        lanes = simt(interpreter).lanes
        handle = mem(op, args, 0)
        if not isinstance(handle, Handle):
            raise EvaluationError(f"'{op.name}': operand is not a data handle")
        buffer_type = op.results[0].type
        if not isinstance(buffer_type, BufferType):
            raise EvaluationError(f"'{op.name}': expected a !layout.buffer result")
        offset = getattr(op.properties.get("elem_offset"), "data", 0)
        vshape = vector_shape(buffer_type.element_type)
        shape = buffer_type.get_shape()
        layout_map = layout_map_of(buffer_type, f"'{op.name}'")
        addressed = shape if layout_map is None else layout_map.layout.shape
        result = View(
            handle.storage,
            handle.base + offset * handle.lanes,
            shape,
            row_major_strides(addressed, prod(vshape)),
            vshape,
            dtype_of(buffer_type.element_type),
            name_of(op.results[0]),
            base=handle.base,
            layout=layout_map,
        )
        check_view(result, f"'{op.name}'", lanes)
        if fills_padding(op.results[0]):
            fill_padding(result, lanes, f"'{op.name}'")
        return (result,)

    @impl(layout.DataOp)
    def run_data(
        self, interpreter: Interpreter, op: layout.DataOp, args: PythonValues
    ) -> PythonValues:
        buffer = view(op, args, 0)
        element = memory_element(op.results[0].type)
        lanes_per = prod(vector_shape(element)) if element is not None else 1
        if buffer.base is None:
            raise EvaluationError(
                f"'{op.name}': the handle of {buffer.name}, a parameter bound to a buffer at a "
                "lane-dependent offset, is not supported"
            )
        return (Handle(buffer.storage, lanes_per, buffer.base),)

    @impl(layout.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: layout.LoadOp, args: PythonValues
    ) -> PythonValues:
        return load(interpreter, op, args)

    @impl(layout.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: layout.StoreOp, args: PythonValues
    ) -> PythonValues:
        return store(interpreter, op, args)

    @impl(CheckOp)
    def run_check(self, interpreter: Interpreter, op: CheckOp, args: PythonValues) -> PythonValues:
        """`layout.check` of a buffer: every element (in every active lane) must be non-zero."""
        lanes = simt(interpreter).lanes
        flags = view(op, args, 0)
        if any_active(lanes):
            flat, tail = whole_view_offsets(flags, lanes)
            values = gather(flags.storage, flat, lanes, tail, flags.dtype)
            check_flags(values, op.message.data)
        return ()


def fill_padding(view: View, lanes: Lanes, what: str) -> None:
    """Store the pad value of mapped `view` at every padding position of its storage (for
    the active lanes)."""
    layout_map = view.layout
    if layout_map is None or layout_map.layout.pad_value is None or not any_active(lanes):
        return
    positions = layout_map.padding_positions
    if positions.size == 0:
        return
    offset = np.asarray(view.lane_offset(lanes), dtype=np.int64)
    offset = offset.reshape(offset.shape + (1,) * (lanes.depth - offset.ndim))
    inner = np.arange(view.lanes, dtype=np.int64)
    flat = with_trailing(offset, 2) + (positions * view.lanes)[:, None] + inner
    value = np.asarray(layout_map.layout.pad_value).astype(view.dtype)
    scatter(view.storage, flat, value, lanes, 2, view.dtype, what)


# memref ops -------------------------------------------------------------------------------


@register_impls
class MemRefFunctions(InterpreterFunctions):
    """`memref.alloc/alloca/dealloc/load/store/cast/memory_space_cast/assume_alignment/
    reinterpret_cast/subview/collapse_shape/expand_shape/copy/dim`."""

    @impl(memref.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues
    ) -> PythonValues:
        return (_allocate(interpreter, op, args),)

    @impl(memref.AllocaOp)
    def run_alloca(
        self, interpreter: Interpreter, op: memref.AllocaOp, args: PythonValues
    ) -> PythonValues:
        return (_allocate(interpreter, op, args),)

    @impl(memref.DeallocOp)
    def run_dealloc(
        self, interpreter: Interpreter, op: memref.DeallocOp, args: PythonValues
    ) -> PythonValues:
        return ()

    @impl(memref.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues
    ) -> PythonValues:
        return load(interpreter, op, args)

    @impl(memref.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: memref.StoreOp, args: PythonValues
    ) -> PythonValues:
        return store(interpreter, op, args)

    @impl(memref.CastOp)
    def run_cast(
        self, interpreter: Interpreter, op: memref.CastOp, args: PythonValues
    ) -> PythonValues:
        return (view(op, args, 0),)

    @impl(memref.MemorySpaceCastOp)
    def run_memory_space_cast(
        self, interpreter: Interpreter, op: memref.MemorySpaceCastOp, args: PythonValues
    ) -> PythonValues:
        return (view(op, args, 0),)

    @impl(memref.AssumeAlignmentOp)
    def run_assume_alignment(
        self, interpreter: Interpreter, op: memref.AssumeAlignmentOp, args: PythonValues
    ) -> PythonValues:
        source = view(op, args, 0)
        return (source,) if op.results else ()

    @impl(memref.ReinterpretCastOp)
    def run_reinterpret_cast(
        self, interpreter: Interpreter, op: memref.ReinterpretCastOp, args: PythonValues
    ) -> PythonValues:
        lanes = simt(interpreter).lanes
        source = view(op, args, 0)
        offsets, sizes, strides = _offsets_sizes_strides(op, args, lanes)
        lanes_per = source.lanes
        result = View(
            source.storage,
            0,
            tuple(sizes),
            tuple(s * lanes_per for s in strides),
            source.vshape,
            source.dtype,
            name_of(op.results[0]),
        )
        result = _with_offset(result, offsets[0] * lanes_per, lanes)
        return (check_view(result, f"'{op.name}'", lanes),)

    @impl(memref.SubviewOp)
    def run_subview(
        self, interpreter: Interpreter, op: memref.SubviewOp, args: PythonValues
    ) -> PythonValues:
        lanes = simt(interpreter).lanes
        source = view(op, args, 0)
        offsets, sizes, steps = _offsets_sizes_strides(op, args, lanes)
        for axis, (start, size, step) in enumerate(zip(offsets, sizes, steps, strict=True)):
            low, high = _active_range(start, lanes)
            last = high + (size - 1) * step if size > 0 else high
            if low < 0 or (size > 0 and last >= source.shape[axis]):
                raise EvaluationError(
                    f"'{op.name}': subview [{low}..{high} +{size} *{step}] leaves axis {axis} "
                    f"of {source.name} (extent {source.shape[axis]})"
                )
        offset: int | Array = source.lane_offset(lanes)
        for start, stride in zip(offsets, source.strides, strict=True):
            offset = offset + start * stride
        shape = list(sizes)
        strides = [s * t for s, t in zip(source.strides, steps, strict=True)]
        result_type = op.results[0].type
        rank = len(result_type.get_shape()) if isinstance(result_type, MemRefType) else len(shape)
        while len(shape) > rank and 1 in shape:
            drop = shape.index(1)
            del shape[drop]
            del strides[drop]
        result = replace(
            source, shape=tuple(shape), strides=tuple(strides), name=name_of(op.results[0])
        )
        return (_with_offset(result, offset, lanes),)

    @impl(memref.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: Interpreter, op: memref.CollapseShapeOp, args: PythonValues
    ) -> PythonValues:
        source = view(op, args, 0)
        shape: list[int] = []
        strides: list[int] = []
        for group in _reassociation(op):
            dims = [d for d in group if source.shape[d] != 1]
            for outer, inner in pairwise(dims):
                if source.strides[outer] != source.strides[inner] * source.shape[inner]:
                    raise EvaluationError(
                        f"'{op.name}': axes {list(group)} of {source.name} are not contiguous"
                    )
            shape.append(prod(source.shape[d] for d in group))
            strides.append(source.strides[dims[-1]] if dims else source.lanes)
        result = replace(
            source, shape=tuple(shape), strides=tuple(strides), name=name_of(op.results[0])
        )
        return (result,)

    @impl(memref.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: Interpreter, op: memref.ExpandShapeOp, args: PythonValues
    ) -> PythonValues:
        lanes = simt(interpreter).lanes
        source = view(op, args, 0)
        sizes = [num(op, args, i) for i in range(1, len(args))]
        output = _uniform_ints(op, _mixed(op, "static_output_shape", sizes, lanes), "output shape")
        strides = [0] * len(output)
        for axis, group in enumerate(_reassociation(op)):
            if prod(output[d] for d in group) != source.shape[axis]:
                raise EvaluationError(
                    f"'{op.name}': output extents {[output[d] for d in group]} do not "
                    f"multiply to extent {source.shape[axis]} of {source.name}"
                )
            step = source.strides[axis]
            for d in reversed(group):
                strides[d] = step
                step *= output[d]
        result = replace(
            source, shape=tuple(output), strides=tuple(strides), name=name_of(op.results[0])
        )
        return (result,)

    @impl(memref.CopyOp)
    def run_copy(
        self, interpreter: Interpreter, op: memref.CopyOp, args: PythonValues
    ) -> PythonValues:
        lanes = simt(interpreter).lanes
        source = view(op, args, 0)
        target = view(op, args, 1)
        if source.shape != target.shape or source.vshape != target.vshape:
            raise EvaluationError(
                f"'{op.name}': shapes {list(source.shape)} and {list(target.shape)} differ"
            )
        if not any_active(lanes):
            return ()
        flat, tail = whole_view_offsets(source, lanes)
        values = gather(source.storage, flat, lanes, tail, source.dtype)
        flat, tail = whole_view_offsets(target, lanes)
        what = f"'{op.name}'"
        scatter(target.storage, flat, values.astype(target.dtype), lanes, tail, target.dtype, what)
        return ()

    @impl(memref.DimOp)
    def run_dim(
        self, interpreter: Interpreter, op: memref.DimOp, args: PythonValues
    ) -> PythonValues:
        source = view(op, args, 0)
        axis = uniform_int(op, num(op, args, 1), simt(interpreter).lanes, "dimension")
        if not 0 <= axis < source.rank:
            raise EvaluationError(f"'{op.name}': no axis {axis} in {source.name}")
        return (np.asarray(source.shape[axis], dtype=np.int64),)


def _allocate(interpreter: Interpreter, op: Operation, args: PythonValues) -> View:
    """A zero-filled row-major buffer for `memref.alloc`/`alloca` (dynamic extents from
    `args`, which must be the same in all lanes)."""
    lanes = simt(interpreter).lanes
    memref_type = op.results[0].type
    if not isinstance(memref_type, MemRefType):
        raise EvaluationError(f"'{op.name}': expected a memref result")
    dynamic = iter(range(len(args)))
    shape: list[int] = []
    for extent in memref_type.get_shape():
        if extent >= 0:
            shape.append(extent)
            continue
        index = next(dynamic, None)
        if index is None:
            raise EvaluationError(f"'{op.name}': missing dynamic size")
        shape.append(uniform_int(op, num(op, args, index), lanes, "dynamic size"))
    element = memref_type.get_element_type()
    vshape = vector_shape(element)
    name = name_of(op.results[0])
    storage = new_storage(prod(shape) * prod(vshape), dtype_of(element), lanes, name)
    strides = row_major_strides(shape, prod(vshape))
    return View(storage, 0, tuple(shape), strides, vshape, dtype_of(element), name)


def _mixed(op: Operation, prop: str, operands: Sequence[Array], lanes: Lanes) -> list[int | Array]:
    """Static values of `prop` with DYNAMIC_INDEX entries taken from `operands` (as ints when
    they are the same in all active lanes, else as lane arrays)."""
    attr = op.properties.get(prop)
    if not isinstance(attr, DenseArrayBase):
        raise EvaluationError(f"'{op.name}': missing {prop}")
    dynamic = iter(operands)
    values: list[int | Array] = []
    for value in attr.get_values():
        if int(value) != DYNAMIC_INDEX:
            values.append(int(value))
            continue
        array = next(dynamic, None)
        if array is None:
            raise EvaluationError(f"'{op.name}': missing dynamic operand for {prop}")
        uniform = uniform_value(array, lanes)
        values.append(array if uniform is None else int(uniform))
    return values


def _uniform_ints(op: Operation, values: list[int | Array], prop: str) -> list[int]:
    """`values` as ints: sizes and strides must be the same in all lanes."""
    result: list[int] = []
    for value in values:
        if not isinstance(value, int):
            raise EvaluationError(f"'{op.name}': {prop} must be the same in all lanes")
        result.append(value)
    return result


def _offsets_sizes_strides(
    op: Operation, args: PythonValues, lanes: Lanes
) -> tuple[list[int | Array], list[int], list[int]]:
    """The mixed static/dynamic offsets (lane-dependent allowed), sizes and strides of a
    subview or reinterpret_cast."""
    counts = segments(op)
    operands = [num(op, args, i) for i in range(1, len(args))]
    groups = [
        operands[: counts[1]],
        operands[counts[1] : counts[1] + counts[2]],
        operands[counts[1] + counts[2] :],
    ]
    sizes = _mixed(op, "static_sizes", groups[1], lanes)
    strides = _mixed(op, "static_strides", groups[2], lanes)
    return (
        _mixed(op, "static_offsets", groups[0], lanes),
        _uniform_ints(op, sizes, "sizes"),
        _uniform_ints(op, strides, "strides"),
    )


def _with_offset(view: View, offset: int | Array, lanes: Lanes) -> View:
    """`view` with a new offset (an int, or an array over `lanes`)."""
    if isinstance(offset, int):
        return replace(view, offset=offset, offset_depth=0)
    uniform = uniform_value(np.asarray(offset), lanes)
    if uniform is not None:
        return replace(view, offset=int(uniform), offset_depth=0)
    return replace(view, offset=np.asarray(offset, dtype=np.int64), offset_depth=lanes.depth)


def _active_range(value: int | Array, lanes: Lanes) -> tuple[int, int]:
    """The smallest and largest value of `value` over the active lanes."""
    if isinstance(value, int):
        return (value, value)
    values = active_values(value, lanes)
    if values.size == 0:
        return (0, 0)
    return (int(values.min()), int(values.max()))


def _reassociation(op: Operation) -> list[list[int]]:
    attr = op.properties.get("reassociation")
    if not isinstance(attr, ArrayAttr):
        raise EvaluationError(f"'{op.name}': missing reassociation")
    groups: list[list[int]] = []
    for group in attr.data:
        members = getattr(group, "data", ())
        groups.append([int(m.value.data) for m in members if isinstance(m, IntegerAttr)])
    return groups
