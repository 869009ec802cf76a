"""Quasi-affine index expressions over named dimensions: the AST and its printer.

A quasi-affine expression is built from named dimensions (`Dim`), integer constants
(`Const`), sums (`Add`), products in which at least one factor is a constant (`Mul`), and
`floordiv`, `ceildiv` and `mod` by positive integer constants (`FloorDiv`, `CeilDiv`, `Mod`).
This is exactly the expression language of MLIR affine maps without symbols.

Semantics are those of MLIR (and of Python's `//` and `%` on ints):

* ``e floordiv k`` is ``floor(e / k)`` (rounds toward negative infinity),
* ``e ceildiv k`` is ``ceil(e / k)``,
* ``e mod k`` is ``e - k * (e floordiv k)`` and always lies in ``[0, k)``.

This module holds the expression AST (frozen, hashable dataclasses, equality is
structural), the Python operators (``+ - * // %`` and unary ``-``) that build expressions,
so a Python function written against `Dim` objects produces an expression, `Expr.evaluate`
(on Python ints or elementwise on integer numpy arrays) and ``str(expr)`` (MLIR affine
syntax with named dimensions; the printer emits the fewest parentheses that make
``parse_expr(str(e)) == e`` hold). The rest of the algebra lives beside it:
`physlayout.indexing.expr_parser` (`parse_expr`), `physlayout.indexing.expr_range`
(interval analysis) and `physlayout.indexing.simplify` (canonical forms).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, TypeVar, cast

if TYPE_CHECKING:
    import numpy as np

IndexValue: TypeAlias = "int | np.ndarray"
"""A concrete index value: a Python int or an integer numpy array (evaluated elementwise)."""

ExprLike: TypeAlias = "Expr | int"
"""Anything that `as_expr` accepts."""

_T = TypeVar("_T")

Bounds: TypeAlias = Mapping[str, tuple[int, int]]
"""Inclusive ``(min, max)`` bounds per dimension name."""

KEYWORDS = frozenset({"floordiv", "ceildiv", "mod"})
"""Words reserved by the expression syntax; they cannot be dimension names."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Printing precedences: a sub-expression printed where a higher precedence is required is
# parenthesized.
_SUM = 0
_TERM = 1
_UNARY = 2
_ATOM = 3


def is_valid_name(name: object) -> bool:
    """Whether `name` can be a dimension name: a str identifier that is not a keyword."""
    return isinstance(name, str) and bool(_IDENTIFIER.match(name)) and name not in KEYWORDS


def loaded_numpy() -> Any:
    """The numpy module when something has imported it, else None. A numpy value cannot
    exist before numpy is imported, so type tests against numpy classes need not import it
    (the IndexMap engine imports numpy only for array work)."""
    return sys.modules.get("numpy")


