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

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from physlayout.dialects.index_map import IndexMap, PaddingPredicate, flatten_shape
from physlayout.dialects.layout import MAX_ELEMENTS, BufferType, is_texture_scope


@dataclass(frozen=True)
class PendingLayout:
    """The combined effect of a buffer type's pending transforms.

    `index_map` sends logical indices (in `logical_shape`) to transformed indices (in
    `shape`). `padding` is None when every transformed index has a preimage.
    """

    logical_shape: tuple[int, ...]
    index_map: IndexMap
    shape: tuple[int, ...]
    axis_separators: tuple[int, ...]
    padding: PaddingPredicate | None
    pad_value: float | int | None

    @staticmethod
    def of(buffer_type: BufferType) -> PendingLayout | None:
        """Resolve the pending transforms of `buffer_type` (None when it has none).

        Raises ValueError when a map is not injective on its domain, or when the transform
        pads without a `pad_value`.
        """
        transforms = buffer_type.get_transforms()
        if not transforms:
            return None
        logical = buffer_type.get_shape()
        shape: Sequence[int] = logical
        composed: IndexMap | None = None
        for attr in transforms:
            index_map = attr.index_map
            collision = index_map.find_collision(shape)
            if collision is not None:
                first, second = collision
                raise ValueError(
                    f"index map {index_map} is not injective on shape {list(shape)}: "
                    f"indices {first} and {second} both map to "
                    f"{[int(v) for v in index_map.map_indices(first)]}"
                )
            composed = index_map if composed is None else composed.compose(index_map)
            shape = index_map.map_shape(shape)
        assert composed is not None
        composed = composed.simplify(logical)
        if list(composed.map_shape(logical)) != list(shape):
            raise ValueError(
                f"the transforms of {buffer_type} compose to {composed}, whose extents "
                f"{composed.map_shape(logical)} differ from the step-by-step extents "
                f"{list(shape)}; apply the transforms in separate buffers"
            )
        if prod(shape) > MAX_ELEMENTS:
            raise ValueError(
                f"transform {composed} gives shape {list(shape)} on {list(logical)}, "
                f"{prod(shape)} elements: more than the index range (at most {MAX_ELEMENTS})"
            )
        padding = composed.padding_predicate(logical)
        pad_attr = buffer_type.get_pad_value()
        pad_value = None if pad_attr is None else pad_attr.value.data
        if padding is not None and pad_value is None:
            raise ValueError(
                f"transform {composed} introduces padding on shape {list(logical)} "
                f"(padding where {padding}); give the buffer a pad_value"
            )
        return PendingLayout(
            logical_shape=tuple(logical),
            index_map=composed,
            shape=tuple(shape),
            axis_separators=transforms[-1].axis_separators,
            padding=padding,
            pad_value=pad_value,
        )

    def applied_type(self, buffer_type: BufferType) -> BufferType:
        """`buffer_type` after `apply-layout`: transformed shape, no pending transforms."""
        return buffer_type.with_layout(self.shape, self.axis_separators)


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
