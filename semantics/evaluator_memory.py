"""Memory ops of the numpy reference evaluator: `layout`, `memref`, `affine` and `vector`
accesses, views and allocations, and the conversion of function arguments and results.

See `physlayout.semantics.evaluator` for the storage model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise
from math import prod
from typing import Any, TypeAlias

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from physlayout.dialects.layout import BufferType, DeclBufferOp, PtrType
from physlayout.semantics.evaluator_frame import (
    Entry,
    Frame,
    Handler,
    Step,
    apply_map,
    map_prop,
    name_of,
    segments,
    uniform_int,
)
from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    Handle,
    Lanes,
    LayoutMap,
    Storage,
    View,
    active_values,
    any_active,
    check_view,
    dtype_of,
    element_offsets,
    fills_padding,
    gather,
    is_scalar_access,
    layout_map_of,
    memory_element,
    new_storage,
    read_scalar,
    row_major_strides,
    scatter,
    uniform_value,
    vector_shape,
    view_as_array,
    whole_view_offsets,
    with_trailing,
    wrap,
    write_scalar,
)

ArgValue: TypeAlias = "np.ndarray[Any, Any] | np.generic[Any] | int | float | bool"
"""A function argument on the Python side (numpy scalars are accepted for scalars)."""
ResultValue: TypeAlias = "np.ndarray[Any, Any] | int | float | bool"
"""A function result on the Python side."""


# Memory access ------------------------------------------------------------------------


def access_width(value_type: Attribute, view: View) -> int:
    """Elements an access of `value_type` touches along the innermost axis."""
    if view.vshape or not isinstance(value_type, VectorType):
        return 1
    shape = value_type.get_shape()
    return shape[-1] if shape else 1


def read(op: Operation, view: View, indices: Sequence[Array], lanes: Lanes) -> Array:
    width = access_width(op.results[0].type, view)
    if is_scalar_access(view, indices, lanes):
        return read_scalar(view, indices, width, f"'{op.name}'")
    flat, tail = element_offsets(view, indices, width, lanes, f"'{op.name}'")
    return gather(view.storage, flat, lanes, tail, view.dtype)


def write(
    op: Operation,
    value_ssa: SSAValue,
    view: View,
    indices: Sequence[Array],
    frame: Frame,
    lanes: Lanes,
) -> None:
    if not any_active(lanes):
        return
    value = frame.num(value_ssa, lanes)
    width = access_width(value_ssa.type, view)
    if is_scalar_access(view, indices, lanes):
        write_scalar(view, indices, width, value.astype(view.dtype), f"'{op.name}'")
        return
    flat, tail = element_offsets(view, indices, width, lanes, f"'{op.name}'")
    scatter(view.storage, flat, value.astype(view.dtype), lanes, tail, view.dtype, f"'{op.name}'")


def load(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    view = frame.view(node.operands[0], f"'{op.name}'")
    indices = [frame.num(v, lanes) for v in node.operands[1:]]
    frame.set(node.results[0], read(op, view, indices, lanes), lanes.depth)


def store(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    view = frame.view(node.operands[1], f"'{op.name}'")
    indices = [frame.num(v, lanes) for v in node.operands[2:]]
    write(op, node.operands[0], view, indices, frame, lanes)


def affine_load(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    view = frame.view(node.operands[0], f"'{op.name}'")
    operands = [frame.num(v, lanes) for v in node.operands[1:]]
    indices = apply_map(map_prop(op, "map"), operands)
    frame.set(node.results[0], read(op, view, indices, lanes), lanes.depth)


def affine_store(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    view = frame.view(node.operands[1], f"'{op.name}'")
    operands = [frame.num(v, lanes) for v in node.operands[2:]]
    indices = apply_map(map_prop(op, "map"), operands)
    write(op, node.operands[0], view, indices, frame, lanes)


# layout ops ---------------------------------------------------------------------------


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


def layout_allocate(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    ptr_type = node.results[0].type
    if not isinstance(ptr_type, PtrType):
        raise EvaluationError(f"'{op.name}': expected a !layout.ptr result")
    lanes_per = prod(vector_shape(ptr_type.element_type))
    storage = new_storage(
        allocated_elements(op) * lanes_per,
        dtype_of(ptr_type.element_type),
        lanes,
        name_of(node.results[0]),
    )
    frame.set(node.results[0], Handle(storage, lanes_per), lanes.depth)


def layout_decl_buffer(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    handle = frame.mem(node.operands[0], f"'{op.name}'")
    if not isinstance(handle, Handle):
        raise EvaluationError(f"'{op.name}': operand is not a data handle")
    buffer_type = node.results[0].type
    if not isinstance(buffer_type, BufferType):
        raise EvaluationError(f"'{op.name}': expected a !layout.buffer result")
    offset_attr = op.properties.get("elem_offset")
    offset = getattr(offset_attr, "data", 0)
    vshape = vector_shape(buffer_type.element_type)
    shape = buffer_type.get_shape()
    layout_map = layout_map_of(buffer_type, f"'{op.name}'")
    addressed = shape if layout_map is None else layout_map.layout.shape
    view = View(
        handle.storage,
        handle.base + offset * handle.lanes,
        shape,
        row_major_strides(addressed, prod(vshape)),
        vshape,
        dtype_of(buffer_type.element_type),
        name_of(node.results[0]),
        base=handle.base,
        layout=layout_map,
    )
    check_view(view, f"'{op.name}'", lanes)
    if fills_padding(node.results[0]):
        fill_padding(view, lanes, f"'{op.name}'")
    frame.set(node.results[0], view, lanes.depth)


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


def layout_data(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    view = frame.view(node.operands[0], f"'{op.name}'")
    ptr_type = node.results[0].type
    element = memory_element(ptr_type)
    lanes_per = prod(vector_shape(element)) if element is not None else 1
    if view.base is None:
        raise EvaluationError(
            f"'{op.name}': the handle of {view.name}, a parameter bound to a buffer at a "
            "lane-dependent offset, is not supported"
        )
    frame.set(node.results[0], Handle(view.storage, lanes_per, view.base), lanes.depth)


# memref ops ---------------------------------------------------------------------------


def memref_alloc(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    memref_type = node.results[0].type
    if not isinstance(memref_type, MemRefType):
        raise EvaluationError(f"'{op.name}': expected a memref result")
    dynamic = iter(node.operands)
    shape: list[int] = []
    for extent in memref_type.get_shape():
        if extent >= 0:
            shape.append(extent)
            continue
        size = next(dynamic, None)
        if size is None:
            raise EvaluationError(f"'{op.name}': missing dynamic size")
        shape.append(uniform_int(op, frame.num(size, lanes), lanes, "dynamic size"))
    element = memref_type.get_element_type()
    vshape = vector_shape(element)
    name = name_of(node.results[0])
    storage = new_storage(prod(shape) * prod(vshape), dtype_of(element), lanes, name)
    view = View(
        storage,
        0,
        tuple(shape),
        row_major_strides(shape, prod(vshape)),
        vshape,
        dtype_of(element),
        name,
    )
    frame.set(node.results[0], view, lanes.depth)


def memref_same_view(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    if node.results:
        frame.set(node.results[0], frame.view(node.operands[0], f"'{op.name}'"), lanes.depth)


def _mixed(
    op: Operation,
    prop: str,
    operands: Sequence[SSAValue],
    frame: Frame,
    lanes: Lanes,
) -> list[int | Array]:
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
        operand = next(dynamic, None)
        if operand is None:
            raise EvaluationError(f"'{op.name}': missing dynamic operand for {prop}")
        array = frame.num(operand, lanes)
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
    op: Operation, frame: Frame, lanes: Lanes
) -> tuple[list[int | Array], list[int], list[int]]:
    """The mixed static/dynamic offsets (lane-dependent allowed), sizes and strides of a
    subview or reinterpret_cast."""
    counts = segments(op)
    operands = list(op.operands[1:])
    groups = [
        operands[: counts[1]],
        operands[counts[1] : counts[1] + counts[2]],
        operands[counts[1] + counts[2] :],
    ]
    sizes = _mixed(op, "static_sizes", groups[1], frame, lanes)
    strides = _mixed(op, "static_strides", groups[2], frame, lanes)
    return (
        _mixed(op, "static_offsets", groups[0], frame, lanes),
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


def memref_reinterpret_cast(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    source = frame.view(node.operands[0], f"'{op.name}'")
    offsets, sizes, strides = _offsets_sizes_strides(op, frame, lanes)
    lanes_per = source.lanes
    view = View(
        source.storage,
        0,
        tuple(sizes),
        tuple(s * lanes_per for s in strides),
        source.vshape,
        source.dtype,
        name_of(node.results[0]),
    )
    view = _with_offset(view, offsets[0] * lanes_per, lanes)
    frame.set(node.results[0], check_view(view, f"'{op.name}'", lanes), lanes.depth)


def memref_subview(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    source = frame.view(node.operands[0], f"'{op.name}'")
    offsets, sizes, steps = _offsets_sizes_strides(op, frame, lanes)
    for axis, (start, size, step) in enumerate(zip(offsets, sizes, steps, strict=True)):
        low, high = _active_range(start, lanes)
        last = high + (size - 1) * step if size > 0 else high
        if low < 0 or (size > 0 and last >= source.shape[axis]):
            raise EvaluationError(
                f"'{op.name}': subview [{low}..{high} +{size} *{step}] leaves axis {axis} of "
                f"{source.name} (extent {source.shape[axis]})"
            )
    offset: int | Array = source.lane_offset(lanes)
    for start, stride in zip(offsets, source.strides, strict=True):
        offset = offset + start * stride
    shape = list(sizes)
    strides = [s * t for s, t in zip(source.strides, steps, strict=True)]
    result_type = node.results[0].type
    rank = len(result_type.get_shape()) if isinstance(result_type, MemRefType) else len(shape)
    while len(shape) > rank and 1 in shape:
        drop = shape.index(1)
        del shape[drop]
        del strides[drop]
    view = replace(
        source, shape=tuple(shape), strides=tuple(strides), name=name_of(node.results[0])
    )
    frame.set(node.results[0], _with_offset(view, offset, lanes), lanes.depth)


def memref_collapse_shape(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    source = frame.view(node.operands[0], f"'{op.name}'")
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
    view = replace(
        source, shape=tuple(shape), strides=tuple(strides), name=name_of(node.results[0])
    )
    frame.set(node.results[0], view, lanes.depth)


def memref_expand_shape(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    source = frame.view(node.operands[0], f"'{op.name}'")
    output = _uniform_ints(
        op, _mixed(op, "static_output_shape", node.operands[1:], frame, lanes), "output shape"
    )
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
    view = replace(
        source, shape=tuple(output), strides=tuple(strides), name=name_of(node.results[0])
    )
    frame.set(node.results[0], view, lanes.depth)


def memref_copy(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    source = frame.view(node.operands[0], f"'{op.name}'")
    target = frame.view(node.operands[1], f"'{op.name}'")
    if source.shape != target.shape or source.vshape != target.vshape:
        raise EvaluationError(
            f"'{op.name}': shapes {list(source.shape)} and {list(target.shape)} differ"
        )
    if not any_active(lanes):
        return
    flat, tail = whole_view_offsets(source, lanes)
    values = gather(source.storage, flat, lanes, tail, source.dtype)
    flat, tail = whole_view_offsets(target, lanes)
    scatter(
        target.storage,
        flat,
        values.astype(target.dtype),
        lanes,
        tail,
        target.dtype,
        f"'{op.name}'",
    )


def memref_dim(node: Step, frame: Frame, lanes: Lanes) -> None:
    op = node.op
    source = frame.view(node.operands[0], f"'{op.name}'")
    axis = uniform_int(op, frame.num(node.operands[1], lanes), lanes, "dimension")
    if not 0 <= axis < source.rank:
        raise EvaluationError(f"'{op.name}': no axis {axis} in {source.name}")
    frame.set(node.results[0], np.asarray(source.shape[axis], dtype=np.int64), 0)


def _reassociation(op: Operation) -> list[list[int]]:
    attr = op.properties.get("reassociation")
    if not isinstance(attr, ArrayAttr):
        raise EvaluationError(f"'{op.name}': missing reassociation")
    groups: list[list[int]] = []
    for group in attr.data:
        members = getattr(group, "data", ())
        groups.append([int(m.value.data) for m in members if isinstance(m, IntegerAttr)])
    return groups


def convert_arg(value: Any, arg: SSAValue, index: int) -> Entry:
    """The evaluator value of a Python argument for block argument `arg`."""
    type_ = arg.type
    label = f"%{arg.name_hint}" if arg.name_hint else f"argument #{index}"
    if isinstance(type_, BufferType | MemRefType):
        return _buffer_arg(value, type_, label)
    if isinstance(type_, PtrType):
        array = _contiguous(value, dtype_of(type_.element_type), label)
        storage = Storage(array.reshape(-1), label)
        return Handle(storage, prod(vector_shape(type_.element_type)))
    return _scalar_arg(value, type_, label)


def _contiguous(value: Any, dtype: np.dtype[Any], label: str) -> Array:
    if not isinstance(value, np.ndarray):
        raise EvaluationError(f"{label}: expected a numpy array, got {type(value).__name__}")
    array: Array = value
    if array.dtype != dtype:
        raise EvaluationError(f"{label}: expected dtype {dtype}, got {array.dtype}")
    if not array.flags.c_contiguous:
        raise EvaluationError(f"{label}: the array must be C-contiguous")
    return array


def _buffer_arg(value: Any, type_: BufferType | MemRefType, label: str) -> View:
    element = type_.element_type if isinstance(type_, BufferType) else type_.get_element_type()
    shape = type_.get_shape()
    vshape = vector_shape(element)
    array = _contiguous(value, dtype_of(element), label)
    expected = tuple("?" if e < 0 else e for e in shape) + vshape
    actual = array.shape
    if len(actual) != len(expected) or any(
        e != "?" and e != a for e, a in zip(expected, actual, strict=True)
    ):
        raise EvaluationError(
            f"{label}: expected an array of shape {expected} for {type_}, got {actual}"
        )
    logical = tuple(actual[: len(shape)])
    lanes = prod(vshape)
    layout_map = layout_map_of(type_, label)
    if layout_map is None:
        storage = Storage(array.reshape(-1), label)
        return View(
            storage, 0, logical, row_major_strides(logical, lanes), vshape, array.dtype, label
        )
    return _mapped_arg(array, layout_map, vshape, label)


def _mapped_arg(array: Array, layout_map: LayoutMap, vshape: tuple[int, ...], label: str) -> View:
    """A mapped view over new physical storage holding the logical `array` (padding holds
    the pad value, as the OpenCL runtime uploads it); `write_back` copies it back."""
    layout = layout_map.layout
    lanes = prod(vshape)
    pad = layout.pad_value if layout.pad_value is not None else 0
    data = np.full((prod(layout.shape), lanes), pad).astype(array.dtype)
    data[layout_map.logical_positions] = array.reshape(-1, lanes)
    data = data.reshape(-1)
    data.flags.writeable = array.flags.writeable
    strides = row_major_strides(layout.shape, lanes)
    return View(
        Storage(data, label), 0, layout.logical_shape, strides, vshape, array.dtype, label,
        layout=layout_map,
    )


def write_back(value: Any, entry: Entry) -> None:
    """Copy the logical contents of a mapped argument view back into the caller's array."""
    if not isinstance(entry, View) or entry.layout is None:
        return
    if isinstance(value, np.ndarray) and value.flags.writeable:
        np.copyto(value, view_as_array(entry))