def is_int(value: object) -> bool:
    """True for Python and numpy integers, False for bools and everything else."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    numpy = loaded_numpy()
    return numpy is not None and isinstance(value, numpy.integer)


def is_ndarray(value: object) -> bool:
    """Whether `value` is a numpy array (without importing numpy)."""
    numpy = loaded_numpy()
    return numpy is not None and isinstance(value, numpy.ndarray)


def as_expr(value: ExprLike) -> Expr:
    """Convert an `Expr` or an integer into an `Expr`.

    Raises:
        ValueError: `value` is neither an `Expr` nor an integer (bools are rejected).
    """
    if isinstance(value, Expr):
        return value
    if is_int(value):
        return Const(int(value))
    raise ValueError(
        f"cannot use {value!r} of type {type(value).__name__} in a quasi-affine expression"
    )


def constant_value(expr: Expr) -> int | None:
    """The value of `expr` if it mentions no dimension, else None."""
    if isinstance(expr, Const):
        return expr.value
    if expr.dims():
        return None
    value = expr.evaluate({})
    assert isinstance(value, int)
    return value


def _check_divisor(divisor: object) -> int:
    """Return `divisor` as an int; raise ValueError unless it is an integer > 0."""
    if not is_int(divisor) or int(divisor) <= 0:  # type: ignore[arg-type]
        raise ValueError(f"divisor must be a positive constant, got {divisor!r}")
    return int(divisor)  # type: ignore[arg-type]


def _divisor_of(op: str, lhs: ExprLike, rhs: ExprLike) -> int:
    """The positive divisor of `lhs op rhs`; raises ValueError for non-constant divisors."""
    if isinstance(rhs, Expr):
        value = constant_value(rhs)
        if value is None:
            text = f"{_format(as_expr(lhs), _UNARY)} {op} {_format(rhs, _UNARY)}"
            raise ValueError(
                f"expression '{text}' is not quasi-affine: the divisor of {op} must be a constant"
            )
        return _check_divisor(value)
    return _check_divisor(rhs)


@dataclass(frozen=True)
class Expr:
    """Base class of quasi-affine expressions.

    Expressions are immutable and hashable; ``==`` compares structure (``i + j`` and
    ``j + i`` are different expressions; use `simplify` to obtain a canonical form).
    Python operators build expressions from expressions and ints: ``+``, ``-``, ``*`` (one
    side must be constant), ``//`` (floordiv) and ``%`` (mod) by positive constants, and
    unary ``-``. When both operands are `Const`, operators fold them into a `Const`.

    A plain class, not an `abc.ABC`: `isinstance` against an ABC goes through
    `ABCMeta.__instancecheck__` (a Python-level call, about 4x a plain class's check), and
    the kernel writer and `simplify` test node classes hundreds of thousands of times per
    model. The abstract methods raise `NotImplementedError`; only the node classes below
    derive from it.
    """

    # Make numpy defer to our reflected operators (``np.int64(2) * Dim("i")``).
    __array_ufunc__: ClassVar[None] = None

    def dims(self) -> frozenset[str]:
        """The set of dimension names that occur in the expression."""
        raise NotImplementedError

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        """Evaluate with floor semantics.

        `env` maps every dimension name of the expression to a Python int or an integer
        numpy array; arrays are evaluated elementwise (as int64) and broadcast together.
        The result is an int when all used values are ints.

        Raises:
            ValueError: a dimension has no value in `env`, or a value is not an integer.
        """
        raise NotImplementedError

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        """Replace dimensions by expressions (dimensions not in `mapping` are kept).

        The result is built with the Python operators, so constants are folded where both
        operands are constants; it is not otherwise simplified.
        """
        raise NotImplementedError

    def __str__(self) -> str:
        return _format(self, _SUM)

    def __getstate__(self) -> dict[str, Any]:
        # pickled without the memos `_remember` keeps (a str's hash differs between processes)
        return {k: v for k, v in self.__dict__.items() if k not in _MEMOS}

    # Arithmetic -----------------------------------------------------------------------

    def __add__(self, other: ExprLike) -> Expr:
        rhs = as_expr(other)
        if isinstance(self, Const) and isinstance(rhs, Const):
            return Const(self.value + rhs.value)
        return Add(self, rhs)

    def __radd__(self, other: ExprLike) -> Expr:
        return as_expr(other) + self

    def __sub__(self, other: ExprLike) -> Expr:
        return self + negate(as_expr(other))

    def __rsub__(self, other: ExprLike) -> Expr:
        return as_expr(other) + negate(self)

    def __mul__(self, other: ExprLike) -> Expr:
        rhs = as_expr(other)
        if isinstance(self, Const) and isinstance(rhs, Const):
            return Const(self.value * rhs.value)
        return Mul(self, rhs)

    def __rmul__(self, other: ExprLike) -> Expr:
        return as_expr(other) * self

    def __floordiv__(self, other: ExprLike) -> Expr:
        divisor = _divisor_of("floordiv", self, other)
        if isinstance(self, Const):
            return Const(self.value // divisor)
        return FloorDiv(self, divisor)

    def __rfloordiv__(self, other: ExprLike) -> Expr:
        return as_expr(other) // self

    def __mod__(self, other: ExprLike) -> Expr:
        divisor = _divisor_of("mod", self, other)
        if isinstance(self, Const):
            return Const(self.value % divisor)
        return Mod(self, divisor)

    def __rmod__(self, other: ExprLike) -> Expr:
        return as_expr(other) % self

    def __neg__(self) -> Expr:
        return negate(self)

    def __pos__(self) -> Expr:
        return self

    def __truediv__(self, other: object) -> Expr:
        raise ValueError("true division '/' is not quasi-affine; use '//' (floordiv) or ceildiv()")

    def __rtruediv__(self, other: object) -> Expr:
        raise ValueError("true division '/' is not quasi-affine; use '//' (floordiv) or ceildiv()")


@dataclass(frozen=True)
class Dim(Expr):
    """A named dimension (an index variable)."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not is_valid_name(self.name):
            raise ValueError(f"invalid dimension name {self.name!r}")

    def dims(self) -> frozenset[str]:
        return frozenset((self.name,))

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        if self.name not in env:
            raise ValueError(f"no value for dimension '{self.name}'")
        return _as_index_value(self.name, env[self.name])

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        if self.name in mapping:
            return as_expr(mapping[self.name])
        return self


@dataclass(frozen=True)
class Const(Expr):
    """An integer constant."""

    value: int

    def __post_init__(self) -> None:
        if not is_int(self.value):
            raise ValueError(f"constant must be an integer, got {self.value!r}")
        object.__setattr__(self, "value", int(self.value))

    def dims(self) -> frozenset[str]:
        return frozenset()

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return self.value

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return self


@dataclass(frozen=True)
class Binary(Expr):
    """A node of two operand expressions (`Add`, `Mul`): its hash and dimensions are
    remembered once computed (`_remember`)."""

    lhs: Expr
    rhs: Expr

    def __hash__(self) -> int:
        found = self.__dict__.get("_hash")
        if found is None:
            found = _remember(self, "_hash", hash((self.lhs, self.rhs)))
        return found

    def dims(self) -> frozenset[str]:
        found = self.__dict__.get("_dims")
        if found is None:
            found = _remember(self, "_dims", self.lhs.dims() | self.rhs.dims())
        return found


@dataclass(frozen=True)
class Add(Binary):
    """The sum ``lhs + rhs``."""

    __hash__ = Binary.__hash__

    def __post_init__(self) -> None:
        _check_operands(self, self.lhs, self.rhs)


    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return self.lhs.evaluate(env) + self.rhs.evaluate(env)

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return self.lhs.substitute(mapping) + self.rhs.substitute(mapping)


@dataclass(frozen=True)
class Mul(Binary):
    """The product ``lhs * rhs``; at least one factor is constant.

    A factor that mentions no dimension (such as ``2 + 3``) is folded into a `Const` at
    construction, so after construction at least one of `lhs` and `rhs` is a `Const`.

    Raises:
        ValueError: both factors mention dimensions (the product is not quasi-affine).
    """

    __hash__ = Binary.__hash__

    def __post_init__(self) -> None:
        _check_operands(self, self.lhs, self.rhs)
        lhs_value = constant_value(self.lhs)
        rhs_value = constant_value(self.rhs)
        if lhs_value is None and rhs_value is None:
            text = f"{_format(self.lhs, _UNARY)} * {_format(self.rhs, _UNARY)}"
            raise ValueError(
                f"expression '{text}' is not quasi-affine: product of two non-constant terms"
            )
        if lhs_value is not None:
            object.__setattr__(self, "lhs", Const(lhs_value))
        if rhs_value is not None:
            object.__setattr__(self, "rhs", Const(rhs_value))


    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return self.lhs.evaluate(env) * self.rhs.evaluate(env)

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return self.lhs.substitute(mapping) * self.rhs.substitute(mapping)


@dataclass(frozen=True)
class DivLike(Expr):
    """Common part of `FloorDiv`, `CeilDiv` and `Mod`: an operand and a divisor > 0."""

    lhs: Expr
    divisor: int

    keyword: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if not _is_expr(self.lhs):
            raise ValueError(f"operand of {self.keyword} must be an expression, got {self.lhs!r}")
        object.__setattr__(self, "divisor", _check_divisor(self.divisor))

    def __hash__(self) -> int:
        found = self.__dict__.get("_hash")
        if found is None:
            found = _remember(self, "_hash", hash((self.lhs, self.divisor)))
        return found

    def dims(self) -> frozenset[str]:
        return self.lhs.dims()


@dataclass(frozen=True)
class FloorDiv(DivLike):
    """``lhs floordiv divisor``: floor(lhs / divisor), divisor > 0."""

    keyword: ClassVar[str] = "floordiv"
    __hash__ = DivLike.__hash__

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return self.lhs.evaluate(env) // self.divisor

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return self.lhs.substitute(mapping) // self.divisor


@dataclass(frozen=True)
class CeilDiv(DivLike):
    """``lhs ceildiv divisor``: ceil(lhs / divisor), divisor > 0."""

    keyword: ClassVar[str] = "ceildiv"
    __hash__ = DivLike.__hash__

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return -((-self.lhs.evaluate(env)) // self.divisor)

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return ceildiv(self.lhs.substitute(mapping), self.divisor)


@dataclass(frozen=True)
class Mod(DivLike):
    """``lhs mod divisor``: the remainder of floor division, in ``[0, divisor)``."""

    keyword: ClassVar[str] = "mod"
    __hash__ = DivLike.__hash__

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return self.lhs.evaluate(env) % self.divisor

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return self.lhs.substitute(mapping) % self.divisor


_NODES = frozenset({Dim, Const, Add, Mul, FloorDiv, CeilDiv, Mod})
"""The expression classes: their instances are expressions without an `isinstance` call
(building expressions checks every operand)."""


def _is_expr(value: object) -> bool:
    return type(value) in _NODES or isinstance(value, Expr)


_MEMOS = frozenset({"_hash", "_dims"})
"""What a compound node remembers of itself (`_remember`): its hash and its dimensions.
Expressions are immutable trees that the kernel writer and `simplify` hash (memo keys) and
ask for their dimensions many times each; computed again, both walk the whole tree."""


def _remember(node: Expr, name: str, value: _T) -> _T:
    """Keep `value` as `node`'s memo `name` (one of `_MEMOS`; not a field: equality,
    `repr` and pickling ignore it) and return it."""
    object.__setattr__(node, name, value)
    return value


def _check_operands(node: Expr, lhs: object, rhs: object) -> None:
    """Raise ValueError unless both operands of a binary node are expressions."""
    if not _is_expr(lhs) or not _is_expr(rhs):
        raise ValueError(
            f"operands of {type(node).__name__} must be expressions, got {lhs!r} and {rhs!r}"
        )


def _as_index_value(name: str, value: object) -> IndexValue:
    """Validate the value of dimension `name` for `Expr.evaluate`."""
    if is_ndarray(value):
        import numpy as np

        array = cast("np.ndarray", value)
        if array.dtype == np.int64:
            return array
        if not np.issubdtype(array.dtype, np.integer):
            raise ValueError(f"value of dimension '{name}' must be an integer array")
        return array.astype(np.int64)
    if is_int(value):
        return value  # type: ignore[return-value]
    raise ValueError(f"value of dimension '{name}' must be an integer, got {value!r}")


def ceildiv(expr: ExprLike, divisor: ExprLike) -> Expr:
    """Build ``expr ceildiv divisor`` (folded when `expr` is a `Const`).

    Raises:
        ValueError: `divisor` is not a positive constant.
    """
    lhs = as_expr(expr)
    k = _divisor_of("ceildiv", lhs, divisor)
    if isinstance(lhs, Const):
        return Const(-((-lhs.value) // k))
    return CeilDiv(lhs, k)


def negate(expr: Expr) -> Expr:
    """The negation of `expr`, built the way the parser reads ``-x`` after a binary minus.

    ``Const(c)`` becomes ``Const(-c)``; a product with a constant factor gets that factor
    negated (the right factor if it is constant, else the left); anything else ``e``
    becomes ``e * -1``.
    """
    if isinstance(expr, Const):
        return Const(-expr.value)
    if isinstance(expr, Mul):
        if isinstance(expr.rhs, Const):
            return Mul(expr.lhs, Const(-expr.rhs.value))
        if isinstance(expr.lhs, Const):
            return Mul(Const(-expr.lhs.value), expr.rhs)
    return Mul(expr, Const(-1))


# Printing ---------------------------------------------------------------------------------


def _unary_operand(expr: Expr) -> Expr | None:
    """If `expr` prints as unary minus ``-x``, return ``x``."""
    if not isinstance(expr, Mul) or expr.rhs != Const(-1):
        return None
    if isinstance(expr.lhs, Const):
        return None  # ``-5`` would read back as the constant -5
    return expr.lhs


def _subtrahend(expr: Expr) -> Expr | None:
    """If ``a + expr`` can print as ``a - t``, return ``t`` (with ``negate(t) == expr``)."""
    candidate: Expr | None = None
    if isinstance(expr, Const) and expr.value < 0:
        candidate = Const(-expr.value)
    elif isinstance(expr, Mul) and isinstance(expr.rhs, Const) and expr.rhs.value < 0:
        if expr.rhs.value != -1:
            candidate = Mul(expr.lhs, Const(-expr.rhs.value))
        elif not isinstance(expr.lhs, Const | Mul):
            candidate = expr.lhs
    elif isinstance(expr, Mul) and isinstance(expr.lhs, Const) and expr.lhs.value < 0:
        candidate = Mul(Const(-expr.lhs.value), expr.rhs)
    if candidate is None or negate(candidate) != expr:
        return None
    return candidate


def _format(expr: Expr, min_prec: int) -> str:
    """Print `expr`, parenthesized if its precedence is below `min_prec`."""
    text, prec = _format_node(expr)
    return f"({text})" if prec < min_prec else text


def _format_node(expr: Expr) -> tuple[str, int]:
    """Print `expr` at its own precedence; returns the text and the precedence."""
    match expr:
        case Dim(name=name):
            return name, _ATOM
        case Const(value=value):
            return str(value), (_ATOM if value >= 0 else _UNARY)
        case Add(lhs=lhs, rhs=rhs):
            subtrahend = _subtrahend(rhs)
            if subtrahend is not None:
                return f"{_format(lhs, _SUM)} - {_format(subtrahend, _TERM)}", _SUM
            return f"{_format(lhs, _SUM)} + {_format(rhs, _TERM)}", _SUM
        case Mul(lhs=lhs, rhs=rhs):
            operand = _unary_operand(expr)
            if operand is not None:
                return f"-{_format(operand, _ATOM)}", _UNARY
            return f"{_format(lhs, _UNARY)} * {_format(rhs, _UNARY)}", _TERM
        case DivLike(lhs=lhs, divisor=divisor):
            return f"{_format(lhs, _UNARY)} {expr.keyword} {divisor}", _TERM
        case _:
            raise ValueError(f"not a quasi-affine expression: {expr!r}")
