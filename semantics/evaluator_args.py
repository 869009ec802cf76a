"""Conversion between Python values and evaluator values at a function boundary.

See `physlayout.semantics.evaluator` for the argument and result conventions.
"""

from __future__ import annotations

from math import prod
from typing import Any, TypeAlias

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, SSAValue

from physlayout.dialects.layout import BufferType, PtrType
from physlayout.semantics.evaluator_access import (
    view_as_array,
)
from physlayout.semantics.evaluator_frame import Entry
from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    Handle,
    LayoutMap,
    Storage,
    View,
    dtype_of,
    layout_map_of,
    row_major_strides,
    vector_shape,
    wrap,
)

ArgValue: TypeAlias = "np.ndarray[Any, Any] | np.generic[Any] | int | float | bool"
"""A function argument on the Python side (numpy scalars are accepted for scalars)."""
ResultValue: TypeAlias = "np.ndarray[Any, Any] | int | float | bool"
"""A function result on the Python side."""


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
        Storage(data, label),
        0,
        layout.logical_shape,
        strides,
        vshape,
        array.dtype,
        label,
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
    """The Python value of a function result (buffers alias their storage)."""
    if isinstance(entry, View):
        return view_as_array(entry)
    if isinstance(entry, Handle):
        return entry.storage.data
    if entry.ndim == 0:
        return entry.item()
    return np.array(entry)
