"""What a `!layout.buffer` type's layout means, in terms of the IndexMap engine.

`PendingLayout.of(buffer_type)` resolves a buffer's pending transforms (RFC 0039's
`layout_transform_map`): the composed IndexMap, the transformed shape (step-by-step
structural extents, `transformed_shape`), the axis separators the buffer carries afterwards
(the last map's) and the padding predicate. It proves what it relies on (isl): every map
is injective on the box of its step, the composed map is injective on the logical box and
its image lies in the transformed box; a transform that introduces padding must come with
a `pad_value`. Problems are reported as `ValueError`s whose message
names the map, the shape and the colliding indices or the padding predicate; passes turn
them into diagnostics.

`flattened_type(buffer_type)` is the type after flattening to `len(axis_separators) + 1`
axes, row-major within each separator group (RFC 0039 FlattenBuffer); texture buffers
without separators use their scope's default (`default_axis_separators`) and are 2-D RGBA
images of `image_size` texels of `TEXEL_LANES` channels, at most `ImageLimits` large.
These are the one definition of texture layouts that flatten-buffers, verify-buffers, annotate-texture-scope,
vectorize-texels, the OpenCL target and the runtime use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import prod
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import Float16Type, Float32Type, VectorType
from xdsl.ir import Attribute

from physlayout.dialects.layout import MAX_ELEMENTS, BufferType, is_texture_scope
from physlayout.dialects.layout_types import count_text
from physlayout.indexing.extents import PaddingPredicate, transformed_shape
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.shapes import flatten_shape

if TYPE_CHECKING:
    import numpy as np


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
        count = prod(shape)
        if count > MAX_ELEMENTS:
            raise ValueError(
                f"transform {written} gives shape {shape} on {list(logical)}, "
                f"{count_text(count)} elements: more than the index range (at most "
                f"{MAX_ELEMENTS})"
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
                f"(padding where {padding.describe([str(e) for e in composed.final_indices])}); "
                "give the buffer a pad_value"
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
        import numpy as np

        fill = self.pad_value if pad_value is None else pad_value
        array = np.asarray(logical)
        for index_map in self.steps:
            array = index_map.map_ndarray(array, pad_value=fill)
        return array

    def unmap_ndarray(self, transformed: np.ndarray) -> np.ndarray:
        """The logical array read back from an array in the transformed layout (the
        inverse of `map_ndarray` on the logical elements; padding is dropped)."""
        import numpy as np

        array = np.asarray(transformed)
        for k in reversed(range(len(self.steps))):
            before = transformed_shape(self.steps[:k], self.logical_shape)
            array = self.steps[k].inverse_map_ndarray(array, before)
        return array


# Textures ----------------------------------------------------------------------------------

TEXEL_LANES = 4
"""Channels of one RGBA texel."""


def texel_lanes_per_element(element_type: Attribute) -> int | None:
    """1 for a channel type (f32, f16), 4 for a texel vector type, None otherwise."""
    if isinstance(element_type, Float32Type | Float16Type):
        return 1
    if (
        isinstance(element_type, VectorType)
        and element_type.get_shape() == (TEXEL_LANES,)
        and isinstance(element_type.get_element_type(), Float32Type | Float16Type)
    ):
        return TEXEL_LANES
    return None


def default_axis_separators(buffer_type: BufferType) -> tuple[int, ...]:
    """The separators a buffer is flattened with when it carries none.

    Global, shared and local buffers flatten to one axis. A texture buffer becomes a 2-D
    image, separated per scope as TVM's DefaultTextureLayoutSeparator does (docs/semantics.md
    "Textures"): for rank r >= 3, `global.texture` at r - 2 (`[n, c4, h | w, lane]`),
    `global.texture-weight` at 1 (`[o4 | i, h, w, lane]`), `global.texture-nhwc` at 2
    (`[n, c4 | h, w, lane]`) or at 1 when r == 3 (`[a | b, lane]`); a rank-2 texture is
    its image already (at 1); a rank-1 texture has none (verify-buffers rejects it).
    """
    scope = buffer_type.get_scope()
    rank = buffer_type.rank
    if not is_texture_scope(scope) or rank < 2:
        return ()
    if rank == 2 or scope == "global.texture-weight":
        return (1,)
    if scope == "global.texture-nhwc":
        return (1,) if rank == 3 else (2,)
    return (rank - 2,)


def image_size(buffer_type: BufferType) -> tuple[int, int]:
    """`(width, height)` in texels of the RGBA image a texture buffer (without pending
    transforms) is: it flattens (`flattening_separators`) to `[rows, cols]`; the image's
    y is the row, so height = rows, and its x is the column's texel, so width = cols / 4
    for channel elements (cols for `vector<4x...>` texel elements).

    Raises:
        ValueError: the buffer does not flatten to two axes, its element type is not a
            texture element, or its rows are not whole texels.
    """
    lanes = texel_lanes_per_element(buffer_type.element_type)
    flat = flattened_type(buffer_type).get_shape()
    if lanes is None or len(flat) != 2 or flat[1] * lanes % TEXEL_LANES:
        raise ValueError(f"{buffer_type} is not a 2-D image of whole RGBA texels")
    rows, cols = flat
    return cols * lanes // TEXEL_LANES, rows


@dataclass(frozen=True)
class ImageLimits:
    """The largest 2-D image a texture may need: `max_width` texels by `max_height` rows
    (default 16384 x 16384, Adreno's limit). annotate-texture-scope keeps a tensor whose
    image exceeds either in `global`; the OpenCL target refuses such a texture parameter."""

    max_width: int = 16384
    max_height: int = 16384


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


@lru_cache(maxsize=4096)
def flattened_type(buffer_type: BufferType) -> BufferType:
    """`buffer_type` after `flatten-buffers`. Built once per distinct type (a type is an
    immutable value compared by its parameters, pad values bit for bit; a model declares a
    few hundred types and flatten-buffers, verify-buffers and the targets ask about each
    many times)."""
    separators = flattening_separators(buffer_type)
    shape = flatten_shape(list(buffer_type.get_shape()), list(separators))
    return buffer_type.with_layout(shape, tuple(range(1, len(shape))))
