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
rewrite erases dead declarations, which would hide an invalid alias), a map that is not injective on the buffer's shape (proven with
isl, the colliding indices are named), padding without `pad_value`, two different pending
transforms over one allocation, and vector accesses whose lanes the map does not keep
contiguous.

Guarantees: the pending transforms are consumed, so a second run changes nothing.

Upstream `memref<..., affine_map<...>>` layouts are normalized by the same pass (see
`normalize_memrefs`): a memref that cannot be normalized soundly is left as it is with a
warning, or, with `strict=true`, refused (and the module left unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import affine, arith, func, scf
from xdsl.dialects.builtin import ModuleOp, UnitAttr, VectorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.dialects.layout import AllocateOp, BufferType, DeclBufferOp, LoadOp, StoreOp
from physlayout.indexing.index_exprs import ExprEmitter, IndexAnalysis
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, simplify
from physlayout.transforms.buffer_aliases import describe_value
from physlayout.transforms.dead_code import GreedyApplierWithMemoizedDce
from physlayout.transforms.dependence import (
    access_lanes,
    aliased_parameters,
    enclosing_function,
    iteration_dims,
    reorder_hazard,
)
from physlayout.transforms.diagnostics import emit_remark
from physlayout.transforms.loop_nests import (
    PHYSICAL_ACCESS,
    build_scf_nest,
    padding_condition,
    physical_names,
)
from physlayout.transforms.normalize_memrefs import normalize_memref_layouts
from physlayout.transforms.verify_buffers import refuse_invalid_buffers


@dataclass
class Layouts:
    """Resolved pending layouts of the buffer types of a module (resolution is memoized and
    its failures become diagnostics naming the buffer)."""

    _cache: dict[BufferType, PendingLayout | None] = field(
        default_factory=dict[BufferType, PendingLayout | None]
    )

    def get(self, buffer_type: Attribute, where: str = "") -> PendingLayout | None:
        if not isinstance(buffer_type, BufferType) or not buffer_type.get_transforms():
            return None
        if buffer_type not in self._cache:
            try:
                self._cache[buffer_type] = PendingLayout.of(buffer_type)
            except ValueError as err:
                raise PassFailedException(f"apply-layout: {where}{err}") from None
        return self._cache[buffer_type]


def _describe(value: SSAValue) -> str:
    name = f"%{value.name_hint}" if value.name_hint else "a buffer"
    return f"{name} of type {value.type}: "


# Access rewriting -----------------------------------------------------------------------


def _transformed_indices(
    op: LoadOp | StoreOp, layout: PendingLayout, lanes: int
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
    if lanes > 1:
        _check_contiguous_lanes(op, layout)
    emitter = ExprEmitter(InsertPoint.before(op), analysis.leaves, bounds)
    return [emitter.emit(e) for e in composed]


def _check_contiguous_lanes(op: LoadOp | StoreOp, layout: PendingLayout) -> None:
    index_map = layout.index_map
    inner = index_map.initial_indices[-1]
    last = index_map.final_indices[-1]
    others = index_map.final_indices[:-1]
    if last == Dim(inner) and all(inner not in e.dims() for e in others):
        return
    raise PassFailedException(
        f"apply-layout: vector access '{op.name}' on {op.buffer.type} needs the innermost "
        f"axis kept contiguous, but the transform maps it by {index_map} (the last output "
        f"must be '{inner}' itself, and no other output may use '{inner}')"
    )


@dataclass
class RewriteLoadToTransformedIndices(RewritePattern):
    """`layout.load %B[x]` on a buffer with a pending map -> `layout.load %B[map(x)]`."""

    layouts: Layouts

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoadOp, rewriter: PatternRewriter) -> None:
        layout = self.layouts.get(op.buffer.type, _describe(op.buffer))
        if layout is None or PHYSICAL_ACCESS in op.attributes:
            return
        indices = _transformed_indices(op, layout, access_lanes(op))
        new = LoadOp(op.buffer, indices, op.result.type)
        new.attributes[PHYSICAL_ACCESS] = UnitAttr()
        rewriter.replace(op, new)


@dataclass
class RewriteStoreToTransformedIndices(RewritePattern):
    """`layout.store %v, %B[x]` on a buffer with a pending map -> `... %B[map(x)]`."""

    layouts: Layouts

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StoreOp, rewriter: PatternRewriter) -> None:
        layout = self.layouts.get(op.buffer.type, _describe(op.buffer))
        if layout is None or PHYSICAL_ACCESS in op.attributes:
            return
        indices = _transformed_indices(op, layout, access_lanes(op))
        new = StoreOp(op.value, op.buffer, indices)
        new.attributes[PHYSICAL_ACCESS] = UnitAttr()
        rewriter.replace(op, new)


