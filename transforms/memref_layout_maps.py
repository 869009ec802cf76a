"""Per-type analysis of `normalize-memref-layouts`: which upstream memref layout maps can be
normalized soundly, and to which type (the rules are in `normalize_memrefs`).

`MemRefNormalizations` decides each distinct `memref<SHAPE x T, affine_map<...>>` type once:
its `MemRefNormalization` (the identity-layout target type, with the map's results over the
dimensions `layout_dim(k)`), or the reason it cannot be normalized (not injective on the
shape, proven with isl; symbols; dynamic shape; a negative result; not quasi-affine).
Nothing here rewrites IR.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import AffineMapAttr, MemRefType, NoneAttr
from xdsl.ir import Attribute
from xdsl.ir.affine import (
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.utils.exceptions import PassFailedException

from physlayout.indexing.bridges.affine import affine_to_expr as from_affine_expr
from physlayout.indexing.bridges.affine import expr_to_affine
from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.indexing.simplify import simplify

Bounds = dict[str, tuple[int, int]]

NORMALIZE_MEMREF_LAYOUTS = "normalize-memref-layouts"
"""The pass name diagnostics start with, unless a caller names itself (apply-layout)."""


# Expressions <-> affine expressions ---------------------------------------------------------


def layout_dim(position: int) -> str:
    """Name of the layout map's dimension `position` (distinct from access names)."""
    return f"x{position}"


def access_dim(position: int) -> str:
    """Name of an access map's dimension `position`."""
    return f"d{position}"


def access_symbol(position: int) -> str:
    """Name of an access map's symbol `position`."""
    return f"s{position}"


def to_affine_expr(expr: Expr, dims: Mapping[str, int], symbols: Mapping[str, int]) -> AffineExpr:
    """`expr` as an xDSL affine expression with xDSL's folding operators (the bridge's
    `expr_to_affine(..., fold=True)`); raises ValueError for a name in neither mapping."""
    return expr_to_affine(expr, dims, symbols, fold=True)


# Per-type normalization -----------------------------------------------------------------------


@dataclass(frozen=True)
class MemRefNormalization:
    """How one layout-mapped memref type is normalized.

    `results` are the layout map's results over the dimensions ``x0, x1, ...``; logical
    index ``x`` of `source` (shape `shape`) is element ``results(x)`` of `target`.
    """

    source: MemRefType
    target: MemRefType
    shape: tuple[int, ...]
    results: tuple[Expr, ...]

    def in_bounds(self, point: Sequence[Expr], bounds: Bounds) -> Bounds:
        """`bounds` refined with the fact that the access at `point` is in bounds: each
        coordinate that is a bare dimension lies within the memref's extent on its axis.
        (An access that can never be in bounds keeps `bounds`.)"""
        refined = dict(bounds)
        for expr, extent in zip(point, self.shape, strict=True):
            if isinstance(expr, Dim):
                low, high = refined.get(expr.name, (0, extent - 1))
                refined[expr.name] = (max(low, 0), min(high, extent - 1))
        if any(low > high for low, high in refined.values()):
            return dict(bounds)
        return refined

    def compose(self, point: Sequence[Expr], bounds: Bounds) -> list[Expr]:
        """``results(point)``, simplified on `bounds`."""
        substitution = {layout_dim(k): e for k, e in enumerate(point)}
        return [simplify(r.substitute(substitution), bounds) for r in self.results]


class _Refused(Exception):
    """A layout map that cannot be normalized soundly; the argument says why."""

    @property
    def reason(self) -> str:
        return str(self.args[0])


def refusal_error(pass_name: str, typ: Attribute, reason: str) -> PassFailedException:
    """The strict-mode error: ``PASS: cannot normalize TYPE: REASON``."""
    return PassFailedException(f"{pass_name}: cannot normalize {typ}: {reason}")


def is_layout_mapped(typ: Attribute) -> bool:
    """Whether `typ` is a memref whose layout is a non-identity affine map (a type that
    `normalize-memref-layouts` normalizes or leaves with a reason)."""
    if not isinstance(typ, MemRefType) or not isinstance(typ.layout, AffineMapAttr):
        return False
    return typ.layout.data != AffineMap.identity(typ.get_num_dims())


def _normalize_type(typ: MemRefType) -> MemRefNormalization:
    """The normalization of a layout-mapped memref type.

    Raises:
        _Refused: the layout map cannot be normalized soundly.
    """
    layout = typ.layout
    assert isinstance(layout, AffineMapAttr)
    layout_map = layout.data
    rank = typ.get_num_dims()
    used = {
        f"s{e.position}": None
        for result in layout_map.results
        for e in result.dfs()
        if isinstance(e, AffineSymExpr)
    }
    if used:
        raise _Refused(f"its layout map has symbols (it uses {', '.join(used)})")
    shape = typ.get_shape()
    if any(extent < 0 for extent in shape):
        raise _Refused("its shape is not static")
    if layout_map.num_dims != rank:
        raise _Refused(f"its layout map has {layout_map.num_dims} dimensions, not {rank}")
    names = [layout_dim(k) for k in range(rank)]
    dims: list[Expr] = [Dim(name) for name in names]
    results: list[Expr] = []
    for result in layout_map.results:
        converted = from_affine_expr(result, dims, [])
        if converted is None:
            raise _Refused(f"layout result {result} is not quasi-affine")
        results.append(converted)
    target_shape = _normalized_shape(names, results, shape)
    target = MemRefType(typ.element_type, target_shape, NoneAttr(), typ.memory_space)
    return MemRefNormalization(typ, target, shape, tuple(results))


