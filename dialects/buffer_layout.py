"""What a `!layout.buffer` type's layout means, in terms of the IndexMap engine.

`PendingLayout.of(buffer_type)` resolves a buffer's pending transforms (RFC 0039's
`layout_transform_map`): the composed IndexMap, the transformed shape, the axis separators
the buffer carries afterwards and the padding predicate. It proves what it relies on:
every map must be injective on its input box (isl), and a transform that introduces
padding must come with a `pad_value`. Problems are reported as `ValueError`s whose message
names the map, the shape and the colliding indices or the padding predicate; passes turn
them into diagnostics.

`physical_shape(buffer_type)` is the shape after flattening to `len(axis_separators) + 1`
axes, row-major within each separator group (RFC 0039 FlattenBuffer).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any

import numpy as np

from physlayout.dialects.index_map import (
    IndexMap,
    PaddingPredicate,
    flatten_shape,
    transformed_shape,
)
from physlayout.dialects.layout import MAX_ELEMENTS, BufferType, is_texture_scope


@dataclass(frozen=True)
class PendingLayout:
    """The combined effect of a buffer type's pending transforms.

    `steps` are the transforms as written, applied in order. `shape` is their step-by-step
    structural extents (`transformed_shape`: a tile is whole at every step), the one
    definition of a transformed buffer's shape at both levels. `index_map` is their
    composition simplified on the logical box, proven injective there; it sends logical
    indices (in `logical_shape`) to transformed indices inside `shape`, but its own
    structural extents may be smaller than `shape`. `padding` is the exact set of points of
    the box `shape` without a preimage (None when there are none).
    """

    logical_shape: tuple[int, ...]
    steps: tuple[IndexMap, ...]
    index_map: IndexMap
    shape: tuple[int, ...]
    axis_separators: tuple[int, ...]
    padding: PaddingPredicate | None
    pad_value: float | int | None

    @staticmethod
    def of(buffer_type: BufferType) -> PendingLayout | None:
        """Resolve the pending transforms of `buffer_type` (None when it has none).

        Raises ValueError when a map is not injective on the box of its step, when the
        transformed buffer exceeds the index range, or when the transform pads without a
        `pad_value`.
        """
        transforms = buffer_type.get_transforms()
        if not transforms:
            return None
        logical = buffer_type.get_shape()
        steps = tuple(attr.index_map for attr in transforms)
        for k, index_map in enumerate(steps):
            before = transformed_shape(steps[:k], logical)
            collision = index_map.find_collision(before)
            if collision is not None:
                first, second = collision
                raise ValueError(
                    f"index map {index_map} is not injective on shape {before}: "
                    f"indices {first} and {second} both map to "
                    f"{[int(v) for v in index_map.map_indices(first)]}"
                )
        shape = transformed_shape(steps, logical)
        written = str(steps[0]) if len(steps) == 1 else f"[{', '.join(map(str, steps))}]"
        if prod(shape) > MAX_ELEMENTS:
            raise ValueError(
                f"transform {written} gives shape {shape} on {list(logical)}, "
                f"{prod(shape)} elements: more than the index range (at most {MAX_ELEMENTS})"
            )
        composed = steps[0]
        for index_map in steps[1:]:
            composed = composed.compose(index_map)
        composed = composed.simplify(logical)
        if not composed.is_injective(logical):
            raise ValueError(
                f"the composition {composed} of transform {written} is not injective on "
                f"shape {list(logical)}"
            )
        padding = composed.padding_predicate(logical, shape)
        pad_attr = buffer_type.get_pad_value()
        pad_value = None if pad_attr is None else pad_attr.value.data
        if padding is not None and pad_value is None:
            raise ValueError(
                f"transform {written} introduces padding on shape {list(logical)} "
                f"(padding where {padding}); give the buffer a pad_value"
            )
        return PendingLayout(
            logical_shape=tuple(logical),
            steps=steps,
            index_map=composed,
            shape=tuple(shape),
            axis_separators=transforms[-1].axis_separators,
            padding=padding,
            pad_value=pad_value,
        )

    def applied_type(self, buffer_type: BufferType) -> BufferType:
        """`buffer_type` after `apply-layout`: transformed shape, no pending transforms."""
        return buffer_type.with_layout(self.shape, self.axis_separators)

    def map_ndarray(self, logical: np.ndarray, pad_value: Any = None) -> np.ndarray:
        """The logical array rewritten into the transformed layout (shape `shape`), one
        step at a time with each step's `IndexMap.map_ndarray` (the reference meaning of a
        transform list, independent of the composed map). Padding holds `pad_value`,
        default the buffer's (tests pass a sentinel to see whether a pass writes it)."""
        fill = self.pad_value if pad_value is None else pad_value
        array = np.asarray(logical)
        for index_map in self.steps:
            array = index_map.map_ndarray(array, pad_value=fill)
        return array

    def unmap_ndarray(self, transformed: np.ndarray) -> np.ndarray:
        """The logical array read back from an array in the transformed layout (the
        inverse of `map_ndarray` on the logical elements; padding is dropped)."""
        array = np.asarray(transformed)
        for k in reversed(range(len(self.steps))):
            before = transformed_shape(self.steps[:k], self.logical_shape)
            array = self.steps[k].inverse_map_ndarray(array, before)
        return array


def default_axis_separators(buffer_type: BufferType) -> tuple[int, ...]:
    """The separators a buffer is flattened with when it carries none.

    Global, shared and local buffers flatten to one axis. Texture buffers become 2-D
    images (TVM's per-scope rule): `global.texture` separates before the last two axes,
    `global.texture-nhwc` at 2 and `global.texture-weight` at 1; a rank-2 texture keeps its
    two axes.
    """
    scope = buffer_type.get_scope()
    rank = buffer_type.rank
    if not is_texture_scope(scope) or rank < 2:
        return ()
    if rank == 2:
        return (1,)
    wanted = {"global.texture": rank - 2, "global.texture-nhwc": 2, "global.texture-weight": 1}
    separator = wanted.get(scope, rank - 2)
    return (separator,) if 1 <= separator <= rank - 1 else ()


def flattening_separators(buffer_type: BufferType) -> tuple[int, ...]:
    """The separators `flatten-buffers` uses for `buffer_type`."""
    return buffer_type.get_axis_separators() or default_axis_separators(buffer_type)


def is_flat(buffer_type: BufferType) -> bool:
    """True when `buffer_type` is already flattened (rank k+1 with separators [1..k]),
    or is 1-D."""
    separators = buffer_type.get_axis_separators()
    if buffer_type.rank == 1 and not separators:
        return not is_texture_scope(buffer_type.get_scope())
    return separators == tuple(range(1, buffer_type.rank)) and bool(separators)


def flattened_type(buffer_type: BufferType) -> BufferType:
    """`buffer_type` after `flatten-buffers`."""
    separators = flattening_separators(buffer_type)
    shape = flatten_shape(list(buffer_type.get_shape()), list(separators))
    return buffer_type.with_layout(shape, tuple(range(1, len(shape))))
