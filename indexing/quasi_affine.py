"""Quasi-affine index expressions over named dimensions.

A quasi-affine expression is built from named dimensions (`Dim`), integer constants
(`Const`), sums (`Add`), products in which at least one factor is a constant (`Mul`), and
`floordiv`, `ceildiv` and `mod` by positive integer constants (`FloorDiv`, `CeilDiv`, `Mod`).
This is exactly the expression language of MLIR affine maps without symbols.

Semantics are those of MLIR (and of Python's `//` and `%` on ints):

* ``e floordiv k`` is ``floor(e / k)`` (rounds toward negative infinity),
* ``e ceildiv k`` is ``ceil(e / k)``,
* ``e mod k`` is ``e - k * (e floordiv k)`` and always lies in ``[0, k)``.

The module provides

* the expression AST (frozen, hashable dataclasses, equality is structural),
* Python operators (``+ - * // %`` and unary ``-``) that build expressions, so a Python
  function written against `Dim` objects produces an expression,
* `parse_expr` and ``str(expr)`` (MLIR affine syntax with named dimensions; the printer emits
  the fewest parentheses that make ``parse_expr(str(e)) == e`` hold for every expression),
* `Expr.evaluate` on Python ints or elementwise on integer numpy arrays,
* `expr_range` (interval analysis) and `simplify` (canonical small form, optionally using
  the bounds of the dimensions).
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar, TypeAlias

import numpy as np

IndexValue: TypeAlias = "int | np.ndarray"
"""A concrete index value: a Python int or an integer numpy array (evaluated elementwise)."""

ExprLike: TypeAlias = "Expr | int"
"""Anything that `as_expr` accepts."""

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


def _is_int(value: object) -> bool:
    """True for Python and numpy integers, False for bools and everything else."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def as_expr(value: ExprLike) -> Expr:
    """Convert an `Expr` or an integer into an `Expr`.

    Raises:
        ValueError: `value` is neither an `Expr` nor an integer (bools are rejected).
    """
    if isinstance(value, Expr):
        return value
    if _is_int(value):
        return Const(int(value))
    raise ValueError(
        f"cannot use {value!r} of type {type(value).__name__} in a quasi-affine expression"
    )


def _constant_value(expr: Expr) -> int | None:
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
    if not _is_int(divisor) or int(divisor) <= 0:  # type: ignore[arg-type]
        raise ValueError(f"divisor must be a positive constant, got {divisor!r}")
    return int(divisor)  # type: ignore[arg-type]


def _divisor_of(op: str, lhs: ExprLike, rhs: ExprLike) -> int:
    """The positive divisor of `lhs op rhs`; raises ValueError for non-constant divisors."""
    if isinstance(rhs, Expr):
        value = _constant_value(rhs)
        if value is None:
            text = f"{_format(as_expr(lhs), _UNARY)} {op} {_format(rhs, _UNARY)}"
            raise ValueError(
                f"expression '{text}' is not quasi-affine: the divisor of {op} must be a constant"
            )
        return _check_divisor(value)
    return _check_divisor(rhs)


@dataclass(frozen=True)
class Expr(ABC):
    """Base class of quasi-affine expressions.

    Expressions are immutable and hashable; ``==`` compares structure (``i + j`` and
    ``j + i`` are different expressions; use `simplify` to obtain a canonical form).
    Python operators build expressions from expressions and ints: ``+``, ``-``, ``*`` (one
    side must be constant), ``//`` (floordiv) and ``%`` (mod) by positive constants, and
    unary ``-``. When both operands are `Const`, operators fold them into a `Const`.
    """

    # Make numpy defer to our reflected operators (``np.int64(2) * Dim("i")``).
    __array_ufunc__: ClassVar[None] = None

    @abstractmethod
    def dims(self) -> frozenset[str]:
        """The set of dimension names that occur in the expression."""

    @abstractmethod
    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        """Evaluate with floor semantics.

        `env` maps every dimension name of the expression to a Python int or an integer
        numpy array; arrays are evaluated elementwise (as int64) and broadcast together.
        The result is an int when all used values are ints.

        Raises:
            ValueError: a dimension has no value in `env`, or a value is not an integer.
        """

    @abstractmethod
    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        """Replace dimensions by expressions (dimensions not in `mapping` are kept).

        The result is built with the Python operators, so constants are folded where both
        operands are constants; it is not otherwise simplified.
        """

    def __str__(self) -> str:
        return _format(self, _SUM)

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
        if not _is_int(self.value):
            raise ValueError(f"constant must be an integer, got {self.value!r}")
        object.__setattr__(self, "value", int(self.value))

    def dims(self) -> frozenset[str]:
        return frozenset()

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return self.value

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return self


@dataclass(frozen=True)
class Add(Expr):
    """The sum ``lhs + rhs``."""

    lhs: Expr
    rhs: Expr

    def __post_init__(self) -> None:
        _check_operands(self, self.lhs, self.rhs)

    def dims(self) -> frozenset[str]:
        return self.lhs.dims() | self.rhs.dims()

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return self.lhs.evaluate(env) + self.rhs.evaluate(env)

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return self.lhs.substitute(mapping) + self.rhs.substitute(mapping)


