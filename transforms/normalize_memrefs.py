"""Normalize upstream memref layout maps (the memref half of `apply-layout`).

This is what `mlir-opt -normalize-memrefs` does, done soundly and in linear time.

A memref type whose layout is a non-identity `affine_map` without symbols, over a static
shape, ``memref<SHAPE x T, affine_map<(d...) -> (e...)>>``, is *normalized* to
``memref<NEWSHAPE x T>`` (identity layout, same memory space), where NEWSHAPE gives each
map result its structural extent on the box ``0 <= d_k < SHAPE_k`` (`IndexMap.map_shape`:
``d floordiv 4`` spans ``ceil(extent / 4)``, ``d mod 4`` always spans 4, so tiles are
whole, as upstream). The element at logical index ``x`` of the old memref is the element
at ``map(x)`` of the new one, so every value of such a type is rewritten at once:

- `memref.alloc` / `memref.alloca` results, `memref.dealloc` operands, `func.func`
  signatures (bodies and declarations), `func.call` operands and results and `func.return`
  operands take the new type (one type conversion over the whole module);
- `affine.load` / `affine.store` keep their operands; their access map ``a`` becomes
  ``map o a`` over the same dimensions and symbols, simplified (no `affine.apply` is
  emitted);
- `memref.load` / `memref.store` get the indices ``map(x)`` computed with `arith` ops,
  composed with the index arithmetic that computes ``x`` and simplified with the ranges of
  the loop variables (index arithmetic that became dead is erased).

Simplification may assume that every access is in bounds (an out-of-bounds access is
undefined behaviour for memrefs).

Left alone: identity layouts, `strided<...>` layouts and any other layout attribute.

Refused, with a `PassFailedException` naming the memref type and the reason (upstream
accepts the first and silently skips whole call graphs for the last):

- a layout map that is not injective on the memref's shape (proven with isl; the message
  names two colliding indices), e.g. ``(d0) -> (d0 floordiv 2)``;
- a layout map with symbols, a dynamic shape, a map whose number of dimensions is not the
  rank, or a result that is not quasi-affine;
- a map result whose minimum on the shape is negative;
- a value of a layout-mapped type produced or used by an op that cannot be rewritten
  (`memref.subview`, `memref.cast`, `memref.copy`, `memref.reinterpret_cast`,
  `memref.global`, region arguments other than a function's entry block, unknown ops, ...):
  the message names the op.

Guarantees: all checks run before anything is rewritten (a refused module is unchanged);
each op is visited a constant number of times and the per-type work (the isl proof, the
new shape) is done once per distinct type, so the pass is linear in the size of the
module; normalized types have identity layouts, so a second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import islpy as isl
from xdsl.dialects import affine, func, memref
from xdsl.dialects.builtin import (
    AffineMapAttr,
    FunctionType,
    IndexType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    UnregisteredOp,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap, AffineSymExpr
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    TypeConversionPattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsolatedFromAbove
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.index_map import IndexMap
from physlayout.dialects.quasi_affine import (
    Add,
    CeilDiv,
    Const,
    Dim,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    expr_range,
    simplify,
)
from physlayout.transforms.index_exprs import (
    ExprEmitter,
    IndexAnalysis,
    constant_bounds_of,
    from_affine_expr,
)

Bounds = dict[str, tuple[int, int]]

_PREFIX = "apply-layout"


# Expressions <-> affine expressions ---------------------------------------------------------


def _layout_dim(position: int) -> str:
    """Name of the layout map's dimension `position` (distinct from access names)."""
    return f"x{position}"


def _access_dim(position: int) -> str:
    """Name of an access map's dimension `position`."""
    return f"d{position}"


def _access_symbol(position: int) -> str:
    """Name of an access map's symbol `position`."""
    return f"s{position}"


