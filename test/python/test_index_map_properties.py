"""Property tests (hypothesis) of quasi-affine expressions and IndexMap, checked against
brute-force enumeration of small boxes."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from physlayout.indexing.expr_parser import parse_expr
from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import CeilDiv, Const, Dim, Expr, FloorDiv, Mod
from physlayout.indexing.simplify import simplify

PROPERTY = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

# Expressions ------------------------------------------------------------------------------

NAMES = ("i", "j", "k")
DIVISORS = st.sampled_from([1, 2, 3, 4, 6, 8])


def _extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    unary: list[st.SearchStrategy[Expr]] = [
        st.builds(lambda e, c: e * c, children, st.integers(-4, 8)),
        st.builds(lambda e, c: c * e, children, st.integers(-4, 8)),
        st.builds(FloorDiv, children, DIVISORS),
        st.builds(CeilDiv, children, DIVISORS),
        st.builds(Mod, children, DIVISORS),
        st.builds(lambda e: -e, children),
    ]
    binary: list[st.SearchStrategy[Expr]] = [
        st.builds(lambda a, b: a + b, children, children),
        st.builds(lambda a, b: a - b, children, children),
    ]
    return st.one_of(*unary, *binary)


EXPRS: st.SearchStrategy[Expr] = st.recursive(
    st.one_of(
        st.sampled_from([Dim(n) for n in NAMES]),
        st.integers(-6, 9).map(Const),
    ),
    _extend,
    max_leaves=8,
)


@st.composite
def boxes(draw: st.DrawFn) -> dict[str, tuple[int, int]]:
    result: dict[str, tuple[int, int]] = {}
    for name in NAMES:
        lo = draw(st.integers(-4, 4))
        result[name] = (lo, lo + draw(st.integers(0, 7)))
    return result


def _box_env(bounds: dict[str, tuple[int, int]]) -> dict[str, np.ndarray]:
    grids = np.meshgrid(*(np.arange(lo, hi + 1) for lo, hi in bounds.values()), indexing="ij")
    return {name: grid.ravel().astype(np.int64) for name, grid in zip(bounds, grids, strict=True)}


def _values(expr: Expr, env: dict[str, np.ndarray]) -> np.ndarray:
    size = len(next(iter(env.values())))
    return np.broadcast_to(np.asarray(expr.evaluate(env)), (size,))


@PROPERTY
@given(EXPRS)
def test_print_parse_round_trip(expr: Expr) -> None:
    assert parse_expr(str(expr), NAMES) == expr


@PROPERTY
@given(EXPRS, boxes())
def test_simplify_never_changes_values(expr: Expr, bounds: dict[str, tuple[int, int]]) -> None:
    env = _box_env(bounds)
    expected = _values(expr, env)
    np.testing.assert_array_equal(_values(simplify(expr, bounds), env), expected)
    np.testing.assert_array_equal(_values(simplify(expr), env), expected)
    simplified = simplify(expr, bounds)
    assert parse_expr(str(simplified), NAMES) == simplified


@PROPERTY
@given(EXPRS, boxes())
def test_simplify_is_idempotent(expr: Expr, bounds: dict[str, tuple[int, int]]) -> None:
    once = simplify(expr, bounds)
    assert simplify(once, bounds) == once
    plain = simplify(expr)
    assert simplify(plain) == plain


@PROPERTY
@given(EXPRS, boxes())
def test_expr_range_contains_all_values(expr: Expr, bounds: dict[str, tuple[int, int]]) -> None:
    lo, hi = expr_range(expr, bounds)
    values = _values(expr, _box_env(bounds))
    assert lo <= values.min() and values.max() <= hi


@PROPERTY
@given(EXPRS, boxes())
def test_vectorized_evaluation_matches_scalar(
    expr: Expr, bounds: dict[str, tuple[int, int]]
) -> None:
    env = _box_env(bounds)
    vector = _values(expr, env)
    for index in range(0, len(vector), 7):
        scalar = expr.evaluate({name: int(values[index]) for name, values in env.items()})
        assert scalar == vector[index]


# Index maps -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MapCase:
    """A generated map, the shape it is applied to, and how it was built."""

    imap: IndexMap
    shape: tuple[int, ...]
    ops: tuple[str, ...]

    @property
    def lossy(self) -> bool:
        return any(op in ("drop", "sum", "modonly") for op in self.ops)


Axis = tuple[Expr, int]  # expression and its structural extent


def _permute(axes: list[Axis], draw: st.DrawFn) -> list[Axis]:
    return draw(st.permutations(axes))


def _split(axes: list[Axis], draw: st.DrawFn) -> list[Axis]:
    a = draw(st.integers(0, len(axes) - 1))
    expr, extent = axes[a]
    f = draw(st.sampled_from([2, 3, 4]))
    return [*axes[:a], (expr // f, -(-extent // f)), (expr % f, f), *axes[a + 1 :]]


def _fuse(axes: list[Axis], draw: st.DrawFn) -> list[Axis]:
    if len(axes) < 2:
        return axes
    a = draw(st.integers(0, len(axes) - 2))
    (e1, n1), (e2, n2) = axes[a], axes[a + 1]
    return [*axes[:a], (e1 * n2 + e2, n1 * n2), *axes[a + 2 :]]


def _skew(axes: list[Axis], draw: st.DrawFn) -> list[Axis]:
    if len(axes) < 2:
        return axes
    a, b = draw(st.permutations(range(len(axes))))[:2]
    (e1, n1), (e2, n2) = axes[a], axes[b]
    result = list(axes)
    result[b] = (e1 + e2, n1 + n2 - 1)
    return result


def _drop(axes: list[Axis], draw: st.DrawFn) -> list[Axis]:
    a = draw(st.integers(0, len(axes) - 1))
    expr, extent = axes[a]
    f = draw(st.sampled_from([2, 3]))
    return [*axes[:a], (expr // f, -(-extent // f)), *axes[a + 1 :]]


def _mod_only(axes: list[Axis], draw: st.DrawFn) -> list[Axis]:
    a = draw(st.integers(0, len(axes) - 1))
    expr, _ = axes[a]
    f = draw(st.sampled_from([2, 3]))
    return [*axes[:a], (expr % f, f), *axes[a + 1 :]]


def _sum(axes: list[Axis], draw: st.DrawFn) -> list[Axis]:
    if len(axes) < 2:
        return axes
    a = draw(st.integers(0, len(axes) - 2))
    (e1, n1), (e2, n2) = axes[a], axes[a + 1]
    return [*axes[:a], (e1 + e2, n1 + n2 - 1), *axes[a + 2 :]]


OPS: dict[str, Callable[[list[Axis], st.DrawFn], list[Axis]]] = {
    "permute": _permute,
    "split": _split,
    "fuse": _fuse,
    "skew": _skew,
    "drop": _drop,
    "modonly": _mod_only,
    "sum": _sum,
}


@st.composite
def map_cases(draw: st.DrawFn, ops: tuple[str, ...], max_steps: int = 4) -> MapCase:
    ndim = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 8)) for _ in range(ndim)]
    while math.prod(shape) > 256:
        shape[shape.index(max(shape))] //= 2
    names = tuple(f"x{k}" for k in range(ndim))
    axes: list[Axis] = [(Dim(n), e) for n, e in zip(names, shape, strict=True)]
    used = draw(st.lists(st.sampled_from(ops), min_size=1, max_size=max_steps))
    for op in used:
        axes = OPS[op](axes, draw)
    return MapCase(IndexMap(names, tuple(e for e, _ in axes)), tuple(shape), tuple(used))


BIJECTIVE_OPS = ("permute", "split", "fuse")
INJECTIVE_OPS = (*BIJECTIVE_OPS, "skew")
ALL_OPS = (*INJECTIVE_OPS, "drop", "modonly", "sum")


def _domain(shape: tuple[int, ...]) -> list[np.ndarray]:
    grids = np.indices(shape) if shape else np.zeros((0, 1), dtype=np.int64)
    return [g.ravel() for g in grids]


def _image(case: MapCase) -> np.ndarray:
    """Images of all box points, one row per point."""
    points = _domain(case.shape)
    size = len(points[0]) if points else 1
    columns = [np.broadcast_to(np.asarray(v), (size,)) for v in case.imap.map_indices(points)]
    return np.stack(columns, axis=1) if columns else np.zeros((size, 0), dtype=np.int64)


@PROPERTY
@given(map_cases(ALL_OPS))
def test_is_injective_matches_enumeration(case: MapCase) -> None:
    image = _image(case)
    distinct = len({tuple(row) for row in image.tolist()})
    expected = distinct == len(image)
    assert case.imap.is_injective(case.shape) == expected
    collision = case.imap.find_collision(case.shape)
    if expected:
        assert collision is None
        return
    assert collision is not None
    first, second = collision
    assert first != second
    assert all(0 <= v < n for v, n in zip(first + second, case.shape * 2, strict=True))
    assert case.imap.map_indices(first) == case.imap.map_indices(second)
    with pytest.raises(ValueError, match="is not injective on shape"):
        case.imap.non_surjective_inverse(case.shape)


@PROPERTY
@given(map_cases(ALL_OPS))
def test_padding_predicate_matches_enumeration(case: MapCase) -> None:
    out_shape = case.imap.map_shape(case.shape)
    image = {tuple(row) for row in _image(case).tolist()}
    assert all(0 <= v < n for row in image for v, n in zip(row, out_shape, strict=True))
    box = set(itertools.product(*(range(n) for n in out_shape)))
    expected = box - image
    predicate = case.imap.padding_predicate(case.shape)
    if not expected:
        assert predicate is None
        return
    assert predicate is not None
    grid = [g.ravel() for g in np.indices(out_shape)]
    mask = np.broadcast_to(np.asarray(predicate(grid)), (len(grid[0]),))
    found = {tuple(int(g[k]) for g in grid) for k in np.flatnonzero(mask)}
    assert found == expected


@PROPERTY
@given(map_cases(INJECTIVE_OPS))
def test_inverse_round_trip(case: MapCase) -> None:
    imap, shape = case.imap, case.shape
    try:
        inverse, predicate = imap.non_surjective_inverse(shape)
    except ValueError as err:
        # Skews of skews can have piecewise inverses; nothing else may fail.
        assert "skew" in case.ops and "no single quasi-affine" in str(err)
        return
    points = _domain(shape)
    back = inverse.map_indices(list(_image(case).T))
    for original, recovered in zip(points, back, strict=True):
        np.testing.assert_array_equal(np.broadcast_to(recovered, original.shape), original)
    x = np.arange(math.prod(shape), dtype=np.int64).reshape(shape) + 1
    y = imap.map_ndarray(x, pad_value=0)
    np.testing.assert_array_equal(imap.inverse_map_ndarray(y, shape), x)
    if predicate is not None:
        grid = np.indices(y.shape)
        np.testing.assert_array_equal(predicate(list(grid)), y == 0)
        return
    assert imap.inverse(shape) == inverse
    np.testing.assert_array_equal(inverse.map_ndarray(y), x)


@PROPERTY
@given(map_cases(BIJECTIVE_OPS))
def test_compose_with_inverse_is_identity(case: MapCase) -> None:
    imap, shape = case.imap, case.shape
    inverse, predicate = imap.non_surjective_inverse(shape)
    identity = IndexMap(imap.initial_indices, tuple(Dim(n) for n in imap.initial_indices))
    composed = imap.compose(inverse, shape=shape)
    assert composed.is_equivalent_to(identity, shape)
    if predicate is None:
        assert composed == identity, str(composed)
        assert inverse.compose(imap, shape=imap.map_shape(shape)).is_equivalent_to(
            IndexMap.identity(imap.final_ndim), imap.map_shape(shape)
        )


@PROPERTY
@given(map_cases(ALL_OPS), st.data())
def test_map_text_round_trip(case: MapCase, data: st.DataObject) -> None:
    imap = case.imap
    assert IndexMap.parse(str(imap)) == imap
    assert IndexMap.parse(str(imap.simplify())) == imap.simplify()
    positions = list(range(1, imap.final_ndim))
    separators = sorted(data.draw(st.sets(st.sampled_from(positions))) if positions else [])
    text = imap.to_string(separators)
    assert IndexMap.parse_with_separators(text) == (imap, tuple(separators))
    assert IndexMap.parse_with_separators(text)[0].to_string(separators) == text


@PROPERTY
@given(map_cases(ALL_OPS))
def test_simplified_map_is_equivalent(case: MapCase) -> None:
    imap, shape = case.imap, case.shape
    assert imap.simplify().is_equivalent_to(imap)
    assert imap.simplify(shape).is_equivalent_to(imap, shape)
    assert imap.map_shape(shape) == imap.simplify().map_shape(shape)