@dataclass(frozen=True)
class Mul(Expr):
    """The product ``lhs * rhs``; at least one factor is constant.

    A factor that mentions no dimension (such as ``2 + 3``) is folded into a `Const` at
    construction, so after construction at least one of `lhs` and `rhs` is a `Const`.

    Raises:
        ValueError: both factors mention dimensions (the product is not quasi-affine).
    """

    lhs: Expr
    rhs: Expr

    def __post_init__(self) -> None:
        _check_operands(self, self.lhs, self.rhs)
        lhs_value = _constant_value(self.lhs)
        rhs_value = _constant_value(self.rhs)
        if lhs_value is None and rhs_value is None:
            text = f"{_format(self.lhs, _UNARY)} * {_format(self.rhs, _UNARY)}"
            raise ValueError(
                f"expression '{text}' is not quasi-affine: product of two non-constant terms"
            )
        if lhs_value is not None:
            object.__setattr__(self, "lhs", Const(lhs_value))
        if rhs_value is not None:
            object.__setattr__(self, "rhs", Const(rhs_value))

    def dims(self) -> frozenset[str]:
        return self.lhs.dims() | self.rhs.dims()

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return self.lhs.evaluate(env) * self.rhs.evaluate(env)

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return self.lhs.substitute(mapping) * self.rhs.substitute(mapping)


@dataclass(frozen=True)
class _DivLike(Expr):
    """Common part of `FloorDiv`, `CeilDiv` and `Mod`: an operand and a divisor > 0."""

    lhs: Expr
    divisor: int

    keyword: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if not isinstance(self.lhs, Expr):
            raise ValueError(f"operand of {self.keyword} must be an expression, got {self.lhs!r}")
        object.__setattr__(self, "divisor", _check_divisor(self.divisor))

    def dims(self) -> frozenset[str]:
        return self.lhs.dims()


@dataclass(frozen=True)
class FloorDiv(_DivLike):
    """``lhs floordiv divisor``: floor(lhs / divisor), divisor > 0."""

    keyword: ClassVar[str] = "floordiv"

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return self.lhs.evaluate(env) // self.divisor

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return self.lhs.substitute(mapping) // self.divisor


@dataclass(frozen=True)
class CeilDiv(_DivLike):
    """``lhs ceildiv divisor``: ceil(lhs / divisor), divisor > 0."""

    keyword: ClassVar[str] = "ceildiv"

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return -((-self.lhs.evaluate(env)) // self.divisor)

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return ceildiv(self.lhs.substitute(mapping), self.divisor)


@dataclass(frozen=True)
class Mod(_DivLike):
    """``lhs mod divisor``: the remainder of floor division, in ``[0, divisor)``."""

    keyword: ClassVar[str] = "mod"

    def evaluate(self, env: Mapping[str, IndexValue]) -> IndexValue:
        return self.lhs.evaluate(env) % self.divisor

    def substitute(self, mapping: Mapping[str, ExprLike]) -> Expr:
        return self.lhs.substitute(mapping) % self.divisor


def _check_operands(node: Expr, lhs: object, rhs: object) -> None:
    """Raise ValueError unless both operands of a binary node are expressions."""
    if not isinstance(lhs, Expr) or not isinstance(rhs, Expr):
        raise ValueError(
            f"operands of {type(node).__name__} must be expressions, got {lhs!r} and {rhs!r}"
        )


def _as_index_value(name: str, value: object) -> IndexValue:
    """Validate the value of dimension `name` for `Expr.evaluate`."""
    if isinstance(value, np.ndarray):
        if value.dtype == np.int64:
            return value
        if not np.issubdtype(value.dtype, np.integer):
            raise ValueError(f"value of dimension '{name}' must be an integer array")
        return value.astype(np.int64)
    if _is_int(value):
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
        case _DivLike(lhs=lhs, divisor=divisor):
            return f"{_format(lhs, _UNARY)} {expr.keyword} {divisor}", _TERM
        case _:
            raise ValueError(f"not a quasi-affine expression: {expr!r}")


# Tokenizer and parser ---------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    """A lexical token; `column` is 1-based. `kind` is 'int', 'name', 'punct' or 'eof'."""

    kind: str
    text: str
    column: int


_TOKEN_RE = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(->|[-+*(),|]))")


def tokenize(text: str) -> list[Token]:
    """Split `text` into tokens (ints, names, ``+ - * ( ) , | ->``), ending with 'eof'.

    Raises:
        ValueError: an unexpected character, naming it and its column.
    """
    tokens: list[Token] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            tokens.append(Token("eof", "", pos + 1))
            return tokens
        match = _TOKEN_RE.match(text, pos)
        if match is None:
            raise ValueError(f"unexpected character {text[pos]!r} at column {pos + 1} in '{text}'")
        kind = "int" if match.group(1) else "name" if match.group(2) else "punct"
        start = match.start(match.lastindex or 0)
        tokens.append(Token(kind, match.group(match.lastindex or 0), start + 1))
        pos = match.end()