def to_affine_expr(expr: Expr, dims: Mapping[str, int], symbols: Mapping[str, int]) -> AffineExpr:
    """Convert a quasi-affine expression into an xDSL affine expression.

    `dims` and `symbols` give the position of each dimension name as an affine dimension
    or symbol; every name of `expr` must be in one of them.

    Raises:
        ValueError: `expr` mentions a name in neither mapping.
    """
    match expr:
        case Const(value=value):
            return AffineConstantExpr(value)
        case Dim(name=name) if name in dims:
            return AffineDimExpr(dims[name])
        case Dim(name=name) if name in symbols:
            return AffineSymExpr(symbols[name])
        case Add(lhs=lhs, rhs=rhs):
            return to_affine_expr(lhs, dims, symbols) + to_affine_expr(rhs, dims, symbols)
        case Mul(lhs=Const(value=c), rhs=other) | Mul(lhs=other, rhs=Const(value=c)):
            return to_affine_expr(other, dims, symbols) * c
        case FloorDiv(lhs=lhs, divisor=k):
            return to_affine_expr(lhs, dims, symbols) // k
        case CeilDiv(lhs=lhs, divisor=k):
            return to_affine_expr(lhs, dims, symbols).ceil_div(k)
        case Mod(lhs=lhs, divisor=k):
            return to_affine_expr(lhs, dims, symbols) % k
        case _:
            raise ValueError(f"cannot express {expr} as an affine expression")


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
        substitution = {_layout_dim(k): e for k, e in enumerate(point)}
        return [simplify(r.substitute(substitution), bounds) for r in self.results]


def _refuse(typ: Attribute, reason: str) -> PassFailedException:
    return PassFailedException(f"{_PREFIX}: cannot normalize {typ}: {reason}")


def _normalize_type(typ: MemRefType) -> MemRefNormalization | None:
    """The normalization of `typ`, or None when its layout is already normalized.

    Raises:
        PassFailedException: the layout map cannot be normalized soundly.
    """
    layout = typ.layout
    if not isinstance(layout, AffineMapAttr):
        return None
    layout_map = layout.data
    rank = typ.get_num_dims()
    if layout_map == AffineMap.identity(rank):
        return None
    if layout_map.num_symbols:
        raise _refuse(typ, "its layout map has symbols")
    shape = typ.get_shape()
    if any(extent < 0 for extent in shape):
        raise _refuse(typ, "its shape is not static")
    if layout_map.num_dims != rank:
        raise _refuse(typ, f"its layout map has {layout_map.num_dims} dimensions, not {rank}")
    names = [_layout_dim(k) for k in range(rank)]
    dims: list[Expr] = [Dim(name) for name in names]
    results: list[Expr] = []
    for result in layout_map.results:
        converted = from_affine_expr(result, dims, [])
        if converted is None:
            raise _refuse(typ, f"layout result {result} is not quasi-affine")
        results.append(converted)
    target_shape = _normalized_shape(typ, names, results, shape)
    target = MemRefType(typ.element_type, target_shape, NoneAttr(), typ.memory_space)
    return MemRefNormalization(typ, target, shape, tuple(results))


def _normalized_shape(
    typ: MemRefType, names: list[str], results: list[Expr], shape: tuple[int, ...]
) -> tuple[int, ...]:
    """The extents of the normalized type: after proving the layout map injective on the
    box `shape` and its results non-negative there, each result's structural extent
    (`IndexMap.map_shape`); a result whose minimum is positive spans ``max + 1`` (the
    offset is kept as allocated space, as upstream does)."""
    if 0 in shape:
        return tuple(0 for _ in results)
    bounds = {name: (0, extent - 1) for name, extent in zip(names, shape, strict=True)}
    try:
        index_map = IndexMap(tuple(names), tuple(results))
        extents: list[int] = []
        for position, result in enumerate(results):
            low, high = expr_range(simplify(result, bounds), bounds)
            if low < 0:
                _check_non_negative(typ, index_map, position, shape)
            if low == 0:
                extents.append(IndexMap(tuple(names), (result,)).map_shape(shape)[0])
            else:
                extents.append(high + 1)
        collision = index_map.find_collision(shape)
    except ValueError as err:
        raise _refuse(typ, str(err)) from None
    if collision is not None:
        first, second = collision
        image = [int(v) for v in index_map.map_indices(first)]
        raise _refuse(
            typ,
            f"its layout map is not injective on shape {list(shape)}: indices {first} "
            f"and {second} both map to {image}",
        )
    return tuple(extents)


