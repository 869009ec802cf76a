"""Values, lanes and memory of the numpy reference evaluator (`physlayout.semantics.evaluator`).

Lanes
-----
The evaluator runs SIMT style: inside a parallel loop every SSA value is a numpy array over
the loop's iterations ("lanes"). A `Lanes` object describes the current lane space: its
extents (one axis per enclosing parallel loop dimension, outermost first) and an optional
boolean mask of the active lanes (inactive lanes come from masked `scf.if` branches and from
loops whose bounds differ between lanes). A numeric value used at lane depth `L` is an array
of exactly `L + V` dimensions, where `V` is the rank of its vector type (0 for scalars); lane
axes may have extent 1 when the value does not vary along them.

Memory
------
- `Storage` is a flat array of scalars (one per element, `lanes` per vector element). Storage
  allocated inside a parallel loop is private to each lane: its array carries the lane axes
  of its allocation point in front of the flat axis.
- `Handle` is a data handle (`!layout.ptr`): a storage and the vector lanes of its element.
- `View` is a buffer (`!layout.buffer` or `memref`): a storage, a scalar offset, a shape and
  scalar strides, and the vector shape of its element type (vector elements are stored
  contiguously, innermost). A `!layout.buffer` whose type has a pending transform is a
  *mapped* view (`LayoutMap`): its element `idx` is the element at `map(idx)` of the
  transformed shape, laid out row-major (storage is physical, as after `apply-layout` and
  `flatten-buffers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from math import prod
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
    VectorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.dialects.layout import BufferType, PtrType
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr

Array: TypeAlias = npt.NDArray[Any]
"""A numpy array of any dtype."""


class EvaluationError(DiagnosticException):
    """An error found while evaluating IR (bad argument, out-of-bounds access, ...)."""


class CheckFailed(EvaluationError):
    """A run-time assertion of the program failed (`cf.assert`, `layout.check`)."""


def check_flags(flags: Any, message: str) -> None:
    """The meaning of ``layout.check``: raise `CheckFailed` with `message` (and how many
    elements failed) unless every element of `flags` is non-zero."""
    array = np.asarray(flags)
    failed = int(array.size - np.count_nonzero(array))
    if failed:
        raise CheckFailed(
            f"assertion failed: {message} ({failed} of {array.size} elements)"
        )


# Types ------------------------------------------------------------------------------------


_INT_DTYPES: dict[int, np.dtype[Any]] = {
    1: np.dtype(np.bool_),
    8: np.dtype(np.int8),
    16: np.dtype(np.int16),
    32: np.dtype(np.int32),
    64: np.dtype(np.int64),
}
_UINT_DTYPES: dict[int, np.dtype[Any]] = {
    1: np.dtype(np.uint8),
    8: np.dtype(np.uint8),
    16: np.dtype(np.uint16),
    32: np.dtype(np.uint32),
    64: np.dtype(np.uint64),
}


def scalar_of(type_: Attribute) -> Attribute:
    """The scalar type of `type_` (its element type when it is a vector type)."""
    if isinstance(type_, VectorType):
        return type_.get_element_type()
    return type_


def vector_shape(type_: Attribute) -> tuple[int, ...]:
    """The shape of `type_` when it is a vector type, else `()`."""
    if isinstance(type_, VectorType):
        return tuple(type_.get_shape())
    return ()


def bit_width(type_: Attribute) -> int:
    """The bit width of an integer-like scalar type (`index` is 64 bits)."""
    scalar = scalar_of(type_)
    if isinstance(scalar, IndexType):
        return 64
    if isinstance(scalar, IntegerType):
        return scalar.width.data
    raise EvaluationError(f"evaluator: expected an integer type, got {scalar}")


def is_integer_like(type_: Attribute) -> bool:
    """True for `index`, `iN` and vectors of them."""
    return isinstance(scalar_of(type_), IndexType | IntegerType)


def dtype_of(type_: Attribute) -> np.dtype[Any]:
    """The numpy dtype that holds values of `type_` (or of its vector elements).

    `index` is int64; `i1` is bool; `iN` and `siN` are the signed integer of N bits, `uiN`
    (N > 1) the unsigned one, so a `ui8` holding 200 reads as 200; f16/f32/f64 are the IEEE
    float types.
    """
    scalar = scalar_of(type_)
    if isinstance(scalar, IndexType):
        return np.dtype(np.int64)
    if isinstance(scalar, IntegerType):
        width = scalar.width.data
        if width not in _INT_DTYPES:
            raise EvaluationError(f"evaluator: unsupported integer width i{width}")
        if width > 1 and scalar.signedness.data == Signedness.UNSIGNED:
            return _UINT_DTYPES[width]
        return _INT_DTYPES[width]
    if isinstance(scalar, Float16Type):
        return np.dtype(np.float16)
    if isinstance(scalar, Float32Type):
        return np.dtype(np.float32)
    if isinstance(scalar, Float64Type):
        return np.dtype(np.float64)
    raise EvaluationError(f"evaluator: unsupported element type {scalar}")


def unsigned_dtype(type_: Attribute) -> np.dtype[Any]:
    """The unsigned numpy dtype of the width of an integer-like type."""
    return _UINT_DTYPES[bit_width(type_)]


def as_signed(x: Array, type_: Attribute) -> Array:
    """`x` (of integer-like `type_`) read as two's complement signed numbers (`i1` true is -1)."""
    if x.dtype == np.bool_:
        return -x.astype(np.int8)
    if x.dtype.kind == "u":
        return x.view(_INT_DTYPES[x.dtype.itemsize * 8])
    return x