@dataclass
class ExprParser:
    """Recursive-descent parser for quasi-affine expressions over a token list.

    Grammar (MLIR affine precedence; all binary operators are left-associative)::

        expr  := term (('+' | '-') term)*
        term  := unary (('*' | 'floordiv' | 'ceildiv' | 'mod') unary)*
        unary := '-' unary | INT | NAME | '(' expr ')'

    ``-`` directly followed by an integer literal is a negative constant; ``a - b`` is
    ``a + negate(b)``; the divisor of ``floordiv``/``ceildiv``/``mod`` must be a constant
    expression with a positive value. `dims` lists the known dimension names.
    """

    text: str
    tokens: list[Token]
    dims: Sequence[str]
    pos: int = 0
    _dim_set: frozenset[str] = field(default=frozenset(), init=False)

    def __post_init__(self) -> None:
        self._dim_set = frozenset(self.dims)

    @property
    def current(self) -> Token:
        """The next unconsumed token."""
        return self.tokens[self.pos]

    def error(self, message: str, token: Token | None = None) -> ValueError:
        """A ValueError that names `token` (default: the current one) and its column."""
        tok = token or self.current
        where = "end of input" if tok.kind == "eof" else f"'{tok.text}'"
        return ValueError(f"{message} at {where} (column {tok.column}) in '{self.text}'")

    def accept(self, text: str) -> bool:
        """Consume the current token if it is the punctuation or keyword `text`."""
        if self.current.kind in ("punct", "name") and self.current.text == text:
            self.pos += 1
            return True
        return False

    def expect(self, text: str) -> None:
        """Consume `text` or raise ValueError."""
        if not self.accept(text):
            raise self.error(f"expected '{text}'")

    def parse_expr(self) -> Expr:
        """Parse an ``expr``."""
        result = self.parse_term()
        while self.current.text in ("+", "-") and self.current.kind == "punct":
            op = self.current.text
            self.pos += 1
            rhs = self.parse_term()
            result = Add(result, rhs if op == "+" else negate(rhs))
        return result

    def parse_term(self) -> Expr:
        """Parse a ``term``."""
        result = self.parse_unary()
        while True:
            token = self.current
            if token.kind == "punct" and token.text == "*":
                self.pos += 1
                result = self._build_product(result, self.parse_unary(), token)
            elif token.kind == "name" and token.text in KEYWORDS:
                self.pos += 1
                divisor = self._parse_divisor(token)
                result = _build_div(token.text, result, divisor)
            else:
                return result

    def _build_product(self, lhs: Expr, rhs: Expr, token: Token) -> Expr:
        """Build ``lhs * rhs``, adding the operator's position to a ValueError."""
        try:
            return Mul(lhs, rhs)
        except ValueError as err:
            raise self.error(str(err), token) from None

    def _parse_divisor(self, op: Token) -> int:
        """Parse the constant, positive right operand of `op`."""
        start = self.current
        value = _constant_value(self.parse_unary())
        if value is None:
            raise self.error(f"the divisor of {op.text} must be an integer constant", start)
        if value <= 0:
            raise self.error(f"divisor must be a positive constant, got {value}", start)
        return value

    def parse_unary(self) -> Expr:
        """Parse a ``unary``."""
        token = self.current
        if token.kind == "punct" and token.text == "-":
            self.pos += 1
            if self.current.kind == "int":
                value = int(self.current.text)
                self.pos += 1
                return Const(-value)
            return Mul(self.parse_unary(), Const(-1))
        if token.kind == "int":
            self.pos += 1
            return Const(int(token.text))
        if token.kind == "name":
            return self._parse_name(token)
        if self.accept("("):
            inner = self.parse_expr()
            self.expect(")")
            return inner
        raise self.error("expected an expression")

    def _parse_name(self, token: Token) -> Expr:
        """Parse a dimension name."""
        if token.text in KEYWORDS:
            raise self.error(f"expected an expression before '{token.text}'", token)
        if token.text not in self._dim_set:
            raise self.error(f"unknown dimension '{token.text}'", token)
        self.pos += 1
        return Dim(token.text)


def _build_div(keyword: str, lhs: Expr, divisor: int) -> Expr:
    """Build the `FloorDiv`/`CeilDiv`/`Mod` node named by `keyword`."""
    if keyword == "floordiv":
        return FloorDiv(lhs, divisor)
    if keyword == "ceildiv":
        return CeilDiv(lhs, divisor)
    return Mod(lhs, divisor)


def parse_expr(text: str, dims: Sequence[str]) -> Expr:
    """Parse a quasi-affine expression in MLIR affine syntax over the dimension names `dims`.

    Example: ``parse_expr("n * 32 + c floordiv 4", ["n", "c"])``. Integers, names,
    parentheses, ``+``, ``-``, ``*``, ``floordiv``, ``ceildiv``, ``mod`` and unary minus are
    accepted (see `ExprParser` for the grammar). ``parse_expr(str(e), dims) == e`` holds for
    every expression `e` over `dims`.

    Raises:
        ValueError: bad syntax, an unknown name, a product of two non-constant terms or a
            non-positive / non-constant divisor; the message names the offending token and
            its (1-based) column.
    """
    parser = ExprParser(text, tokenize(text), dims)
    result = parser.parse_expr()
    if parser.current.kind != "eof":
        raise parser.error("unexpected token")
    return result


# Interval analysis ------------------------------------------------------------------------

_Interval: TypeAlias = tuple[int | None, int | None]
"""An inclusive interval; None stands for minus or plus infinity."""


def _add_intervals(a: _Interval, b: _Interval) -> _Interval:
    lo = None if a[0] is None or b[0] is None else a[0] + b[0]
    hi = None if a[1] is None or b[1] is None else a[1] + b[1]
    return lo, hi


def _scale_interval(a: _Interval, factor: int) -> _Interval:
    if factor == 0:
        return 0, 0
    lo = None if a[0] is None else a[0] * factor
    hi = None if a[1] is None else a[1] * factor
    return (lo, hi) if factor > 0 else (hi, lo)