def _check_non_negative(
    typ: MemRefType, index_map: IndexMap, position: int, shape: tuple[int, ...]
) -> None:
    """Refuse `typ` when output `position` of its layout map takes a negative value on
    the box `shape` (decided exactly with isl; interval analysis may over-approximate)."""
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
        raise _refuse(typ, f"isl failed on its layout map: {err}") from None
    result = index_map.final_indices[position]
    printed = result.substitute({_layout_dim(k): Dim(f"d{k}") for k in range(len(shape))})
    raise _refuse(
        typ,
        f"layout result {printed} has the negative minimum "
        f"{minimum} on shape {list(shape)} (at index {at})",
    )


@dataclass
class MemRefNormalizations:
    """Memoized normalizations of the memref types of a module (each type is checked and
    proven once; lookups of the same type object skip hashing the type)."""

    _cache: dict[MemRefType, MemRefNormalization | None] = field(
        default_factory=dict[MemRefType, MemRefNormalization | None]
    )
    _by_identity: dict[int, tuple[MemRefType, MemRefNormalization | None]] = field(
        default_factory=dict[int, tuple[MemRefType, MemRefNormalization | None]]
    )

    def get(self, typ: Attribute) -> MemRefNormalization | None:
        """The normalization of `typ`; None unless it is a memref with an affine map
        layout that needs normalizing.

        Raises:
            PassFailedException: `typ` has a layout map that cannot be normalized soundly.
        """
        if not isinstance(typ, MemRefType) or not isinstance(typ.layout, AffineMapAttr):
            return None
        known = self._by_identity.get(id(typ))
        if known is not None and known[0] is typ:
            return known[1]
        if typ not in self._cache:
            self._cache[typ] = _normalize_type(typ)
        norm = self._cache[typ]
        self._by_identity[id(typ)] = (typ, norm)
        return norm


# Checking the module (before any rewrite) -------------------------------------------------


_PRODUCERS = (memref.AllocOp, memref.AllocaOp, func.CallOp)
"""Ops whose results may have a layout-mapped type (they follow the type conversion)."""


def _is_rewritable_use(op: Operation, index: int) -> bool:
    """Whether operand `index` of `op` may be a layout-mapped memref."""
    match op:
        case affine.LoadOp() | memref.LoadOp() | memref.DeallocOp():
            return index == 0
        case affine.StoreOp() | memref.StoreOp():
            return index == 1
        case func.CallOp() | func.ReturnOp():
            return True
        case _:
            return False


def _function_name(op: Operation) -> str:
    parent = op if isinstance(op, func.FuncOp) else op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return "" if parent is None else f" (in @{parent.sym_name.data})"


def _op_name(op: Operation) -> str:
    """The name of `op` as written in the input (also for unregistered ops)."""
    name = op.attributes.get("op_name__")
    if isinstance(op, UnregisteredOp) and isinstance(name, StringAttr):
        return name.data
    return op.name


def _refuse_use(typ: Attribute, op: Operation, how: str) -> PassFailedException:
    return _refuse(
        typ,
        f"it is {how} '{_op_name(op)}', which cannot be rewritten to the normalized layout"
        f"{_function_name(op)}",
    )


_ACCESSES = (affine.LoadOp, affine.StoreOp, memref.LoadOp, memref.StoreOp)
"""Ops whose indices are rewritten when they access a layout-mapped memref."""


@dataclass
class NormalizationWork:
    """The ops `check_module` found to rewrite: accesses to layout-mapped memrefs, and ops
    whose types change (`func.func` signatures, allocations, calls)."""

    accesses: list[Operation] = field(default_factory=list[Operation])
    typed: list[Operation] = field(default_factory=list[Operation])


