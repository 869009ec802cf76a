"""Addressing of the reference evaluator: the scalar offsets of accesses over lanes,
gathers and scatters at the active lanes, and the fast paths of accesses outside lanes.

Indices are checked per axis against the view's shape, for active lanes only; when several
lanes write one scalar, the last lane in row-major lane order wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    Lanes,
    Storage,
    View,
    row_major_strides,
    with_trailing,
)


def _lane_indices(storage: Storage, lanes: Lanes, tail: int) -> tuple[Array, ...]:
    """Index arrays selecting the current lane's copy of private storage."""
    depth = storage.private_depth
    if depth > lanes.depth:
        raise EvaluationError(
            f"evaluator: storage {storage.name} is private to lanes that are not active here"
        )
    result: list[Array] = []
    for axis in range(depth):
        shape = [1] * (lanes.depth + tail)
        shape[axis] = storage.data.shape[axis]
        result.append(np.arange(storage.data.shape[axis]).reshape(shape))
    return tuple(result)


def gather(storage: Storage, flat: Array, lanes: Lanes, tail: int, dtype: np.dtype[Any]) -> Array:
    """Read `storage` at scalar offsets `flat` (lane axes, then `tail` element axes)."""
    data = storage.data if storage.data.dtype == dtype else storage.data.view(dtype)
    if storage.private_depth == 0:
        return data[flat]
    return data[(*_lane_indices(storage, lanes, tail), flat)]


def scatter(
    storage: Storage,
    flat: Array,
    values: Array,
    lanes: Lanes,
    tail: int,
    dtype: np.dtype[Any],
    what: str,
) -> None:
    """Write `values` to `storage` at scalar offsets `flat` for the active lanes.

    When several lanes write the same scalar, the last lane in row-major lane order wins.
    """
    if not storage.data.flags.writeable:
        raise EvaluationError(f"{what}: storage {storage.name} is read-only")
    data = storage.data if storage.data.dtype == dtype else storage.data.view(dtype)
    index: tuple[Array, ...] = (*_lane_indices(storage, lanes, tail), flat)
    shape = np.broadcast_shapes(values.shape, *(i.shape for i in index))
    index = tuple(np.broadcast_to(i, shape) for i in index)
    full = np.broadcast_to(values, shape)
    if lanes.mask is not None:
        select = np.broadcast_to(with_trailing(lanes.mask, tail), shape)
        data[tuple(i[select] for i in index)] = full[select]
        return
    data[tuple(i.reshape(-1) for i in index)] = full.reshape(-1)


def element_offsets(
    view: View, indices: Sequence[Array], width: int, lanes: Lanes, what: str
) -> tuple[Array, int]:
    """Scalar offsets of the elements at `indices` (arrays over the lanes) and their tail rank.

    `width > 1` reads `width` consecutive elements along the innermost axis (a vector access
    of a scalar buffer). Indices are checked per axis against the view's shape, for active
    lanes only (inactive lanes are redirected to index 0). The result has the lane axes,
    then the tail axes: `view.vshape`, or `(width,)` for a wide access, or none.
    """
    if len(indices) != view.rank:
        raise EvaluationError(f"{what}: {len(indices)} indices for {view.name} of rank {view.rank}")
    indices = [np.asarray(i, dtype=np.int64) for i in indices]
    _check_bounds(view, indices, width, lanes, what)
    if lanes.mask is not None:
        indices = [np.where(lanes.mask, i, 0) for i in indices]
    offset: Array = np.asarray(view.lane_offset(lanes), dtype=np.int64)
    if width > 1 and view.layout is not None:
        # Each of the `width` consecutive logical elements is mapped on its own.
        wide = [with_trailing(i, 1) for i in indices]
        wide[-1] = wide[-1] + np.arange(width, dtype=np.int64)
        flat = with_trailing(offset, 1) + view.address(wide)
        return np.broadcast_to(flat, np.broadcast_shapes(flat.shape, (1,) * (lanes.depth + 1))), 1
    flat = offset + view.address(indices)
    flat = np.broadcast_to(flat, np.broadcast_shapes(flat.shape, (1,) * lanes.depth))
    if width > 1:
        step = view.strides[-1] if view.strides else 1
        return with_trailing(flat, 1) + np.arange(width, dtype=np.int64) * step, 1
    if view.vshape:
        tail = len(view.vshape)
        inner = np.arange(view.lanes, dtype=np.int64).reshape(view.vshape)
        return with_trailing(flat, tail) + inner, tail
    return flat, 0