@dataclass
class ResizeAllocationToTransformedShape(RewritePattern):
    """`layout.allocate` extents follow the transformed shape of the buffer declared over
    it (when they were its logical shape)."""

    layouts: Layouts

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DeclBufferOp, rewriter: PatternRewriter) -> None:
        layout = self.layouts.get(op.buffer.type, _describe(op.buffer))
        allocation = op.ptr.owner
        if layout is None or not isinstance(allocation, AllocateOp):
            return
        extents = allocation.get_extents()
        if extents == layout.shape:
            return
        if extents != layout.logical_shape:
            raise PassFailedException(
                f"apply-layout: allocation [{', '.join(map(str, extents))}] under "
                f"{op.buffer.type} is not its logical shape; cannot give it the "
                f"transformed extents {list(layout.shape)}"
            )
        others = [
            use.operation
            for use in allocation.ptr.uses
            if isinstance(use.operation, DeclBufferOp) and use.operation is not op
        ]
        for other in others:
            other_layout = self.layouts.get(other.buffer.type, _describe(other.buffer))
            if other_layout is not None and other_layout.shape != layout.shape:
                raise PassFailedException(
                    "apply-layout: two buffers with different pending transforms are "
                    f"declared over one allocation: {op.buffer.type} and {other.buffer.type}"
                )
        rewriter.replace(allocation, AllocateOp(layout.shape, allocation.ptr.type))  # type: ignore[arg-type]


# Type conversion ------------------------------------------------------------------------


class ConsumePendingTransforms(TypeConversionPattern):
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


@dataclass
class DropPhysicalAccessMarker(RewritePattern):
    """Remove the internal `layout.physical` marker once the buffer has no pending map."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoadOp | StoreOp, rewriter: PatternRewriter) -> None:
        buffer_type = op.buffer.type
        if PHYSICAL_ACCESS not in op.attributes:
            return
        if isinstance(buffer_type, BufferType) and buffer_type.get_transforms():
            return
        del op.attributes[PHYSICAL_ACCESS]
        rewriter.notify_op_modified(op)


# Padding and loop rewriting ---------------------------------------------------------------


def _pad_constant(layout: PendingLayout, buffer_type: BufferType) -> arith.ConstantOp:
    pad = buffer_type.get_pad_value()
    if pad is None or isinstance(buffer_type.element_type, VectorType):
        raise PassFailedException(
            f"apply-layout: cannot fill the padding of {buffer_type}: it needs a scalar "
            "element type and a pad_value"
        )
    return arith.ConstantOp(pad)


def _physical_nest(
    layout: PendingLayout, point: InsertPoint, parallel: bool
) -> tuple[list[SSAValue], ExprEmitter]:
    """A loop nest over the transformed box at `point`: its induction variables (named
    `physical_names`) and an emitter in the innermost body that knows their bounds."""
    ivs, body = build_scf_nest(layout.shape, point, parallel)
    names = physical_names(len(layout.shape))
    bounds = {n: (0, e - 1) for n, e in zip(names, layout.shape, strict=True)}
    return ivs, ExprEmitter(body, dict(zip(names, ivs, strict=True)), bounds)


def _pad_store_block(buffer: SSAValue, layout: PendingLayout, ivs: list[SSAValue]) -> Block:
    """An `scf.if` branch that stores the pad value at the transformed index `ivs`."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, BufferType)
    pad = _pad_constant(layout, buffer_type)
    store = StoreOp(pad.result, buffer, ivs)
    store.attributes[PHYSICAL_ACCESS] = UnitAttr()
    return Block([pad, store, scf.YieldOp()])