def check_module(module: ModuleOp, normalizations: MemRefNormalizations) -> NormalizationWork:
    """Check every occurrence of a layout-mapped memref type in `module` (one walk) and
    collect the ops to rewrite.

    Raises:
        PassFailedException: a layout map cannot be normalized, or a value of a
            layout-mapped type is produced or used by an op that cannot be rewritten.
    """
    work = NormalizationWork()
    for op in module.walk():
        if _check_operands(op, normalizations) and isinstance(op, _ACCESSES):
            work.accesses.append(op)
        if _check_attributes(op, normalizations) | _check_results(op, normalizations):
            work.typed.append(op)
        _check_region_arguments(op, normalizations)
    return work


def _check_operands(op: Operation, normalizations: MemRefNormalizations) -> bool:
    """Whether `op` has operands of a layout-mapped type (refused unless `op` can be
    rewritten)."""
    found = False
    for index, operand in enumerate(op.operands):
        if normalizations.get(operand.type) is None:
            continue
        if not _is_rewritable_use(op, index):
            raise _refuse_use(operand.type, op, "used by")
        found = True
    return found


def _check_results(op: Operation, normalizations: MemRefNormalizations) -> bool:
    """Whether `op` has results of a layout-mapped type (refused unless `op` follows the
    type conversion)."""
    found = False
    for result in op.results:
        if normalizations.get(result.type) is None:
            continue
        if not isinstance(op, _PRODUCERS):
            raise _refuse_use(result.type, op, "produced by")
        found = True
    return found


def _check_region_arguments(op: Operation, normalizations: MemRefNormalizations) -> None:
    """Only the entry block of a `func.func` may have arguments of a layout-mapped type."""
    entry = op.body.blocks.first if isinstance(op, func.FuncOp) else None
    for block in (block for region in op.regions for block in region.blocks):
        if block is entry:
            continue
        for arg in block.args:
            if normalizations.get(arg.type) is not None:
                raise _refuse_use(arg.type, op, "a region argument of")


def _check_attributes(op: Operation, normalizations: MemRefNormalizations) -> bool:
    """Whether a `func.func` signature mentions a layout-mapped memref type; any other op
    holding such a type in a property or attribute (e.g. `memref.global`) is refused."""
    if isinstance(op, func.FuncOp):
        signature = op.function_type
        types = (*signature.inputs.data, *signature.outputs.data)
        return any(normalizations.get(typ) is not None for typ in types)
    for attr in (*op.properties.values(), *op.attributes.values()):
        types = (
            (*attr.inputs.data, *attr.outputs.data) if isinstance(attr, FunctionType) else (attr,)
        )
        for typ in types:
            if normalizations.get(typ) is not None:
                raise _refuse_use(typ, op, "held by")
    return False


# Access rewriting ---------------------------------------------------------------------------


_ComposedMapKey = tuple[MemRefType, AffineMap, tuple[tuple[int, int] | None, ...]]
"""(memref type, access map, constant range of each access operand)."""