def as_unsigned(x: Array, type_: Attribute) -> Array:
    """`x` (of integer-like `type_`) read as unsigned numbers."""
    return x.astype(unsigned_dtype(type_))


def wrap(x: Array | Any, type_: Attribute) -> Array:
    """`x` reduced modulo 2**width to the canonical dtype of integer-like `type_`."""
    x = np.asarray(x)
    dtype = dtype_of(type_)
    if dtype == np.bool_:
        return (x.astype(np.int64) & 1).astype(np.bool_)
    return x.astype(dtype)


def memory_element(type_: Attribute) -> Attribute | None:
    """The element type of a buffer, memref or data handle type, else None."""
    if isinstance(type_, BufferType | PtrType):
        return type_.element_type
    if isinstance(type_, MemRefType):
        return type_.get_element_type()
    return None


def is_memory_type(type_: Attribute) -> bool:
    """True for `!layout.buffer`, `!layout.ptr` and `memref` types."""
    return memory_element(type_) is not None


# Lanes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lanes:
    """The lane space of the code being evaluated.

    `shape` holds one extent per lane axis; `mask` is None when every lane is active, else a
    boolean array of `len(shape)` dimensions broadcastable to `shape`.
    """

    shape: tuple[int, ...]
    mask: Array | None
    depth: int = field(init=False)
    """The number of lane axes."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "depth", len(self.shape))

    def with_mask(self, mask: Array | None) -> Lanes:
        """The same lanes with `mask` (None: all active) combined with the current mask."""
        return Lanes(self.shape, and_masks(self.mask, mask))

    def expand(self, extents: Sequence[int], mask: Array | None) -> Lanes:
        """Lanes with new innermost axes of `extents`; `mask` is over the new depth."""
        outer = self.mask
        if outer is not None:
            outer = outer.reshape(outer.shape + (1,) * len(extents))
        return Lanes(self.shape + tuple(extents), and_masks(outer, mask))


def and_masks(a: Array | None, b: Array | None) -> Array | None:
    """The conjunction of two optional masks (None means all lanes)."""
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def to_depth(x: Array, depth: int, target: int) -> Array:
    """A value defined at lane depth `depth`, seen at lane depth `target >= depth`."""
    if depth == target:
        return x
    shape = x.shape
    return x.reshape(shape[:depth] + (1,) * (target - depth) + shape[depth:])


def with_trailing(x: Array, count: int) -> Array:
    """`x` with `count` unit axes appended (to combine lane values with vector values)."""
    if count == 0:
        return x
    return x.reshape(x.shape + (1,) * count)


def active_values(x: Array, lanes: Lanes) -> Array:
    """The elements of lane value `x` (no vector axes) at the active lanes."""
    if lanes.mask is None:
        return x.reshape(-1)
    shape = np.broadcast_shapes(x.shape, lanes.mask.shape)
    return np.broadcast_to(x, shape)[np.broadcast_to(lanes.mask, shape)]


def uniform_value(x: Array, lanes: Lanes) -> Any | None:
    """The common value of lane value `x` over the active lanes, or None when it varies.

    Returns None as well when no lane is active.
    """
    if x.size == 1:
        return x.reshape(-1)[0].item()
    values = active_values(x, lanes)
    if values.size == 0:
        return None
    first = values[0]
    if bool(np.all(values == first)):
        return first.item()
    return None


def any_active(lanes: Lanes) -> bool:
    """True when at least one lane is active."""
    return lanes.mask is None or bool(np.any(lanes.mask))


# Memory -----------------------------------------------------------------------------------


@dataclass(eq=False)
class Storage:
    """Flat scalar storage. `data` has shape `lane_shape + (size,)`: the leading axes make the
    storage private to each lane of the parallel loops around its allocation."""

    data: Array
    name: str

    @property
    def private_depth(self) -> int:
        """How many lane axes lead the data: 0 for storage shared by every lane, k for an
        allocation made under k nested parallel lanes (one copy per lane)."""
        return self.data.ndim - 1

    @property
    def size(self) -> int:
        """The number of scalars of one copy of the storage (its last axis)."""
        return self.data.shape[-1]


@dataclass(frozen=True, eq=False)
class Handle:
    """A data handle: `storage` from scalar `base` on, whose element type has `lanes`
    scalars per element."""

    storage: Storage
    lanes: int
    base: int = 0


@dataclass(frozen=True, eq=False)
class LayoutMap:
    """A buffer type's pending transforms as the evaluator addresses storage: logical element
    `idx` (in `layout.logical_shape`) is the element at row-major position `map(idx)` of
    the transformed shape `layout.shape`. This is what `apply-layout` (then
    `flatten-buffers`, whose separator groups are row-major too) makes of the buffer, so
    every view of the same storage (a physical alias, a second transformed declaration)
    sees the scalars the compiled program sees.

    The position is computed from the maps as written in the type, composed by substitution
    only: the reference does not depend on the simplifier that the passes use."""

    layout: PendingLayout
    maps: tuple[IndexMap, ...]

    @cached_property
    def _position(self) -> tuple[tuple[str, ...], Expr]:
        names = self.maps[0].initial_indices
        exprs: list[Expr] = [Dim(name) for name in names]
        for index_map in self.maps:
            point = dict(zip(index_map.initial_indices, exprs, strict=True))
            exprs = [e.substitute(point) for e in index_map.final_indices]
        flat: Expr = Const(0)
        for expr, stride in zip(exprs, row_major_strides(self.layout.shape, 1), strict=True):
            flat = flat + expr * stride
        return names, flat

    def position(self, indices: Sequence[Array | int]) -> Array | int:
        """The row-major element position in the transformed shape of logical `indices`
        (ints or broadcastable int64 arrays, assumed in bounds)."""
        names, flat = self._position
        return flat.evaluate(dict(zip(names, indices, strict=True)))

    @cached_property
    def logical_positions(self) -> Array:
        """`position` of every logical element, in row-major logical order (flat int64)."""
        logical = self.layout.logical_shape
        grids = list(np.indices(logical, dtype=np.int64, sparse=True))
        flat = np.asarray(self.position(grids), dtype=np.int64)
        return np.broadcast_to(flat, logical).reshape(-1)

    @cached_property
    def padding_positions(self) -> Array:
        """The row-major element positions of the transformed shape that no logical
        element maps to (empty without padding)."""
        if self.layout.padding is None:
            return np.zeros((0,), dtype=np.int64)
        unused = np.ones(prod(self.layout.shape), dtype=np.bool_)
        unused[self.logical_positions] = False
        return np.flatnonzero(unused).astype(np.int64)


@lru_cache(maxsize=1024)
def _layout_map(buffer_type: BufferType) -> LayoutMap | None:
    layout = PendingLayout.of(buffer_type)
    if layout is None:
        return None
    return LayoutMap(layout, tuple(t.index_map for t in buffer_type.get_transforms()))


def layout_map_of(type_: Attribute, what: str) -> LayoutMap | None:
    """The mapped addressing of a `!layout.buffer` type with a pending transform (None for
    other types). A transform `apply-layout` would refuse raises EvaluationError."""
    if not isinstance(type_, BufferType) or not type_.get_transforms():
        return None
    try:
        return _layout_map(type_)
    except ValueError as err:
        raise EvaluationError(f"{what}: {err}") from None


def fills_padding(buffer: SSAValue) -> bool:
    """True when the padding of `buffer` is filled with its pad value where it is declared
    (a function parameter: on entry; a `layout.decl_buffer`: right after it).

    That is `apply-layout`'s contract: a buffer with a padded pending transform that is the
    target of a `layout.store` in the function gets its padding filled.
    """
    type_ = buffer.type
    if not isinstance(type_, BufferType) or type_.get_pad_value() is None:
        return False
    if not any(use.operation.name == "layout.store" and use.index == 1 for use in buffer.uses):
        return False
    layout_map = layout_map_of(type_, "evaluator")
    return layout_map is not None and layout_map.layout.padding is not None


@dataclass(frozen=True, eq=False)
class View:
    """A buffer: element `idx` starts at scalar `offset + sum(idx[k] * strides[k])` of
    `storage` and holds `prod(vshape)` contiguous scalars read as dtype `dtype`.

    A mapped view (`layout` is not None) addresses `layout.position(idx)` times the lanes
    per element: `shape` is the logical shape (indices are checked against it) and
    `strides` are the row-major strides of the transformed shape (`addressed_shape`).

    The offset may differ between lanes (a `memref.subview` at a lane-dependent position):
    it is then an array over the lanes of depth `offset_depth`. Shapes and strides are the
    same in all lanes.

    `base` is the scalar offset of the data handle the buffer was declared over (what
    `layout.data` of it yields): that handle's base, or, for a function parameter, the
    parameter's own offset (a callee addresses its parameter from its first element);
    None when that offset differs between lanes."""

    storage: Storage
    offset: int | Array
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    vshape: tuple[int, ...]
    dtype: np.dtype[Any]
    name: str
    offset_depth: int = 0
    base: int | None = 0
    layout: LayoutMap | None = None

    def as_parameter(self) -> View:
        """This buffer bound to a function parameter: its handle starts at its offset."""
        base = self.offset if isinstance(self.offset, int) else None
        return replace(self, base=base)

    @property
    def rank(self) -> int:
        """The number of axes of the view's (logical) shape."""
        return len(self.shape)

    @property
    def addressed_shape(self) -> tuple[int, ...]:
        """The shape `strides` apply to: the transformed shape of a mapped view."""
        return self.shape if self.layout is None else self.layout.layout.shape

    def address(self, indices: Sequence[Array | int]) -> Array | int:
        """The scalar offset of element `indices` from the view's offset (elementwise for
        broadcastable index arrays); indices are not checked."""
        if self.layout is not None:
            return self.layout.position(indices) * self.lanes
        flat: Array | int = 0
        for index, stride in zip(indices, self.strides, strict=True):
            flat = flat + index * stride
        return flat

    @property
    def lanes(self) -> int:
        """Scalars per element: the product of the element's vector shape (1 for scalars)."""
        return prod(self.vshape)

    def lane_offset(self, lanes: Lanes) -> int | Array:
        """The offset, as a lane array at the depth of `lanes` when it varies."""
        if isinstance(self.offset, int):
            return self.offset
        return to_depth(self.offset, self.offset_depth, lanes.depth)

    def span(self, lanes: Lanes) -> tuple[int, int]:
        """The lowest and one past the highest scalar offset the view can touch (over the
        active lanes)."""
        if isinstance(self.offset, int):
            low = high = self.offset
        else:
            values = active_values(np.asarray(self.lane_offset(lanes)), lanes)
            if values.size == 0:
                return (0, 0)
            low, high = int(values.min()), int(values.max())
        for extent, stride in zip(self.addressed_shape, self.strides, strict=True):
            if extent == 0:
                return (low, low)
            reach = (extent - 1) * stride
            low += min(reach, 0)
            high += max(reach, 0)
        return (low, high + self.lanes)

    def is_injective(self) -> bool:
        """True when distinct indices always address disjoint elements."""
        pairs = zip(self.addressed_shape, self.strides, strict=True)
        dims = sorted((abs(s), e) for e, s in pairs if e > 1)
        reach = self.lanes
        for stride, extent in dims:
            if stride < reach:
                return False
            reach = stride * extent
        return True


def row_major_strides(shape: Sequence[int], lanes: int) -> tuple[int, ...]:
    """Scalar strides of a row-major layout of `shape` with `lanes` scalars per element."""
    strides: list[int] = []
    step = lanes
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def check_view(view: View, what: str, lanes: Lanes) -> View:
    """`view` when it lies inside its storage, else an EvaluationError naming `what`."""
    low, high = view.span(lanes)
    if low < 0 or high > view.storage.size:
        raise EvaluationError(
            f"{what}: view {view.name} of shape {list(view.shape)} covers scalars "
            f"[{low}, {high}) outside its storage of {view.storage.size} scalars"
        )
    if view.dtype.itemsize != view.storage.data.dtype.itemsize:
        raise EvaluationError(
            f"{what}: element type {view.dtype} of view {view.name} does not match its "
            f"storage of {view.storage.data.dtype}"
        )
    return view


def new_storage(size: int, dtype: np.dtype[Any], lanes: Lanes, name: str) -> Storage:
    """Zero-filled storage of `size` scalars, private to each lane of `lanes`."""
    return Storage(np.zeros((*lanes.shape, size), dtype=dtype), name)
