"""Proofs read off the shape of an `IndexMap`'s outputs, without isl: the fast path of
`proofs.is_injective` and `extents.padding_of` for the layouts programs use (permutations,
splits `(c floordiv 4, c mod 4)`, their nests), so a run that applies such layouts does not
load islpy. Each test is a sufficient condition: False means "not proven here" and the
caller decides with isl; a True answer is exact.

Injectivity: a map is injective on a box when every input of extent above 1 can be
computed back from the outputs. The outputs are known; from known ``e floordiv k`` and
``e mod k`` follows ``e = k * (e floordiv k) + e mod k``; from ``e * c`` (c != 0) follows
``e``; from ``e + c`` follows ``e``; from ``a * k + b`` (k > 0) where ``0 <= b < k`` on the
box (interval analysis) follow ``a`` and ``b`` (the quotient and remainder by k: a fused
axis). An input that follows is an input the outputs determine, so two indices with the
same image agree on every input.

No padding: an injective map of a box of N points whose image lies in a transformed box
(interval analysis of each output) of N points covers that box exactly.
"""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING

from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.quasi_affine import Add, Bounds, Const, Dim, Expr, FloorDiv, Mod, Mul
from physlayout.indexing.simplify import simplify

if TYPE_CHECKING:
    from physlayout.indexing.index_map import IndexMap


def _fused_parts(lhs: Expr, rhs: Expr, bounds: Bounds) -> tuple[Expr, Expr] | None:
    """``(a, b)`` when ``lhs + rhs`` is ``a * k + b`` with ``k > 0`` and ``0 <= b < k`` on
    the box, else None."""
    for scaled, rest in ((lhs, rhs), (rhs, lhs)):
        match scaled:
            case Mul(lhs=a, rhs=Const(value=k)) | Mul(lhs=Const(value=k), rhs=a) if k > 0:
                low, high = expr_range(rest, bounds)
                if low >= 0 and high < k:
                    return a, rest
            case _:
                pass
    return None


def _derived(expr: Expr, known: set[Expr], bounds: Bounds) -> tuple[Expr, ...]:
    """What the rules of the module docstring derive from the known `expr`."""
    match expr:
        case FloorDiv(lhs=inner, divisor=k) if Mod(inner, k) in known:
            return (inner,)
        case Mod(lhs=inner, divisor=k) if FloorDiv(inner, k) in known:
            return (inner,)
        case Mul(lhs=inner, rhs=Const(value=c)) | Mul(lhs=Const(value=c), rhs=inner) if c:
            return (inner,)
        case Add(lhs=inner, rhs=Const()) | Add(lhs=Const(), rhs=inner):
            return (inner,)
        case Add(lhs=lhs, rhs=rhs):
            return _fused_parts(lhs, rhs, bounds) or ()
        case _:
            return ()


def _known_expressions(outputs: tuple[Expr, ...], bounds: Bounds) -> set[Expr]:
    """Every expression the outputs determine by the rules of the module docstring."""
    known: set[Expr] = set(outputs)
    pending = list(outputs)
    while pending:
        for found in _derived(pending.pop(), known, bounds):
            if found not in known:
                known.add(found)
                pending.append(found)
    return known


def _box_bounds(imap: IndexMap, dims: tuple[int, ...]) -> Bounds:
    return {name: (0, extent - 1) for name, extent in zip(imap.initial_indices, dims, strict=True)}


def is_injective_structurally(imap: IndexMap, dims: tuple[int, ...]) -> bool:
    """True when every input of extent above 1 follows from the outputs (then the map is
    injective on the box `dims`); False when this test cannot tell."""
    known = _known_expressions(imap.final_indices, _box_bounds(imap, dims))
    return all(
        extent == 1 or Dim(name) in known
        for name, extent in zip(imap.initial_indices, dims, strict=True)
    )


def fits_box_structurally(
    imap: IndexMap, dims: tuple[int, ...], out_shape: tuple[int, ...]
) -> bool:
    """True when interval analysis puts every output of `imap` on the box `dims` within
    ``[0, out_shape_k)`` (then the image lies in the box `out_shape`: the intervals contain
    it); False when this test cannot tell."""
    if len(out_shape) != imap.final_ndim:
        return False
    bounds = _box_bounds(imap, dims)
    for expr, extent in zip(imap.final_indices, out_shape, strict=True):
        low, high = expr_range(simplify(expr, bounds), bounds)
        if low < 0 or high >= extent:
            return False
    return True


def covers_box_structurally(
    imap: IndexMap, dims: tuple[int, ...], out_shape: tuple[int, ...]
) -> bool:
    """True when `imap` maps the box `dims` onto all of the box `out_shape` (no padding):
    injective by `is_injective_structurally`, as many points in both boxes, and the image
    within the box by `fits_box_structurally`. False when this test cannot tell."""
    return (
        prod(dims) == prod(out_shape)
        and fits_box_structurally(imap, dims, out_shape)
        and is_injective_structurally(imap, dims)
    )
