"""The memos of the lowering passes give the uncached answers (hypothesis, random inputs):
`flattened_type` (one flat type per distinct buffer type, `buffer_layout`) equals the type
built afresh."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import VectorType, f16, f32, i32
from xdsl.ir import Attribute

from physlayout.dialects.buffer_layout import flattened_type
from physlayout.dialects.layout import BufferType

PROPERTY = settings(max_examples=150, deadline=None, derandomize=True)

SCOPES = ("global", "local", "global.texture", "global.texture-nhwc", "global.texture-weight")
ELEMENTS: tuple[Attribute, ...] = (f32, f16, i32, VectorType(f32, [4]))


@st.composite
def buffer_types(draw: st.DrawFn) -> BufferType:
    """A buffer type without pending transforms: extents of 1, primes and texel widths, any
    scope and element, separators or none."""
    rank = draw(st.integers(1, 5))
    shape = tuple(draw(st.sampled_from((1, 2, 3, 4, 7, 8, 13))) for _ in range(rank))
    element = draw(st.sampled_from(ELEMENTS))
    separators = sorted(draw(st.sets(st.integers(1, rank - 1), max_size=rank - 1))) if rank > 1 else []
    scope = draw(st.sampled_from(SCOPES))
    return BufferType(shape, element, axis_separators=separators, scope=scope)


def _uncached(buffer_type: BufferType) -> BufferType | str:
    try:
        return flattened_type.__wrapped__(buffer_type)
    except ValueError as err:
        return f"ValueError: {err}"


def _cached(buffer_type: BufferType) -> BufferType | str:
    try:
        return flattened_type(buffer_type)
    except ValueError as err:
        return f"ValueError: {err}"


@PROPERTY
@given(st.lists(buffer_types(), min_size=1, max_size=6))
def test_cached_flattened_type_is_the_uncached_one(types: list[BufferType]) -> None:
    # asked in turn, with repeats, so that later answers come from the memo
    for buffer_type in [*types, *reversed(types)]:
        cached, uncached = _cached(buffer_type), _uncached(buffer_type)
        assert cached == uncached
        assert str(cached) == str(uncached)
