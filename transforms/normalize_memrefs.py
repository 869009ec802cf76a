"""Normalize upstream memref layout maps (the memref half of `apply-layout`).

This is what `mlir-opt -normalize-memrefs` does, done soundly and in linear time.

A memref type whose layout is a non-identity `affine_map` over a static shape, whose
results do not use the map's symbols, ``memref<SHAPE x T, affine_map<(d...)[s...] -> (e...)>>``,
is *normalized* to ``memref<NEWSHAPE x T>`` (identity layout, same memory space), where
NEWSHAPE gives each map result its structural extent on the box ``0 <= d_k < SHAPE_k``
(`IndexMap.map_shape`: ``d floordiv 4`` spans ``ceil(extent / 4)``, ``d mod 4`` always
spans 4, so tiles are whole, as upstream). The element at logical index ``x`` of the old
memref is the element at ``map(x)`` of the new one, so every value that is normalized is
rewritten with all its uses:

- `memref.alloc` / `memref.alloca` results (their unused symbol operands are dropped),
  `memref.dealloc` operands, `func.func` signatures (bodies and declarations), `func.call`
  operands and results and `func.return` operands take the new type;
- `affine.load` / `affine.store` keep their operands; their access map ``a`` becomes
  ``map o a`` over the same dimensions and symbols, simplified (no `affine.apply` is
  emitted);
- `memref.load` / `memref.store` get the indices ``map(x)`` computed with `arith` ops,
  composed with the index arithmetic that computes ``x`` and simplified with the ranges of
  the loop variables (index arithmetic that became dead is erased).

Simplification may assume that every access is in bounds (an out-of-bounds access is
undefined behaviour for memrefs).

Left alone: identity layouts, `strided<...>` layouts and any other layout attribute.

What cannot be normalized soundly is left unnormalized, with a warning naming the memref
type and the reason (`strict=True`: refused with a `PassFailedException` instead, and the
module is left unchanged):

- a layout map that is not injective on the memref's shape (proven with isl; the message
  names two colliding indices), e.g. ``(d0) -> (d0 floordiv 2)`` (upstream silently lets
  the two elements share storage);
- a layout map whose results use its symbols, a dynamic shape, a map whose number of
  dimensions is not the rank, or a result that is not quasi-affine;
- a map result whose minimum on the shape is negative;
- a value of a layout-mapped type produced or used by an op that cannot be rewritten
  (`memref.subview`, `memref.cast`, `memref.copy`, `memref.reinterpret_cast`,
  `memref.get_global`, region arguments other than a function's entry block, unknown and
  unregistered ops, an `affine.load`/`affine.store` whose access map is not quasi-affine,
  a call whose callee is not a `func.func` of the module, a function referenced other
  than by `func.call`, ...), and any op holding a layout-mapped type in an attribute.

Soundness of leaving memrefs alone: values that must keep one type are *connected*: a
call operand with the callee's parameter (and its entry block argument), a call result
with the callee's result and the operands of the callee's `func.return`s. Each connected
class is normalized as a whole or left as a whole (nothing in it is rewritten), so no op
ever sees two types for one value. A class is left when any member is left; upstream
skips every function connected through calls to a non-normalizable use, which leaves more.

Guarantees: all checks run before anything is rewritten; each op is visited a constant
number of times and the per-type work (the isl proof, the new shape) is done once per
distinct type, so the pass is linear in the size of the module; normalized types have
identity layouts, so a second run changes nothing (and repeats the same warnings).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import islpy as isl
from xdsl.dialects import affine, func, memref
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    SymbolRefAttr,
    UnregisteredOp,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsolatedFromAbove, SymbolTable
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.utils.exceptions import PassFailedException

from physlayout.indexing.bridges.affine import affine_to_expr as from_affine_expr
from physlayout.indexing.bridges.arith import ExprEmitter, IndexAnalysis, constant_bounds_of
from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Add, CeilDiv, Const, Dim, Expr, FloorDiv, Mod, Mul
from physlayout.indexing.simplify import simplify
from physlayout.transforms.diagnostics import emit_warning

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


class _Refused(Exception):
    """A layout map that cannot be normalized soundly; the argument says why."""

    @property
    def reason(self) -> str:
        return str(self.args[0])


def _refuse(typ: Attribute, reason: str) -> PassFailedException:
    return PassFailedException(f"{_PREFIX}: cannot normalize {typ}: {reason}")


def is_layout_mapped(typ: Attribute) -> bool:
    """Whether `typ` is a memref whose layout is a non-identity affine map (a type that
    `normalize_memref_layouts` normalizes or leaves with a reason)."""
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
    names = [_layout_dim(k) for k in range(rank)]
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
    printed = result.substitute({_layout_dim(k): Dim(f"d{k}") for k in range(len(shape))})
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


# Which values are normalized (decided before any rewrite) -----------------------------------


_Slot = tuple[str, func.FuncOp, int]
"""``("in" | "out", function, position)``: a parameter or a result of a function's type."""

