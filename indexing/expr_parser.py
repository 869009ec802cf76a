"""Parsing quasi-affine expressions in MLIR affine syntax with named dimensions.

`tokenize` and `ExprParser` are shared with the index-map parser
(`physlayout.indexing.map_constructors`); `parse_expr` reads one expression and is the
inverse of ``str(expr)``. Every error is a ValueError naming the offending token and its
(1-based) column.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from physlayout.indexing.quasi_affine import (
    KEYWORDS,
    Add,
    CeilDiv,
    Const,
    Dim,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    constant_value,
    negate,
)


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
        value = constant_value(self.parse_unary())
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
