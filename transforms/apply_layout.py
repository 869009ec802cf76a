"""apply-layout: apply every buffer's pending transform (RFC 0039 ApplyBufferTransforms).

A `!layout.buffer` whose type carries `transform = MAP` (or a list of maps, applied in
order) is rewritten to its transformed layout:

- its type becomes the transformed shape (`map_shape`), with the axis separators written
  in the map (`|`), and no pending transform: function signatures, call sites, block
  arguments and `layout.decl_buffer` results all change together (a type conversion);
- every `layout.load` / `layout.store` index tuple `x` becomes `map(x)`, composed with the
  index arithmetic that computes `x` and simplified with the ranges of the loop variables;
- a `layout.allocate` whose extents equal the logical shape of the buffer declared over it
  gets the transformed extents (allocations are physical, RFC 0039);
- padding: a transform with padding needs a `pad_value` (else: error naming the padding
  predicate). Each buffer that the function writes gets its padding filled with the pad
  value (an exact guarded loop nest over the transformed box); read-only buffers are
  never filled and logical reads never reach padding (the map is injective);
- `rewrite-loops=true` (RFC 0039 option 3): a perfect loop nest with constant bounds that
  stores to a whole transformed buffer at exactly its loop variables is re-iterated over
  the transformed box, in physical order; its body computes the logical indices with the
  exact inverse map, and padding points store the pad value. A nest is re-iterated only
  when the dependence analysis (`dependence.reorder_hazard`, exact with isl) proves that
  every two iterations that touch one element of one storage, one of them writing it,
  still run in their logical order (any order is fine when no two iterations share an
  element that one of them writes); it refuses nests that carry values between
  iterations (`iter_args`), call functions or run ops with unknown memory effects, and
  compares accesses through aliases (`layout.decl_buffer`, `layout.data`, parameters a
  call binds to one storage) in their common storage. Otherwise the nest keeps its
  logical order (its accesses are transformed like any other and the padding is filled
  by the fill nest), and with `remarks=true` a remark on stderr says why, e.g. "kept the
  logical order of the loop nest over %i: iterations (i=2) and (i=13) both access %y[13]
  (load, then store); the new order runs (i=13) first". Remarks never change the IR.

Refused, with a diagnostic: input that `verify-buffers` rejects (checked first: the
rewrite erases dead declarations, which would hide an invalid alias), a map that is not
injective on the buffer's shape (proven with isl, the colliding indices are named), padding
without `pad_value`, two different pending transforms over one allocation, and vector
accesses whose lanes the map does not keep contiguous.

Guarantees: the pending transforms are consumed, so a second run changes nothing.

How, in order (each step a walker over small patterns; everything it decides is read from
analyses computed before the first rewrite, `Layouts`, `logical_accesses` and
`physical_order.plan_physical_order`):

1. `RewriteLoopNestInPhysicalOrder` (`rewrite-loops=true` only): the planned nests;
2. `FillPaddingOfParameters`, `FillPaddingAfterDeclaration`: the fill nests;
3. `RewriteAccessToTransformedIndices`: the loads and stores that were logical before
   step 1 (the stores of steps 1 and 2 are written in physical indices), and
   `ResizeAllocationToTransformedShape`;
4. `ConsumePendingTransforms`: the type conversion;
5. `normalize-memref-layouts` (same `strict`): upstream `memref<..., affine_map<...>>`
   layouts are normalized as the last step (see `normalize_memrefs`): a memref that cannot
   be normalized soundly is left as it is with a warning, or, with `strict=true`, refused
   (and the module left unchanged).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, ParametrizedAttribute, Region, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.dialects.layout import AllocateOp, BufferType, DeclBufferOp, LoadOp, StoreOp
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim
from physlayout.indexing.simplify import simplify
from physlayout.transforms.buffer_aliases import BufferAliases
from physlayout.transforms.dead_code import GreedyApplierWithMemoizedDce
from physlayout.transforms.dependence import access_lanes
from physlayout.transforms.diagnostics import OpPassFailure
from physlayout.transforms.loop_nests import (
    RewritingEmitter,
    build_scf_nest,
    padding_condition,
    physical_names,
)
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.physical_order import (
    PhysicalOrder,
    PhysicalOrderPlan,
    plan_physical_order,
)
from physlayout.transforms.rooted_walker import RootedWalker
from physlayout.transforms.verify_buffers import refuse_invalid_buffers

_PASS = "apply-layout"


# Analyses (computed before the first rewrite) --------------------------------------------


@dataclass(frozen=True)
class Layouts:
    """The resolved pending layout of every buffer type of a module with a pending transform
    (resolving proves the map injective; a failure is a diagnostic naming the buffer)."""

    by_type: Mapping[BufferType, PendingLayout]

    @staticmethod
    def of(module: ModuleOp) -> Layouts:
        """Resolve the layouts of the types of every value of `module`, in order, then of
        the function signatures (a declaration's types have no value to name, so a failure
        is reported at a value of the same type where there is one)."""
        by_type: dict[BufferType, PendingLayout] = {}
        signatures: list[tuple[Attribute, Operation]] = []
        for op in module.walk():
            values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
            for value in values:
                _resolve(value.type, value, op, by_type)
            if isinstance(op, func.FuncOp):
                types = [*op.function_type.inputs, *op.function_type.outputs]
                signatures.extend((typ, op) for typ in types)
        for typ, op in signatures:
            _resolve(typ, None, op, by_type)
        return Layouts(by_type)

    def get(self, buffer_type: Attribute) -> PendingLayout | None:
        """The pending layout of `buffer_type` (None without a pending transform)."""
        if not isinstance(buffer_type, BufferType) or not buffer_type.get_transforms():
            return None
        return self.by_type.get(buffer_type)


def _resolve(
    typ: Attribute,
    where: SSAValue | None,
    op: Operation,
    by_type: dict[BufferType, PendingLayout],
) -> None:
    """Resolve the layout of `typ` (the type of the value `where` of `op`, or None in its
    signature); a failure names the value and is reported at `op` (for a function argument,
    the function)."""
    if not isinstance(typ, BufferType) or not typ.get_transforms() or typ in by_type:
        return
    try:
        layout = PendingLayout.of(typ)
    except ValueError as err:
        described = "" if where is None else _describe(where)
        raise OpPassFailure(op, f"{_PASS}: {described}{err}") from None
    if layout is not None:
        by_type[typ] = layout


def logical_accesses(module: ModuleOp, layouts: Layouts) -> frozenset[Operation]:
    """The `layout.load`/`layout.store` ops of `module` whose indices are logical: those on a
    buffer with a pending transform, before anything is rewritten."""
    return frozenset(
        op
        for op in module.walk()
        if isinstance(op, LoadOp | StoreOp) and layouts.get(op.buffer.type) is not None
    )


def _describe(value: SSAValue) -> str:
    name = f"%{value.name_hint}" if value.name_hint else "a buffer"
    return f"{name} of type {value.type}: "


# Access rewriting -----------------------------------------------------------------------


def _transformed_indices(
    op: LoadOp | StoreOp, layout: PendingLayout, rewriter: PatternRewriter
) -> list[SSAValue]:
    """Emit `map(indices)` before `op`, composed with the index math and simplified."""
    analysis = IndexAnalysis()
    exprs = [analysis.expr_of(index) for index in op.indices]
    bounds = dict(analysis.bounds)
    for expr, extent in zip(exprs, layout.logical_shape, strict=True):
        if isinstance(expr, Dim):
            low, high = bounds.get(expr.name, (0, extent - 1))
            bounds[expr.name] = (max(low, 0), min(high, extent - 1))
    index_map = layout.index_map
    point = dict(zip(index_map.initial_indices, exprs, strict=True))
    composed = [simplify(e.substitute(point), bounds) for e in index_map.final_indices]
    if access_lanes(op) > 1:
        _check_contiguous_lanes(op, layout)
    emitter = RewritingEmitter(InsertPoint.before(op), analysis.leaves, bounds, rewriter=rewriter)
    return [emitter.emit(e) for e in composed]


def _check_contiguous_lanes(op: LoadOp | StoreOp, layout: PendingLayout) -> None:
    index_map = layout.index_map
    inner = index_map.initial_indices[-1]
    last = index_map.final_indices[-1]
    others = index_map.final_indices[:-1]
    if last == Dim(inner) and all(inner not in e.dims() for e in others):
        return
    raise PassFailedException(
        f"{_PASS}: vector access '{op.name}' on {op.buffer.type} needs the innermost "
        f"axis kept contiguous, but the transform maps it by {index_map} (the last output "
        f"must be '{inner}' itself, and no other output may use '{inner}')"
    )


def _rewrite_to_transformed_indices(
    op: LoadOp | StoreOp, layout: PendingLayout, rewriter: PatternRewriter
) -> None:
    indices = _transformed_indices(op, layout, rewriter)
    if isinstance(op, LoadOp):
        rewriter.replace(op, LoadOp(op.buffer, indices, op.result.type))
    else:
        rewriter.replace(op, StoreOp(op.value, op.buffer, indices))


@dataclass
class RewriteAccessToTransformedIndices(RewritePattern):
    """`layout.load %B[x]` / `layout.store %v, %B[x]` on a buffer with a pending map ->
    the same access at `%B[map(x)]`."""

    layouts: Layouts
    logical: frozenset[Operation]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoadOp | StoreOp, rewriter: PatternRewriter) -> None:
        layout = self.layouts.get(op.buffer.type)
        if layout is not None and op in self.logical:
            _rewrite_to_transformed_indices(op, layout, rewriter)


@dataclass
class ResizeAllocationToTransformedShape(RewritePattern):
    """`layout.allocate` extents follow the transformed shape of the buffer declared over
    it (when they were its logical shape)."""

    layouts: Layouts

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DeclBufferOp, rewriter: PatternRewriter) -> None:
        layout = self.layouts.get(op.buffer.type)
        allocation = op.ptr.owner
        if layout is None or not isinstance(allocation, AllocateOp):
            return
        extents = allocation.get_extents()
        # a 0-d transformed buffer (a one-element tensor squeezed to a scalar) holds one element
        physical = layout.shape or (1,)
        if extents == physical:
            return
        if extents != layout.logical_shape:
            raise PassFailedException(
                f"{_PASS}: allocation [{', '.join(map(str, extents))}] under "
                f"{op.buffer.type} is not its logical shape; cannot give it the "
                f"transformed extents {list(layout.shape)}"
            )
        others = [
            use.operation
            for use in allocation.ptr.uses
            if isinstance(use.operation, DeclBufferOp) and use.operation is not op
        ]
        for other in others:
            other_layout = self.layouts.get(other.buffer.type)
            if other_layout is not None and other_layout.shape != layout.shape:
                raise PassFailedException(
                    f"{_PASS}: two buffers with different pending transforms are "
                    f"declared over one allocation: {op.buffer.type} and {other.buffer.type}"
                )
        rewriter.replace(allocation, AllocateOp(physical, allocation.ptr.type))  # type: ignore[arg-type]


class _ApplyPendingTransforms(TypeConversionPattern):
    """Every `!layout.buffer` type with pending transforms becomes its transformed type."""

    def __init__(self, layouts: Layouts):
        self.layouts = layouts
        self.recursive = True

    @attr_type_rewrite_pattern
    def convert_type(self, typ: BufferType) -> BufferType | None:
        layout = self.layouts.get(typ)
        if layout is None:
            return None
        return layout.applied_type(typ)


class ConsumePendingTransforms(RewritePattern):
    """Every `!layout.buffer` type with pending transforms becomes its transformed type (a
    type conversion, tried only on the ops that mention such a type: xDSL's conversion
    rebuilds every attribute of every op it visits).

    The conversion is xDSL's `TypeConversionPattern` with `recursive` set and
    `_ApplyPendingTransforms.convert_type` (the same new types, attributes and ops), with
    each attribute's conversion memoized (`converted`): xDSL's rebuilds every parameter of
    every type on every op and checks each with `isa`, which was most of this walk's time
    on models (a few distinct buffer types, mentioned by thousands of ops)."""

    def __init__(self, layouts: Layouts):
        self.layouts = layouts
        self.conversion = _ApplyPendingTransforms(layouts)
        self._pending: dict[Attribute, bool] = {}
        self._converted: dict[Attribute, Attribute] = {}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        mentioned = [
            *(r.type for r in op.results),
            *op.attributes.values(),
            *op.properties.values(),
            *(a.type for r in op.regions for b in r.blocks for a in b.args),
        ]
        if any(self._mentions_pending(attr) for attr in mentioned):
            self._convert_op(op, rewriter)

    def converted(self, attr: Attribute) -> Attribute:
        """`attr` converted as xDSL's recursive conversion converts it: parameters, array
        elements and dictionary values first, then the attribute itself. An attribute that
        mentions no pending type converts to an equal one (xDSL rebuilds it unchanged) and
        is returned as it is."""
        known = self._converted.get(attr)
        if known is not None:
            return known
        if not self._mentions_pending(attr):
            result = attr
        else:
            rebuilt = attr
            if isinstance(attr, ParametrizedAttribute):
                rebuilt = type(attr).new([self.converted(p) for p in attr.parameters])
            elif isinstance(attr, ArrayAttr):
                elements = cast(ArrayAttr[Attribute], attr)
                rebuilt = type(attr).new(tuple(self.converted(a) for a in elements))
            elif isinstance(attr, DictionaryAttr):
                rebuilt = type(attr).new({k: self.converted(v) for k, v in attr.data.items()})
            converted = self.conversion.convert_type(rebuilt)
            result = converted if converted is not None else rebuilt
        self._converted[attr] = result
        return result

    def _convert_op(self, op: Operation, rewriter: PatternRewriter) -> None:
        """xDSL's `TypeConversionPattern.match_and_rewrite`, with `converted`."""
        result_types = [self.converted(r.type) for r in op.results]
        attributes = {k: self.converted(v) for k, v in op.attributes.items()}
        properties = {k: self.converted(v) for k, v in op.properties.items()}
        changed = (
            any(new != r.type for new, r in zip(result_types, op.results, strict=True))
            or any(attributes[k] != v for k, v in op.attributes.items())
            or any(properties[k] != v for k, v in op.properties.items())
        )
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    new_type = self.converted(arg.type)
                    if new_type != arg.type:
                        rewriter.replace_value_with_new_type(arg, new_type)
        if not changed:
            return
        regions = [op.detach_region(r) for r in op.regions]
        new_op = type(op).create(
            operands=op.operands,
            result_types=result_types,
            properties=properties,
            attributes=attributes,
            successors=op.successors,
            regions=regions,
        )
        rewriter.replace(op, new_op)
        for new, old in zip(new_op.results, op.results, strict=True):
            new.name_hint = old.name_hint

    def _mentions_pending(self, attr: Attribute) -> bool:
        """Whether the conversion changes `attr`: it is, or contains (in the parameters,
        arrays and dictionaries it recurses into), a type with a pending layout."""
        known = self._pending.get(attr)
        if known is not None:
            return known
        if self.layouts.get(attr) is not None:
            found = True
        elif isinstance(attr, ParametrizedAttribute):
            found = any(self._mentions_pending(p) for p in attr.parameters)
        elif isinstance(attr, ArrayAttr):
            found = any(self._mentions_pending(a) for a in cast(ArrayAttr[Attribute], attr))
        elif isinstance(attr, DictionaryAttr):
            found = any(self._mentions_pending(a) for a in attr.data.values())
        else:
            found = False
        self._pending[attr] = found
        return found