def _inverse_or_refuse(buffer: SSAValue, layout: PendingLayout) -> IndexMap:
    """The map's exact inverse on its image, which the padding test needs; a map with only
    a piecewise inverse is refused (its padding could not be filled)."""
    try:
        inverse, _ = layout.index_map.non_surjective_inverse(list(layout.logical_shape))
    except ValueError as err:
        raise PassFailedException(
            f"apply-layout: cannot fill the padding of {_describe(buffer)}{err}"
        ) from None
    return inverse


def _fill_padding(
    buffer: SSAValue, layout: PendingLayout, point: InsertPoint, parallel: bool
) -> None:
    """Insert a loop nest at `point` that stores the pad value on every padding point."""
    inverse = _inverse_or_refuse(buffer, layout)
    ivs, emitter = _physical_nest(layout, point, parallel)
    is_pad = padding_condition(
        layout.index_map, inverse, layout.logical_shape, layout.shape, emitter
    )
    assert is_pad is not None
    then = _pad_store_block(buffer, layout, ivs)
    Rewriter.insert_op(scf.IfOp(is_pad, [], Region(then)), emitter.insert_point)


def _written_buffers(op: Operation) -> set[SSAValue]:
    return {store.buffer for store in op.walk() if isinstance(store, StoreOp)}


def insert_padding_fills(module: ModuleOp, layouts: Layouts, covered: set[SSAValue]) -> None:
    """Fill the padding of every written buffer whose transform pads (not already covered
    by a rewritten loop nest)."""
    for function in [f for f in module.walk() if isinstance(f, func.FuncOp)]:
        if not function.body.blocks:
            continue
        written = _written_buffers(function) - covered
        entry = function.body.blocks[0]
        for arg in entry.args:
            layout = layouts.get(arg.type, _describe(arg))
            if arg in written and layout is not None and layout.padding is not None:
                first = entry.first_op
                point = InsertPoint.before(first) if first else InsertPoint.at_end(entry)
                _fill_padding(arg, layout, point, parallel=False)
        for decl in [d for d in function.walk() if isinstance(d, DeclBufferOp)]:
            layout = layouts.get(decl.buffer.type, _describe(decl.buffer))
            if decl.buffer in written and layout is not None and layout.padding is not None:
                _fill_padding(decl.buffer, layout, InsertPoint.after(decl), parallel=False)


@dataclass
class LoopNest:
    """A perfect nest of unit-step loops with constant bounds starting at 0."""

    outer: Operation
    ivs: list[SSAValue]
    extents: list[int]
    body: Block
    parallel: bool
    carried: SSAValue | None
    """An induction variable of a loop of the nest that carries values (iter_args)."""


def _carries_values(op: Operation) -> bool:
    match op:
        case scf.ForOp():
            return bool(op.iter_args)
        case scf.ParallelOp():
            return bool(op.initVals)
        case affine.ForOp():
            return bool(op.inits)
        case _:
            return False


def _loop_dims(op: Operation) -> tuple[list[SSAValue], list[int], Block] | None:
    """The ivs, extents and body of one loop op with bounds 0..E, step 1."""
    match op:
        case scf.ForOp():
            lowers, uppers, steps = [op.lb], [op.ub], [op.step]
        case scf.ParallelOp():
            lowers, uppers, steps = list(op.lowerBound), list(op.upperBound), list(op.step)
        case affine.ForOp() if op.step.value.data == 1:
            lower = op.lowerBoundMap.data.results
            upper = op.upperBoundMap.data.results
            if len(lower) != 1 or len(upper) != 1 or lower[0] != AffineConstantExpr(0):
                return None
            if not isinstance(upper[0], AffineConstantExpr):
                return None
            return [op.body.block.args[0]], [upper[0].value], op.body.block
        case _:
            return None
    if any(const_evaluate_operand(v) != 0 for v in lowers) or any(
        const_evaluate_operand(v) != 1 for v in steps
    ):
        return None
    extents = [const_evaluate_operand(v) for v in uppers]
    if any(e is None for e in extents):
        return None
    ivs = list[SSAValue](op.regions[0].block.args)[: len(extents)]
    return ivs, [e for e in extents if e is not None], op.regions[0].block


