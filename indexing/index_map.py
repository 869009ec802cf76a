"""IndexMap: a quasi-affine map from logical buffer indices to physical (transformed) ones.

An `IndexMap` names its input dimensions (``initial_indices``) and gives one quasi-affine
expression per output (``final_indices``), e.g.
``(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)`` (NHWC to NCHW4c). It is the RFC 0039
``IndexMap``, with exact reasoning:

* `IndexMap.map_shape` gives the structural extents of the transformed buffer;
* `IndexMap.is_injective`, `IndexMap.find_collision`, `IndexMap.padding_predicate`,
  `IndexMap.inverse` and `IndexMap.is_equivalent_to` are decided exactly with isl on the
  box domain ``0 <= x_k < shape_k`` (unlike TVM, a non-injective map such as
  ``i -> i floordiv 2`` is rejected, and "shears" such as ``(i, j) -> (i, i + j)`` invert);
* expressions the engine returns are simplified (`physlayout.indexing.quasi_affine.simplify`).

Axis separators (API level only; they become a buffer's ``axis_separators``) are positions in
the output list: a separator value ``s`` starts a new physical axis at output ``s``. In text
they are written ``|`` between two outputs: ``(n, h, w, c) -> (n, c floordiv 4, h | w, c mod
4)`` has separators ``(3,)``.

All errors are ValueError with a message that names the problem.
"""

from __future__ import annotations

import inspect
import itertools
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeAlias

import islpy as isl
import numpy as np
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from physlayout.indexing import isl_bridge as bridge
from physlayout.indexing.quasi_affine import (
    Add,
    Bounds,
    CeilDiv,
    Const,
    Dim,
    Expr,
    ExprLike,
    ExprParser,
    FloorDiv,
    IndexValue,
    Mod,
    Mul,
    Token,
    as_expr,
    ceildiv,
    clear_simplify_cache,
    expr_range,
    is_valid_name,
    linear_terms,
    simplify,
    tokenize,
)

__all__ = [
    "AXIS_SEPARATOR",
    "Constraint",
    "IndexMap",
    "PaddingPredicate",
    "clear_caches",
    "flatten_exprs",
    "flatten_indices",
    "flatten_shape",
    "transformed_shape",
    "validate_axis_separators",
]


class _AxisSeparator:
    """Type of the `AXIS_SEPARATOR` sentinel."""

    _instance: _AxisSeparator | None = None

    def __new__(cls) -> _AxisSeparator:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "AXIS_SEPARATOR"


AXIS_SEPARATOR = _AxisSeparator()
"""Marks an axis separator in the list returned by a function given to
`IndexMap.from_func_with_separators`: ``[n, c // 4, h, AXIS_SEPARATOR, w, c % 4]``."""

Shape: TypeAlias = Sequence[int]


# Shapes and axis separators ---------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _check_shape(shape: Shape, rank: int | None = None, what: str = "shape") -> tuple[int, ...]:
    """Validate a shape (positive integer extents, optionally of a given rank)."""
    if isinstance(shape, str) or not isinstance(shape, Sequence | np.ndarray):
        raise ValueError(f"{what} must be a sequence of integers, got {shape!r}")
    values = list(shape)  # pyright: ignore[reportUnknownArgumentType]
    if not all(_is_int(v) for v in values):
        raise ValueError(f"{what} must contain integers, got {values!r}")
    result = tuple(int(v) for v in values)
    if rank is not None and len(result) != rank:
        raise ValueError(f"index map expects a {what} of rank {rank}, got {list(result)}")
    if any(v <= 0 for v in result):
        raise ValueError(f"{what} extents must be positive, got {list(result)}")
    return result


def validate_axis_separators(axis_separators: Sequence[int], rank: int) -> tuple[int, ...]:
    """Check that axis separators are strictly increasing integers within ``1..rank-1``.

    Returns them as a tuple. Raises ValueError naming the offending separator.
    """
    seps = list(axis_separators)
    if not all(_is_int(s) for s in seps):
        raise ValueError(f"axis separators must be integers, got {seps!r}")
    result = tuple(int(s) for s in seps)
    for index, sep in enumerate(result):
        if rank < 2:
            raise ValueError(
                f"axis separator {sep} cannot split rank {rank}: separators stand between "
                "two axes (rank >= 2)"
            )
        if not 1 <= sep <= rank - 1:
            raise ValueError(
                f"axis separator {sep} is out of range 1..{rank - 1} for rank {rank} "
                "(no leading or trailing separator)"
            )
        if index and sep <= result[index - 1]:
            raise ValueError(f"axis separators must be strictly increasing, got {list(result)}")
    return result


def _groups(rank: int, axis_separators: Sequence[int]) -> list[range]:
    """The axis ranges of each physical axis."""
    bounds = [0, *validate_axis_separators(axis_separators, rank), rank]
    return [range(lo, hi) for lo, hi in itertools.pairwise(bounds)]


def flatten_shape(shape: Shape, axis_separators: Sequence[int] = ()) -> list[int]:
    """Flatten `shape` into ``len(axis_separators) + 1`` physical axes.

    Each physical axis is the product of the extents of its group (a separator ``s``
    starts a new group at axis ``s``). ``flatten_shape([16, 32, 64, 64, 4], [3]) ==
    [32768, 256]``; a rank-0 shape flattens to ``[1]``.

    Raises:
        ValueError: bad shape or separators.
    """
    dims = _check_shape(shape)
    return [math.prod(dims[k] for k in group) for group in _groups(len(dims), axis_separators)]


def flatten_indices(
    indices: Sequence[IndexValue], shape: Shape, axis_separators: Sequence[int] = ()
) -> list[IndexValue]:
    """Row-major flattening of `indices` (ints or integer arrays) within each group.

    ``flatten_indices([11, 25, 37, 23, 1], [16, 32, 64, 64, 4], [3]) == [24165, 93]``.
    Indices are not range-checked.

    Raises:
        ValueError: bad shape or separators, or ``len(indices) != len(shape)``.
    """
    dims = _check_shape(shape)
    if len(indices) != len(dims):
        raise ValueError(f"expected {len(dims)} indices for shape {list(dims)}, got {len(indices)}")
    result: list[IndexValue] = []
    for group in _groups(len(dims), axis_separators):
        flat: IndexValue = 0
        for k in group:
            flat = flat * dims[k] + _index_value(indices[k])
        result.append(flat)
    return result


