"""The proofs behind apply-layout are cached per (map, shape) and have an isl-free fast path
(`physlayout.indexing.structural`); both must give the answers of an uncached isl decision,
checked here on random maps (hypothesis) against isl and brute-force enumeration."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import Float16Type, Float32Type, IntegerType, TensorType
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import OpResult
from xdsl.ir.affine import AffineExpr, AffineMap

from physlayout.dialects.buffer_layout import image_size as uncached_image_size
from physlayout.dialects.layout import BufferType
from physlayout.indexing import inverse, proofs
from physlayout.indexing.extents import PaddingPredicate, padding_of, structural_extents
from physlayout.indexing.index_map import IndexMap, clear_caches
from physlayout.indexing.quasi_affine import Const, Dim, Expr, FloorDiv, Mod
from physlayout.indexing.structural import covers_box_structurally, is_injective_structurally
from physlayout.transforms.annotate_texture_scope import image_size

PROPERTY = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
NAMES = ("a", "b", "c")
DIVISORS = st.sampled_from([1, 2, 3, 4, 5])


def _layout_output(name: str, draw: st.DrawFn) -> list[Expr]:
    """The outputs one input contributes in a layout-like map: itself, a split, a nested
    split, a scaled or shifted copy, a lone floordiv or mod (lossy), or nothing."""
    dim = Dim(name)
    k = draw(DIVISORS)
    match draw(st.integers(0, 6)):
        case 0:
            return [dim]
        case 1:
            return [FloorDiv(dim, k), Mod(dim, k)]
        case 2:
            j = draw(DIVISORS)
            return [FloorDiv(FloorDiv(dim, k), j), Mod(FloorDiv(dim, k), j), Mod(dim, k)]
        case 3:
            return [dim * draw(st.integers(1, 3)) + draw(st.integers(0, 2))]
        case 4:
            return [FloorDiv(dim, k)]
        case 5:
            return [Mod(dim, k)]
        case _:
            return []


@st.composite
def layout_maps(draw: st.DrawFn) -> tuple[IndexMap, tuple[int, ...]]:
    """A map in the style of layouts (often a bijection, sometimes lossy or padded, with
    outputs permuted and sometimes a constant or a sum) and a small box."""
    rank = draw(st.integers(1, 3))
    names = NAMES[:rank]
    outputs = [e for name in names for e in _layout_output(name, draw)]
    if draw(st.booleans()) and rank > 1:
        outputs.append(Dim(names[0]) + Dim(names[1]))
    if draw(st.booleans()):
        outputs.append(Const(0))
    outputs = draw(st.permutations(outputs)) if outputs else [Const(0)]
    dims = tuple(draw(st.integers(1, 6)) for _ in names)
    return IndexMap(names, outputs), dims


def _images(imap: IndexMap, dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    return [
        tuple(int(v) for v in imap.map_indices(list(point)))
        for point in itertools.product(*(range(d) for d in dims))
    ]


def _outputs_start_at_zero(imap: IndexMap, dims: tuple[int, ...]) -> bool:
    try:
        structural_extents(imap, dims)
    except ValueError:
        return False
    return True


@PROPERTY
@given(layout_maps())
def test_structural_injectivity_is_sound(case: tuple[IndexMap, tuple[int, ...]]) -> None:
    imap, dims = case
    images = _images(imap, dims)
    if is_injective_structurally(imap, dims):
        assert len(set(images)) == len(images)


@PROPERTY
@given(layout_maps())
def test_cached_injectivity_is_the_uncached_isl_answer(
    case: tuple[IndexMap, tuple[int, ...]],
) -> None:
    imap, dims = case
    clear_caches()
    isl_answer = bool(proofs.isl_map.__wrapped__(imap, dims).is_injective())
    images = _images(imap, dims)
    assert isl_answer == (len(set(images)) == len(images))
    assert proofs.is_injective(imap, dims) == isl_answer  # computed (fast path or isl)
    assert proofs.is_injective(imap, dims) == isl_answer  # from the cache
    assert (proofs.find_collision(imap, dims) is None) == isl_answer
    assert imap.is_injective(list(dims)) == isl_answer


@PROPERTY
@given(layout_maps())
def test_cached_padding_is_the_uncached_isl_answer(
    case: tuple[IndexMap, tuple[int, ...]],
) -> None:
    imap, dims = case
    if not _outputs_start_at_zero(imap, dims):
        return
    out_shape = structural_extents(imap, dims)
    clear_caches()
    covered = set(_images(imap, dims)) == set(itertools.product(*(range(e) for e in out_shape)))
    if covers_box_structurally(imap, dims, out_shape):
        assert covered
    cached = padding_of(imap, dims, out_shape)
    assert (cached is None) == covered
    assert padding_of(imap, dims, out_shape) == cached  # from the cache
    # The uncached isl computation (the fast path bypassed by an impossible shape match).
    uncached = _isl_padding(imap, dims, out_shape)
    assert uncached == cached


def _isl_padding(
    imap: IndexMap, dims: tuple[int, ...], out_shape: tuple[int, ...]
) -> PaddingPredicate | None:
    """`padding_of` decided by isl alone: the box's points minus the image, as isl sees it."""
    from physlayout.indexing.bridges import isl as bridge

    names = tuple(bridge.output_names(imap.final_ndim))
    box = bridge.build_box(out_shape, names)
    image = proofs.isl_map.__wrapped__(imap, dims).range()
    padding = box.subtract(image)
    if padding.is_empty():
        return None
    return padding_of.__wrapped__(imap, dims, out_shape)