def loop_nest_at(op: Operation) -> LoopNest | None:
    """The perfect loop nest rooted at `op`, if `op` is a supported loop."""
    dims = _loop_dims(op)
    if dims is None:
        return None
    ivs, extents, body = dims
    carried = ivs[0] if _carries_values(op) else None
    parallel = isinstance(op, scf.ParallelOp)
    while True:
        inner = [o for o in body.ops if o is not body.last_op]
        if len(inner) != 1 or (nested := _loop_dims(inner[0])) is None:
            break
        if carried is None and _carries_values(inner[0]):
            carried = nested[0][0]
        ivs, extents, body = ivs + nested[0], extents + nested[1], nested[2]
    return LoopNest(op, ivs, extents, body, parallel, carried)


@dataclass
class RewriteLoopNestInPhysicalOrder(RewritePattern):
    """A loop nest that writes a whole buffer at its loop variables is re-iterated over the
    buffer's transformed box (RFC 0039 option 3), padding included, when the dependence
    analysis proves the physical order computes what the logical order computes."""

    layouts: Layouts
    covered: set[SSAValue]
    parameter_pairs: dict[str, set[frozenset[int]]]
    remarks: bool = False

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        nest = loop_nest_at(op)
        if nest is None or isinstance(op.parent_op(), scf.ForOp | scf.ParallelOp | affine.ForOp):
            return
        hazards: list[str] = []
        for store in [s for s in nest.body.ops if isinstance(s, StoreOp)]:
            layout = self.layouts.get(store.buffer.type, _describe(store.buffer))
            if layout is None or store.buffer in self.covered:
                continue
            axes = _store_axes(store, nest, layout)
            if axes is None:
                continue
            hazard = self._hazard(nest, store.buffer, layout, axes)
            if hazard is None and not _has_inverse(layout):
                hazard = f"the map of {describe_value(store.buffer)} has no single quasi-affine inverse"
            if hazard is not None:
                hazards.append(hazard)
                continue
            self._remark(nest, f"re-iterated {_nest_name(nest)} in the physical order of "
                         f"{describe_value(store.buffer)}")
            self.covered.add(store.buffer)
            self._rewrite(nest, store.buffer, layout, axes, rewriter)
            return
        if hazards:
            self._remark(nest, f"kept the logical order of {_nest_name(nest)}: {hazards[0]}")

    def _hazard(
        self, nest: LoopNest, buffer: SSAValue, layout: PendingLayout, axes: dict[SSAValue, int]
    ) -> str | None:
        """Why re-iterating `nest` in the physical order of `buffer` may change the result
        (None when it provably does not)."""
        if nest.carried is not None:
            return f"loop {describe_value(nest.carried)} carries values between iterations"
        position = {iv: k for k, iv in enumerate(nest.ivs)}
        iterations = iteration_dims(len(nest.ivs))
        initial = layout.index_map.initial_indices
        logical = {initial[axis]: iterations[position[iv]] for iv, axis in axes.items()}
        new_order = [e.substitute(logical) for e in layout.index_map.final_indices]
        function = enclosing_function(nest.outer)
        pairs = set() if function is None else self.parameter_pairs.get(function.sym_name.data)
        return reorder_hazard(
            nest.outer,
            nest.ivs,
            nest.extents,
            new_order,
            self.layouts.get,
            pairs or set(),
            buffer if layout.padding is not None else None,
        )

    def _remark(self, nest: LoopNest, message: str) -> None:
        if self.remarks:
            emit_remark(ApplyLayoutPass.name, nest.outer, message)

    def _rewrite(
        self,
        nest: LoopNest,
        buffer: SSAValue,
        layout: PendingLayout,
        axes: dict[SSAValue, int],
        rewriter: PatternRewriter,
    ) -> None:
        inverse, _ = layout.index_map.non_surjective_inverse(list(layout.logical_shape))
        ivs, emitter = _physical_nest(layout, InsertPoint.before(nest.outer), nest.parallel)
        body = emitter.insert_point
        names = physical_names(len(layout.shape))
        point = {d: Dim(n) for d, n in zip(inverse.initial_indices, names, strict=True)}
        logical = [
            emitter.emit(simplify(e.substitute(point), emitter.bounds))
            for e in inverse.final_indices
        ]
        mapper: dict[SSAValue, SSAValue] = {iv: logical[axes[iv]] for iv in nest.ivs}
        is_pad = (
            None
            if layout.padding is None
            else padding_condition(
                layout.index_map, inverse, layout.logical_shape, layout.shape, emitter
            )
        )
        target = body
        if is_pad is not None:
            then, otherwise = _pad_store_block(buffer, layout, ivs), Block([scf.YieldOp()])
            Rewriter.insert_op(scf.IfOp(is_pad, [], Region(then), Region(otherwise)), body)
            target = InsertPoint.before(otherwise.ops.first)  # type: ignore[arg-type]
        for inner in list(nest.body.ops):
            if inner is nest.body.last_op:
                break
            Rewriter.insert_op(inner.clone(mapper), target)
        rewriter.erase(nest.outer, safe_erase=False)