def flatten_exprs(
    indices: Sequence[ExprLike],
    shape: Shape,
    axis_separators: Sequence[int] = (),
    bounds: Bounds | None = None,
) -> list[Expr]:
    """Symbolic `flatten_indices`: flattened, simplified expressions (with `bounds` on the
    dimensions used by `indices`, if given)."""
    dims = _check_shape(shape)
    if len(indices) != len(dims):
        raise ValueError(f"expected {len(dims)} indices for shape {list(dims)}, got {len(indices)}")
    result: list[Expr] = []
    for group in _groups(len(dims), axis_separators):
        flat: Expr = Const(0)
        for k in group:
            flat = flat * dims[k] + as_expr(indices[k])
        result.append(simplify(flat, bounds))
    return result


def _index_value(value: object) -> IndexValue:
    """Validate one concrete index (int or integer array)."""
    if isinstance(value, np.ndarray):
        if not np.issubdtype(value.dtype, np.integer):
            raise ValueError("index arrays must have an integer dtype")
        return value.astype(np.int64, copy=False)
    if _is_int(value):
        return int(value)  # type: ignore[arg-type]
    raise ValueError(f"indices must be integers or integer arrays, got {value!r}")


# Padding predicates -----------------------------------------------------------------------


def _sum_expr(terms: Sequence[tuple[Expr, int]], const: int) -> Expr:
    """``simplify(sum(atom * coef) + const)``."""
    total: Expr = Const(const)
    for atom, coef in terms:
        total = total + atom * coef
    return simplify(total)


@dataclass(frozen=True)
class Constraint:
    """An affine constraint: ``expr == 0`` if `is_equality`, else ``expr >= 0``.

    Printed in a human form with positive terms on the left: ``i0 == 2``, ``i1 >= 2``,
    ``i1 <= 3``, ``i0 mod 2 == 1``.
    """

    expr: Expr
    is_equality: bool

    def holds(self, env: dict[str, IndexValue]) -> bool | np.ndarray:
        """Evaluate the constraint (elementwise for arrays)."""
        value = self.expr.evaluate(env)
        return value == 0 if self.is_equality else value >= 0

    def __str__(self) -> str:
        terms, const = linear_terms(self.expr)
        positive = [(a, c) for a, c in terms if c > 0]
        negative = [(a, -c) for a, c in terms if c < 0]
        op = "==" if self.is_equality else ">="
        if not positive:
            # -N + c >= 0  <=>  N <= c
            return f"{_sum_expr(negative, 0)} {'==' if self.is_equality else '<='} {const}"
        return f"{_sum_expr(positive, 0)} {op} {_sum_expr(negative, -const)}"


@dataclass(frozen=True)
class PaddingPredicate:
    """The padding positions of a transformed buffer: the points of the box
    ``0 <= i_k < shape_k`` that are not the image of any logical index.

    `names` are the names of the transformed axes used in the constraints: always
    ``i0, i1, ...`` (one per output of the index map). `disjuncts` is a union of
    conjunctions of `Constraint` (simplified with the box as context, so they are exact
    only inside the box); `__call__` also checks that the indices lie inside the box.
    """

    names: tuple[str, ...]
    disjuncts: tuple[tuple[Constraint, ...], ...]
    shape: tuple[int, ...]

    def __call__(self, indices: Sequence[IndexValue]) -> bool | np.ndarray:
        """Whether `indices` (ints or broadcastable integer arrays, one per transformed
        axis) is a padding position; elementwise for arrays.

        Raises:
            ValueError: wrong number of indices or non-integer indices.
        """
        if len(indices) != len(self.names):
            raise ValueError(
                f"padding predicate expects {len(self.names)} indices, got {len(indices)}"
            )
        values = [_index_value(v) for v in indices]
        env = dict(zip(self.names, values, strict=True))
        inside: bool | np.ndarray = True
        for value, extent in zip(values, self.shape, strict=True):
            inside = inside & (value >= 0) & (value < extent)
        hit: bool | np.ndarray = False
        for conjunction in self.disjuncts:
            clause: bool | np.ndarray = True
            for constraint in conjunction:
                clause = clause & constraint.holds(env)
            hit = hit | clause
        result = inside & hit
        return bool(result) if isinstance(result, bool | np.bool_) else result

    def __str__(self) -> str:
        clauses = [" and ".join(str(c) for c in conj) or "true" for conj in self.disjuncts]
        if len(clauses) == 1:
            return clauses[0]
        return " or ".join(f"({c})" if " and " in c else c for c in clauses)

    def to_isl(self) -> str:
        """The padding set in isl syntax (box constraints included)."""
        formula = " or ".join(
            f"({_conjunction_to_isl(conj, self.names)})" for conj in self.disjuncts
        )
        return str(bridge.build_set(self.names, self.shape, formula or "1 = 0"))


def _conjunction_to_isl(conjunction: Sequence[Constraint], names: Sequence[str]) -> str:
    """``c1 and c2 ...`` in isl syntax (``0 = 0`` when empty)."""
    identity = {name: name for name in names}
    parts = [
        f"{bridge.expr_to_isl(c.expr, identity)} {'=' if c.is_equality else '>='} 0"
        for c in conjunction
    ]
    return " and ".join(parts) or "0 = 0"