def test_fast_path_covers_the_usual_layouts() -> None:
    """NHWC -> NCHW4c, a transpose and a nested split are proven without isl."""
    nchw4c = IndexMap.parse("(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)")
    transpose = IndexMap.parse("(i, j) -> (j, i)")
    nested = IndexMap.parse("(i) -> ((i floordiv 4) floordiv 2, (i floordiv 4) mod 2, i mod 4)")
    assert is_injective_structurally(nchw4c, (1, 8, 8, 16))
    assert covers_box_structurally(nchw4c, (1, 8, 8, 16), (1, 4, 8, 8, 4))
    assert not covers_box_structurally(nchw4c, (1, 8, 8, 6), (1, 2, 8, 8, 4))  # padded
    assert is_injective_structurally(transpose, (3, 5))
    assert covers_box_structurally(nested, (32,), (4, 2, 4))
    assert not is_injective_structurally(IndexMap.parse("(i) -> (i floordiv 2)"), (4,))
    assert math.prod((4, 2, 4)) == 32


def test_applying_a_split_layout_does_not_load_islpy() -> None:
    """A fresh `xdsl-opt` run applying NHWC -> NCHW4c proves it without isl."""
    example = Path(__file__).resolve().parents[2] / "examples" / "relu_texture.mlir"
    code = (
        "import sys\n"
        "from xdsl.xdsl_opt_main import xDSLOptMain\n"
        f"xDSLOptMain(args=[{str(example)!r}, '-p', 'apply-layout,flatten-buffers',"
        " '-o', '/dev/null']).run()\n"
        "print(sorted(m for m in ('islpy', 'numpy', 'pyopencl') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@st.composite
def affine_maps(draw: st.DrawFn) -> AffineMap:
    """Random affine maps over 1-3 dimensions (sometimes with a symbol, which is refused),
    with sums, differences, scalings, floordiv, ceildiv and mod."""
    ndims = draw(st.integers(1, 3))
    nsymbols = 1 if draw(st.integers(0, 9)) == 0 else 0

    def expr(depth: int) -> AffineExpr:
        leaf = draw(st.integers(0, 9 if depth < 3 else 2))
        if leaf == 0:
            return AffineExpr.constant(draw(st.integers(-3, 5)))
        if leaf <= 2 or depth >= 3:
            if nsymbols and draw(st.integers(0, 4)) == 0:
                return AffineExpr.symbol(0)
            return AffineExpr.dimension(draw(st.integers(0, ndims - 1)))
        a = expr(depth + 1)
        k = draw(st.integers(1, 5))
        match draw(st.integers(0, 5)):
            case 0:
                return a + expr(depth + 1)
            case 1:
                return a * k
            case 2:
                return a // k
            case 3:
                return a.ceil_div(k)
            case 4:
                return a % k
            case _:
                return a - expr(depth + 1)

    results = tuple(expr(0) for _ in range(draw(st.integers(0, 3))))
    return AffineMap(ndims, nsymbols, results)


def _converted(affine_map: AffineMap, names: tuple[str, ...] | None) -> IndexMap | str:
    try:
        return IndexMap.from_affine_map(affine_map, names)
    except ValueError as err:
        return f"ValueError: {err}"


@PROPERTY
@given(affine_maps(), st.booleans())
def test_cached_affine_conversion_is_the_uncached_one(affine_map: AffineMap, named: bool) -> None:
    """`IndexMap.from_affine_map` is memoized per (map, names): the same map (or the same
    error) as converting it afresh, and again after `clear_caches`."""
    names = tuple(f"x{k}" for k in range(affine_map.num_dims)) if named else None
    first = _converted(affine_map, names)
    again = _converted(
        AffineMap(affine_map.num_dims, affine_map.num_symbols, affine_map.results), names
    )
    clear_caches()
    fresh = _converted(affine_map, names)
    assert first == again == fresh
    if not isinstance(fresh, str):
        assert fresh.to_affine_map().num_dims == affine_map.num_dims


def _inverse_or_error(
    compute: Callable[[IndexMap, tuple[int, ...]], tuple[tuple[str, ...], tuple[Expr, ...]]],
    imap: IndexMap,
    dims: tuple[int, ...],
) -> tuple[tuple[str, ...], tuple[Expr, ...]] | str:
    try:
        return compute(imap, dims)
    except ValueError as err:
        return str(err)


@PROPERTY
@given(layout_maps())
def test_structurally_verified_inverses_are_isls_answers(
    case: tuple[IndexMap, tuple[int, ...]],
) -> None:
    """`inverse_outputs` returns a structural inverse without asking isl when composing it
    after the map gives back every input on the box: that answer is the one of the uncached
    isl computation (which verifies every candidate with isl), and it inverts the map on
    every point of the box (enumerated)."""
    imap, dims = case
    if not proofs.is_injective(imap, dims):
        return
    clear_caches()
    isl_answer = _inverse_or_error(inverse.inverse_outputs_isl, imap, dims)
    assert _inverse_or_error(inverse.inverse_outputs, imap, dims) == isl_answer
    assert _inverse_or_error(inverse.inverse_outputs, imap, dims) == isl_answer  # cached
    if not _outputs_start_at_zero(imap, dims):
        return  # both raised the same error
    names = [f"i{k}" for k in range(imap.final_ndim)]
    structural = inverse._structurally_verified_inverse(imap, dims, names)  # pyright: ignore[reportPrivateUsage]
    if structural is None:
        return
    assert isl_answer == (tuple(names), structural)
    for point in itertools.product(*(range(d) for d in dims)):
        image = dict(zip(names, imap.map_indices(list(point)), strict=True))
        assert tuple(int(e.evaluate(image)) for e in structural) == point


@PROPERTY
@given(
    st.lists(st.integers(1, 9), min_size=0, max_size=4),
    st.sampled_from(["f32", "f16", "i32"]),
    st.sampled_from(["global.texture", "global.texture-weight", "global.texture-nhwc"]),
)
def test_annotate_image_sizes_are_cached_exactly(
    outer: list[int], element_name: str, scope: str
) -> None:
    """annotate-texture-scope's image size per (shape, element type, scope) is the one
    computed from a fresh buffer type each time (the same size, or the same refusal)."""
    element = {"f32": Float32Type(), "f16": Float16Type(), "i32": IntegerType(32)}[element_name]
    shape = (*outer, 4)
    value: OpResult = EmptyOp([], TensorType(element, shape)).results[0]
    for _ in range(2):  # the second answer comes from the cache
        try:
            expected: tuple[int, int] | str | None = uncached_image_size(
                BufferType(shape, element, scope=scope)
            )
        except ValueError as error:
            expected = str(error)
        if element_name == "i32" or len(shape) < 2:
            expected = None
        try:
            got: tuple[int, int] | str | None = image_size(value, scope)
        except ValueError as error:
            got = str(error)
        assert got == expected