_Node = SSAValue | _Slot
"""What carries a memref type: an SSA value or a function signature slot."""


def _function_of(op: Operation) -> func.FuncOp | None:
    parent: Operation | None = op if isinstance(op, func.FuncOp) else op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def _function_name(op: Operation) -> str:
    function = _function_of(op)
    return "" if function is None else f" (in @{function.sym_name.data})"


def _op_name(op: Operation) -> str:
    """The name of `op` as written in the input (also for unregistered ops)."""
    name = op.attributes.get("op_name__")
    if isinstance(op, UnregisteredOp) and isinstance(name, StringAttr):
        return name.data
    return op.name


def _cannot_rewrite(op: Operation, how: str) -> str:
    return (
        f"it is {how} '{_op_name(op)}', which cannot be rewritten to the normalized layout"
        f"{_function_name(op)}"
    )


def _symbol_table_of(op: Operation) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and not parent.has_trait(SymbolTable):
        parent = parent.parent_op()
    return parent


def _symbol_refs(attr: Attribute) -> Iterator[SymbolRefAttr]:
    """The symbol references in `attr`, also inside arrays and dictionaries."""
    if isinstance(attr, SymbolRefAttr):
        yield attr
    elif isinstance(attr, ArrayAttr):
        for element in attr.data:
            yield from _symbol_refs(element)
    elif isinstance(attr, DictionaryAttr):
        for element in attr.data.values():
            yield from _symbol_refs(element)


_ACCESSES = (affine.LoadOp, affine.StoreOp, memref.LoadOp, memref.StoreOp)
"""Ops whose indices are rewritten when they access a layout-mapped memref."""


def _is_access_or_dealloc(op: Operation, index: int) -> bool:
    """Whether operand `index` of `op` is the memref of an access or of a dealloc."""
    match op:
        case affine.LoadOp() | memref.LoadOp() | memref.DeallocOp():
            return index == 0
        case affine.StoreOp() | memref.StoreOp():
            return index == 1
        case _:
            return False


def _access_map_problem(op: Operation) -> str | None:
    """Why the access map of an `affine.load`/`affine.store` cannot be composed with a
    layout map (None when it can)."""
    if not isinstance(op, affine.LoadOp | affine.StoreOp):
        return None
    access = op.map.data
    dims: list[Expr] = [Dim(_access_dim(k)) for k in range(access.num_dims)]
    symbols: list[Expr] = [Dim(_access_symbol(k)) for k in range(access.num_symbols)]
    expected = access.num_dims + access.num_symbols
    if len(op.indices) == expected and all(
        from_affine_expr(result, dims, symbols) is not None for result in access.results
    ):
        return None
    return (
        f"it is accessed by '{op.name}' with the access map {access}, which is not "
        f"quasi-affine{_function_name(op)}"
    )