# IndexMap ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexMap:
    """A quasi-affine map from logical indices (``initial_indices``, unique dimension names)
    to transformed indices (``final_indices``, one expression per output).

    Construction validates: names are unique identifiers (not ``floordiv``/``ceildiv``/
    ``mod``) and every output only uses those names. Lists are accepted and stored as
    tuples; int outputs become `Const`. The map is hashable (usable in xDSL attributes).
    ``str(m)`` is MLIR affine-map syntax with named dimensions; `IndexMap.parse` reads it
    back exactly.

    Raises:
        ValueError: duplicate or invalid names, outputs that are not expressions over the
            input names.
    """

    initial_indices: tuple[str, ...]
    final_indices: tuple[Expr, ...]

    def __post_init__(self) -> None:
        names = tuple(self.initial_indices)
        seen: set[str] = set()
        for name in names:
            if not isinstance(name, str) or not is_valid_name(name):
                raise ValueError(f"invalid dimension name {name!r}")
            if name in seen:
                raise ValueError(f"duplicate dimension name '{name}'")
            seen.add(name)
        finals = tuple(as_expr(e) for e in self.final_indices)
        for position, expr in enumerate(finals):
            unknown = sorted(expr.dims() - seen)
            if unknown:
                raise ValueError(
                    f"unknown dimension '{unknown[0]}' in output {position} ({expr}) of "
                    f"index map over ({', '.join(names)})"
                )
        object.__setattr__(self, "initial_indices", names)
        object.__setattr__(self, "final_indices", finals)

    # Basic properties --------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        """Number of inputs (rank of the logical buffer)."""
        return len(self.initial_indices)

    @property
    def final_ndim(self) -> int:
        """Number of outputs (rank of the transformed buffer)."""
        return len(self.final_indices)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"IndexMap.parse({self.to_string()!r})"

    def to_string(self, axis_separators: Sequence[int] = ()) -> str:
        """``(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)``: `|` before each output that
        starts a new physical axis. `parse_with_separators` reads it back exactly.

        Raises:
            ValueError: invalid separators for ``final_ndim``.
        """
        seps = set(validate_axis_separators(axis_separators, self.final_ndim))
        text = ""
        for position, expr in enumerate(self.final_indices):
            if position:
                text += " | " if position in seps else ", "
            text += str(expr)
        return f"({', '.join(self.initial_indices)}) -> ({text})"

    # Constructors -------------------------------------------------------------------------

    @staticmethod
    def identity(rank: int) -> IndexMap:
        """``(i0, ..., i{rank-1}) -> (i0, ..., i{rank-1})``."""
        if not _is_int(rank) or rank < 0:
            raise ValueError(f"rank must be a non-negative integer, got {rank!r}")
        names = tuple(f"i{k}" for k in range(rank))
        return IndexMap(names, tuple(Dim(n) for n in names))

    @staticmethod
    def parse(text: str) -> IndexMap:
        """Parse ``(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)``.

        Raises:
            ValueError: bad syntax (naming the token and column), duplicate or unknown
                names, non quasi-affine outputs, non-positive divisors, or a ``|``
                separator (use `parse_with_separators`).
        """
        imap, separators = IndexMap.parse_with_separators(text)
        if separators:
            raise ValueError(
                f"axis separators '|' are not allowed in '{text}'; "
                "use IndexMap.parse_with_separators"
            )
        return imap

    @staticmethod
    def parse_with_separators(text: str) -> tuple[IndexMap, tuple[int, ...]]:
        """Parse a map whose outputs may be separated by ``|`` (axis separators).

        ``"(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)"`` gives separators ``(3,)``.

        Raises:
            ValueError: as `parse`, plus a leading, trailing or doubled ``|``.
        """
        if not isinstance(text, str):
            raise ValueError(f"index map text must be a string, got {text!r}")
        return _MapParser(text).parse()

    @staticmethod
    def from_func(
        func: Callable[..., Any], ndim: int | None = None, names: Sequence[str] | None = None
    ) -> IndexMap:
        """Build a map from a Python function of `Dim` objects, e.g.
        ``IndexMap.from_func(lambda n, h, w, c: [n, c // 4, h, w, c % 4])``.

        The number of inputs is the number of positional parameters (`ndim` must agree,
        and is required when the function takes ``*args``); the parameter names are the
        dimension names (``*args`` positions are named ``i0, i1, ...``), unless `names` is
        given. The function returns a list/tuple of expressions or ints (or a single one);
        ``//`` is floordiv and ``%`` is mod.

        Raises:
            ValueError: arity problems, a non quasi-affine result, the function failing,
                or an `AXIS_SEPARATOR` in the result (use `from_func_with_separators`).
        """
        imap, separators = _from_func(func, ndim, names)
        if separators:
            raise ValueError(
                "index map function returned AXIS_SEPARATOR; use IndexMap.from_func_with_separators"
            )
        return imap

    @staticmethod
    def from_func_with_separators(
        func: Callable[..., Any], ndim: int | None = None, names: Sequence[str] | None = None
    ) -> tuple[IndexMap, list[int]]:
        """Like `from_func`, but the result may contain `AXIS_SEPARATOR` between outputs.

        ``lambda n, h, w, c: [n, c // 4, h, AXIS_SEPARATOR, w, c % 4]`` gives separators
        ``[3]`` (the separator's position in the output list without separators).

        Raises:
            ValueError: as `from_func`, or a leading, trailing or doubled separator.
        """
        return _from_func(func, ndim, names)

    @staticmethod
    def from_layouts(src: str, dst: str) -> IndexMap:
        """The map between two layout strings in TVM's notation.

        Upper-case letters are primal axes; a number followed by a lower-case letter is a
        split sub-axis of the primal axis of that letter (at most one per primal axis),
        e.g. ``NCHW4c``: ``C`` is the outer part and ``c`` (extent 4) the inner part of the
        logical channel ``C * 4 + c``. The map's inputs are the axes of `src` named by
        their letters; each output of `dst` is the matching part of the logical axis,
        simplified assuming every sub-axis lies in ``[0, factor)``.

        ``from_layouts("NCHW", "NCHW4c")`` is ``(N, C, H, W) -> (N, C floordiv 4, H, W,
        C mod 4)`` and ``from_layouts("NCHW4c", "NCHW")`` is ``(N, C, H, W, c) -> (N,
        C * 4 + c, H, W)``.

        Raises:
            ValueError: invalid characters, duplicate axes, a sub-axis without factor or
                without its primal axis, or layouts over different primal axes.
        """
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
        return IndexMap(tuple(name for name, _ in src_axes), tuple(outputs))

    @staticmethod
    def from_affine_map(affine_map: AffineMap, names: Sequence[str] | None = None) -> IndexMap:
        """Convert an xDSL `AffineMap` without symbols (dimensions named `names`, default
        ``d0, d1, ...``).

        Raises:
            ValueError: symbols, or an expression that is not quasi-affine.
        """
        if affine_map.num_symbols:
            raise ValueError(f"affine map {affine_map} has symbols; index maps cannot")
        dims = list(names) if names is not None else [f"d{k}" for k in range(affine_map.num_dims)]
        if len(dims) != affine_map.num_dims:
            raise ValueError(f"expected {affine_map.num_dims} names, got {len(dims)}")
        return IndexMap(tuple(dims), tuple(_from_affine(e, dims) for e in affine_map.results))

    # Evaluation ---------------------------------------------------------------------------

    def _check_arity(self, count: int, what: str = "indices") -> None:
        """Raise ValueError unless `count` equals `ndim`."""
        if count != self.ndim:
            raise ValueError(f"index map expects {self.ndim} {what}, got {count}")

    def map_indices(self, indices: Sequence[IndexValue]) -> list[IndexValue]:
        """Apply the map to concrete indices (ints, or integer arrays that broadcast
        together; evaluated elementwise with floor semantics).

        Raises:
            ValueError: ``len(indices) != ndim`` ("index map expects 4 indices, got 3"),
                or non-integer indices.
        """
        self._check_arity(len(indices))
        env = {name: _index_value(v) for name, v in zip(self.initial_indices, indices, strict=True)}
        return [expr.evaluate(env) for expr in self.final_indices]

    def map_exprs(self, indices: Sequence[ExprLike], bounds: Bounds | None = None) -> list[Expr]:
        """Apply the map to symbolic indices; the results are simplified (with `bounds`
        on the dimensions used by `indices`, if given).

        Raises:
            ValueError: wrong number of indices.
        """
        self._check_arity(len(indices))
        mapping = {name: as_expr(v) for name, v in zip(self.initial_indices, indices, strict=True)}
        return [simplify(expr.substitute(mapping), bounds) for expr in self.final_indices]

    def bounds(self, shape: Shape) -> dict[str, tuple[int, int]]:
        """The box ``{name: (0, extent - 1)}`` of the inputs for `shape`."""
        dims = _check_shape(shape, self.ndim)
        return {
            name: (0, extent - 1) for name, extent in zip(self.initial_indices, dims, strict=True)
        }

    def simplify(self, shape: Shape | None = None) -> IndexMap:
        """The map with simplified outputs (using the box of `shape` when given; the result
        then equals this map on that box)."""
        bounds = None if shape is None else self.bounds(shape)
        return IndexMap(
            self.initial_indices, tuple(simplify(e, bounds) for e in self.final_indices)
        )

    def map_shape(self, shape: Shape) -> list[int]:
        """Structural extents of the transformed buffer (docs/semantics.md "Shapes and padding").

        An output whose simplified form (without bounds) is ``e mod k`` spans ``k`` (a tile
        is always whole); any other output spans ``max + 1`` where ``max`` comes from
        interval analysis of the output simplified on the box ``[0, shape_k - 1]``. The
        result is the same for a map and its `simplify()` without a shape (simplifying on
        the box may strip a ``mod``: use `transformed_shape` on the maps as written).
        ``(i) -> (i floordiv 4, i mod 4)`` gives ``[3, 4]`` on ``[10]`` and ``[1, 4]`` on
        ``[3]``; ``(i) -> (i mod 16)`` gives ``[16]`` on ``[14]``.

        Raises:
            ValueError: bad shape, or an output whose minimum is not 0.
        """
        return list(_map_shape(self, _check_shape(shape, self.ndim)))

    # Exact reasoning (isl) ---------------------------------------------------------------

    def to_isl_map(self, shape: Shape | None = None) -> isl.Map:
        """The map as an isl map ``{ [x0, ...] -> [i0, ...] }`` (inputs renamed ``x<k>``,
        outputs ``i<k>``), on the box of `shape` when given, else on Z^ndim."""
        if shape is None:
            return bridge.build_map(self.initial_indices, self.final_indices, None)
        return _isl_map(self, _check_shape(shape, self.ndim))

    def is_injective(self, shape: Shape) -> bool:
        """Exactly whether distinct indices of the box ``0 <= x_k < shape_k`` map to distinct
        transformed indices (decided by isl)."""
        return _is_injective(self, _check_shape(shape, self.ndim))

    def find_collision(self, shape: Shape) -> tuple[list[int], list[int]] | None:
        """Two distinct in-box indices with the same image (the lexicographically smallest
        pair), or None when the map is injective on the box."""
        return _find_collision(self, _check_shape(shape, self.ndim))

    def padding_predicate(
        self, shape: Shape, extents: Shape | None = None
    ) -> PaddingPredicate | None:
        """The points of the transformed box ``[0, extents)`` with no preimage in the box of
        `shape`, or None when there are none (exact, isl).

        `extents` defaults to ``map_shape(shape)``. A transform list passes its step-by-step
        extents (`transformed_shape`) for its composed map: composing and simplifying can
        give a map whose own structural extents are smaller (``(i) -> (i floordiv 4, i mod
        4)`` on [3] composes to ``(i) -> (0, i)``, structurally [1, 3], in the box [1, 4]).

        Raises:
            ValueError: bad shapes, or `extents` does not contain the image of the box.
        """
        dims = _check_shape(shape, self.ndim)
        if extents is None:
            return _padding(self, dims, _map_shape(self, dims))
        return _padding(self, dims, _check_shape(extents, self.final_ndim, "extents"))

    def inverse(self, shape: Shape) -> IndexMap:
        """The exact inverse (transformed -> logical indices) on the box of `shape`.

        The inverse's inputs are named ``i0, i1, ...`` (one per output of this map); its
        outputs are quasi-affine expressions computed by isl and simplified with the bounds
        of the transformed box ``[0, map_shape(shape))``. For example the inverse of
        ``(i, j) -> (i, i + j)`` on ``[4, 5]`` is ``(i0, i1) -> (i0, i1 - i0)``.

        Raises:
            ValueError: the map is not injective on the box (naming a colliding pair), it
                introduces padding (naming the padding predicate; use
                `non_surjective_inverse`), or the inverse is not one quasi-affine
                expression on the whole image.
        """
        dims = _check_shape(shape, self.ndim)
        predicate = _padding(self, dims, _map_shape(self, dims))
        if predicate is not None:
            raise ValueError(
                f"index map {self} introduces padding on shape {list(dims)}: {predicate}; "
                "use non_surjective_inverse"
            )
        return _inverse(self, dims)

    def non_surjective_inverse(self, shape: Shape) -> tuple[IndexMap, PaddingPredicate | None]:
        """The inverse on the image and the padding predicate of the transformed box (None
        when the map pads nothing). On padding positions the inverse's values are
        unspecified.

        Raises:
            ValueError: the map is not injective on the box (unlike TVM), or the inverse is
                not quasi-affine.
        """
        dims = _check_shape(shape, self.ndim)
        return _inverse(self, dims), _padding(self, dims, _map_shape(self, dims))

    def is_equivalent_to(self, other: IndexMap, shape: Shape | None = None) -> bool:
        """Exactly whether both maps give the same outputs (compared by position; names
        may differ): on the box of `shape` when given, else for all integer inputs.
        Maps with different numbers of inputs or outputs are never equivalent."""
        if not isinstance(other, IndexMap):
            raise ValueError(f"expected an IndexMap, got {other!r}")
        if self.ndim != other.ndim or self.final_ndim != other.final_ndim:
            return False
        dims = None if shape is None else _check_shape(shape, self.ndim)
        return _equivalent(self, other, dims)

    def is_identity_on(self, shape: Shape) -> bool:
        """Exactly whether the map sends every index of the box of `shape` to itself (as many
        outputs as inputs, each output equal to its position's input; proven with isl).
        False, never an error, for a `shape` of the wrong rank or a map isl cannot decide."""
        if self.ndim != self.final_ndim or len(shape) != self.ndim:
            return False
        try:
            return self.is_equivalent_to(IndexMap.identity(self.ndim), shape)
        except ValueError:
            return False

    # Composition --------------------------------------------------------------------------

    def compose(self, other: IndexMap, shape: Shape | None = None) -> IndexMap:
        """Apply this map, then `other`: ``result(x) == other(self(x))``.

        The result has this map's inputs and `other`'s number of outputs; its outputs are
        simplified, using the box of `shape` (a shape of this map's inputs) when given; then
        an output ``k`` that is the constant value of an extent-1 input ``k`` is written as
        that input.
        ``m.compose(m.inverse(shape), shape=shape)`` is the identity for bijections.

        Raises:
            ValueError: ``other.ndim != self.final_ndim``.
        """
        if not isinstance(other, IndexMap):
            raise ValueError(f"expected an IndexMap, got {other!r}")
        if other.ndim != self.final_ndim:
            raise ValueError(
                f"cannot compose {self} ({self.final_ndim} outputs) with {other} "
                f"({other.ndim} inputs)"
            )
        bounds = None if shape is None else self.bounds(shape)
        mapping = dict(zip(other.initial_indices, self.final_indices, strict=True))
        outputs = [simplify(e.substitute(mapping), bounds) for e in other.final_indices]
        if bounds is not None:
            outputs = [
                _positional_dim(expr, k, self.initial_indices, bounds)
                for k, expr in enumerate(outputs)
            ]
        return IndexMap(self.initial_indices, tuple(outputs))

    # numpy --------------------------------------------------------------------------------

    def map_ndarray(self, x: np.ndarray, pad_value: Any = None) -> np.ndarray:
        """The array `x` (logical layout) rewritten into the transformed layout: a new array
        of shape ``map_shape(x.shape)`` with ``out[m(idx)] = x[idx]`` and padding positions
        set to `pad_value`. Vectorized (numpy fancy indexing).

        Raises:
            ValueError: wrong rank, a non-injective map (naming a collision), or padding
                without `pad_value` (naming the padding predicate).
        """
        array = np.asarray(x)
        dims = _check_shape(array.shape, self.ndim, "array shape")
        collision = _find_collision(self, dims)
        if collision is not None:
            raise _not_injective_error(self, dims, collision)
        out_shape = _map_shape(self, dims)
        predicate = _padding(self, dims, out_shape)
        if predicate is not None and pad_value is None:
            raise ValueError(
                f"index map {self} introduces padding on shape {list(dims)}: {predicate}; "
                "a pad_value is required"
            )
        if predicate is None:
            out = np.empty(out_shape, dtype=array.dtype)
        else:
            out = np.full(out_shape, pad_value, dtype=array.dtype)
        index = self._gather_index(dims)
        # A rank-0 result (an injective map of a one-element box onto no axes) takes the
        # one element itself.
        out[index] = array if index else array.reshape(())
        return out

    def inverse_map_ndarray(self, y: np.ndarray, shape: Shape) -> np.ndarray:
        """The logical array of `shape` read from `y` in the transformed layout:
        ``out[idx] = y[m(idx)]``. `y` must have shape ``map_shape(shape)``.

        Raises:
            ValueError: bad shape or a `y` of the wrong shape.
        """
        array = np.asarray(y)
        dims = _check_shape(shape, self.ndim)
        expected = _map_shape(self, dims)
        if tuple(array.shape) != expected:
            raise ValueError(
                f"expected an array of shape {list(expected)} (map_shape of {list(dims)}), "
                f"got {list(array.shape)}"
            )
        gathered = array[self._gather_index(dims)]
        return np.array(np.broadcast_to(gathered, dims))

    unmap_ndarray = inverse_map_ndarray

    def _gather_index(self, dims: tuple[int, ...]) -> tuple[Any, ...]:
        """The transformed index of every logical index of the box, as broadcastable
        arrays (one per output), broadcast to the full logical shape."""
        grids = np.indices(dims, dtype=np.int64, sparse=True) if dims else ()
        mapped = self.map_indices(list(grids))
        return tuple(np.broadcast_to(np.asarray(v, dtype=np.int64), dims) for v in mapped)

    # xDSL interop ------------------------------------------------------------------------

    def to_affine_map(self) -> AffineMap:
        """The map as an xDSL `AffineMap` (dimension k is ``initial_indices[k]``, no
        symbols; floordiv/ceildiv/mod become the matching AffineExpr operations)."""
        position = {name: k for k, name in enumerate(self.initial_indices)}
        return AffineMap(self.ndim, 0, tuple(_to_affine(e, position) for e in self.final_indices))


