"""Interval analysis of quasi-affine expressions over a box of dimension bounds.

`expr_range` gives an inclusive ``(min, max)`` that contains every value of an expression
on the box (exact when each dimension occurs once); `is_non_negative` is the test the
emitters use to pick truncating division. The interval helpers are shared with
`physlayout.indexing.simplify`.
"""

from __future__ import annotations

from typing import TypeAlias

from physlayout.indexing.quasi_affine import (
    Add,
    Bounds,
    CeilDiv,
    Const,
    Dim,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    is_int,
)

Interval: TypeAlias = tuple[int | None, int | None]
"""An inclusive interval; None stands for minus or plus infinity."""


def add_intervals(a: Interval, b: Interval) -> Interval:
    """The interval of a sum of a value in `a` and a value in `b`."""
    lo = None if a[0] is None or b[0] is None else a[0] + b[0]
    hi = None if a[1] is None or b[1] is None else a[1] + b[1]
    return lo, hi


def scale_interval(a: Interval, factor: int) -> Interval:
    """The interval of ``factor * x`` for ``x`` in `a`."""
    if factor == 0:
        return 0, 0
    lo = None if a[0] is None else a[0] * factor
    hi = None if a[1] is None else a[1] * factor
    return (lo, hi) if factor > 0 else (hi, lo)


def _floordiv_interval(a: Interval, k: int) -> Interval:
    return (None if a[0] is None else a[0] // k, None if a[1] is None else a[1] // k)


def _ceildiv_interval(a: Interval, k: int) -> Interval:
    return (None if a[0] is None else -(-a[0] // k), None if a[1] is None else -(-a[1] // k))


def _mod_interval(a: Interval, k: int) -> Interval:
    lo, hi = a
    if lo is not None and hi is not None and lo // k == hi // k:
        return lo % k, hi % k
    return 0, k - 1


def interval_of(expr: Expr, bounds: Bounds) -> Interval:
    """The interval of `expr`; dimensions missing from `bounds` are unbounded."""
    match expr:
        case Dim(name=name):
            return bounds.get(name, (None, None))
        case Const(value=value):
            return value, value
        case Add(lhs=lhs, rhs=rhs):
            return add_intervals(interval_of(lhs, bounds), interval_of(rhs, bounds))
        case Mul(lhs=Const(value=c), rhs=rhs):
            return scale_interval(interval_of(rhs, bounds), c)
        case Mul(lhs=lhs, rhs=Const(value=c)):
            return scale_interval(interval_of(lhs, bounds), c)
        case FloorDiv(lhs=lhs, divisor=k):
            return _floordiv_interval(interval_of(lhs, bounds), k)
        case CeilDiv(lhs=lhs, divisor=k):
            return _ceildiv_interval(interval_of(lhs, bounds), k)
        case Mod(lhs=lhs, divisor=k):
            return _mod_interval(interval_of(lhs, bounds), k)
        case _:
            raise ValueError(f"not a quasi-affine expression: {expr!r}")


def check_bounds(bounds: Bounds) -> None:
    """Raise ValueError for malformed or empty bounds (pairs ``(lo, hi)`` with ``lo <= hi``)."""
    for name, bound in bounds.items():
        if (
            not isinstance(bound, tuple | list)
            or len(bound) != 2
            or not all(is_int(v) for v in bound)
        ):
            raise ValueError(f"bounds of '{name}' must be a pair of integers, got {bound!r}")
        if bound[0] > bound[1]:
            raise ValueError(f"bounds of '{name}' are empty: [{bound[0]}, {bound[1]}]")


def expr_range(expr: Expr, bounds: Bounds) -> tuple[int, int]:
    """Inclusive ``(min, max)`` of `expr` over the box given by `bounds` (interval analysis).

    Every dimension of `expr` must have inclusive bounds ``(lo, hi)`` with ``lo <= hi``.
    The result always contains every value `expr` takes on the box. It is exact for
    expressions in which each dimension occurs once (e.g. the outputs of splits, fusions and
    permutations): sums add and constant factors scale intervals, ``e floordiv k`` and
    ``e ceildiv k`` divide the bounds of ``e``, and ``e mod k`` gives ``[0, k - 1]`` unless
    the range of ``e`` lies inside one period ``[q*k, q*k + k - 1]``, where it gives
    ``[lo mod k, hi mod k]``. Correlated terms (``i - i``) make it an over-approximation;
    `simplify` the expression first for a tighter result.

    Raises:
        ValueError: a dimension without bounds, or malformed / empty bounds.
    """
    check_bounds(bounds)
    missing = sorted(expr.dims() - set(bounds))
    if missing:
        raise ValueError(f"no bounds given for dimension '{missing[0]}'")
    lo, hi = interval_of(expr, bounds)
    assert lo is not None and hi is not None
    return lo, hi


def is_non_negative(expr: Expr, bounds: Bounds) -> bool:
    """Whether `expr` is provably >= 0 on the box `bounds` (False when a dimension of
    `expr` has no bounds)."""
    if any(name not in bounds for name in expr.dims()):
        return False
    return expr_range(expr, bounds)[0] >= 0