def _nest_name(nest: LoopNest) -> str:
    return "the loop nest over " + ", ".join(describe_value(iv) for iv in nest.ivs)


def _has_inverse(layout: PendingLayout) -> bool:
    try:
        layout.index_map.non_surjective_inverse(list(layout.logical_shape))
    except ValueError:
        return False
    return True


def _store_axes(
    store: StoreOp, nest: LoopNest, layout: PendingLayout
) -> dict[SSAValue, int] | None:
    """Map each loop variable to the buffer axis it indexes, when the store writes the
    whole buffer exactly once at the loop variables."""
    if len(store.indices) != len(nest.ivs) or access_lanes(store) != 1:
        return None
    axes: dict[SSAValue, int] = {}
    for axis, index in enumerate(store.indices):
        if index not in nest.ivs or index in axes:
            return None
        axes[index] = axis
        if nest.extents[nest.ivs.index(index)] != layout.logical_shape[axis]:
            return None
    return axes


# The pass ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApplyLayoutPass(ModulePass):
    """Apply pending buffer transforms (and normalize upstream memref layout maps).

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
        refuse_invalid_buffers(self.name, op)
        layouts = Layouts()
        if not _resolve_all(op, layouts):
            normalize_memref_layouts(op, self.strict)
            return
        covered: set[SSAValue] = set()
        if self.rewrite_loops:
            PatternRewriteWalker(
                RewriteLoopNestInPhysicalOrder(
                    layouts, covered, aliased_parameters(op), self.remarks
                ),
                apply_recursively=False,
            ).rewrite_module(op)
        insert_padding_fills(op, layouts, covered)
        PatternRewriteWalker(
            GreedyApplierWithMemoizedDce(
                [
                    RewriteLoadToTransformedIndices(layouts),
                    RewriteStoreToTransformedIndices(layouts),
                    ResizeAllocationToTransformedShape(layouts),
                ]
            )
        ).rewrite_module(op)
        PatternRewriteWalker(
            GreedyApplierWithMemoizedDce(
                [ConsumePendingTransforms(layouts), DropPhysicalAccessMarker()]
            )
        ).rewrite_module(op)
        normalize_memref_layouts(op, self.strict)


def _resolve_all(module: ModuleOp, layouts: Layouts) -> bool:
    """Resolve (and so prove) every pending layout before rewriting anything; True when
    there is one."""
    found = False
    for op in module.walk():
        values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
        for value in values:
            found = layouts.get(value.type, _describe(value)) is not None or found
    return found