def transformed_shape(maps: Sequence[IndexMap], shape: Shape) -> list[int]:
    """The extents of a buffer or tensor of `shape` after `maps` are applied in order (the
    transformed extents of both levels: a buffer's pending transform list and a chain of
    `layout.transform` ops).

    Each map contributes its structural extents (`IndexMap.map_shape`) on the extents the
    previous maps gave, so a tile is whole at every step (docs/semantics.md "Shapes and padding"):
    ``(i) -> (i floordiv 4, i mod 4)`` then ``(a, b) -> (b, a)`` on [3] gives [4, 1]. These
    are not the structural extents of the composed map, which simplification on the box can
    shrink (here ``(i) -> (i, 0)``, structurally [3, 1]); the composed map's padding is
    taken in this box (`IndexMap.padding_predicate` with `extents`). No maps: `shape`.

    Raises:
        ValueError: bad shape, a map whose arity is not the rank at its step, or an output
            whose minimum is not 0.
    """
    current = list(_check_shape(shape))
    for index_map in maps:
        current = index_map.map_shape(current)
    return current


# Helpers: from_func, parser, layouts, affine conversion ----------------------------------


def _positional_dim(expr: Expr, k: int, names: Sequence[str], bounds: Bounds) -> Expr:
    """Output `k` written as input `k` when it is the constant that input `k` always has
    on the box (an extent-1 input), so identities on the box print as identities."""
    if isinstance(expr, Const) and k < len(names) and bounds[names[k]] == (expr.value,) * 2:
        return Dim(names[k])
    return expr


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
    if ndim is not None and (not _is_int(ndim) or ndim < 0):
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