def _floordiv_interval(a: _Interval, k: int) -> _Interval:
    return (None if a[0] is None else a[0] // k, None if a[1] is None else a[1] // k)


def _ceildiv_interval(a: _Interval, k: int) -> _Interval:
    return (None if a[0] is None else -(-a[0] // k), None if a[1] is None else -(-a[1] // k))


def _mod_interval(a: _Interval, k: int) -> _Interval:
    lo, hi = a
    if lo is not None and hi is not None and lo // k == hi // k:
        return lo % k, hi % k
    return 0, k - 1


def _interval(expr: Expr, bounds: Bounds) -> _Interval:
    """Interval of `expr`; dimensions missing from `bounds` are unbounded."""
    match expr:
        case Dim(name=name):
            return bounds.get(name, (None, None))
        case Const(value=value):
            return value, value
        case Add(lhs=lhs, rhs=rhs):
            return _add_intervals(_interval(lhs, bounds), _interval(rhs, bounds))
        case Mul(lhs=Const(value=c), rhs=rhs):
            return _scale_interval(_interval(rhs, bounds), c)
        case Mul(lhs=lhs, rhs=Const(value=c)):
            return _scale_interval(_interval(lhs, bounds), c)
        case FloorDiv(lhs=lhs, divisor=k):
            return _floordiv_interval(_interval(lhs, bounds), k)
        case CeilDiv(lhs=lhs, divisor=k):
            return _ceildiv_interval(_interval(lhs, bounds), k)
        case Mod(lhs=lhs, divisor=k):
            return _mod_interval(_interval(lhs, bounds), k)
        case _:
            raise ValueError(f"not a quasi-affine expression: {expr!r}")


def _check_bounds(bounds: Bounds) -> None:
    """Raise ValueError for malformed or empty bounds."""
    for name, bound in bounds.items():
        if (
            not isinstance(bound, tuple | list)
            or len(bound) != 2
            or not all(_is_int(v) for v in bound)
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
    _check_bounds(bounds)
    missing = sorted(expr.dims() - set(bounds))
    if missing:
        raise ValueError(f"no bounds given for dimension '{missing[0]}'")
    lo, hi = _interval(expr, bounds)
    assert lo is not None and hi is not None
    return lo, hi


# Simplification ---------------------------------------------------------------------------


@dataclass
class _Linear:
    """A linear combination ``sum(coef * atom) + const`` of atoms (Dim, FloorDiv, CeilDiv,
    Mod nodes whose operands are simplified). Mutable; internal to the simplifier."""

    terms: dict[Expr, int] = field(default_factory=dict[Expr, int])
    const: int = 0

    @staticmethod
    def constant(value: int) -> _Linear:
        """The form ``value``."""
        return _Linear({}, value)

    @staticmethod
    def atom(expr: Expr, coef: int = 1) -> _Linear:
        """The form ``coef * expr``."""
        return _Linear({expr: coef}, 0)

    def copy(self) -> _Linear:
        """An independent copy."""
        return _Linear(dict(self.terms), self.const)

    def add(self, other: _Linear, scale: int = 1) -> None:
        """In place: ``self += scale * other``."""
        for atom, coef in other.terms.items():
            self.add_term(atom, coef * scale)
        self.const += other.const * scale

    def add_term(self, atom: Expr, coef: int) -> None:
        """In place: ``self += coef * atom`` (dropping zero coefficients)."""
        new = self.terms.get(atom, 0) + coef
        if new:
            self.terms[atom] = new
        else:
            self.terms.pop(atom, None)

    def scaled(self, factor: int) -> _Linear:
        """A new form ``factor * self``."""
        if factor == 0:
            return _Linear()
        return _Linear({a: c * factor for a, c in self.terms.items()}, self.const * factor)

    def single_atom(self) -> Expr | None:
        """The atom if this form is exactly ``1 * atom + 0``."""
        if self.const == 0 and len(self.terms) == 1:
            ((atom, coef),) = self.terms.items()
            if coef == 1:
                return atom
        return None


def _symmetric_mod(value: int, k: int) -> int:
    """The representative of `value` modulo `k` in (-k/2, k/2]."""
    r = value % k
    return r - k if r > k // 2 else r


def _size(form: _Linear) -> int:
    """Node count of the expression built from `form` (a measure of simplicity)."""
    return _node_count(_build(form))


def _node_count(expr: Expr) -> int:
    match expr:
        case Add(lhs=lhs, rhs=rhs) | Mul(lhs=lhs, rhs=rhs):
            return 1 + _node_count(lhs) + _node_count(rhs)
        case _DivLike(lhs=lhs):
            return 1 + _node_count(lhs)
        case _:
            return 1


def _natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders embedded numbers numerically (i2 < i10)."""
    parts = re.split(r"(\d+)", text)
    return tuple((1, int(p), "") if p.isdigit() else (0, 0, p) for p in parts if p)


_KIND_RANK: dict[type[Expr], int] = {Dim: 0, FloorDiv: 1, CeilDiv: 2, Mod: 3}


def _term_key(item: tuple[Expr, int]) -> tuple[object, ...]:
    """Canonical term order: larger |coefficient| first, positive before negative, then
    dimensions before floordiv, ceildiv and mod terms, then by printed form."""
    atom, coef = item
    return (-abs(coef), coef < 0, _KIND_RANK.get(type(atom), 9), _natural_key(str(atom)))


def _build(form: _Linear) -> Expr:
    """Turn a linear form into an expression: terms in canonical order, constant last."""
    result: Expr | None = None
    for atom, coef in sorted(form.terms.items(), key=_term_key):
        term = atom if coef == 1 else Mul(atom, Const(coef))
        result = term if result is None else Add(result, term)
    if result is None:
        return Const(form.const)
    if form.const:
        result = Add(result, Const(form.const))
    return result


@dataclass
class _Simplifier:
    """One simplification run: the bounds and a memo of simplified sub-expressions."""

    bounds: Bounds
    memo: dict[Expr, _Linear] = field(default_factory=dict[Expr, _Linear])

    # Entry points -------------------------------------------------------------------

    def linear(self, expr: Expr) -> _Linear:
        """The simplified linear form of `expr` (a fresh copy the caller may modify)."""
        cached = self.memo.get(expr)
        if cached is None:
            cached = self._linear_uncached(expr)
            self.memo[expr] = cached
        return cached.copy()

    def _linear_uncached(self, expr: Expr) -> _Linear:
        """`linear` without the memo; sum rules applied to the result."""
        form = self._linear_node(expr)
        return self._sum_rules(form) if len(form.terms) > 1 else form

    def _linear_node(self, expr: Expr) -> _Linear:
        """The linear form of one node (operands simplified recursively)."""
        match expr:
            case Const(value=value):
                return _Linear.constant(value)
            case Dim(name=name):
                lo, hi = self.bounds.get(name, (None, None))
                if lo is not None and lo == hi:
                    return _Linear.constant(lo)
                return _Linear.atom(expr)
            case Add() | Mul():
                form = _Linear()
                self._collect(expr, 1, form)
                return form
            case FloorDiv(lhs=lhs, divisor=k):
                return self.floordiv(self.linear(lhs), k)
            case CeilDiv(lhs=lhs, divisor=k):
                return self.ceildiv(self.linear(lhs), k)
            case Mod(lhs=lhs, divisor=k):
                return self.mod(self.linear(lhs), k)
            case _:
                raise ValueError(f"not a quasi-affine expression: {expr!r}")

    def _collect(self, expr: Expr, scale: int, acc: _Linear) -> None:
        """Add ``scale * expr`` to `acc`, descending through sums and constant products."""
        match expr:
            case Add(lhs=lhs, rhs=rhs):
                self._collect(lhs, scale, acc)
                self._collect(rhs, scale, acc)
            case Mul(lhs=Const(value=c), rhs=rhs):
                self._collect(rhs, scale * c, acc)
            case Mul(lhs=lhs, rhs=Const(value=c)):
                self._collect(lhs, scale * c, acc)
            case _:
                if scale:
                    acc.add(self.linear(expr), scale)

    def interval(self, form: _Linear) -> _Interval:
        """Interval of a linear form under the bounds."""
        result: _Interval = (form.const, form.const)
        for atom, coef in form.terms.items():
            result = _add_intervals(result, _scale_interval(_interval(atom, self.bounds), coef))
        return result

    # Sum-level rules -----------------------------------------------------------------

    def _sum_rules(self, form: _Linear) -> _Linear:
        """In place: recombine ``(e floordiv k)*k*a + (e mod k)*a -> e*a`` and introduce
        ``e*a - (e floordiv k)*k*a -> (e mod k)*a`` until nothing changes."""
        if len(form.terms) < 2:
            return form
        for _ in range(64):
            if not self._apply_one_sum_rule(form):
                break
        return form

    def _apply_one_sum_rule(self, form: _Linear) -> bool:
        """Apply the first sum-level rule that matches (in place); whether one did."""
        floordivs = [(a, c) for a, c in form.terms.items() if isinstance(a, FloorDiv)]
        if self._merge_congruent(form, [a for a, _ in floordivs]):
            return True
        if self._recombine_digits(form):
            return True
        for atom, coef in sorted(floordivs, key=_term_key):
            assert isinstance(atom, FloorDiv)
            k = atom.divisor
            if coef % k:
                continue
            if self._recombine(form, atom, coef // k) or self._introduce_mod(
                form, atom, -(coef // k)
            ):
                return True
        return any(
            self._absorb(form, atom, coef) for atom, coef in sorted(floordivs, key=_term_key)
        )

    def _absorb(self, form: _Linear, atom: Expr, scale: int) -> bool:
        """``t*c + (y floordiv k)*s -> ((y + t*k*c/s) floordiv k)*s`` when ``t`` occurs in
        ``y`` and its new coefficient in ``y`` lies in [0, k) (removes the term ``t*c``)."""
        assert isinstance(atom, FloorDiv)
        k = atom.divisor
        operand = self.linear(atom.lhs)
        for term, inner in sorted(operand.terms.items(), key=_term_key):
            outer = form.terms.get(term)
            if outer is None or outer % scale or not 0 <= inner + k * (outer // scale) < k:
                continue
            form.add_term(term, -outer)
            form.add_term(atom, -scale)
            operand.add_term(term, k * (outer // scale))
            form.add(self.floordiv(operand, k), scale)
            return True
        return False

    def _merge_congruent(self, form: _Linear, floordivs: list[Expr]) -> bool:
        """``(y1 floordiv k)*a + (y2 floordiv k)*b -> (y2 floordiv k)*(a + b) + t*a`` when
        ``y1 == y2 + k*t`` for a linear form ``t`` (keeps the smaller of the two atoms)."""
        ordered = sorted(floordivs, key=lambda a: (_node_count(a), _natural_key(str(a))))
        for index, keep in enumerate(ordered):
            assert isinstance(keep, FloorDiv)
            for other in ordered[index + 1 :]:
                assert isinstance(other, FloorDiv)
                if other.divisor != keep.divisor:
                    continue
                shift = self._exact_quotient(other.lhs, keep.lhs, keep.divisor)
                if shift is None:
                    continue
                coef = form.terms[other]
                form.add_term(other, -coef)
                form.add_term(keep, coef)
                form.add(shift, coef)
                return True
        return False

    def _exact_quotient(self, lhs: Expr, rhs: Expr, k: int) -> _Linear | None:
        """``(lhs - rhs) / k`` as a linear form if every coefficient and the constant of
        ``lhs - rhs`` is a multiple of `k`, else None."""
        diff = self.linear(lhs)
        diff.add(self.linear(rhs), -1)
        if diff.const % k or any(c % k for c in diff.terms.values()):
            return None
        return _Linear({a: c // k for a, c in diff.terms.items()}, diff.const // k)

    def _recombine_digits(self, form: _Linear) -> bool:
        """``((y floordiv a) mod b)*a*s + (y mod a)*s -> (y mod (a*b))*s``."""
        for atom, coef in sorted(form.terms.items(), key=_term_key):
            if not isinstance(atom, Mod) or not isinstance(atom.lhs, FloorDiv):
                continue
            inner = atom.lhs
            if coef % inner.divisor:
                continue
            scale = coef // inner.divisor
            operand = self.linear(inner.lhs)
            low = self.mod(operand.copy(), inner.divisor).single_atom()
            if low is None or form.terms.get(low) != scale:
                continue
            form.add_term(atom, -coef)
            form.add_term(low, -scale)
            form.add(self.mod(operand, inner.divisor * atom.divisor), scale)
            return True
        return False

    def _recombine(self, form: _Linear, atom: FloorDiv, scale: int) -> bool:
        """``(e fd k)*k*s + (e mod k)*s -> e*s`` when both terms are in `form`."""
        operand = self.linear(atom.lhs)
        mod_atom = self.mod(operand.copy(), atom.divisor).single_atom()
        if mod_atom is None or form.terms.get(mod_atom) != scale:
            return False
        form.add_term(atom, -scale * atom.divisor)
        form.add_term(mod_atom, -scale)
        form.add(operand, scale)
        return True

    def _introduce_mod(self, form: _Linear, atom: FloorDiv, scale: int) -> bool:
        """``e*s - (e fd k)*k*s -> (e mod k)*s`` when all terms of ``e*s`` are in `form`."""
        operand = self.linear(atom.lhs)
        if not operand.terms:
            return False
        if any(form.terms.get(t) != c * scale for t, c in operand.terms.items()):
            return False
        form.add(operand, -scale)
        form.add_term(atom, scale * atom.divisor)
        form.add(self.mod(operand, atom.divisor), scale)
        return True

    # floordiv / ceildiv / mod ----------------------------------------------------------

    def _one_period(self, form: _Linear, k: int) -> int | None:
        """The q with ``q*k <= form <= q*k + k - 1`` on the bounds, if there is one."""
        lo, hi = self.interval(form)
        if lo is None or hi is None or lo // k != hi // k:
            return None
        return lo // k

    def _small_remainder(self, form: _Linear, k: int) -> tuple[int, _Linear, _Linear] | None:
        """Write ``form == g*H + L`` with ``1 < g < k`` dividing k and ``0 <= L < g`` on the
        bounds (the largest such g); returns ``(g, H, L)`` or None."""
        divisors = sorted({math.gcd(k, c) for c in form.terms.values()} - {1, k}, reverse=True)
        for g in divisors:
            high = _Linear({a: c // g for a, c in form.terms.items() if c % g == 0})
            low = _Linear({a: c for a, c in form.terms.items() if c % g}, form.const)
            lo, hi = self.interval(low)
            if lo is not None and hi is not None and lo >= 0 and hi < g:
                return g, high, low
        return None

    @staticmethod
    def _split_multiples(form: _Linear, k: int) -> tuple[_Linear, _Linear]:
        """Split ``form = k*q + r``: q gets the terms whose coefficient is a multiple of k
        and ``const floordiv k``; r keeps the other terms and ``const mod k``."""
        quotient = _Linear(
            {a: c // k for a, c in form.terms.items() if c % k == 0}, form.const // k
        )
        rest = _Linear({a: c for a, c in form.terms.items() if c % k}, form.const % k)
        return quotient, rest

    def floordiv(self, form: _Linear, k: int) -> _Linear:
        """Simplified ``form floordiv k`` (the smaller of the results for `form` and for
        `form` with its mod terms expanded)."""
        form = self._sum_rules(form)
        best = self._floordiv_plain(form, k)
        expanded = self._expand_mods(form)
        if expanded is not None:
            alternative = self._floordiv_plain(expanded, k)
            if _size(alternative) < _size(best):
                best = alternative
        return best

    def _floordiv_plain(self, form: _Linear, k: int) -> _Linear:
        """``form floordiv k`` by multiples, common factors, nesting and bounds."""
        if k == 1:
            return form
        period = self._one_period(form, k)
        if period is not None:
            return _Linear.constant(period)
        quotient, rest = self._split_multiples(form, k)
        if not rest.terms:
            return quotient
        g = math.gcd(k, *rest.terms.values())
        if g > 1:
            # floor((g*A + r) / (g*k')) == floor((A + r floordiv g) / k')
            reduced = _Linear({a: c // g for a, c in rest.terms.items()}, rest.const // g)
            quotient.add(self.floordiv(reduced, k // g))
            return quotient
        period = self._one_period(rest, k)
        if period is not None:
            quotient.const += period
            return quotient
        split = self._small_remainder(rest, k)
        if split is not None:
            # floor((g*H + L) / (g*k')) == floor(H / k') when 0 <= L < g
            g, high, _ = split
            quotient.add(self.floordiv(high, k // g))
            return quotient
        inner = _Linear(dict(rest.terms), 0).single_atom()
        if isinstance(inner, FloorDiv):
            # (y floordiv k2 + r) floordiv k == (y + r*k2) floordiv (k2*k)
            nested = self.linear(inner.lhs)
            nested.const += rest.const * inner.divisor
            quotient.add(self.floordiv(nested, inner.divisor * k))
            return quotient
        quotient.add_term(FloorDiv(_build(rest), k), 1)
        return quotient

    def ceildiv(self, form: _Linear, k: int) -> _Linear:
        """Simplified ``form ceildiv k``."""
        form = self._sum_rules(form)
        if k == 1:
            return form
        lo, hi = self.interval(form)
        if lo is not None and hi is not None and -(-lo // k) == -(-hi // k):
            return _Linear.constant(-(-lo // k))
        quotient, rest = self._split_multiples(form, k)
        if not rest.terms:
            quotient.const += -(-rest.const // k)
            return quotient
        g = math.gcd(k, *rest.terms.values())
        if g > 1:
            # ceil((g*A + r) / (g*k')) == ceil((A + r ceildiv g) / k')
            reduced = _Linear({a: c // g for a, c in rest.terms.items()}, -(-rest.const // g))
            quotient.add(self.ceildiv(reduced, k // g))
            return quotient
        lo, hi = self.interval(rest)
        if lo is not None and hi is not None and -(-lo // k) == -(-hi // k):
            quotient.const += -(-lo // k)
            return quotient
        inner = _Linear(dict(rest.terms), 0).single_atom()
        if isinstance(inner, CeilDiv):
            # (y ceildiv k2 + r) ceildiv k == (y + r*k2) ceildiv (k2*k)
            nested = self.linear(inner.lhs)
            nested.const += rest.const * inner.divisor
            quotient.add(self.ceildiv(nested, inner.divisor * k))
            return quotient
        quotient.add_term(CeilDiv(_build(rest), k), 1)
        return quotient

    def mod(self, form: _Linear, k: int) -> _Linear:
        """Simplified ``form mod k``."""
        if k == 1:
            return _Linear()
        form = self._sum_rules(form)
        period = self._one_period(form, k)
        if period is not None:
            form.const -= period * k
            return form
        form = self._modular_recombine(self._strip_inner_mods(form, k), k)
        best = self._mod_reduced(form, k)
        expanded = self._expand_mods(form)
        if expanded is not None:
            alternative = self._mod_reduced(expanded, k)
            if _size(alternative) < _size(best):
                best = alternative
        return best

    def _mod_reduced(self, form: _Linear, k: int) -> _Linear:
        """``form mod k`` with coefficients reduced to (-k/2, k/2] and the constant to
        [0, k), common factors and bounds applied."""
        nonnegative = _Linear({a: c % k for a, c in form.terms.items() if c % k}, form.const % k)
        period = self._one_period(nonnegative, k)
        if period is not None:
            nonnegative.const -= period * k
            return nonnegative
        reduced = _Linear(
            {a: _symmetric_mod(c, k) for a, c in form.terms.items() if c % k}, form.const % k
        )
        g = math.gcd(k, *reduced.terms.values())
        if g > 1:
            # (g*A + r) mod (g*k') == g * ((A + r floordiv g) mod k') + r mod g
            inner = _Linear({a: c // g for a, c in reduced.terms.items()}, reduced.const // g)
            result = self.mod(inner, k // g).scaled(g)
            result.const += reduced.const % g
            return result
        period = self._one_period(reduced, k)
        if period is not None:
            reduced.const -= period * k
            return reduced
        split = self._small_remainder(nonnegative, k)
        if split is not None:
            # (g*H + L) mod (g*k') == g * (H mod k') + L when 0 <= L < g
            g, high, low = split
            result = self.mod(high, k // g).scaled(g)
            result.add(low)
            return result
        return _Linear.atom(Mod(_build(reduced), k))

    def _modular_recombine(self, form: _Linear, k: int) -> _Linear:
        """Inside ``mod k``, change coefficients by multiples of k where that lets a
        recombination rule fire (``(y floordiv a)*c + (y mod a)*s`` with
        ``c == a*s (mod k)``)."""
        for _ in range(64):
            if not self._lift_one(form, k):
                break
        return form

    def _lift_one(self, form: _Linear, k: int) -> bool:
        """One step of `_modular_recombine` (in place); whether it changed `form`."""
        for atom, coef in sorted(form.terms.items(), key=_term_key):
            if isinstance(atom, FloorDiv):
                operand, a = atom.lhs, atom.divisor
            elif isinstance(atom, Mod) and isinstance(atom.lhs, FloorDiv):
                operand, a = atom.lhs.lhs, atom.lhs.divisor
            else:
                continue
            partner = self.mod(self.linear(operand), a).single_atom()
            if partner is None or partner not in form.terms:
                continue
            wanted = a * form.terms[partner]
            if wanted != coef and (wanted - coef) % k == 0:
                trial = form.copy()
                trial.terms[atom] = wanted
                self._sum_rules(trial)
                if _size(trial) < _size(form):
                    form.terms, form.const = trial.terms, trial.const
                    return True
        return False

    def _expand_mods(self, form: _Linear) -> _Linear | None:
        """`form` with every ``y mod K`` term rewritten as ``y - K * (y floordiv K)``, or
        None when it has no mod term."""
        mods = [(a, c) for a, c in form.terms.items() if isinstance(a, Mod)]
        if not mods:
            return None
        expanded = form.copy()
        for atom, coef in mods:
            assert isinstance(atom, Mod)
            operand = self._mod_partner(form, atom)
            expanded.add_term(atom, -coef)
            expanded.add(operand, coef)
            expanded.add(self.floordiv(operand.copy(), atom.divisor), -coef * atom.divisor)
        return expanded

    def _mod_partner(self, form: _Linear, atom: Mod) -> _Linear:
        """An operand ``y`` with ``y mod K == atom`` (K the divisor of `atom`): the operand
        of a ``y floordiv K`` term of `form` if there is one, else the operand of `atom`."""
        for other in sorted(form.terms, key=str):
            if not isinstance(other, FloorDiv) or other.divisor != atom.divisor:
                continue
            operand = self.linear(other.lhs)
            if self.mod(operand.copy(), atom.divisor).single_atom() == atom:
                return operand
        return self.linear(atom.lhs)

    def _strip_inner_mods(self, form: _Linear, k: int) -> _Linear:
        """Inside ``mod k``, replace ``y mod K`` (K a multiple of k) by ``y``."""
        for _ in range(64):
            inner = next((a for a in form.terms if isinstance(a, Mod) and a.divisor % k == 0), None)
            if inner is None:
                return form
            assert isinstance(inner, Mod)
            coef = form.terms.pop(inner)
            form.add(self.linear(inner.lhs), coef)
        return form


def linear_terms(
    expr: Expr, bounds: Bounds | None = None
) -> tuple[tuple[tuple[Expr, int], ...], int]:
    """The simplified `expr` as ``(((atom, coefficient), ...), constant)``.

    Atoms are `Dim`, `FloorDiv`, `CeilDiv` and `Mod` expressions, in the canonical term
    order of `simplify`; coefficients are non-zero; ``simplify(expr, bounds)`` is the sum
    of the terms and the constant. Raises ValueError for malformed bounds.
    """
    if bounds is not None:
        _check_bounds(bounds)
    form = _Simplifier(dict(bounds or {})).linear(expr)
    return tuple(sorted(form.terms.items(), key=_term_key)), form.const


def simplify(expr: Expr, bounds: Bounds | None = None) -> Expr:
    """Rewrite `expr` into a canonical, small, equivalent form.

    Without `bounds` the result equals `expr` for all integer values of the dimensions;
    with `bounds` (inclusive ``(min, max)`` per dimension; dimensions not listed are
    unbounded) it equals `expr` at every point of that box and may differ outside.

    The result is a sum of terms in canonical order (larger absolute coefficient first,
    positive before negative, dimensions before floordiv/ceildiv/mod terms, then by printed
    form), with merged coefficients and the constant last. Rules applied:

    * constant folding, flattening of nested sums and constant products; a dimension whose
      bounds hold a single value is replaced by that value;
    * ``(e floordiv k)*k*a + (e mod k)*a -> e*a`` and ``e*a - (e floordiv k)*k*a ->
      (e mod k)*a`` inside any sum (``(c floordiv 4)*4 + c mod 4 -> c``), and
      ``((e floordiv a) mod b)*a + e mod a -> e mod (a*b)``;
    * pulling multiples of the divisor out: ``(i*4 + j) floordiv 4 -> i + j floordiv 4``,
      ``(i*4 + j) mod 4 -> j mod 4``, ``(i + 5) mod 4 -> (i + 1) mod 4``; inside ``mod k``
      coefficients are reduced to (-k/2, k/2] (``(i*3) mod 4 -> -i mod 4``), after changing
      them by multiples of k where that enables one of the recombinations above;
    * absorbing a term into a floordiv when that makes its coefficient there lie in
      [0, k): ``i + (j - i*2) floordiv 6 -> (i*4 + j) floordiv 6``;
    * inside floordiv and mod, ``y mod K`` is also tried as ``y - K*(y floordiv K)`` and the
      smaller result kept: ``((y floordiv 4)*-2 + y mod 4) mod 6 -> y mod 6``;
    * common factors: ``(i*2) floordiv 4 -> i floordiv 2``,
      ``(i*2) mod 4 -> (i mod 2) * 2``, and with bounds ``(i*2 + j) floordiv 4 -> i
      floordiv 2``, ``(i*2 + j) mod 4 -> (i mod 2) * 2 + j`` when ``0 <= j < 2``;
    * nesting: ``(i floordiv 4) floordiv 2 -> i floordiv 8``, ``(i mod 8) mod 4 -> i mod 4``
      (when the inner modulus is a multiple of the outer one), likewise for ceildiv;
    * bounds: ``e floordiv k -> q`` and ``e mod k -> e - q*k`` when ``e`` lies in one period
      ``[q*k, q*k + k - 1]`` (``i floordiv 4 -> 0`` for ``0 <= i < 4``), also after pulling
      out multiples (``(i*4 + j) floordiv 4 -> i`` for ``0 <= j < 4``); ``mod`` results are
      known to lie in ``[0, k)`` even without bounds.

    The result is deterministic and does not depend on the order of the terms of `expr`
    beyond what the rules see; it never changes a value on the given box.

    Raises:
        ValueError: malformed or empty bounds.
    """
    if bounds is None:
        return _simplify_cached(expr, ())
    _check_bounds(bounds)
    used = expr.dims()
    key = tuple(
        sorted((name, (int(lo), int(hi))) for name, (lo, hi) in bounds.items() if name in used)
    )
    return _simplify_cached(expr, key)


@lru_cache(maxsize=8192)
def _simplify_cached(expr: Expr, bounds: tuple[tuple[str, tuple[int, int]], ...]) -> Expr:
    simplifier = _Simplifier(dict(bounds))
    return _build(simplifier.linear(expr))


def clear_simplify_cache() -> None:
    """Forget the memoized results of `simplify` (for benchmarks measuring cold calls)."""
    _simplify_cached.cache_clear()