@dataclass(frozen=True)
class LeftUnnormalized:
    """A class of connected values of layout-mapped memref type `typ` that is left as it
    is, and why (the first reason found; `op` is where it was found)."""

    typ: Attribute
    reason: str
    op: Operation | None
    also_in: tuple[str, ...] = ()
    """The other functions with memrefs in the class (connected through calls/returns)."""

    @property
    def message(self) -> str:
        """``apply-layout: left TYPE unnormalized: REASON`` (and where else it applies)."""
        text = f"{_PREFIX}: left {self.typ} unnormalized: {self.reason}"
        if self.also_in:
            functions = ", ".join(f"@{name}" for name in self.also_in)
            text += f"; so are the memrefs connected to it through calls and returns in {functions}"
        return text

    def error(self) -> PassFailedException:
        """The strict-mode error: ``apply-layout: cannot normalize TYPE: REASON``."""
        return _refuse(self.typ, self.reason)


@dataclass(frozen=True)
class _Problem:
    """A reason to leave the class of `node` unnormalized (`node` None: every value and
    slot of type `typ`)."""

    node: _Node | None
    typ: Attribute
    reason: str
    op: Operation


@dataclass
class NormalizationPlan:
    """What to rewrite: the accesses of normalized memrefs, the ops whose types change
    (allocations, calls, functions), the values and slots that take their normalized
    type, and the classes left unnormalized (in the order their reasons were found)."""

    normalizations: MemRefNormalizations
    accesses: list[Operation] = field(default_factory=list[Operation])
    typed: list[Operation] = field(default_factory=list[Operation])
    normalized: dict[_Node, MemRefType] = field(default_factory=dict[_Node, MemRefType])
    left: list[LeftUnnormalized] = field(default_factory=list[LeftUnnormalized])
    first_problem: LeftUnnormalized | None = None

    def target_of(self, node: _Node) -> MemRefType | None:
        """The normalized type of `node`, or None when it keeps its type."""
        return self.normalized.get(node)