def _from_func(
    func: Callable[..., Any], ndim: int | None, names: Sequence[str] | None
) -> tuple[IndexMap, list[int]]:
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
    imap = IndexMap(tuple(dims), tuple(outputs))
    validate_axis_separators(separators, imap.final_ndim)
    return imap, separators


@dataclass
class _MapParser:
    """Parser for ``(names) -> (expr, expr | expr, ...)``."""

    text: str
    _pos: int = 0

    def parse(self) -> tuple[IndexMap, tuple[int, ...]]:
        """Parse the whole text: the map and its separators."""
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
        return IndexMap(tuple(names), tuple(outputs)), tuple(separators)

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
        if not parser.accept(")"):
            while True:
                token = parser.current
                if token.kind != "name" or not is_valid_name(token.text):
                    raise parser.error("expected a dimension name")
                if token.text in names:
                    raise parser.error(f"duplicate dimension name '{token.text}'")
                names.append(token.text)
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


def _from_affine(expr: AffineExpr, names: Sequence[str]) -> Expr:
    """Convert an xDSL AffineExpr (no symbols) into an Expr."""
    match expr:
        case AffineDimExpr(position=position):
            if not 0 <= position < len(names):
                raise ValueError(f"affine expression {expr} uses an undeclared dimension")
            return Dim(names[position])
        case AffineConstantExpr(value=value):
            return Const(value)
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            left, right = _from_affine(lhs, names), _from_affine(rhs, names)
            match kind:
                case AffineBinaryOpKind.Add:
                    return left + right
                case AffineBinaryOpKind.Mul:
                    return left * right
                case AffineBinaryOpKind.FloorDiv:
                    return left // right
                case AffineBinaryOpKind.CeilDiv:
                    return ceildiv(left, right)
                case AffineBinaryOpKind.Mod:
                    return left % right
        case _:
            pass
    raise ValueError(f"affine expression {expr} is not a quasi-affine expression of dimensions")


