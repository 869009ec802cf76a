"""Quasi-affine expressions -> C text (the index arithmetic of the OpenCL C target).

`expr_to_c` prints an expression as a C `int` expression with the exact floor semantics:
divisions and remainders of operands proven non-negative on the given bounds are C's
truncating `/` and `%` (equal to floor there); the others call the floor helpers
`px_floordiv`, `px_ceildiv` and `px_mod`, whose names are recorded so that the caller
(`physlayout.lowering.opencl_c`, which owns their C definitions) can emit them.
"""

from __future__ import annotations

from collections.abc import Mapping

from physlayout.indexing.expr_range import is_non_negative
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
)

# C precedences of the printed forms: a sub-expression printed where a higher one is
# required is parenthesized.
_ADDITIVE = 1
_MULTIPLICATIVE = 2
_ATOM = 3


def expr_to_c(expr: Expr, leaves: Mapping[str, str], bounds: Bounds, helpers: set[str]) -> str:
    """`expr` as a C `int` expression; `leaves` spells each dimension and `bounds` gives
    the known inclusive ranges of dimensions. The names of the floor helpers the text
    calls are added to `helpers`.

    Raises:
        ValueError: `expr` is not a quasi-affine expression.
    """
    return _expr_to_c(expr, leaves, bounds, helpers)[0]


def _expr_to_c(
    expr: Expr, leaves: Mapping[str, str], bounds: Bounds, helpers: set[str]
) -> tuple[str, int]:
    """The text of `expr` and its precedence."""

    def sub(e: Expr, min_prec: int) -> str:
        text, prec = _expr_to_c(e, leaves, bounds, helpers)
        return text if prec >= min_prec else f"({text})"

    match expr:
        case Dim(name=name):
            return leaves[name], _ATOM
        case Const(value=value):
            return (str(value), _ATOM) if value >= 0 else (f"({value})", _ATOM)
        case Add(lhs=lhs, rhs=Mul(lhs=rhs, rhs=Const(value=-1))):
            return f"{sub(lhs, _ADDITIVE)} - {sub(rhs, _MULTIPLICATIVE)}", _ADDITIVE
        case Add(lhs=lhs, rhs=Const(value=value)) if value < 0:
            return f"{sub(lhs, _ADDITIVE)} - {-value}", _ADDITIVE
        case Add(lhs=lhs, rhs=rhs):
            return f"{sub(lhs, _ADDITIVE)} + {sub(rhs, _MULTIPLICATIVE)}", _ADDITIVE
        case Mul(lhs=lhs, rhs=rhs):
            return f"{sub(lhs, _MULTIPLICATIVE)} * {sub(rhs, _ATOM)}", _MULTIPLICATIVE
        case FloorDiv(lhs=lhs, divisor=k) if is_non_negative(lhs, bounds):
            return f"{sub(lhs, _MULTIPLICATIVE)} / {k}", _MULTIPLICATIVE
        case Mod(lhs=lhs, divisor=k) if is_non_negative(lhs, bounds):
            return f"{sub(lhs, _MULTIPLICATIVE)} % {k}", _MULTIPLICATIVE
        case CeilDiv(lhs=lhs, divisor=k) if is_non_negative(lhs, bounds):
            return f"({sub(lhs, _ADDITIVE)} + {k - 1}) / {k}", _MULTIPLICATIVE
        case FloorDiv(lhs=lhs, divisor=k):
            helpers.add("px_floordiv")
            return f"px_floordiv({sub(lhs, _ADDITIVE)}, {k})", _ATOM
        case CeilDiv(lhs=lhs, divisor=k):
            helpers.add("px_ceildiv")
            return f"px_ceildiv({sub(lhs, _ADDITIVE)}, {k})", _ATOM
        case Mod(lhs=lhs, divisor=k):
            helpers.add("px_mod")
            return f"px_mod({sub(lhs, _ADDITIVE)}, {k})", _ATOM
        case _:
            raise ValueError(f"cannot print index expression {expr}")