def _scalar_arg(value: Any, type_: Attribute, label: str) -> Array:
    dtype = dtype_of(type_)
    array = np.asarray(value)
    if array.shape != vector_shape(type_):
        raise EvaluationError(
            f"{label}: expected shape {vector_shape(type_)} for {type_}, got {array.shape}"
        )
    if dtype.kind in "biu":
        if array.dtype.kind not in "biu":
            raise EvaluationError(f"{label}: expected an integer for {type_}, got {value!r}")
        return wrap(array.astype(np.int64) if array.dtype != np.uint64 else array, type_)
    if array.dtype.kind not in "biuf":
        raise EvaluationError(f"{label}: expected a number for {type_}, got {value!r}")
    return array.astype(dtype)


def convert_result(entry: Entry) -> ResultValue:
    if isinstance(entry, View):
        return view_as_array(entry)
    if isinstance(entry, Handle):
        return entry.storage.data
    if entry.ndim == 0:
        return entry.item()
    return np.array(entry)


MEMORY_HANDLERS: dict[str, Handler] = {
    "affine.load": affine_load,
    "affine.vector_load": affine_load,
    "affine.store": affine_store,
    "affine.vector_store": affine_store,
    "layout.allocate": layout_allocate,
    "layout.decl_buffer": layout_decl_buffer,
    "layout.data": layout_data,
    "layout.load": load,
    "layout.store": store,
    "memref.load": load,
    "memref.store": store,
    "vector.load": load,
    "vector.store": store,
    "memref.alloc": memref_alloc,
    "memref.alloca": memref_alloc,
    "memref.dealloc": lambda node, frame, lanes: None,
    "memref.cast": memref_same_view,
    "memref.memory_space_cast": memref_same_view,
    "memref.assume_alignment": memref_same_view,
    "memref.reinterpret_cast": memref_reinterpret_cast,
    "memref.subview": memref_subview,
    "memref.collapse_shape": memref_collapse_shape,
    "memref.expand_shape": memref_expand_shape,
    "memref.copy": memref_copy,
    "memref.dim": memref_dim,
}
"""Handlers of the memory ops, by op name."""
