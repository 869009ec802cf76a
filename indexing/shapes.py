"""Shapes, axis separators and row-major flattening of buffer indices.

`AXIS_SEPARATOR` marks a separator in a Python index-map function; `validate_axis_separators`
checks separator lists (strictly increasing, within ``1..rank-1``); `flatten_shape`,
`flatten_indices` and `flatten_exprs` flatten each group of axes between separators into one
physical axis, row-major. Errors are ValueErrors naming the problem.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias, cast

from physlayout.indexing.quasi_affine import (
    Bounds,
    Const,
    Expr,
    ExprLike,
    IndexValue,
    as_expr,
    is_int,
    is_ndarray,
)
from physlayout.indexing.simplify import simplify

if TYPE_CHECKING:
    import numpy as np


class _AxisSeparator:
    """Type of the `AXIS_SEPARATOR` sentinel."""

    _instance: _AxisSeparator | None = None

    def __new__(cls) -> _AxisSeparator:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "AXIS_SEPARATOR"


AXIS_SEPARATOR = _AxisSeparator()
"""Marks an axis separator in the list returned by a function given to
`IndexMap.from_func_with_separators`: ``[n, c // 4, h, AXIS_SEPARATOR, w, c % 4]``."""

Shape: TypeAlias = Sequence[int]


def check_shape(shape: Shape, rank: int | None = None, what: str = "shape") -> tuple[int, ...]:
    """Validate a shape (positive integer extents, optionally of a given rank)."""
    if isinstance(shape, str) or not (isinstance(shape, Sequence) or is_ndarray(shape)):
        raise ValueError(f"{what} must be a sequence of integers, got {shape!r}")
    values = list(shape)  # pyright: ignore[reportUnknownArgumentType]
    if not all(is_int(v) for v in values):
        raise ValueError(f"{what} must contain integers, got {values!r}")
    result = tuple(int(v) for v in values)
    if rank is not None and len(result) != rank:
        raise ValueError(f"index map expects a {what} of rank {rank}, got {list(result)}")
    if any(v <= 0 for v in result):
        raise ValueError(f"{what} extents must be positive, got {list(result)}")
    return result


def validate_axis_separators(axis_separators: Sequence[int], rank: int) -> tuple[int, ...]:
    """Check that axis separators are strictly increasing integers within ``1..rank-1``.

    Returns them as a tuple. Raises ValueError naming the offending separator.
    """
    seps = list(axis_separators)
    if not all(is_int(s) for s in seps):
        raise ValueError(f"axis separators must be integers, got {seps!r}")
    result = tuple(int(s) for s in seps)
    for index, sep in enumerate(result):
        if rank < 2:
            raise ValueError(
                f"axis separator {sep} cannot split rank {rank}: separators stand between "
                "two axes (rank >= 2)"
            )
        if not 1 <= sep <= rank - 1:
            raise ValueError(
                f"axis separator {sep} is out of range 1..{rank - 1} for rank {rank} "
                "(no leading or trailing separator)"
            )
        if index and sep <= result[index - 1]:
            raise ValueError(f"axis separators must be strictly increasing, got {list(result)}")
    return result


def _groups(rank: int, axis_separators: Sequence[int]) -> list[range]:
    """The axis ranges of each physical axis."""
    bounds = [0, *validate_axis_separators(axis_separators, rank), rank]
    return [range(lo, hi) for lo, hi in itertools.pairwise(bounds)]


def flatten_shape(shape: Shape, axis_separators: Sequence[int] = ()) -> list[int]:
    """Flatten `shape` into ``len(axis_separators) + 1`` physical axes.

    Each physical axis is the product of the extents of its group (a separator ``s``
    starts a new group at axis ``s``). ``flatten_shape([16, 32, 64, 64, 4], [3]) ==
    [32768, 256]``; a rank-0 shape flattens to ``[1]``.

    Raises:
        ValueError: bad shape or separators.
    """
    dims = check_shape(shape)
    return [math.prod(dims[k] for k in group) for group in _groups(len(dims), axis_separators)]


def flatten_indices(
    indices: Sequence[IndexValue], shape: Shape, axis_separators: Sequence[int] = ()
) -> list[IndexValue]:
    """Row-major flattening of `indices` (ints or integer arrays) within each group.

    ``flatten_indices([11, 25, 37, 23, 1], [16, 32, 64, 64, 4], [3]) == [24165, 93]``.
    Indices are not range-checked.

    Raises:
        ValueError: bad shape or separators, or ``len(indices) != len(shape)``.
    """
    dims = check_shape(shape)
    if len(indices) != len(dims):
        raise ValueError(f"expected {len(dims)} indices for shape {list(dims)}, got {len(indices)}")
    result: list[IndexValue] = []
    for group in _groups(len(dims), axis_separators):
        flat: IndexValue = 0
        for k in group:
            flat = flat * dims[k] + index_value(indices[k])
        result.append(flat)
    return result


def flatten_exprs(
    indices: Sequence[ExprLike],
    shape: Shape,
    axis_separators: Sequence[int] = (),
    bounds: Bounds | None = None,
) -> list[Expr]:
    """Symbolic `flatten_indices`: flattened, simplified expressions (with `bounds` on the
    dimensions used by `indices`, if given)."""
    dims = check_shape(shape)
    if len(indices) != len(dims):
        raise ValueError(f"expected {len(dims)} indices for shape {list(dims)}, got {len(indices)}")
    result: list[Expr] = []
    for group in _groups(len(dims), axis_separators):
        flat: Expr = Const(0)
        for k in group:
            flat = flat * dims[k] + as_expr(indices[k])
        result.append(simplify(flat, bounds))
    return result


def index_value(value: object) -> IndexValue:
    """Validate one concrete index (int or integer array)."""
    if is_ndarray(value):
        import numpy as np

        array = cast("np.ndarray", value)
        if not np.issubdtype(array.dtype, np.integer):
            raise ValueError("index arrays must have an integer dtype")
        return array.astype(np.int64, copy=False)
    if is_int(value):
        return int(value)  # type: ignore[arg-type]
    raise ValueError(f"indices must be integers or integer arrays, got {value!r}")
