"""The outputs of index maps written as text, as layout strings or as Python functions.

`parse_map` reads ``(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)``, `func_map` calls a
Python function on `Dim` objects, `layout_map` relates two TVM layout strings
(``NCHW`` -> ``NCHW4c``). Each returns input names, output expressions (and separators);
`IndexMap`'s constructors validate and wrap them. Errors are ValueErrors naming the problem.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from physlayout.indexing.expr_parser import ExprParser, Token, tokenize
from physlayout.indexing.quasi_affine import Dim, Expr, as_expr, is_int, is_valid_name
from physlayout.indexing.shapes import AXIS_SEPARATOR
from physlayout.indexing.simplify import simplify


def _signature_names(
    func: Callable[..., Any], ndim: int | None, names: Sequence[str] | None
) -> list[str]:
    """The dimension names for `IndexMap.from_func`."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as err:
        raise ValueError(f"cannot inspect the index map function: {err}") from None
    positional: list[str] = []
    var_positional = False
    for param in signature.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            positional.append(param.name)
        elif param.kind == param.VAR_POSITIONAL:
            var_positional = True
        elif param.kind == param.KEYWORD_ONLY and param.default is param.empty:
            raise ValueError(f"index map function has a keyword-only parameter '{param.name}'")
    if ndim is not None and (not is_int(ndim) or ndim < 0):
        raise ValueError(f"ndim must be a non-negative integer, got {ndim!r}")
    if var_positional:
        if ndim is None:
            raise ValueError("index map function takes *args; pass ndim=")
        if ndim < len(positional):
            raise ValueError(f"ndim={ndim} is less than the {len(positional)} named parameters")
        positional += [f"i{k}" for k in range(len(positional), ndim)]
    elif ndim is not None and ndim != len(positional):
        raise ValueError(
            f"ndim={ndim} does not match the {len(positional)} parameters of the function"
        )
    if names is None:
        return positional
    result = list(names)
    if len(result) != len(positional):
        raise ValueError(f"expected {len(positional)} names, got {len(result)}")
    return result


def func_map(
    func: Callable[..., Any], ndim: int | None, names: Sequence[str] | None
) -> tuple[tuple[str, ...], tuple[Expr, ...], list[int]]:
    """The input names, outputs and separator positions of `IndexMap.from_func_with_separators`
    (separators are not validated here)."""
    if not callable(func):
        raise ValueError(f"expected a function, got {func!r}")
    dims = _signature_names(func, ndim, names)
    for name in dims:
        if not is_valid_name(name):
            raise ValueError(f"invalid dimension name {name!r}")
    try:
        result = func(*(Dim(n) for n in dims))
    except ValueError:
        raise
    except Exception as err:  # the user's function failed on symbolic inputs
        raise ValueError(f"index map function failed on symbolic indices: {err}") from None
    items: list[object] = list(result) if isinstance(result, list | tuple) else [result]
    outputs: list[Expr] = []
    separators: list[int] = []
    for item in items:
        if item is AXIS_SEPARATOR:
            separators.append(len(outputs))
        else:
            outputs.append(as_expr(item))  # type: ignore[arg-type]
    return tuple(dims), tuple(outputs), separators


def parse_map(text: str) -> tuple[tuple[str, ...], tuple[Expr, ...], tuple[int, ...]]:
    """The input names, outputs and separator positions of
    ``(names) -> (expr, expr | expr, ...)`` (see `IndexMap.parse_with_separators`)."""
    return _MapParser(text).parse()


