"""Quasi-affine expressions <-> xDSL affine expressions (`AffineExpr`).

`affine_to_expr` reads an `AffineExpr` over given dimension and symbol values; it answers
None for anything outside the quasi-affine language (a product of two non-constants, a
division by a non-constant or non-positive value, an undeclared position). `expr_to_affine`
writes an expression back, either node for node (``fold=False``, so that
``affine_to_expr(expr_to_affine(e))`` is `e` again) or through xDSL's folding operators
(``fold=True``: constants folded, a product's constant on the right).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from physlayout.indexing.quasi_affine import Add, CeilDiv, Const, Dim, Expr, FloorDiv, Mod, Mul


def affine_to_expr(
    expr: AffineExpr, dims: Sequence[Expr], symbols: Sequence[Expr] = ()
) -> Expr | None:
    """`expr` as a quasi-affine expression, dimension k standing for ``dims[k]`` and symbol
    k for ``symbols[k]``; nodes are kept as they are (no folding). None when `expr` is not
    quasi-affine over those values."""
    match expr:
        case AffineConstantExpr(value=value):
            return Const(value)
        case AffineDimExpr(position=position):
            return dims[position] if 0 <= position < len(dims) else None
        case AffineSymExpr(position=position):
            return symbols[position] if 0 <= position < len(symbols) else None
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            left = affine_to_expr(lhs, dims, symbols)
            right = affine_to_expr(rhs, dims, symbols)
            if left is None or right is None:
                return None
            return _binary_to_expr(kind, left, right)
        case _:
            return None


def _binary_to_expr(kind: AffineBinaryOpKind, left: Expr, right: Expr) -> Expr | None:
    """The quasi-affine node of ``left kind right``, or None."""
    if kind == AffineBinaryOpKind.Add:
        return Add(left, right)
    if kind == AffineBinaryOpKind.Mul:
        if not isinstance(left, Const) and not isinstance(right, Const):
            return None
        return Mul(left, right)
    if not isinstance(right, Const) or right.value <= 0:
        return None
    if kind == AffineBinaryOpKind.FloorDiv:
        return FloorDiv(left, right.value)
    if kind == AffineBinaryOpKind.CeilDiv:
        return CeilDiv(left, right.value)
    return Mod(left, right.value)


def expr_to_affine(
    expr: Expr,
    dims: Mapping[str, int],
    symbols: Mapping[str, int] | None = None,
    *,
    fold: bool = False,
) -> AffineExpr:
    """`expr` as an xDSL affine expression; `dims` and `symbols` give the position of each
    dimension name as an affine dimension or symbol (`dims` first).

    With ``fold=False`` the structure is kept node for node; with ``fold=True`` the nodes
    are combined with xDSL's operators, which fold constants and put a product's constant
    on the right.

    Raises:
        ValueError: `expr` mentions a name in neither mapping.
    """
    syms = symbols or {}

    def convert(node: Expr) -> AffineExpr:
        return expr_to_affine(node, dims, syms, fold=fold)

    match expr:
        case Const(value=value):
            return AffineConstantExpr(value)
        case Dim(name=name) if name in dims:
            return AffineDimExpr(dims[name])
        case Dim(name=name) if name in syms:
            return AffineSymExpr(syms[name])
        case Add(lhs=lhs, rhs=rhs):
            return _binary_to_affine(AffineBinaryOpKind.Add, convert(lhs), convert(rhs), fold)
        case Mul(lhs=lhs, rhs=rhs):
            return _binary_to_affine(AffineBinaryOpKind.Mul, convert(lhs), convert(rhs), fold)
        case FloorDiv(lhs=lhs, divisor=k):
            kind = AffineBinaryOpKind.FloorDiv
        case CeilDiv(lhs=lhs, divisor=k):
            kind = AffineBinaryOpKind.CeilDiv
        case Mod(lhs=lhs, divisor=k):
            kind = AffineBinaryOpKind.Mod
        case _:
            raise ValueError(f"cannot express {expr} as an affine expression")
    return _binary_to_affine(kind, convert(lhs), AffineConstantExpr(k), fold)


def _binary_to_affine(
    kind: AffineBinaryOpKind, lhs: AffineExpr, rhs: AffineExpr, fold: bool
) -> AffineExpr:
    """``lhs kind rhs``, as a plain node or through xDSL's folding operators."""
    if not fold:
        return AffineBinaryOpExpr(kind, lhs, rhs)
    match kind:
        case AffineBinaryOpKind.Add:
            return lhs + rhs
        case AffineBinaryOpKind.Mul:
            return lhs * rhs
        case AffineBinaryOpKind.FloorDiv:
            return lhs // rhs
        case AffineBinaryOpKind.CeilDiv:
            return lhs.ceil_div(rhs)
        case AffineBinaryOpKind.Mod:
            return lhs % rhs
