"""The memos of the lowering passes give the uncached answers (hypothesis, random inputs):
`flattened_type` (one flat type per distinct buffer type, `buffer_layout`) equals the type
built afresh; legalize-layout's `copy_key` (a copy kernel not built again) is exact: copies
with equal keys build kernels with equal `kernel_key`s; the alias analysis's
`buffer_byte_size` (once per distinct type) equals the size computed afresh, with and
without pending transforms."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import Float16Type, Float32Type, FloatAttr, VectorType, f16, f32, i32
from xdsl.ir import Attribute, Block
from xdsl.utils.exceptions import VerifyException

from physlayout.dialects.buffer_layout import flattened_type
from physlayout.dialects.layout import BufferType, IndexMapAttr
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr, FloorDiv, Mod
from physlayout.transforms.buffer_aliases import buffer_byte_size
from physlayout.transforms.equal_kernels import kernel_key
from physlayout.transforms.legalize_kernels import copy_kernel
from physlayout.transforms.legalize_layout import copy_key

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
    separators = (
        sorted(draw(st.sets(st.integers(1, rank - 1), max_size=rank - 1))) if rank > 1 else []
    )
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


# legalize-layout's copy kernels ----------------------------------------------------------

CopyRequest = tuple[
    BufferType, BufferType, bool, tuple[int, ...], tuple[int, ...], bool, tuple[int, ...]
]


@st.composite
def copy_requests(draw: st.DrawFn) -> CopyRequest:
    """What a copy is built from, drawn from a small domain so that equal keys are common:
    the two buffer types (texture or not, so lane loops come and go; often the same type),
    whether source and destination are one value, the box, the source and destination
    offsets (or none), and `sequential`. The buffers are large enough for every offset, so
    the offsets vary independently of the types."""
    rank = draw(st.integers(1, 2))
    extents = tuple(draw(st.sampled_from((1, 4))) for _ in range(rank))
    offset = draw(st.sampled_from(((), (0,) * rank, (1,) * rank)))
    dst_offset = draw(st.sampled_from(((), (0,) * rank, (*[0] * (rank - 1), 4))))
    shape = (8,) * rank
    types = [BufferType(shape, f32, scope=scope) for scope in ("global", "local", "global.texture")]
    src, dst = draw(st.sampled_from(types)), draw(st.sampled_from(types))
    same = draw(st.booleans()) and src == dst
    return src, dst, same, extents, offset, draw(st.booleans()), dst_offset


def _copy(request: CopyRequest) -> tuple[object, object]:
    """`copy_key` and the `kernel_key` of the kernel built, over fresh host values."""
    src_type, dst_type, same, extents, offset, sequential, dst_offset = request
    host = Block(arg_types=[src_type, dst_type])
    source = host.args[0]
    target = source if same else host.args[1]
    key = copy_key(source, target, extents, offset, sequential, dst_offset)
    kernel, args = copy_kernel("k", source, target, extents, offset, sequential, dst_offset)
    assert args == ([source] if same else [source, target])
    return key, kernel_key(kernel)


@st.composite
def nearby_copy_requests(draw: st.DrawFn) -> list[CopyRequest]:
    """A copy request and others that each take some of its fields from a second request
    (often all but one: the key must tell apart copies that differ in a single field)."""
    base = draw(copy_requests())
    requests = [base]
    for _ in range(draw(st.integers(1, 4))):
        other = draw(copy_requests())
        mixed = [o if draw(st.integers(0, 3)) == 0 else b for b, o in zip(base, other, strict=True)]
        src, dst, same, extents, offset, sequential, dst_offset = mixed
        if len(offset) not in (0, len(extents)) or len(dst_offset) not in (0, len(extents)):
            continue  # fields of requests of different ranks
        if src.get_shape() != base[0].get_shape() or dst.get_shape() != base[0].get_shape():
            continue
        requests.append(
            (src, dst, bool(same) and src == dst, extents, offset, sequential, dst_offset)
        )
    return requests


@PROPERTY
@given(nearby_copy_requests())
def test_equal_copy_keys_build_equal_kernels(requests: list[CopyRequest]) -> None:
    keyed = [_copy(request) for request in requests]
    for key, built in keyed:
        for other_key, other_built in keyed:
            if key == other_key:
                assert built == other_built


# The alias analysis's byte sizes -----------------------------------------------------------


@st.composite
def transformed_buffer_types(draw: st.DrawFn) -> BufferType:
    """A buffer type, often with a pending transform: a permutation of splits of its axes
    (padded when the divisor does not divide the extent), sometimes lossy or with a sum
    (no valid transformed shape then), in any scope and element type."""
    buffer_type = draw(buffer_types())
    if draw(st.booleans()):
        return buffer_type
    names = tuple(f"d{k}" for k in range(buffer_type.rank))
    outputs: list[Expr] = []
    for name in names:
        k = draw(st.sampled_from((1, 2, 3, 4)))
        match draw(st.integers(0, 3)):
            case 0:
                outputs.append(Dim(name))
            case 1:
                outputs += [FloorDiv(Dim(name), k), Mod(Dim(name), k)]
            case 2:
                outputs.append(Dim(name) * draw(st.integers(1, 3)))
            case _:
                outputs.append(FloorDiv(Dim(name), k))
    if draw(st.booleans()) and len(names) > 1:
        outputs.append(Dim(names[0]) + Dim(names[1]))
    outputs = list(draw(st.permutations(outputs)))
    transform = IndexMapAttr.from_map(IndexMap(names, outputs))
    element = buffer_type.element_type
    pad = FloatAttr(0.0, element) if isinstance(element, Float32Type | Float16Type) else None
    try:
        return BufferType(
            buffer_type.get_shape(),
            element,
            transforms=[transform],
            scope=buffer_type.get_scope().value,
            pad_value=pad,
        )
    except VerifyException:
        return buffer_type


@PROPERTY
@given(st.lists(transformed_buffer_types(), min_size=1, max_size=6))
def test_cached_byte_size_is_the_uncached_one(types: list[BufferType]) -> None:
    # asked in turn, with repeats, so that later answers come from the memo
    for buffer_type in [*types, *reversed(types)]:
        assert buffer_byte_size(buffer_type) == buffer_byte_size.__wrapped__(buffer_type)