def _normalized_shape(
    names: list[str], results: list[Expr], shape: tuple[int, ...]
) -> tuple[int, ...]:
    """The extents of the normalized type: after proving the layout map injective on the
    box `shape` and its results non-negative there, each result's structural extent
    (`IndexMap.map_shape`); a result whose minimum is positive spans ``max + 1`` (the
    offset is kept as allocated space, as upstream does).

    Raises:
        _Refused: the map is not injective on `shape`, or a result can be negative.
    """
    if 0 in shape:
        return tuple(0 for _ in results)
    bounds = {name: (0, extent - 1) for name, extent in zip(names, shape, strict=True)}
    try:
        index_map = IndexMap(tuple(names), tuple(results))
        extents: list[int] = []
        for position, result in enumerate(results):
            low, high = expr_range(simplify(result, bounds), bounds)
            if low < 0:
                _check_non_negative(index_map, position, shape)
            if low == 0:
                extents.append(IndexMap(tuple(names), (result,)).map_shape(shape)[0])
            else:
                extents.append(high + 1)
        collision = index_map.find_collision(shape)
    except ValueError as err:
        raise _Refused(str(err)) from None
    if collision is not None:
        first, second = collision
        image = [int(v) for v in index_map.map_indices(first)]
        raise _Refused(
            f"its layout map is not injective on shape {list(shape)}: indices {first} "
            f"and {second} both map to {image}"
        )
    return tuple(extents)


def _check_non_negative(index_map: IndexMap, position: int, shape: tuple[int, ...]) -> None:
    """Refuse a layout map whose output `position` takes a negative value on the box
    `shape` (decided exactly with isl; interval analysis may over-approximate).

    Raises:
        _Refused: the output has a negative minimum (the message names a witness index).
    """
    import islpy as isl

    try:
        as_isl = index_map.to_isl_map(shape)
        image = as_isl.range()
        minimum = int(image.dim_min_val(position).to_python())
        if minimum >= 0:
            return
        lowest = isl.Set.universe(image.get_space()).fix_val(
            isl.dim_type.set, position, isl.Val.int_from_si(image.get_ctx(), minimum)
        )
        witness = as_isl.intersect_range(lowest).domain().sample_point()
        at = [
            int(witness.get_coordinate_val(isl.dim_type.set, k).to_python())
            for k in range(len(shape))
        ]
    except isl.Error as err:
        raise _Refused(f"isl failed on its layout map: {err}") from None
    result = index_map.final_indices[position]
    printed = result.substitute({layout_dim(k): Dim(f"d{k}") for k in range(len(shape))})
    raise _Refused(
        f"layout result {printed} has the negative minimum "
        f"{minimum} on shape {list(shape)} (at index {at})"
    )


_Verdict = MemRefNormalization | str | None
"""A type's normalization, the reason it cannot be normalized, or None (nothing to do)."""


@dataclass
class MemRefNormalizations:
    """Memoized normalizations of the memref types of a module (each type is checked and
    proven once; lookups of the same type object skip hashing the type)."""

    _cache: dict[MemRefType, _Verdict] = field(default_factory=dict[MemRefType, _Verdict])
    _by_identity: dict[int, tuple[MemRefType, _Verdict]] = field(
        default_factory=dict[int, tuple[MemRefType, _Verdict]]
    )

    def _verdict(self, typ: Attribute) -> _Verdict:
        if not isinstance(typ, MemRefType) or not isinstance(typ.layout, AffineMapAttr):
            return None
        known = self._by_identity.get(id(typ))
        if known is not None and known[0] is typ:
            return known[1]
        if typ not in self._cache:
            verdict: _Verdict = None
            if is_layout_mapped(typ):
                try:
                    verdict = _normalize_type(typ)
                except _Refused as refused:
                    verdict = refused.reason
            self._cache[typ] = verdict
        verdict = self._cache[typ]
        self._by_identity[id(typ)] = (typ, verdict)
        return verdict

    def get(self, typ: Attribute) -> MemRefNormalization | None:
        """The normalization of `typ`; None unless it is a layout-mapped memref type that
        can be normalized soundly."""
        verdict = self._verdict(typ)
        return verdict if isinstance(verdict, MemRefNormalization) else None

    def refusal(self, typ: Attribute) -> str | None:
        """Why the layout-mapped memref type `typ` cannot be normalized (None when it can,
        or when it is not layout-mapped)."""
        verdict = self._verdict(typ)
        return verdict if isinstance(verdict, str) else None

    def is_mapped(self, typ: Attribute) -> bool:
        """Whether `typ` is layout-mapped (normalizable or not)."""
        return self._verdict(typ) is not None