def _to_affine(expr: Expr, position: dict[str, int]) -> AffineExpr:
    """Convert an Expr into an xDSL AffineExpr, keeping its structure."""
    match expr:
        case Dim(name=name):
            return AffineDimExpr(position[name])
        case Const(value=value):
            return AffineConstantExpr(value)
        case Add(lhs=lhs, rhs=rhs):
            return AffineBinaryOpExpr(
                AffineBinaryOpKind.Add, _to_affine(lhs, position), _to_affine(rhs, position)
            )
        case Mul(lhs=lhs, rhs=rhs):
            return AffineBinaryOpExpr(
                AffineBinaryOpKind.Mul, _to_affine(lhs, position), _to_affine(rhs, position)
            )
        case FloorDiv(lhs=lhs, divisor=k):
            kind = AffineBinaryOpKind.FloorDiv
        case CeilDiv(lhs=lhs, divisor=k):
            kind = AffineBinaryOpKind.CeilDiv
        case Mod(lhs=lhs, divisor=k):
            kind = AffineBinaryOpKind.Mod
        case _:
            raise ValueError(f"not a quasi-affine expression: {expr!r}")
    return AffineBinaryOpExpr(kind, _to_affine(lhs, position), AffineConstantExpr(k))


# Cached computations (keyed by the map and a validated shape tuple) ----------------------


def clear_caches() -> None:
    """Forget all cached shapes, proofs and inverses (for benchmarks measuring cold calls)."""
    for cached in (
        _map_shape,
        _isl_map,
        _is_injective,
        _find_collision,
        _padding,
        _inverse,
        _equivalent,
    ):
        cached.cache_clear()
    clear_simplify_cache()


@lru_cache(maxsize=4096)
def _map_shape(imap: IndexMap, dims: tuple[int, ...]) -> tuple[int, ...]:
    bounds = {
        name: (0, extent - 1) for name, extent in zip(imap.initial_indices, dims, strict=True)
    }
    extents: list[int] = []
    for position, expr in enumerate(imap.final_indices):
        tile = _top_level_mod(expr)
        if tile is not None:
            extents.append(tile)
            continue
        lo, hi = expr_range(simplify(expr, bounds), bounds)
        if lo != 0:
            raise ValueError(
                f"output {position} ({expr}) of index map {imap} has minimum {lo} on shape "
                f"{list(dims)}; every output must start at 0"
            )
        extents.append(hi + 1)
    return tuple(extents)


def _top_level_mod(expr: Expr) -> int | None:
    """k when `expr` simplifies (without bounds) to ``e mod k``, else None. Using the
    simplified form makes `map_shape` the same for a map and its `simplify()`."""
    simplified = simplify(expr)
    return simplified.divisor if isinstance(simplified, Mod) else None


@lru_cache(maxsize=1024)
def _isl_map(imap: IndexMap, dims: tuple[int, ...]) -> isl.Map:
    return bridge.build_map(imap.initial_indices, imap.final_indices, dims)


@lru_cache(maxsize=4096)
def _is_injective(imap: IndexMap, dims: tuple[int, ...]) -> bool:
    with bridge.isl_errors(f"checking injectivity of {imap}"):
        return bool(_isl_map(imap, dims).is_injective())


@lru_cache(maxsize=1024)
def _find_collision(imap: IndexMap, dims: tuple[int, ...]) -> tuple[list[int], list[int]] | None:
    if _is_injective(imap, dims):
        return None
    relation = _isl_map(imap, dims)
    with bridge.isl_errors(f"searching a collision of {imap}"):
        same_image = relation.apply_range(relation.reverse())
        identity = isl.Map.identity(same_image.get_space())
        pairs = same_image.subtract(identity).wrap().lexmin()
        point = pairs.sample_point()
    coords = bridge.point_coordinates(point, 2 * imap.ndim)
    return coords[: imap.ndim], coords[imap.ndim :]


def _not_injective_error(
    imap: IndexMap, dims: tuple[int, ...], collision: tuple[list[int], list[int]]
) -> ValueError:
    first, second = collision
    image = [int(v) for v in imap.map_indices(first)]  # type: ignore[arg-type]
    return ValueError(
        f"index map {imap} is not injective on shape {list(dims)}: indices {first} and "
        f"{second} both map to {image}"
    )


