"""Unit tests of physlayout.indexing.index_map (RFC 0039 IndexMap with exact isl proofs)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir.affine import AffineMap

from physlayout.indexing.extents import Constraint, PaddingPredicate
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, FloorDiv, Mod, ceildiv
from physlayout.indexing.shapes import (
    AXIS_SEPARATOR,
    flatten_exprs,
    flatten_indices,
    flatten_shape,
    validate_axis_separators,
)

NHWC_TO_NCHW4C = "(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)"
SPLIT4 = IndexMap.parse("(i) -> (i floordiv 4, i mod 4)")


def nchw4c() -> IndexMap:
    return IndexMap.from_func(lambda n, h, w, c: [n, c // 4, h, w, c % 4])


# Construction, text --------------------------------------------------------------------


def test_rfc0039_example() -> None:
    m = nchw4c()
    assert m.initial_indices == ("n", "h", "w", "c")
    assert m.final_indices == (
        Dim("n"),
        FloorDiv(Dim("c"), 4),
        Dim("h"),
        Dim("w"),
        Mod(Dim("c"), 4),
    )
    assert (m.ndim, m.final_ndim) == (4, 5)
    assert m.map_indices([11, 37, 23, 101]) == [11, 25, 37, 23, 1]
    assert m.map_shape([16, 64, 64, 128]) == [16, 32, 64, 64, 4]
    assert str(m) == NHWC_TO_NCHW4C
    assert IndexMap.parse(NHWC_TO_NCHW4C) == m


def test_index_map_is_hashable_and_frozen() -> None:
    m = nchw4c()
    assert hash(m) == hash(IndexMap.parse(NHWC_TO_NCHW4C))
    with pytest.raises(AttributeError):
        m.initial_indices = ("x",)  # type: ignore[misc]
    assert repr(m) == f"IndexMap.parse({NHWC_TO_NCHW4C!r})"


def test_constructor_coerces_and_validates() -> None:
    m = IndexMap(["i", "j"], [Dim("j"), 3])  # type: ignore[arg-type]
    assert m.initial_indices == ("i", "j")
    assert m.final_indices == (Dim("j"), Const(3))
    with pytest.raises(ValueError, match="duplicate dimension name 'i'"):
        IndexMap(("i", "i"), (Dim("i"),))
    with pytest.raises(ValueError, match="unknown dimension 'k' in output 0"):
        IndexMap(("i",), (Dim("k"),))
    with pytest.raises(ValueError, match="invalid dimension name 'mod'"):
        IndexMap(("mod",), ())


def test_from_func_variants() -> None:
    assert IndexMap.from_func(lambda *args: [args[1], args[0]], ndim=2) == IndexMap.parse(
        "(i0, i1) -> (i1, i0)"
    )
    assert IndexMap.from_func(lambda i: i * 2) == IndexMap.parse("(i) -> (i * 2)")
    assert IndexMap.from_func(lambda i, j: (0, i - j)) == IndexMap.parse("(i, j) -> (0, i - j)")
    named = IndexMap.from_func(lambda a, b: [b, a], names=["x", "y"])
    assert str(named) == "(x, y) -> (y, x)"
    assert IndexMap.from_func(lambda i: [ceildiv(i, 4)]).final_indices == (ceildiv(Dim("i"), 4),)


def test_from_func_errors() -> None:
    with pytest.raises(ValueError, match=r"takes \*args; pass ndim="):
        IndexMap.from_func(lambda *args: list(args))
    with pytest.raises(ValueError, match="does not match"):
        IndexMap.from_func(lambda i: [i], ndim=2)
    with pytest.raises(ValueError, match=r"use IndexMap\.from_func_with_separators"):
        IndexMap.from_func(lambda i, j: [i, AXIS_SEPARATOR, j])
    with pytest.raises(ValueError, match="product of two non-constant terms"):
        IndexMap.from_func(lambda i, j: [i * j])
    with pytest.raises(ValueError, match="true division"):
        IndexMap.from_func(lambda i: [i / 2])
    with pytest.raises(ValueError, match="function failed on symbolic indices"):
        IndexMap.from_func(lambda i: [i.missing])
    with pytest.raises(ValueError, match="cannot use"):
        IndexMap.from_func(lambda i: ["x"])
    with pytest.raises(ValueError, match="expected a function"):
        IndexMap.from_func(3)  # type: ignore[arg-type]


def test_from_func_with_separators() -> None:
    m, seps = IndexMap.from_func_with_separators(
        lambda n, h, w, c: [n, c // 4, h, AXIS_SEPARATOR, w, c % 4]
    )
    assert seps == [3]
    assert m == nchw4c()
    assert repr(AXIS_SEPARATOR) == "AXIS_SEPARATOR"
    for bad in (
        lambda i, j: [AXIS_SEPARATOR, i, j],
        lambda i, j: [i, j, AXIS_SEPARATOR],
        lambda i, j, k: [i, AXIS_SEPARATOR, AXIS_SEPARATOR, j, k],
    ):
        with pytest.raises(ValueError, match="axis separator"):
            IndexMap.from_func_with_separators(bad)


def test_parse_with_separators_and_to_string() -> None:
    text = "(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)"
    m, seps = IndexMap.parse_with_separators(text)
    assert seps == (3,)
    assert m == nchw4c()
    assert m.to_string(seps) == text
    assert m.to_string([1, 3]) == "(n, h, w, c) -> (n | c floordiv 4, h | w, c mod 4)"
    assert IndexMap.parse_with_separators(m.to_string([1, 3])) == (m, (1, 3))
    assert IndexMap.parse("() -> ()").ndim == 0
    assert IndexMap.parse("(i)->(i-1,-i)") == IndexMap.from_func(lambda i: [i - 1, -i])
    with pytest.raises(ValueError, match="out of range"):
        m.to_string([5])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(i, i) -> (i)", "duplicate dimension name 'i'"),
        ("(i) -> (j)", r"unknown dimension 'j' at 'j' \(column 9\)"),
        ("(i, j) -> (i * j)", "product of two non-constant terms"),
        ("(i) -> (i floordiv 0)", "divisor must be a positive constant, got 0"),
        ("(i) -> (i mod -4)", "divisor must be a positive constant, got -4"),
        ("(i, j) -> (i | j)", "not allowed.*parse_with_separators"),
        ("(i) -> (i", "expected ',', '|' or '\\)' after an output"),
        ("(i) (i)", "expected '->'"),
        ("(i) -> (i) x", "unexpected token after the index map"),
        ("(floordiv) -> ()", "expected a dimension name"),
        ("(i, ) -> (i)", "expected a dimension name"),
        ("(i) -> (i,)", "expected an output expression"),
        ("i -> i", "expected '\\('"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        IndexMap.parse(text)


@pytest.mark.parametrize(
    "text",
    [
        "(i, j) -> (| i, j)",
        "(i, j) -> (i, j |)",
        "(i, j, k) -> (i | | j, k)",
        "(i, j, k) -> (i |, j, k)",
    ],
)
def test_bad_separators_in_text(text: str) -> None:
    with pytest.raises(ValueError, match="axis separator '\\|' must stand between two outputs"):
        IndexMap.parse_with_separators(text)


def test_parse_rejects_non_strings() -> None:
    with pytest.raises(ValueError, match="must be a string"):
        IndexMap.parse(3)  # type: ignore[arg-type]


# map_indices / map_shape ---------------------------------------------------------------


def test_map_indices_arrays_and_arity() -> None:
    m = nchw4c()
    out = m.map_indices([np.arange(3), 0, 0, np.array([0, 5, 11])])
    assert [np.asarray(v).tolist() for v in out] == [[0, 1, 2], [0, 1, 2], 0, 0, [0, 1, 3]]
    with pytest.raises(ValueError, match="index map expects 4 indices, got 3"):
        m.map_indices([1, 2, 3])
    with pytest.raises(ValueError, match="integers or integer arrays"):
        m.map_indices([1, 2, 3, 4.5])  # type: ignore[list-item]


def test_map_exprs() -> None:
    m = nchw4c()
    out = m.map_exprs([Dim("a"), 0, 0, Dim("b") * 4 + Dim("l")], bounds={"l": (0, 3)})
    assert [str(e) for e in out] == ["a", "b", "0", "0", "l"]


@pytest.mark.parametrize(
    ("extent", "shape"),
    [(10, [3, 4]), (14, [4, 4]), (15, [4, 4]), (16, [4, 4]), (3, [1, 4])],
)
def test_map_shape_split(extent: int, shape: list[int]) -> None:
    assert SPLIT4.map_shape([extent]) == shape


def test_map_shape_structural_rules() -> None:
    assert IndexMap.parse("(i) -> (i mod 16)").map_shape([14]) == [16]
    assert IndexMap.parse("(i, j) -> (i, i + j)").map_shape([4, 5]) == [4, 8]
    assert IndexMap.parse("(i) -> ((i floordiv 4) * 4 + i mod 4)").map_shape([10]) == [10]
    assert IndexMap.parse("(i) -> (i ceildiv 4)").map_shape([9]) == [3]
    assert IndexMap.parse("(i) -> (0, i)").map_shape([9]) == [1, 9]
    assert IndexMap.parse("(i) -> (2 * i)").map_shape([4]) == [7]


def test_map_shape_errors() -> None:
    with pytest.raises(ValueError, match=r"output 0 \(i - 1\) .* has minimum -1 on shape \[4\]"):
        IndexMap.parse("(i) -> (i - 1)").map_shape([4])
    with pytest.raises(ValueError, match="has minimum 2"):
        IndexMap.parse("(i) -> (i + 2)").map_shape([4])
    with pytest.raises(ValueError, match=r"output 1 \(7\) .* has minimum 7"):
        IndexMap.parse("(i) -> (i, 7)").map_shape([4])
    with pytest.raises(ValueError, match="rank 1, got"):
        SPLIT4.map_shape([4, 4])
    with pytest.raises(ValueError, match="extents must be positive"):
        SPLIT4.map_shape([0])
    with pytest.raises(ValueError, match="must contain integers"):
        SPLIT4.map_shape([2.5])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="sequence of integers"):
        SPLIT4.map_shape(4)  # type: ignore[arg-type]


# Exact reasoning ------------------------------------------------------------------------


def test_injectivity_and_collisions() -> None:
    halve = IndexMap.parse("(i) -> (i floordiv 2)")
    assert not halve.is_injective([4])
    assert halve.find_collision([4]) == ([0], [1])
    assert halve.is_injective([1])
    assert nchw4c().is_injective([16, 64, 64, 128])
    assert nchw4c().find_collision([2, 3, 3, 8]) is None
    fuse = IndexMap.parse("(i, j) -> (i * 4 + j)")
    assert fuse.is_injective([3, 4])
    assert not fuse.is_injective([3, 5])
    assert fuse.find_collision([3, 5]) == ([0, 4], [1, 0])


@pytest.mark.parametrize(
    ("extent", "text", "points"),
    [
        (10, "i0 == 2 and i1 >= 2", [(2, 2), (2, 3)]),
        (14, "i0 == 3 and i1 >= 2", [(3, 2), (3, 3)]),
        (15, "i0 == 3 and i1 == 3", [(3, 3)]),
        (3, "i1 == 3", [(0, 3)]),
    ],
)
def test_padding_predicate_split(extent: int, text: str, points: list[tuple[int, int]]) -> None:
    predicate = SPLIT4.padding_predicate([extent])
    assert predicate is not None
    assert str(predicate) == text
    assert predicate.names == ("i0", "i1")
    rows, cols = SPLIT4.map_shape([extent])
    grid = np.indices((rows, cols))
    mask = predicate([grid[0], grid[1]])
    assert isinstance(mask, np.ndarray)
    assert sorted(zip(*np.nonzero(mask), strict=True)) == points
    assert predicate(list(points[0])) is True
    assert predicate([0, 0]) is False
    assert predicate([rows, 0]) is False  # outside the transformed box


def test_padding_predicate_none_and_forms() -> None:
    assert SPLIT4.padding_predicate([16]) is None
    assert nchw4c().padding_predicate([1, 2, 2, 8]) is None
    stride = IndexMap.parse("(i) -> (i * 2)").padding_predicate([4])
    assert stride is not None
    assert str(stride) == "i0 mod 2 == 1"
    assert "mod 2" in stride.to_isl()
    shear = IndexMap.parse("(i, j) -> (i, i + j)").padding_predicate([4, 5])
    assert shear is not None
    assert str(shear) == "i1 >= i0 + 5 or i0 >= i1 + 1"
    assert shear.to_isl().startswith("{ [i0, i1] :")
    with pytest.raises(ValueError, match="expects 2 indices"):
        shear([1])


def test_constraint_printing() -> None:
    i0, i1 = Dim("i0"), Dim("i1")
    assert str(Constraint(i0 - 2, True)) == "i0 == 2"
    assert str(Constraint(-i1 + 3, False)) == "i1 <= 3"
    assert str(Constraint(i0 - i1 * 2 - 1, False)) == "i0 >= i1 * 2 + 1"
    predicate = PaddingPredicate(("i0",), ((),), (4,))
    assert str(predicate) == "true"
    assert predicate([3]) is True


def test_inverse_nchw4c() -> None:
    m = nchw4c()
    inverse = m.inverse([16, 64, 64, 128])
    assert str(inverse) == "(i0, i1, i2, i3, i4) -> (i0, i2, i3, i1 * 4 + i4)"
    assert inverse.map_indices([11, 25, 37, 23, 1]) == [11, 37, 23, 101]
    identity = m.compose(inverse, shape=[16, 64, 64, 128])
    assert identity.final_indices == tuple(Dim(n) for n in m.initial_indices)
    batch1 = m.compose(m.inverse([1, 4, 4, 8]), shape=[1, 4, 4, 8])
    assert str(batch1) == "(n, h, w, c) -> (n, h, w, c)"
    back = inverse.compose(m, shape=m.map_shape([16, 64, 64, 128]))
    assert back.final_indices == tuple(Dim(f"i{k}") for k in range(5))


def test_inverse_errors_and_non_surjective_inverse() -> None:
    with pytest.raises(
        ValueError,
        match=r"introduces padding on shape \[10\]: i0 == 2 and i1 >= 2; "
        "use non_surjective_inverse",
    ):
        SPLIT4.inverse([10])
    inverse, pad = SPLIT4.non_surjective_inverse([10])
    assert str(inverse) == "(i0, i1) -> (i0 * 4 + i1)"
    assert pad is not None
    grid = np.indices((3, 4))
    assert np.argwhere(pad([grid[0], grid[1]])).tolist() == [[2, 2], [2, 3]]
    inverse16, pad16 = SPLIT4.non_surjective_inverse([16])
    assert pad16 is None
    assert inverse16 == SPLIT4.inverse([16])


def test_non_injective_maps_are_rejected() -> None:
    halve = IndexMap.parse("(i) -> (i floordiv 2)")
    message = (
        r"index map \(i\) -> \(i floordiv 2\) is not injective on shape \[4\]: "
        r"indices \[0\] and \[1\] both map to \[0\]"
    )
    with pytest.raises(ValueError, match=message):
        halve.inverse([4])
    with pytest.raises(ValueError, match=message):
        halve.non_surjective_inverse([4])
    with pytest.raises(ValueError, match="not injective"):
        halve.map_ndarray(np.arange(4))


def test_shear_inverts() -> None:
    shear = IndexMap.parse("(i, j) -> (i, i + j)")
    assert shear.is_injective([4, 5])
    inverse, pad = shear.non_surjective_inverse([4, 5])
    assert str(inverse) == "(i0, i1) -> (i0, i1 - i0)"
    assert pad is not None
    for a in range(4):
        for b in range(5):
            assert inverse.map_indices(shear.map_indices([a, b])) == [a, b]
    assert shear.compose(inverse, shape=[4, 5]) == IndexMap.parse("(i, j) -> (i, j)")
    # A shear of the transformed box pads, so the strict inverse names the predicate.
    with pytest.raises(ValueError, match="i1 >= i0 \\+ 5 or i0 >= i1 \\+ 1"):
        shear.inverse([4, 5])


def test_inverse_of_permutations_and_fusions() -> None:
    fuse = IndexMap.parse("(a, b, c) -> ((a * 8 + b) * 7 + c)")
    assert (
        str(fuse.inverse([6, 8, 7])) == "(i0) -> (i0 floordiv 56, (i0 floordiv 7) mod 8, i0 mod 7)"
    )
    split_fuse = IndexMap.parse("(i, j) -> ((i floordiv 4) * 6 + j, i mod 4)")
    inverse = split_fuse.inverse([8, 6])
    assert str(inverse) == "(i0, i1) -> ((i0 floordiv 6) * 4 + i1, i0 mod 6)"
    assert split_fuse.compose(inverse, shape=[8, 6]) == IndexMap.parse("(i, j) -> (i, j)")
    perm = IndexMap.from_layouts("NCHW", "NHWC")
    assert str(perm.inverse([1, 2, 3, 4])) == "(i0, i1, i2, i3) -> (i0, i3, i1, i2)"
    rotate = IndexMap.parse("(i) -> ((i + 1) mod 4)")
    assert str(rotate.inverse([4])) == "(i0) -> ((i0 + 3) mod 4)"


def test_equivalence() -> None:
    m = nchw4c()
    renamed = IndexMap.parse("(a, b, c, d) -> (a, d floordiv 4, b, c, d mod 4)")
    assert m.is_equivalent_to(renamed)
    assert m.is_equivalent_to(renamed, shape=[1, 2, 3, 8])
    split = IndexMap.parse("(i) -> (i floordiv 4, i mod 4)")
    assert not split.is_equivalent_to(IndexMap.parse("(i) -> (0, i)"))
    assert split.is_equivalent_to(IndexMap.parse("(i) -> (0, i)"), shape=[4])
    assert not split.is_equivalent_to(IndexMap.parse("(i) -> (0, i)"), shape=[5])
    assert not split.is_equivalent_to(IndexMap.identity(1))
    assert not split.is_equivalent_to(IndexMap.identity(2))
    with pytest.raises(ValueError, match="expected an IndexMap"):
        split.is_equivalent_to("x")  # type: ignore[arg-type]


def test_compose() -> None:
    split = IndexMap.parse("(i) -> (i floordiv 4, i mod 4)")
    fuse = IndexMap.parse("(a, b) -> (a * 4 + b)")
    assert str(split.compose(fuse)) == "(i) -> (i)"
    swap = IndexMap.parse("(a, b) -> (b, a)")
    assert str(split.compose(swap)) == "(i) -> (i mod 4, i floordiv 4)"
    assert str(fuse.compose(split, shape=[3, 4])) == "(a, b) -> (a, b)"
    assert str(fuse.compose(split)) == "(a, b) -> (a + b floordiv 4, b mod 4)"
    with pytest.raises(ValueError, match="cannot compose"):
        split.compose(split)
    with pytest.raises(ValueError, match="expected an IndexMap"):
        split.compose(3)  # type: ignore[arg-type]


def test_identity_and_simplify() -> None:
    assert str(IndexMap.identity(3)) == "(i0, i1, i2) -> (i0, i1, i2)"
    assert str(IndexMap.identity(0)) == "() -> ()"
    with pytest.raises(ValueError, match="non-negative"):
        IndexMap.identity(-1)
    m = IndexMap.parse("(i, j) -> ((i floordiv 4) * 4 + i mod 4, (j * 4 + i) floordiv 4)")
    assert str(m.simplify()) == "(i, j) -> (i, j + i floordiv 4)"
    assert str(m.simplify([4, 5])) == "(i, j) -> (i, j)"


# numpy ----------------------------------------------------------------------------------


def test_map_ndarray_nchw4c_matches_reshape_transpose() -> None:
    m = nchw4c()
    x = np.arange(2 * 3 * 5 * 8).reshape(2, 3, 5, 8)
    y = m.map_ndarray(x)
    expected = x.reshape(2, 3, 5, 2, 4).transpose(0, 3, 1, 2, 4)
    assert y.shape == (2, 2, 3, 5, 4)
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(m.inverse_map_ndarray(y, x.shape), x)
    np.testing.assert_array_equal(m.unmap_ndarray(y, x.shape), x)
    inverse = m.inverse(x.shape)
    np.testing.assert_array_equal(inverse.map_ndarray(y), x)


def test_map_ndarray_padding() -> None:
    x = np.arange(10, dtype=np.float32)
    with pytest.raises(ValueError, match=r"padding on shape \[10\]: i0 == 2 and i1 >= 2"):
        SPLIT4.map_ndarray(x)
    y = SPLIT4.map_ndarray(x, pad_value=-1)
    assert y.dtype == np.float32
    assert y.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, -1, -1]]
    np.testing.assert_array_equal(SPLIT4.inverse_map_ndarray(y, [10]), x)
    with pytest.raises(ValueError, match=r"expected an array of shape \[3, 4\]"):
        SPLIT4.inverse_map_ndarray(np.zeros((4, 4)), [10])
    with pytest.raises(ValueError, match="rank 1"):
        SPLIT4.map_ndarray(np.zeros((2, 2)))


def test_map_ndarray_rank0_and_constants() -> None:
    m = IndexMap.parse("() -> (0, 0)")
    y = m.map_ndarray(np.array(5.0))
    assert y.shape == (1, 1)
    assert y[0, 0] == 5.0
    np.testing.assert_array_equal(m.inverse_map_ndarray(y, ()), np.array(5.0))


# Layouts, flattening, xDSL ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "dst", "text"),
    [
        ("NCHW", "NCHW4c", "(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)"),
        ("OIHW", "OIHW4o", "(O, I, H, W) -> (O floordiv 4, I, H, W, O mod 4)"),
        ("NCHW", "NHWC", "(N, C, H, W) -> (N, H, W, C)"),
        ("NCHW4c", "NCHW", "(N, C, H, W, c) -> (N, C * 4 + c, H, W)"),
        ("NCHW4c", "NCHW8c", "(N, C, H, W, c) -> (N, C floordiv 2, H, W, (C mod 2) * 4 + c)"),
        ("NHWC", "NCHW4c", "(N, H, W, C) -> (N, C floordiv 4, H, W, C mod 4)"),
    ],
)
def test_from_layouts(src: str, dst: str, text: str) -> None:
    assert str(IndexMap.from_layouts(src, dst)) == text


def test_from_layouts_round_trip() -> None:
    forward = IndexMap.from_layouts("NCHW", "NCHW4c")
    backward = IndexMap.from_layouts("NCHW4c", "NCHW")
    assert str(forward.compose(backward)) == "(N, C, H, W) -> (N, C, H, W)"


@pytest.mark.parametrize(
    ("src", "dst", "message"),
    [
        ("NCHW", "NCHWX", "different primal axes"),
        ("NCHW", "NCHW4x", "sub-axis 'x' has no primal axis 'X'"),
        ("NCCHW", "NCHW", "duplicate axis 'C'"),
        ("NCHW4c4c", "NCHW", "duplicate axis 'c'"),
        ("NCHWc", "NCHW", "sub-axis 'c' needs a factor"),
        ("NCHW0c", "NCHW", "factor must be positive"),
        ("NC-HW", "NCHW", "invalid character '-'"),
        ("", "NCHW", "non-empty"),
    ],
)
def test_from_layouts_errors(src: str, dst: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        IndexMap.from_layouts(src, dst)


def test_flatten_shape_and_indices() -> None:
    shape = [16, 32, 64, 64, 4]
    assert flatten_shape(shape, [3]) == [32768, 256]
    assert flatten_shape(shape) == [16 * 32 * 64 * 64 * 4]
    assert flatten_shape([], []) == [1]
    assert flatten_shape(shape, [1, 2, 3, 4]) == shape
    assert flatten_indices([11, 25, 37, 23, 1], shape, [3]) == [24165, 93]
    out = flatten_indices([np.arange(2), 0, 0, 0, np.arange(2)], shape, [3])
    assert [np.asarray(v).tolist() for v in out] == [[0, 2048], [0, 1]]
    exprs = flatten_exprs([Dim("a"), 0, 0, Dim("b"), Dim("c")], shape, [3])
    assert [str(e) for e in exprs] == ["a * 2048", "b * 4 + c"]


@pytest.mark.parametrize(
    ("separators", "message"),
    [
        ([0], "out of range"),
        ([5], "out of range"),
        ([3, 2], "strictly increasing"),
        ([2, 2], "strictly increasing"),
        ([1.5], "must be integers"),
    ],
)
def test_separator_validation(separators: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        flatten_shape([1, 2, 3, 4, 5], separators)
    with pytest.raises(ValueError, match=message):
        validate_axis_separators(separators, 5)


def test_flatten_errors() -> None:
    with pytest.raises(ValueError, match="expected 2 indices"):
        flatten_indices([1], [2, 3])
    with pytest.raises(ValueError, match="extents must be positive"):
        flatten_shape([0, 3])


def test_to_and_from_affine_map() -> None:
    m = nchw4c()
    affine = m.to_affine_map()
    assert isinstance(affine, AffineMap)
    assert str(affine) == "(d0, d1, d2, d3) -> (d0, (d3 floordiv 4), d1, d2, (d3 mod 4))"
    assert affine.eval([1, 2, 3, 101], []) == (1, 25, 2, 3, 1)
    back = IndexMap.from_affine_map(affine, ["n", "h", "w", "c"])
    assert back == m
    other = IndexMap.parse("(i, j) -> (i ceildiv 2 - j * 3 + 1)")
    assert IndexMap.from_affine_map(other.to_affine_map(), ["i", "j"]).is_equivalent_to(other)
    with pytest.raises(ValueError, match="has symbols"):
        IndexMap.from_affine_map(AffineMap.identity(1, 1))


def test_to_isl_map() -> None:
    assert m_str(nchw4c().to_isl_map()).startswith("{ [x0, x1, x2, x3] -> [i0 = x0, i1, i2 = x1")
    assert "x0 <= 9" in m_str(SPLIT4.to_isl_map([10]))


def m_str(value: object) -> str:
    return str(value)


def test_reversed_fuse_inverts() -> None:
    """A fuse with negative coefficients (a reversed flattening) has a single inverse."""
    m = IndexMap.parse("(i0, i1, i2) -> (i0 * -4 - i1 * 2 - i2 + 7)")
    inv = m.inverse([2, 2, 2])
    for flat in range(8):
        assert m.map_indices(inv.map_indices([flat])) == [flat]
    x = np.arange(8.0).reshape(2, 2, 2)
    np.testing.assert_array_equal(m.map_ndarray(x), np.arange(8.0)[::-1])
    mixed = IndexMap.parse("(i0, i1, i2) -> (i0 * -4 - i1 * 2 + i2 + 6)")
    inv = mixed.inverse([2, 2, 2])
    for flat in range(8):
        assert mixed.map_indices(inv.map_indices([flat])) == [flat]


def test_map_ndarray_to_a_rank0_result() -> None:
    # Found by the random-program checker: `(a0) -> ()` is injective on [1].
    index_map = IndexMap.parse("(a0) -> ()")
    out = index_map.map_ndarray(np.array([3.5], dtype=np.float32))
    assert out.shape == () and out.dtype == np.float32 and float(out) == 3.5
    back = index_map.inverse_map_ndarray(out, [1])
    assert back.shape == (1,) and float(back[0]) == 3.5