@dataclass
class _MapParser:
    """Parser for ``(names) -> (expr, expr | expr, ...)``."""

    text: str
    _pos: int = 0

    def parse(self) -> tuple[tuple[str, ...], tuple[Expr, ...], tuple[int, ...]]:
        """Parse the whole text: input names, outputs and separators."""
        tokens = tokenize(self.text)
        names = self._parse_names(tokens)
        parser = ExprParser(self.text, tokens, names, self._pos)
        parser.expect("->")
        parser.expect("(")
        outputs: list[Expr] = []
        separators: list[int] = []
        if not parser.accept(")"):
            while True:
                self._no_separator_here(parser)
                outputs.append(parser.parse_expr())
                if parser.accept(")"):
                    break
                if parser.accept("|"):
                    separators.append(len(outputs))
                elif not parser.accept(","):
                    raise parser.error("expected ',', '|' or ')' after an output")
        if parser.current.kind != "eof":
            raise parser.error("unexpected token after the index map")
        return tuple(names), tuple(outputs), tuple(separators)

    def _no_separator_here(self, parser: ExprParser) -> None:
        """Raise a clear error where an output is expected but a separator is found."""
        token = parser.current
        if token.kind == "punct" and token.text in ("|", ",", ")"):
            raise parser.error(
                "axis separator '|' must stand between two outputs"
                if token.text == "|" or self._after_separator(parser)
                else "expected an output expression",
                token,
            )

    @staticmethod
    def _after_separator(parser: ExprParser) -> bool:
        """Whether the previous token is ``|``."""
        previous = parser.tokens[parser.pos - 1]
        return previous.kind == "punct" and previous.text == "|"

    def _parse_names(self, tokens: list[Token]) -> list[str]:
        """Parse ``(name, ...)`` (unique valid names) and remember where it ended."""
        parser = ExprParser(self.text, tokens, ())
        parser.expect("(")
        names: list[str] = []
        seen: set[str] = set()
        if not parser.accept(")"):
            while True:
                token = parser.current
                if token.kind != "name" or not is_valid_name(token.text):
                    raise parser.error("expected a dimension name")
                if token.text in seen:
                    raise parser.error(f"duplicate dimension name '{token.text}'")
                names.append(token.text)
                seen.add(token.text)
                parser.pos += 1
                if parser.accept(")"):
                    break
                parser.expect(",")
        self._pos = parser.pos
        return names


_LAYOUT_TOKEN = re.compile(r"([A-Z])|(\d+)([a-z])")


def _parse_layout(layout: str) -> list[tuple[str, int | None]]:
    """``"NCHW4c"`` -> ``[("N", None), ..., ("c", 4)]`` (validated)."""
    if not isinstance(layout, str) or not layout:
        raise ValueError(f"layout must be a non-empty string, got {layout!r}")
    axes: list[tuple[str, int | None]] = []
    pos = 0
    while pos < len(layout):
        match = _LAYOUT_TOKEN.match(layout, pos)
        if match is None:
            char = layout[pos]
            hint = f" (sub-axis '{char}' needs a factor, e.g. 4{char})" if char.islower() else ""
            raise ValueError(
                f"invalid character {char!r} at position {pos} in layout '{layout}'{hint}"
            )
        if match.group(1):
            axes.append((match.group(1), None))
        else:
            factor = int(match.group(2))
            if factor <= 0:
                raise ValueError(f"sub-axis factor must be positive in layout '{layout}'")
            axes.append((match.group(3), factor))
        pos = match.end()
    names = [name for name, _ in axes]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate axis '{duplicates[0]}' in layout '{layout}'")
    for name, factor in axes:
        if factor is not None and name.upper() not in names:
            raise ValueError(
                f"sub-axis '{name}' has no primal axis '{name.upper()}' in layout '{layout}'"
            )
    return axes


def layout_map(src: str, dst: str) -> tuple[tuple[str, ...], tuple[Expr, ...]]:
    """The input names and outputs of `IndexMap.from_layouts` (see there)."""
    src_axes = _parse_layout(src)
    dst_axes = _parse_layout(dst)
    src_primal = {name for name, factor in src_axes if factor is None}
    dst_primal = {name for name, factor in dst_axes if factor is None}
    if src_primal != dst_primal:
        raise ValueError(
            f"layouts '{src}' and '{dst}' have different primal axes: "
            f"{''.join(sorted(src_primal))} vs {''.join(sorted(dst_primal))}"
        )
    logical: dict[str, Expr] = {name: Dim(name) for name in src_primal}
    for name, factor in src_axes:
        if factor is not None:
            primal = name.upper()
            logical[primal] = Dim(primal) * factor + Dim(name)
    dst_factor = {name.upper(): factor for name, factor in dst_axes if factor is not None}
    sub_bounds = {name: (0, factor - 1) for name, factor in src_axes if factor is not None}
    outputs: list[Expr] = []
    for name, factor in dst_axes:
        if factor is None:
            inner = dst_factor.get(name)
            value = logical[name] if inner is None else logical[name] // inner
        else:
            value = logical[name.upper()] % factor
        outputs.append(simplify(value, sub_bounds))
    return tuple(name for name, _ in src_axes), tuple(outputs)
