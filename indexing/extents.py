"""Structural extents of transformed buffers and their padding.

`structural_extents` gives the extents of the box an `IndexMap` maps a shape into (a tile
``e mod k`` is always whole; docs/semantics.md "Shapes and padding"), `transformed_shape`
the extents after a list of maps applied step by step, and `padding_of` the points of the
transformed box that no logical index reaches, as a `PaddingPredicate` of `Constraint`s
(exact, isl). Results are cached per map and shape.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.quasi_affine import Const, Expr, IndexValue, Mod, loaded_numpy
from physlayout.indexing.shapes import Shape, check_shape, index_value
from physlayout.indexing.simplify import linear_terms, simplify
from physlayout.indexing.structural import covers_box_structurally

if TYPE_CHECKING:
    import numpy as np

    from physlayout.indexing.index_map import IndexMap


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
        values = [index_value(v) for v in indices]
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
        numpy = loaded_numpy()
        scalar = isinstance(result, bool) or (numpy is not None and isinstance(result, numpy.bool_))
        return bool(result) if scalar else result

    def __str__(self) -> str:
        clauses = [" and ".join(str(c) for c in conj) or "true" for conj in self.disjuncts]
        if len(clauses) == 1:
            return clauses[0]
        return " or ".join(f"({c})" if " and " in c else c for c in clauses)

    def describe(self, labels: Sequence[str]) -> str:
        """The predicate as `str` prints it, with transformed axis ``i_k`` written as
        ``labels[k]`` (e.g. the index map's output expressions, so a message speaks of
        ``c mod 4 == 3`` instead of ``i4 == 3``). A compound label is parenthesized where it
        is part of a larger expression."""
        if len(labels) != len(self.names):
            raise ValueError(f"expected {len(self.names)} labels, got {len(labels)}")
        by_name = dict(zip(self.names, labels, strict=True))

        def label(found: re.Match[str]) -> str:
            text = by_name[found.group(0)]
            return text if _IDENTIFIER.fullmatch(text) else f"({text})"

        def constraint(c: Constraint) -> str:
            text = _AXIS_NAME.sub(label, str(c))
            whole = _WHOLE_SIDE.fullmatch(text)
            if whole and _balanced(whole.group(1)):
                return f"{whole.group(1)} {whole.group(2)}"
            return text

        clauses = [" and ".join(constraint(c) for c in conj) or "true" for conj in self.disjuncts]
        if len(clauses) == 1:
            return clauses[0]
        return " or ".join(f"({c})" if " and " in c else c for c in clauses)

    def to_isl(self) -> str:
        """The padding set in isl syntax (box constraints included)."""
        from physlayout.indexing.bridges import isl as bridge

        conjunctions = [[(c.expr, c.is_equality) for c in conj] for conj in self.disjuncts]
        formula = " or ".join(
            f"({bridge.conjunction_to_isl(conj, self.names)})" for conj in conjunctions
        )
        return str(bridge.build_set(self.names, self.shape, formula or "1 = 0"))


_AXIS_NAME = re.compile(r"\bi\d+\b")
_IDENTIFIER = re.compile(r"-?\w+")
_WHOLE_SIDE = re.compile(r"\((.*)\) ((?:==|>=|<=) -?\d+)")


def _balanced(text: str) -> bool:
    """Whether the parentheses of `text` pair up left to right (never closing below 0)."""
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


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
    current = list(check_shape(shape))
    for index_map in maps:
        current = index_map.map_shape(current)
    return current


@lru_cache(maxsize=4096)
def structural_extents(imap: IndexMap, dims: tuple[int, ...]) -> tuple[int, ...]:
    """`IndexMap.map_shape` on the validated shape `dims`."""
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
def padding_of(
    imap: IndexMap, dims: tuple[int, ...], out_shape: tuple[int, ...]
) -> PaddingPredicate | None:
    """`IndexMap.padding_predicate` of the box `dims` in the transformed box `out_shape`."""
    if covers_box_structurally(imap, dims, out_shape):
        return None
    from physlayout.indexing.bridges import isl as bridge
    from physlayout.indexing.proofs import isl_map

    names = tuple(bridge.output_names(imap.final_ndim))
    box = bridge.build_box(out_shape, names)
    with bridge.isl_errors(f"computing the padding of {imap}"):
        # Explicit divisions make the subtraction much faster on skewed images.
        image = isl_map(imap, dims).range().compute_divs()
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