@dataclass
class _Planner:
    """One walk over the module: registers every value and signature slot of a
    layout-mapped type, connects those that must share a type (union-find), and records
    the reasons to leave classes alone."""

    normalizations: MemRefNormalizations
    functions: dict[tuple[Operation | None, str], func.FuncOp] = field(
        default_factory=dict[tuple[Operation | None, str], func.FuncOp]
    )
    functions_by_name: dict[str, list[func.FuncOp]] = field(
        default_factory=dict[str, list[func.FuncOp]]
    )
    types: dict[_Node, Attribute] = field(default_factory=dict[_Node, Attribute])
    parent: dict[_Node, _Node] = field(default_factory=dict[_Node, _Node])
    problems: list[_Problem] = field(default_factory=list[_Problem])
    accesses: list[Operation] = field(default_factory=list[Operation])

    # Union-find --------------------------------------------------------------------------

    def find(self, node: _Node) -> _Node:
        root = node
        while root in self.parent:
            root = self.parent[root]
        while node in self.parent:
            up = self.parent[node]
            self.parent[node] = root
            node = up
        return root

    def union(self, a: _Node, b: _Node) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self.parent[root_a] = root_b

    def register(self, node: _Node, typ: Attribute, op: Operation) -> None:
        """Record that `node` has the layout-mapped type `typ` (seen at `op`)."""
        if node in self.types:
            return
        self.types[node] = typ
        refusal = self.normalizations.refusal(typ)
        if refusal is not None:
            self.problems.append(_Problem(node, typ, refusal, op))

    def refuse(self, node: _Node, op: Operation, reason: str) -> None:
        self.problems.append(_Problem(node, self.types[node], reason, op))

    # The walk ------------------------------------------------------------------------------

    def collect_functions(self, module: ModuleOp) -> None:
        for op in module.walk():
            if isinstance(op, func.FuncOp):
                self.functions[(_symbol_table_of(op), op.sym_name.data)] = op
                self.functions_by_name.setdefault(op.sym_name.data, []).append(op)

    def visit(self, op: Operation) -> None:
        self._operands(op)
        self._signature_or_held_types(op)
        self._results(op)
        self._region_arguments(op)
        self._symbol_uses(op)

    def _callee(self, call: func.CallOp) -> func.FuncOp | None:
        if call.callee.nested_references.data:
            return None
        return self.functions.get((_symbol_table_of(call), call.callee.root_reference.data))

    def _connect_to_slot(
        self, value: SSAValue, function: func.FuncOp | None, kind: str, index: int
    ) -> bool:
        """Connect `value` with slot `index` of `function`'s inputs or outputs; False when
        there is no such slot of the same type (so every class has one type)."""
        if function is None:
            return False
        signature = function.function_type
        types = signature.inputs.data if kind == "in" else signature.outputs.data
        if index >= len(types) or types[index] != value.type:
            return False
        slot: _Slot = (kind, function, index)
        self.register(slot, types[index], function)
        self.union(value, slot)
        return True

    def _operands(self, op: Operation) -> None:
        for index, operand in enumerate(op.operands):
            if not self.normalizations.is_mapped(operand.type):
                continue
            self.register(operand, operand.type, op)
            if _is_access_or_dealloc(op, index):
                problem = _access_map_problem(op)
                if problem is not None:
                    self.refuse(operand, op, problem)
                elif isinstance(op, _ACCESSES):
                    self.accesses.append(op)
            elif isinstance(op, func.CallOp):
                if not self._connect_to_slot(operand, self._callee(op), "in", index):
                    self.refuse(operand, op, self._unresolved(op))
            elif isinstance(op, func.ReturnOp):
                if not self._connect_to_slot(operand, _function_of(op), "out", index):
                    self.refuse(operand, op, _cannot_rewrite(op, "returned by"))
            else:
                self.refuse(operand, op, _cannot_rewrite(op, "used by"))

    def _unresolved(self, call: func.CallOp) -> str:
        return (
            f"it is passed to or returned from {call.callee}, which is not a function of "
            f"this module with that type{_function_name(call)}"
        )

    def _signature_or_held_types(self, op: Operation) -> None:
        """Register the signature slots of a `func.func`; any other op holding a
        layout-mapped type in a property or attribute leaves every value of that type."""
        if isinstance(op, func.FuncOp):
            signature = op.function_type
            slots = [("in", k, t) for k, t in enumerate(signature.inputs.data)]
            slots += [("out", k, t) for k, t in enumerate(signature.outputs.data)]
            for kind, index, typ in slots:
                if self.normalizations.is_mapped(typ):
                    self.register((kind, op, index), typ, op)
            return
        for attr in (*op.properties.values(), *op.attributes.values()):
            held = (
                (*attr.inputs.data, *attr.outputs.data) if isinstance(attr, FunctionType) else (attr,)
            )
            for typ in held:
                if self.normalizations.is_mapped(typ):
                    self.problems.append(_Problem(None, typ, _cannot_rewrite(op, "held by"), op))

    def _results(self, op: Operation) -> None:
        for index, result in enumerate(op.results):
            if not self.normalizations.is_mapped(result.type):
                continue
            self.register(result, result.type, op)
            if isinstance(op, memref.AllocOp | memref.AllocaOp):
                continue
            if isinstance(op, func.CallOp):
                if not self._connect_to_slot(result, self._callee(op), "out", index):
                    self.refuse(result, op, self._unresolved(op))
                continue
            self.refuse(result, op, _cannot_rewrite(op, "produced by"))

    def _region_arguments(self, op: Operation) -> None:
        """Only the entry block of a `func.func` may have arguments of a layout-mapped type
        (they are its parameters)."""
        entry = op.body.blocks.first if isinstance(op, func.FuncOp) else None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    if not self.normalizations.is_mapped(arg.type):
                        continue
                    self.register(arg, arg.type, op)
                    function = op if block is entry and isinstance(op, func.FuncOp) else None
                    if not self._connect_to_slot(arg, function, "in", arg.index):
                        self.refuse(arg, op, _cannot_rewrite(op, "a region argument of"))

    def _symbol_uses(self, op: Operation) -> None:
        """A function referenced other than as the callee of a `func.call` (e.g. by
        `func.constant`) keeps its signature: its uses cannot be followed."""
        for name, attr in (*op.properties.items(), *op.attributes.items()):
            if isinstance(op, func.CallOp) and name == "callee":
                continue
            for ref in _symbol_refs(attr):
                for function in self.functions_by_name.get(ref.root_reference.data, []):
                    self._refuse_signature(function, op)

    def _refuse_signature(self, function: func.FuncOp, op: Operation) -> None:
        signature = function.function_type
        reason = (
            f"its function @{function.sym_name.data} is referenced by '{_op_name(op)}', "
            f"which cannot be rewritten to the normalized layout{_function_name(op)}"
        )
        for kind, types in (("in", signature.inputs.data), ("out", signature.outputs.data)):
            for index, typ in enumerate(types):
                if self.normalizations.is_mapped(typ):
                    slot: _Slot = (kind, function, index)
                    self.register(slot, typ, function)
                    self.refuse(slot, op, reason)

    # The plan ------------------------------------------------------------------------------

    def plan(self) -> NormalizationPlan:
        """Decide every class: normalized unless some problem concerns one of its nodes."""
        classes: dict[_Node, list[_Node]] = {}
        for node in self.types:
            classes.setdefault(self.find(node), []).append(node)
        by_type: dict[Attribute, list[_Node]] = {}
        if any(problem.node is None for problem in self.problems):
            for node, typ in self.types.items():
                by_type.setdefault(typ, []).append(node)
        first: dict[_Node, _Problem] = {}
        for problem in self.problems:
            nodes = by_type.get(problem.typ, []) if problem.node is None else [problem.node]
            for node in nodes:
                first.setdefault(self.find(node), problem)
        plan = NormalizationPlan(self.normalizations)
        for root, members in classes.items():
            if root in first:
                continue
            for member in members:
                norm = self.normalizations.get(self.types[member])
                assert norm is not None
                plan.normalized[member] = norm.target
        order = {id(p): k for k, p in enumerate(self.problems)}
        left = sorted(first.items(), key=lambda item: order.get(id(item[1]), len(order)))
        for root, problem in left:
            plan.left.append(_left(problem, classes[root]))
        if self.problems:
            plan.first_problem = _left(self.problems[0], [])
        plan.accesses = [
            op for op in self.accesses if _accessed_memref(op) in plan.normalized
        ]
        plan.typed = [op for op in self._typed_ops() if _changes_type(op, plan)]
        return plan

    def _typed_ops(self) -> Iterator[Operation]:
        """The ops that own a registered node: allocations, calls and functions (each once)."""
        seen: set[Operation] = set()
        for node in self.types:
            op = _owner(node)
            if op not in seen and isinstance(op, _TYPED):
                seen.add(op)
                yield op