@lru_cache(maxsize=1024)
def _padding(
    imap: IndexMap, dims: tuple[int, ...], out_shape: tuple[int, ...]
) -> PaddingPredicate | None:
    names = tuple(bridge.output_names(imap.final_ndim))
    box = bridge.build_box(out_shape, names)
    with bridge.isl_errors(f"computing the padding of {imap}"):
        # Explicit divisions make the subtraction much faster on skewed images.
        image = _isl_map(imap, dims).range().compute_divs()
        inside = image.is_subset(box)
    if not inside:
        raise ValueError(
            f"the image of index map {imap} on shape {list(dims)} does not fit in the "
            f"transformed box {list(out_shape)}"
        )
    with bridge.isl_errors(f"computing the padding of {imap}"):
        padding = box.subtract(image).coalesce()
        if padding.is_empty():
            return None
        described = padding.gist(box).coalesce()
    disjuncts = bridge.set_to_disjuncts(described, names)
    return PaddingPredicate(
        names,
        tuple(
            tuple(sorted((Constraint(_readable(e, eq), eq) for e, eq in conj), key=_constraint_key))
            for conj in disjuncts
        ),
        out_shape,
    )


def _readable(expr: Expr, is_equality: bool) -> Expr:
    """Rewrite ``a * ((y + c) mod k) + d == 0`` as ``y mod k - t == 0`` (so it prints as
    ``y mod k == t``); other constraints are returned unchanged."""
    terms, const = linear_terms(expr)
    if not is_equality or len(terms) != 1:
        return expr
    atom, coef = terms[0]
    if not isinstance(atom, Mod):
        return expr
    k = atom.divisor
    if const % coef or not 0 <= -const // coef < k:
        return expr
    inner_terms, shift = linear_terms(atom.lhs)
    if not shift or not inner_terms:
        return expr
    target = (-const // coef - shift) % k
    return simplify((atom.lhs - shift) % k - target)


def _constraint_key(constraint: Constraint) -> tuple[int, str]:
    """Order constraints by the first transformed axis they mention, then by text."""
    first = min((int(name[1:]) for name in constraint.expr.dims()), default=-1)
    return first, str(constraint)


@lru_cache(maxsize=1024)
def _inverse(imap: IndexMap, dims: tuple[int, ...]) -> IndexMap:
    """The inverse on the image of the box, verified with isl (see `IndexMap.inverse`)."""
    collision = _find_collision(imap, dims)
    if collision is not None:
        raise _not_injective_error(imap, dims, collision)
    forward = _isl_map(imap, dims)
    names = bridge.output_names(imap.final_ndim)
    with bridge.isl_errors(f"inverting {imap}"):
        image = forward.range()
        reverse = forward.reverse()
    # Extent-1 outputs are left unbounded so that they stay variables (not the constant 0).
    out_bounds = {
        name: (0, extent - 1)
        for name, extent in zip(names, _map_shape(imap, dims), strict=True)
        if extent > 1
    }
    for exprs in _inverse_candidates(imap, dims, names, reverse):
        inverse = IndexMap(tuple(names), tuple(simplify(e, out_bounds) for e in exprs))
        if _same_on(inverse, image, reverse):
            return inverse
    raise ValueError(
        f"no single quasi-affine expression was found for the inverse of index map {imap} "
        f"on shape {list(dims)} (isl gives a piecewise inverse)"
    )


def _inverse_candidates(
    imap: IndexMap, dims: tuple[int, ...], names: list[str], reverse: isl.Map
) -> Iterator[list[Expr]]:
    """Candidate inverse expressions, best first: the structural solution; isl's closed
    form of the inverse on the unbounded image when the map is injective on all of Z^n
    (it does not specialize to the shape, e.g. an extent-1 input stays a variable); isl's
    closed form on the image of the box."""
    structural = _structural_inverse(imap, dims, names)
    if structural is not None:
        yield structural
    unbounded = bridge.build_map(imap.initial_indices, imap.final_indices, None)
    with bridge.isl_errors(f"checking injectivity of {imap} on Z^n"):
        injective_everywhere = bool(unbounded.is_injective())
        unbounded_reverse = unbounded.reverse()
    relations = [unbounded_reverse, reverse] if injective_everywhere else [reverse]
    for relation in relations:
        exprs = _single_expressions(relation, names, imap.ndim)
        if exprs is not None:
            yield exprs


def _structural_inverse(
    imap: IndexMap, dims: tuple[int, ...], names: list[str]
) -> list[Expr] | None:
    """Solve the outputs for the inputs by pattern (the result is verified by the caller).

    Starting from ``known[output_j(x)] = i_j`` (outputs simplified on the box), repeat:

    * split pairs: ``known[y floordiv f] = A`` and ``known[y mod f] = B`` give
      ``known[y] = A * f + B``; ``known[(y floordiv a) mod b] = A`` and
      ``known[y mod a] = B`` give ``known[y mod (a*b)] = A * a + B``;
    * mixed-radix digits: for ``known[sum(c_t * t) + c] = Y``, an atom ``t`` whose lower
      terms stay below ``c_t`` and whose higher coefficients are multiples of
      ``c_t * extent(t)`` is ``((Y - C) floordiv c_t) mod extent(t) + min(t)``;
    * congruences: modulo the gcd of the other coefficients of a known sum, an atom with an
      invertible coefficient and few values is determined;
    * partial solving: subtracting the known atoms of a known sum gives the sum of the
      others (solved directly when only one atom with coefficient +-1 remains).

    Returns one expression (over `names`) per input, or None when some input stays unknown.
    """
    bounds = imap.bounds(dims)
    known: dict[Expr, Expr] = {}
    for name, expr in zip(names, imap.final_indices, strict=True):
        key = simplify(expr, _unbound_singletons(bounds))
        if isinstance(key, Const):
            continue
        known.setdefault(key, Dim(name))
        terms, _ = linear_terms(key)
        if terms and all(coef < 0 for _, coef in terms):
            # a reversed axis (e.g. 7 - 4i - 2j - k): solve its negation as digits
            known.setdefault(simplify(-key, _unbound_singletons(bounds)), -Dim(name))
    for name, extent in zip(imap.initial_indices, dims, strict=True):
        if extent == 1:
            known.setdefault(Dim(name), Const(0))
    targets = [Dim(name) for name in imap.initial_indices]
    for _ in range(4 * len(targets) + 8):
        if all(t in known for t in targets):
            return [known[t] for t in targets]
        if not _learn(known, bounds):
            return None
    return None


def _unbound_singletons(bounds: Bounds) -> dict[str, tuple[int, int]]:
    """`bounds` without the single-value dimensions (so simplification keeps them)."""
    return {name: bound for name, bound in bounds.items() if bound[0] != bound[1]}


def _learn(known: dict[Expr, Expr], bounds: Bounds) -> bool:
    """Apply the rules of `_structural_inverse` once; whether something was learned."""
    learned: dict[Expr, Expr] = {}
    keep = _unbound_singletons(bounds)  # keys keep their extent-1 dimensions
    for key, value in list(known.items()):
        if isinstance(key, FloorDiv):
            operand = simplify(key.lhs, keep)
            remainder = known.get(simplify(key.lhs % key.divisor, keep))
            if remainder is not None and operand not in known:
                learned.setdefault(operand, value * key.divisor + remainder)
        if isinstance(key, Mod) and isinstance(key.lhs, FloorDiv):
            # (y floordiv a) mod b and y mod a give y mod (a*b)
            a, b, operand = key.lhs.divisor, key.divisor, key.lhs.lhs
            low = known.get(simplify(operand % a, keep))
            if low is not None:
                learned.setdefault(simplify(operand % (a * b), keep), value * a + low)
        terms, const = linear_terms(key, keep)
        if len(terms) == 1 and terms[0][1] == 1:
            continue
        for atom, expr in _digits(terms, const, value, bounds):
            if atom not in known:
                learned.setdefault(atom, expr)
        unknown = [(a, c) for a, c in terms if a not in known]
        if not unknown or len(unknown) == len(terms):
            continue
        rest: Expr = value - const
        for atom, coef in terms:
            if atom in known:
                rest = rest - known[atom] * coef
        if len(unknown) == 1 and abs(unknown[0][1]) == 1:
            learned.setdefault(unknown[0][0], rest * unknown[0][1])
        else:
            remaining: Expr = Const(0)
            for atom, coef in unknown:
                remaining = remaining + atom * coef
            learned.setdefault(simplify(remaining, keep), rest)
    fresh = {k: v for k, v in learned.items() if k not in known}
    known.update(fresh)
    return bool(fresh)


def _digits(
    terms: Sequence[tuple[Expr, int]], const: int, value: Expr, bounds: Bounds
) -> list[tuple[Expr, Expr]]:
    """Mixed-radix digit extraction for ``value == sum(c * atom) + const``.

    An atom with a negative coefficient is read reflected: ``c * t == c * (lo + hi) +
    |c| * (lo + hi - t)``, where ``lo + hi - t`` spans the same range as ``t``."""
    ranges = {atom: expr_range(atom, bounds) for atom, _ in terms}
    reflected = {atom for atom, coef in terms if coef < 0}
    shift = sum(coef * sum(ranges[atom]) for atom, coef in terms if atom in reflected)
    positive = [(atom, abs(coef)) for atom, coef in terms]
    digits = [
        (atom, sum(ranges[atom]) - digit if atom in reflected else digit)
        for atom, digit in _positive_digits(positive, const + shift, value, ranges)
    ]
    return digits + _congruence_digits(terms, const, value, ranges)


def _positive_digits(
    terms: Sequence[tuple[Expr, int]],
    const: int,
    value: Expr,
    ranges: dict[Expr, tuple[int, int]],
) -> list[tuple[Expr, Expr]]:
    """`_digits` for positive coefficients."""
    base = const + sum(coef * ranges[atom][0] for atom, coef in terms)
    shifted: Expr = value - base
    result: list[tuple[Expr, Expr]] = []
    for atom, coef in terms:
        if coef <= 0:
            continue
        lo, hi = ranges[atom]
        extent = hi - lo + 1
        low = sum((c * (ranges[a][1] - ranges[a][0]) for a, c in terms if 0 < c < coef), 0)
        others = [c for a, c in terms if a != atom and not 0 < c < coef]
        if low >= coef or any(c % (coef * extent) for c in others):
            continue
        digit = shifted // coef if coef > 1 else shifted
        if others:
            digit = digit % extent
        result.append((atom, digit + lo))
    return result


def _congruence_digits(
    terms: Sequence[tuple[Expr, int]],
    const: int,
    value: Expr,
    ranges: dict[Expr, tuple[int, int]],
) -> list[tuple[Expr, Expr]]:
    """Digits found modulo the gcd ``g`` of the other coefficients: when ``coef`` is
    invertible modulo ``g`` and ``atom`` spans at most ``g`` values,
    ``atom == ((value - const) * coef^-1 - min) mod g + min``."""
    result: list[tuple[Expr, Expr]] = []
    for atom, coef in terms:
        g = math.gcd(*(c for a, c in terms if a != atom))
        lo, hi = ranges[atom]
        if g <= 1 or hi - lo + 1 > g or math.gcd(coef, g) != 1:
            continue
        inverse = pow(coef, -1, g)
        result.append((atom, ((value - const) * inverse - lo) % g + lo))
    return result


def _single_expressions(relation: isl.Map, names: list[str], count: int) -> list[Expr] | None:
    """One expression per output of the single-valued `relation`, each valid on its whole
    domain (chosen among the pieces of isl's piecewise closed form), or None."""
    with bridge.isl_errors("computing a closed-form inverse"):
        found = bridge.pieces(relation.as_pw_multi_aff())
    if not found:
        return None
    per_piece = [
        [bridge.aff_to_expr(ma.get_aff(k), names) for k in range(count)] for _, ma in found
    ]
    if len(per_piece) == 1:
        return per_piece[0]
    with bridge.isl_errors("computing the domain of the inverse"):
        domain = relation.domain()
    result: list[Expr] = []
    for k in range(count):
        with bridge.isl_errors("projecting the inverse"):
            target = relation.project_out(isl.dim_type.out, k + 1, count - k - 1).project_out(
                isl.dim_type.out, 0, k
            )
        options = list(dict.fromkeys(simplify(piece[k]) for piece in per_piece))
        chosen = next(
            (e for e in options if _same_on(IndexMap(tuple(names), (e,)), domain, target)), None
        )
        if chosen is None:
            return None
        result.append(chosen)
    return result


def _same_on(candidate: IndexMap, domain: isl.Set, relation: isl.Map) -> bool:
    """Whether `candidate` restricted to `domain` is exactly `relation`."""
    built = bridge.build_map(candidate.initial_indices, candidate.final_indices, None)
    with bridge.isl_errors("comparing maps"):
        return bool(built.intersect_domain(domain).is_equal(relation))


@lru_cache(maxsize=1024)
def _equivalent(a: IndexMap, b: IndexMap, dims: tuple[int, ...] | None) -> bool:
    first = bridge.build_map(a.initial_indices, a.final_indices, dims)
    second = bridge.build_map(b.initial_indices, b.final_indices, dims)
    with bridge.isl_errors(f"comparing {a} and {b}"):
        return bool(first.is_equal(second))
