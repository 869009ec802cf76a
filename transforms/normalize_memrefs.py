"""normalize-memref-layouts: normalize upstream memref layout maps (also the last step of
`apply-layout`).

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

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import affine, func, memref
from xdsl.dialects.builtin import (
    AffineMapAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsolatedFromAbove

from physlayout.indexing.bridges.affine import affine_to_expr as from_affine_expr
from physlayout.indexing.bridges.arith import IndexAnalysis, constant_bounds_of
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.transforms.diagnostics import emit_warning
from physlayout.transforms.loop_nests import (
    RewritingEmitter,
    erase_dead_index_math,
    rebuild_access,
)
from physlayout.transforms.memref_layout_maps import (
    NORMALIZE_MEMREF_LAYOUTS,
    MemRefNormalization,
    MemRefNormalizations,
    access_dim,
    access_symbol,
    refusal_error,
    to_affine_expr,
)
from physlayout.transforms.memref_normalization_plan import (
    LeftUnnormalized,
    NormalizationPlan,
    plan_normalization,
)
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker

# Access rewriting ---------------------------------------------------------------------------


_ComposedMapKey = tuple[MemRefType, AffineMap, tuple[tuple[int, int] | None, ...]]
"""(memref type, access map, constant range of each access operand)."""


@dataclass
class AccessRewriting:
    """State shared by the access patterns: the type normalizations, one index analysis
    per function (so index arithmetic is read once), and composed access maps memoized
    per (type, access map, operand ranges)."""

    normalizations: MemRefNormalizations
    pass_name: str = NORMALIZE_MEMREF_LAYOUTS
    """The pass the diagnostics name."""
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
        dim_names = [access_dim(k) for k in range(access.num_dims)]
        symbol_names = [access_symbol(k) for k in range(access.num_symbols)]
        names = dim_names + symbol_names
        bounds = {n: r for n, r in zip(names, ranges, strict=True) if r is not None}
        point: list[Expr] = []
        for result in access.results:
            converted = from_affine_expr(
                result, [Dim(n) for n in dim_names], [Dim(n) for n in symbol_names]
            )
            if converted is None:
                raise refusal_error(
                    self.pass_name, norm.source, f"access map {access} is not quasi-affine"
                )
            point.append(converted)
        composed = norm.compose(point, norm.in_bounds(point, bounds))
        dims = {n: k for k, n in enumerate(dim_names)}
        symbols = {n: k for k, n in enumerate(symbol_names)}
        results = tuple(to_affine_expr(e, dims, symbols) for e in composed)
        new_map = AffineMap(access.num_dims, access.num_symbols, results)
        self._maps[key] = new_map
        return new_map

    def transformed_indices(
        self,
        op: Operation,
        norm: MemRefNormalization,
        indices: Sequence[SSAValue],
        rewriter: PatternRewriter,
    ) -> list[SSAValue]:
        """Emit ``layout(indices)`` as `arith` ops before `op`, composed with the index
        arithmetic computing `indices` and simplified."""
        analysis = self.analysis_for(op)
        point = [analysis.expr_of(index) for index in indices]
        used = set[str]().union(*(e.dims() for e in point))
        bounds = {name: analysis.bounds[name] for name in used if name in analysis.bounds}
        refined = norm.in_bounds(point, bounds)
        composed = norm.compose(point, refined)
        emitter = RewritingEmitter(
            InsertPoint.before(op), analysis.leaves, refined, rewriter=rewriter
        )
        return [emitter.emit(e) for e in composed]


@dataclass
class ComposeAffineAccessWithLayout(RewritePattern):
    """`affine.load %A[a(i)]` / `affine.store %v, %A[a(i)]` on a layout-mapped memref -> the
    same access at `%A[(layout o a)(i)]` (operands unchanged; the memref's type is converted
    afterwards)."""

    rewriting: AccessRewriting
    plan: NormalizationPlan

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: affine.LoadOp | affine.StoreOp, rewriter: PatternRewriter
    ) -> None:
        norm = self.rewriting.normalizations.get(op.memref.type)
        if norm is None or self.plan.target_of(op.memref) is None:
            return
        new_map = self.rewriting.composed_map(norm, op.map.data, op.indices)
        new = type(op).create(
            operands=op.operands,
            result_types=op.result_types,
            properties={**op.properties, "map": AffineMapAttr(new_map)},
            attributes=dict(op.attributes),
        )
        rewriter.replace(op, new)


@dataclass
class IndexMemRefAccessThroughLayout(RewritePattern):
    """`memref.load %A[x]` / `memref.store %v, %A[x]` on a layout-mapped memref -> the same
    access at `%A[layout(x)]`, the new indices computed with `arith` ops."""

    rewriting: AccessRewriting
    plan: NormalizationPlan

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.LoadOp | memref.StoreOp, rewriter: PatternRewriter
    ) -> None:
        norm = self.rewriting.normalizations.get(op.memref.type)
        if norm is None or self.plan.target_of(op.memref) is None:
            return
        old_indices = list(op.indices)
        indices = self.rewriting.transformed_indices(op, norm, old_indices, rewriter)
        rewriter.replace(op, rebuild_access(op, op.memref, indices))
        erase_dead_index_math(old_indices, rewriter)


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


# The pass -----------------------------------------------------------------------------------


def normalize_memref_layouts(
    module: ModuleOp, strict: bool = False, pass_name: str = NORMALIZE_MEMREF_LAYOUTS
) -> list[LeftUnnormalized]:
    """Normalize the layout-mapped memref types of `module` (see the module docstring).

    One walk decides what is normalized (`plan_normalization`); then one walker rewrites
    the accesses of the normalized memrefs (they read the layout from the old type) and a
    second one their types. Each class of memrefs left unnormalized is reported with a
    warning on stderr (`emit_warning`, located at the op where its reason was found,
    naming `pass_name`) and returned.

    Raises:
        PassFailedException: `strict` and some memref cannot be normalized; the module is
            then left unchanged.
    """
    normalizations = MemRefNormalizations()
    plan = plan_normalization(module, normalizations, pass_name)
    if strict and plan.first_problem is not None:
        raise plan.first_problem.error()
    for left in plan.left:
        emit_warning(left.op, left.message)
    if not plan.typed:
        return plan.left
    rewriting = AccessRewriting(normalizations, pass_name)
    RootedWalker(
        GreedyRewritePatternApplier(
            [
                ComposeAffineAccessWithLayout(rewriting, plan),
                IndexMemRefAccessThroughLayout(rewriting, plan),
            ],
            dce_enabled=False,
        ),
        apply_recursively=False,
    ).rewrite_module(module)
    RootedWalker(
        GreedyRewritePatternApplier(
            [
                NormalizeAllocation(plan),
                NormalizeCallResults(plan),
                NormalizeFunctionSignature(plan),
            ],
            dce_enabled=False,
        ),
        apply_recursively=False,
    ).rewrite_module(module)
    return plan.left


@dataclass(frozen=True)
class NormalizeMemRefLayoutsPass(PhyslayoutPass):
    """Normalize upstream memref layout maps (module docstring).

    Options:
        strict (bool, false): refuse the module when some memref layout cannot be
            normalized (by default such memrefs stay, with a warning).
    """

    name = "normalize-memref-layouts"

    strict: bool = False
    """Refuse the module when some memref layout cannot be normalized (by default such
    memrefs are left as they are, with a warning)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        normalize_memref_layouts(op, self.strict, self.name)