# Padding ----------------------------------------------------------------------------------


def _pad_store_block(buffer: SSAValue, ivs: list[SSAValue]) -> Block:
    """An `scf.if` branch that stores the pad value at the transformed index `ivs` (a
    physical store: it is not in `logical_accesses`)."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, BufferType)
    pad = buffer_type.get_pad_value()
    if pad is None or isinstance(buffer_type.element_type, VectorType):
        raise PassFailedException(
            f"{_PASS}: cannot fill the padding of {buffer_type}: it needs a scalar "
            "element type and a pad_value"
        )
    constant = arith.ConstantOp(pad)
    return Block([constant, StoreOp(constant.result, buffer, ivs), scf.YieldOp()])


def _inverse_or_refuse(buffer: SSAValue, layout: PendingLayout) -> IndexMap:
    """The map's exact inverse on its image, which the padding test needs; a map with only
    a piecewise inverse is refused (its padding could not be filled)."""
    try:
        inverse, _ = layout.index_map.non_surjective_inverse(list(layout.logical_shape))
    except ValueError as err:
        raise PassFailedException(
            f"{_PASS}: cannot fill the padding of {_describe(buffer)}{err}"
        ) from None
    return inverse


def _physical_nest(
    layout: PendingLayout, point: InsertPoint, parallel: bool, rewriter: PatternRewriter
) -> tuple[list[SSAValue], RewritingEmitter]:
    """A loop nest over the transformed box at `point`: its induction variables (named
    `physical_names`) and an emitter in the innermost body that knows their bounds."""
    ivs, body = build_scf_nest(layout.shape, point, rewriter, parallel)
    names = physical_names(len(layout.shape))
    bounds = {n: (0, e - 1) for n, e in zip(names, layout.shape, strict=True)}
    values = dict(zip(names, ivs, strict=True))
    return ivs, RewritingEmitter(body, values, bounds, rewriter=rewriter)


def _fill_padding(
    buffer: SSAValue, layout: PendingLayout, point: InsertPoint, rewriter: PatternRewriter
) -> None:
    """Insert a loop nest at `point` that stores the pad value on every padding point."""
    inverse = _inverse_or_refuse(buffer, layout)
    ivs, emitter = _physical_nest(layout, point, False, rewriter)
    is_pad = padding_condition(
        layout.index_map, inverse, layout.logical_shape, layout.shape, emitter
    )
    assert is_pad is not None
    emitter.insert(scf.IfOp(is_pad, [], Region(_pad_store_block(buffer, ivs))))


def _padding_to_fill(
    buffer: SSAValue, layouts: Layouts, covered: frozenset[SSAValue]
) -> PendingLayout | None:
    """The layout of `buffer` when its padding must be filled: it pads, the function
    stores to it, and no re-iterated nest stores its padding."""
    layout = layouts.get(buffer.type)
    if layout is None or layout.padding is None or buffer in covered:
        return None
    written = any(
        isinstance(use.operation, StoreOp) and use.operation.buffer is buffer for use in buffer.uses
    )
    return layout if written else None


@dataclass
class FillPaddingOfParameters(RewritePattern):
    """At function entry, fill the padding of each written parameter whose transform pads
    (unless a re-iterated nest stores it)."""

    layouts: Layouts
    covered: frozenset[SSAValue]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if not op.body.blocks:
            return
        entry = op.body.blocks[0]
        for arg in entry.args:
            layout = _padding_to_fill(arg, self.layouts, self.covered)
            if layout is None:
                continue
            first = entry.first_op
            point = InsertPoint.before(first) if first else InsertPoint.at_end(entry)
            _fill_padding(arg, layout, point, rewriter)


@dataclass
class FillPaddingAfterDeclaration(RewritePattern):
    """After a written `layout.decl_buffer` whose transform pads, fill its padding (unless a
    re-iterated nest stores it)."""

    layouts: Layouts
    covered: frozenset[SSAValue]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DeclBufferOp, rewriter: PatternRewriter) -> None:
        layout = _padding_to_fill(op.buffer, self.layouts, self.covered)
        if layout is not None:
            _fill_padding(op.buffer, layout, InsertPoint.after(op), rewriter)


# Loop rewriting ---------------------------------------------------------------------------


@dataclass
class RewriteLoopNestInPhysicalOrder(RewritePattern):
    """A planned loop nest (`physical_order`) that writes a whole buffer at its loop
    variables is re-iterated over the buffer's transformed box (RFC 0039 option 3),
    padding included; the copied body gets transformed indices right away."""

    layouts: Layouts
    plan: PhysicalOrderPlan

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        order = self.plan.nests.get(op)
        if order is not None:
            self._rewrite(order, rewriter)

    def _rewrite(self, order: PhysicalOrder, rewriter: PatternRewriter) -> None:
        nest, buffer, layout = order.nest, order.buffer, order.layout
        inverse, _ = layout.index_map.non_surjective_inverse(list(layout.logical_shape))
        ivs, emitter = _physical_nest(
            layout, InsertPoint.before(nest.outer), nest.parallel, rewriter
        )
        names = physical_names(len(layout.shape))
        point = {d: Dim(n) for d, n in zip(inverse.initial_indices, names, strict=True)}
        logical = [
            emitter.emit(simplify(e.substitute(point), emitter.bounds))
            for e in inverse.final_indices
        ]
        mapper: dict[SSAValue, SSAValue] = {iv: logical[order.axes[iv]] for iv in nest.ivs}
        is_pad = (
            None
            if layout.padding is None
            else padding_condition(
                layout.index_map, inverse, layout.logical_shape, layout.shape, emitter
            )
        )
        target = emitter.insert_point
        if is_pad is not None:
            then, otherwise = _pad_store_block(buffer, ivs), Block([scf.YieldOp()])
            emitter.insert(scf.IfOp(is_pad, [], Region(then), Region(otherwise)))
            target = InsertPoint.before(otherwise.ops.first)  # type: ignore[arg-type]
        copies: list[Operation] = []
        for inner in list(nest.body.ops):
            if inner is nest.body.last_op:
                break
            copies.append(rewriter.insert(inner.clone(mapper), target))
        for copy in copies:
            for access in list(copy.walk()):
                if not isinstance(access, LoadOp | StoreOp):
                    continue
                access_layout = self.layouts.get(access.buffer.type)
                if access_layout is not None:
                    _rewrite_to_transformed_indices(access, access_layout, rewriter)
        rewriter.erase(nest.outer, safe_erase=False)


def holds_memref_type(module: ModuleOp) -> bool:
    """Whether a value (an op's result or a block's argument) or a property or attribute
    (itself, or a `FunctionType`'s inputs and outputs: a `func.func`'s signature) under
    `module` has a `MemRefType`. `normalize-memref-layouts` looks at nothing else (its plan
    registers only such types that carry a layout map), so without one it neither changes
    nor reports anything."""
    for op in module.walk():
        if any(isinstance(result.type, MemRefType) for result in op.results):
            return True
        for region in op.regions:
            for block in region.blocks:
                if any(isinstance(arg.type, MemRefType) for arg in block.args):
                    return True
        for attr in (*op.properties.values(), *op.attributes.values()):
            if isinstance(attr, MemRefType):
                return True
            if isinstance(attr, FunctionType) and any(
                isinstance(t, MemRefType) for t in (*attr.inputs.data, *attr.outputs.data)
            ):
                return True
    return False


# The pass ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApplyLayoutPass(PhyslayoutPass):
    """Apply pending buffer transforms, then normalize upstream memref layout maps
    (`normalize-memref-layouts`).

    Options:
        rewrite-loops (bool, false): re-iterate loop nests that write a whole transformed
            buffer in physical order, when the dependence analysis proves it keeps the result.
        remarks (bool, false): print a remark (stderr) for every nest `rewrite-loops`
            re-iterates or keeps, and why it kept it; the IR is the same either way.
        strict (bool, false): refuse the module when an upstream memref layout cannot be
            normalized (by default such memrefs stay, with a warning).
    """

    name = "apply-layout"

    rewrite_loops: bool = False
    """Re-iterate loop nests that write a whole transformed buffer in physical order (when
    the dependence analysis proves it keeps the result)."""

    remarks: bool = False
    """Print a remark (stderr) for every loop nest `rewrite-loops` re-iterates or keeps, and
    why it kept it; the IR is the same either way."""

    strict: bool = False
    """Refuse the module when some upstream memref layout cannot be normalized (by default
    such memrefs are left as they are, with a warning)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # one alias analysis for the check and the loop plan: nothing changes the IR between
        aliases = BufferAliases(op)
        refuse_invalid_buffers(self.name, op, aliases=aliases)
        layouts = Layouts.of(op)
        if layouts.by_type:
            self._apply_buffer_layouts(op, layouts, aliases)
        if holds_memref_type(op):
            # (imported here: a module without memrefs does not load xDSL's memref dialect)
            from physlayout.transforms.normalize_memrefs import normalize_memref_layouts

            normalize_memref_layouts(op, self.strict, self.name)

    def _apply_buffer_layouts(self, op: ModuleOp, layouts: Layouts, aliases: BufferAliases) -> None:
        logical = logical_accesses(op, layouts)
        plan = PhysicalOrderPlan({}, frozenset())
        if self.rewrite_loops:
            plan = plan_physical_order(op, layouts.get, self.remarks, self.name, aliases)
            RootedWalker(
                RewriteLoopNestInPhysicalOrder(layouts, plan), apply_recursively=False
            ).rewrite_module(op)
        RootedWalker(
            GreedyRewritePatternApplier(
                [
                    FillPaddingOfParameters(layouts, plan.covered),
                    FillPaddingAfterDeclaration(layouts, plan.covered),
                ],
                dce_enabled=False,
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        RootedWalker(
            GreedyApplierWithMemoizedDce(
                [
                    RewriteAccessToTransformedIndices(layouts, logical),
                    ResizeAllocationToTransformedShape(layouts),
                ]
            )
        ).rewrite_module(op)
        # the walk before erased every dead op (to a fixpoint) and the conversion replaces
        # ops one for one, uses kept, so nothing dies here; and a converted op mentions no
        # pending type, so one walk without dead-code checks converts everything
        RootedWalker(
            ConsumePendingTransforms(layouts), apply_recursively=False
        ).rewrite_module(op)