@dataclass
class AccessRewriting:
    """State shared by the access patterns: the type normalizations, one index analysis
    per function (so index arithmetic is read once), and composed access maps memoized
    per (type, access map, operand ranges)."""

    normalizations: MemRefNormalizations
    _analyses: dict[Operation, IndexAnalysis] = field(
        default_factory=dict[Operation, IndexAnalysis]
    )
    _ranges: dict[SSAValue, tuple[int, int] | None] = field(
        default_factory=dict[SSAValue, tuple[int, int] | None]
    )
    _maps: dict[_ComposedMapKey, AffineMap] = field(
        default_factory=dict[_ComposedMapKey, AffineMap]
    )

    def analysis_for(self, op: Operation) -> IndexAnalysis:
        """The index analysis of the function (isolated region) that contains `op`."""
        scope = op.parent_op()
        while scope is not None and not scope.has_trait(IsolatedFromAbove):
            scope = scope.parent_op()
        key = scope if scope is not None else op
        analysis = self._analyses.get(key)
        if analysis is None:
            analysis = IndexAnalysis()
            self._analyses[key] = analysis
        return analysis

    def range_of(self, value: SSAValue) -> tuple[int, int] | None:
        """The constant range of a loop variable (memoized), else None."""
        if value not in self._ranges:
            self._ranges[value] = constant_bounds_of(value)
        return self._ranges[value]

    def composed_map(
        self, norm: MemRefNormalization, access: AffineMap, operands: Sequence[SSAValue]
    ) -> AffineMap:
        """``layout o access`` over the dimensions and symbols of `access`, simplified
        with the constant ranges of the operands that are loop variables."""
        ranges = tuple(self.range_of(value) for value in operands)
        key = (norm.source, access, ranges)
        cached = self._maps.get(key)
        if cached is not None:
            return cached
        dim_names = [_access_dim(k) for k in range(access.num_dims)]
        symbol_names = [_access_symbol(k) for k in range(access.num_symbols)]
        names = dim_names + symbol_names
        bounds = {n: r for n, r in zip(names, ranges, strict=True) if r is not None}
        point: list[Expr] = []
        for result in access.results:
            converted = from_affine_expr(
                result, [Dim(n) for n in dim_names], [Dim(n) for n in symbol_names]
            )
            if converted is None:
                raise _refuse(norm.source, f"access map {access} is not quasi-affine")
            point.append(converted)
        composed = norm.compose(point, norm.in_bounds(point, bounds))
        dims = {n: k for k, n in enumerate(dim_names)}
        symbols = {n: k for k, n in enumerate(symbol_names)}
        results = tuple(to_affine_expr(e, dims, symbols) for e in composed)
        new_map = AffineMap(access.num_dims, access.num_symbols, results)
        self._maps[key] = new_map
        return new_map

    def transformed_indices(
        self, op: Operation, norm: MemRefNormalization, indices: Sequence[SSAValue]
    ) -> list[SSAValue]:
        """Emit ``layout(indices)`` as `arith` ops before `op`, composed with the index
        arithmetic computing `indices` and simplified."""
        analysis = self.analysis_for(op)
        point = [analysis.expr_of(index) for index in indices]
        used = set[str]().union(*(e.dims() for e in point))
        bounds = {name: analysis.bounds[name] for name in used if name in analysis.bounds}
        refined = norm.in_bounds(point, bounds)
        composed = norm.compose(point, refined)
        emitter = ExprEmitter(InsertPoint.before(op), analysis.leaves, refined)
        return [emitter.emit(e) for e in composed]


def _erase_dead_index_math(values: Sequence[SSAValue], rewriter: PatternRewriter) -> None:
    """Erase the pure `index` computations among the definers of `values` (and theirs)
    that no longer have uses."""
    pending = [v.owner for v in values if isinstance(v.owner, Operation)]
    while pending:
        op = pending.pop()
        if op.parent is None or not is_trivially_dead(op):
            continue
        if not all(isinstance(r.type, IndexType) for r in op.results):
            continue
        operands = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
        rewriter.erase(op)
        pending.extend(operands)


@dataclass
class ComposeAffineLoadWithLayout(RewritePattern):
    """`affine.load %A[a(i)]` on a layout-mapped memref -> `affine.load %A[(layout o a)(i)]`
    (operands unchanged; the memref's type is converted afterwards)."""

    rewriting: AccessRewriting

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.LoadOp, rewriter: PatternRewriter) -> None:
        norm = self.rewriting.normalizations.get(op.memref.type)
        if norm is None:
            return
        new_map = self.rewriting.composed_map(norm, op.map.data, op.indices)
        new = affine.LoadOp.create(
            operands=op.operands,
            result_types=[op.result.type],
            properties={**op.properties, "map": AffineMapAttr(new_map)},
            attributes=dict(op.attributes),
        )
        new.result.name_hint = op.result.name_hint
        rewriter.replace(op, new)


@dataclass
class ComposeAffineStoreWithLayout(RewritePattern):
    """`affine.store %v, %A[a(i)]` on a layout-mapped memref ->
    `affine.store %v, %A[(layout o a)(i)]`."""

    rewriting: AccessRewriting

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.StoreOp, rewriter: PatternRewriter) -> None:
        norm = self.rewriting.normalizations.get(op.memref.type)
        if norm is None:
            return
        new_map = self.rewriting.composed_map(norm, op.map.data, op.indices)
        new = affine.StoreOp.create(
            operands=op.operands,
            properties={**op.properties, "map": AffineMapAttr(new_map)},
            attributes=dict(op.attributes),
        )
        rewriter.replace(op, new)