def _check_bounds(
    view: View, indices: Sequence[Array], width: int, lanes: Lanes, what: str
) -> None:
    bad: Array | None = None
    for axis, (index, extent) in enumerate(zip(indices, view.shape, strict=True)):
        limit = extent - (width - 1 if axis == view.rank - 1 else 0)
        if index.size and (index.min() < 0 or index.max() >= limit):
            out = (index < 0) | (index >= limit)
            bad = out if bad is None else bad | out
    if bad is None:
        return
    if lanes.mask is not None:
        bad = bad & lanes.mask
    if not bool(np.any(bad)):
        return
    shape = np.broadcast_shapes(bad.shape, *(i.shape for i in indices))
    where = tuple(int(w[0]) for w in np.nonzero(np.broadcast_to(bad, shape)))
    point = [int(np.broadcast_to(i, shape)[where]) for i in indices]
    span = f" (accessing {width} elements)" if width > 1 else ""
    raise EvaluationError(
        f"{what}: index {point} is out of bounds for {view.name} of shape {list(view.shape)}{span}"
    )


def whole_view_offsets(view: View, lanes: Lanes) -> tuple[Array, int]:
    """Scalar offsets of every scalar of `view` (lane axes of extent 1, then the view's
    shape and vector shape as tail axes)."""
    rank = view.rank
    grids = list(np.indices(view.shape, dtype=np.int64, sparse=True))
    flat = np.broadcast_to(np.asarray(view.address(grids), dtype=np.int64), view.shape)
    tail = rank + len(view.vshape)
    if view.vshape:
        inner = np.arange(view.lanes, dtype=np.int64).reshape(view.vshape)
        flat = with_trailing(flat, len(view.vshape)) + inner
    flat = flat.reshape((1,) * lanes.depth + flat.shape)
    offset = np.asarray(view.lane_offset(lanes), dtype=np.int64)
    return with_trailing(offset, tail) + flat, tail


def view_as_array(view: View) -> Array:
    """A numpy array aliasing the scalars of a (shared) `view`: shape `shape + vshape`
    (a copy for a mapped view)."""
    if view.storage.private_depth or not isinstance(view.offset, int):
        raise EvaluationError(f"evaluator: cannot return lane-private buffer {view.name}")
    data = view.storage.data
    if data.dtype != view.dtype:
        data = data.view(view.dtype)
    if view.layout is not None:
        flat, _ = whole_view_offsets(view, Lanes((), None))
        return data[flat]
    item = data.itemsize
    strides = tuple(s * item for s in view.strides)
    inner = tuple(s * item for s in row_major_strides(view.vshape, 1))
    base = data[view.offset :] if view.offset < data.shape[0] else data[:0]
    return np.lib.stride_tricks.as_strided(
        base, shape=view.shape + view.vshape, strides=strides + inner
    )


def _scalar_positions(view: View, indices: Sequence[Array], width: int, what: str) -> Array:
    """The scalar offsets touched by one access at uniform `indices` (no lanes)."""
    shape = view.shape
    rank = len(shape)
    if len(indices) != rank:
        raise EvaluationError(f"{what}: {len(indices)} indices for {view.name} of rank {rank}")
    point = [int(i) for i in indices]
    last = rank - 1
    for axis in range(rank):
        limit = shape[axis] - (width - 1 if axis == last else 0)
        if point[axis] < 0 or point[axis] >= limit:
            span = f" (accessing {width} elements)" if width > 1 else ""
            raise EvaluationError(
                f"{what}: index {point} is out of bounds for {view.name} of shape "
                f"{list(shape)}{span}"
            )
    if width > 1:
        wide: list[Array | int] = [*point[:-1], point[-1] + np.arange(width, dtype=np.int64)]
        return int(view.offset) + np.asarray(view.address(wide), dtype=np.int64)
    start = int(view.offset) + int(view.address(point))
    if view.vshape:
        return (start + np.arange(view.lanes, dtype=np.int64)).reshape(view.vshape)
    return np.asarray(start)


def is_scalar_access(view: View, indices: Sequence[Array], lanes: Lanes) -> bool:
    """True when an access needs no lanes: depth 0, shared storage, 0-d indices."""
    return (
        lanes.depth == 0
        and lanes.mask is None
        and view.storage.private_depth == 0
        and isinstance(view.offset, int)
        and all(i.ndim == 0 for i in indices)
    )


def read_scalar(view: View, indices: Sequence[Array], width: int, what: str) -> Array:
    """The fast path of a read outside any lane space (see `is_scalar_access`)."""
    positions = _scalar_positions(view, indices, width, what)
    data = view.storage.data
    if data.dtype != view.dtype:
        data = data.view(view.dtype)
    return np.asarray(data[positions])


def write_scalar(view: View, indices: Sequence[Array], width: int, value: Array, what: str) -> None:
    """The fast path of a write outside any lane space (see `is_scalar_access`)."""
    positions = _scalar_positions(view, indices, width, what)
    data = view.storage.data
    if not data.flags.writeable:
        raise EvaluationError(f"{what}: storage {view.storage.name} is read-only")
    if data.dtype != view.dtype:
        data = data.view(view.dtype)
    data[positions] = value