_TYPED = (memref.AllocOp, memref.AllocaOp, func.CallOp, func.FuncOp)
"""Ops whose types change when a value they define is normalized."""


def _owner(node: _Node) -> Operation:
    """The op that defines `node`'s type: the value's defining op, the function of an
    entry block argument or of a slot."""
    if isinstance(node, tuple):
        return node[1]
    if isinstance(node, BlockArgument):
        parent = node.block.parent_op()
        assert parent is not None
        return parent
    owner = node.owner
    assert isinstance(owner, Operation)
    return owner


def _accessed_memref(op: Operation) -> SSAValue:
    if isinstance(op, affine.StoreOp | memref.StoreOp):
        return op.operands[1]
    return op.operands[0]


def _changes_type(op: Operation, plan: NormalizationPlan) -> bool:
    if isinstance(op, func.FuncOp):
        signature = op.function_type
        return any(
            (kind, op, index) in plan.normalized
            for kind, types in (("in", signature.inputs.data), ("out", signature.outputs.data))
            for index in range(len(types))
        )
    return any(result in plan.normalized for result in op.results)


def _left(problem: _Problem, members: Sequence[_Node]) -> LeftUnnormalized:
    """The report of a class left because of `problem` (naming the other functions that
    hold its `members`)."""
    where = _function_of(problem.op)
    functions = {_function_of(_owner(member)) for member in members} - {where, None}
    names = sorted(f.sym_name.data for f in functions if f is not None)
    return LeftUnnormalized(problem.typ, problem.reason, problem.op, tuple(names))