@dataclass
class IndexMemRefLoadThroughLayout(RewritePattern):
    """`memref.load %A[x]` on a layout-mapped memref -> `memref.load %A[layout(x)]`, the
    new indices computed with `arith` ops."""

    rewriting: AccessRewriting

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter) -> None:
        norm = self.rewriting.normalizations.get(op.memref.type)
        if norm is None:
            return
        old_indices = list(op.indices)
        indices = self.rewriting.transformed_indices(op, norm, old_indices)
        new = memref.LoadOp.create(
            operands=[op.memref, *indices],
            result_types=[op.res.type],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        new.res.name_hint = op.res.name_hint
        rewriter.replace(op, new)
        _erase_dead_index_math(old_indices, rewriter)


@dataclass
class IndexMemRefStoreThroughLayout(RewritePattern):
    """`memref.store %v, %A[x]` on a layout-mapped memref -> `memref.store %v,
    %A[layout(x)]`, the new indices computed with `arith` ops."""

    rewriting: AccessRewriting

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter) -> None:
        norm = self.rewriting.normalizations.get(op.memref.type)
        if norm is None:
            return
        old_indices = list(op.indices)
        indices = self.rewriting.transformed_indices(op, norm, old_indices)
        new = memref.StoreOp.create(
            operands=[op.value, op.memref, *indices],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        rewriter.replace(op, new)
        _erase_dead_index_math(old_indices, rewriter)


# Type conversion ------------------------------------------------------------------------------


class ConvertMappedMemRefTypes(TypeConversionPattern):
    """Every layout-mapped memref type becomes its normalized type: result types, block
    argument types and `func.func` signatures (the types inside a `FunctionType`).

    The conversion is not `recursive`: `check_module` refuses layout-mapped types anywhere
    else, and xDSL's generic recursion over all attribute parameters costs about half a
    millisecond per parameter.
    """

    normalizations: MemRefNormalizations

    def __init__(self, normalizations: MemRefNormalizations):
        self.normalizations = normalizations
        self.recursive = False

    def convert_type(self, typ: Attribute, /) -> Attribute | None:
        if isinstance(typ, FunctionType):
            inputs = [self._converted(t) for t in typ.inputs.data]
            outputs = [self._converted(t) for t in typ.outputs.data]
            if inputs == list(typ.inputs.data) and outputs == list(typ.outputs.data):
                return None
            return FunctionType.from_lists(inputs, outputs)
        norm = self.normalizations.get(typ)
        return None if norm is None else norm.target

    def _converted(self, typ: Attribute) -> Attribute:
        norm = self.normalizations.get(typ)
        return typ if norm is None else norm.target


# Driver -------------------------------------------------------------------------------------


def normalize_memref_layouts(module: ModuleOp) -> None:
    """Normalize every layout-mapped memref type of `module` (see the module docstring).

    One walk checks the module and collects the ops to rewrite; the rewrites then visit
    only those ops (accesses first: they read the layout from the old type).

    Raises:
        PassFailedException: some layout map or use cannot be normalized soundly; the
            module is then left unchanged.
    """
    normalizations = MemRefNormalizations()
    work = check_module(module, normalizations)
    if not work.typed:
        return
    rewriting = AccessRewriting(normalizations)
    rewrite_access = GreedyRewritePatternApplier(
        [
            ComposeAffineLoadWithLayout(rewriting),
            ComposeAffineStoreWithLayout(rewriting),
            IndexMemRefLoadThroughLayout(rewriting),
            IndexMemRefStoreThroughLayout(rewriting),
        ],
        dce_enabled=False,
    )
    for op in work.accesses:
        rewrite_access.match_and_rewrite(op, PatternRewriter(op))
    convert_types = ConvertMappedMemRefTypes(normalizations)
    for op in work.typed:
        convert_types.match_and_rewrite(op, PatternRewriter(op))