def plan_normalization(module: ModuleOp, normalizations: MemRefNormalizations) -> NormalizationPlan:
    """Decide (one walk, nothing rewritten) which memref values of `module` are normalized
    and which are left, and why."""
    planner = _Planner(normalizations)
    planner.collect_functions(module)
    for op in module.walk():
        planner.visit(op)
    return planner.plan()

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


# Type rewriting -------------------------------------------------------------------------------


@dataclass
class NormalizeAllocation(RewritePattern):
    """`memref.alloc` / `memref.alloca` of a normalized value -> the same allocation of the
    normalized type, without the symbol operands that the layout map does not use."""

    plan: NormalizationPlan

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.AllocOp | memref.AllocaOp, rewriter: PatternRewriter
    ) -> None:
        target = self.plan.target_of(op.memref)
        if target is None:
            return
        properties = {k: v for k, v in op.properties.items() if k != "operandSegmentSizes"}
        new = type(op).build(
            operands=[list(op.dynamic_sizes), []],
            result_types=[target],
            properties=properties,
            attributes=dict(op.attributes),
        )
        new.memref.name_hint = op.memref.name_hint
        rewriter.replace(op, new)


@dataclass
class NormalizeCallResults(RewritePattern):
    """The normalized results of a `func.call` take the normalized type (its operands
    already have it: they are connected with the callee's parameters)."""

    plan: NormalizationPlan

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        for result in list(op.results):
            target = self.plan.target_of(result)
            if target is not None:
                rewriter.replace_value_with_new_type(result, target)


@dataclass
class NormalizeFunctionSignature(RewritePattern):
    """A `func.func` whose parameters or results are normalized gets the normalized types
    in its signature and on its entry block arguments."""

    plan: NormalizationPlan

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        signature = op.function_type
        inputs = [
            self.plan.target_of(("in", op, k)) or typ for k, typ in enumerate(signature.inputs)
        ]
        outputs = [
            self.plan.target_of(("out", op, k)) or typ for k, typ in enumerate(signature.outputs)
        ]
        if inputs == list(signature.inputs) and outputs == list(signature.outputs):
            return
        if op.body.blocks:
            for arg in list(op.body.blocks[0].args):
                target = self.plan.target_of(arg)
                if target is not None:
                    rewriter.replace_value_with_new_type(arg, target)
        op.function_type = FunctionType.from_lists(inputs, outputs)
        rewriter.notify_op_modified(op)


# Driver -------------------------------------------------------------------------------------


def normalize_memref_layouts(module: ModuleOp, strict: bool = False) -> list[LeftUnnormalized]:
    """Normalize the layout-mapped memref types of `module` (see the module docstring).

    One walk decides what is normalized; the rewrites then visit only the ops to change
    (accesses first: they read the layout from the old type). Each class of memrefs left
    unnormalized is reported with a warning on stderr (`emit_warning`, located at the op
    where its reason was found) and returned.

    Raises:
        PassFailedException: `strict` and some memref cannot be normalized; the module is
            then left unchanged.
    """
    normalizations = MemRefNormalizations()
    plan = plan_normalization(module, normalizations)
    if strict and plan.first_problem is not None:
        raise plan.first_problem.error()
    for left in plan.left:
        emit_warning(left.op, left.message)
    if not plan.typed:
        return plan.left
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
    for op in plan.accesses:
        rewrite_access.match_and_rewrite(op, PatternRewriter(op))
    convert_types = GreedyRewritePatternApplier(
        [NormalizeAllocation(plan), NormalizeCallResults(plan), NormalizeFunctionSignature(plan)],
        dce_enabled=False,
    )
    for op in plan.typed:
        convert_types.match_and_rewrite(op, PatternRewriter(op))
    return plan.left
