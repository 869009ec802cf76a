"""Accesses for `lower-layout`: when an index tuple may feed `affine.load`, and the
patterns that lower `layout.load`/`layout.store` (`LowerLoadToAffineOrMemRef`,
`LowerStoreToAffineOrMemRef`: affine accesses where `affine_access` finds a map, else
`memref`/`vector` accesses on the index values).

Upstream MLIR accepts an operand of an `affine.load`/`affine.store` map only when it is a
valid affine dimension or symbol of the access's affine scope (here: the enclosing
`func.func`, reached through loop/if ops only):

- induction variables of `affine.for` / `affine.parallel` (valid dimensions anywhere below
  the loop);
- values defined at the top level of the function body (its arguments and the results of
  its top-level ops) and constants (valid symbols, hence valid dimensions).

Induction variables of `scf.for`/`scf.parallel` and values computed inside loops are not
(the `lower-layout` pass first raises eligible `scf` loops to `affine`, see
`lower_layout_loops`).

`affine_access` turns index expressions (read by `IndexAnalysis`) into an `AffineMap` whose
operands are all *dimensions*: valid symbols are valid dimensions upstream, and xDSL 0.74
prints symbol operands of an affine access at the wrong position, so maps built here never
use symbols.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import affine, arith, func, memref, vector
from xdsl.dialects.builtin import AffineMapAttr, IndexType, MemRefType, VectorType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from physlayout.dialects.layout import LoadOp, StoreOp
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr, Mul
from physlayout.indexing.simplify import simplify
from physlayout.lowering.lower_layout_views import LoweringState, View
from physlayout.transforms.loop_nests import RewritingEmitter, erase_dead_index_math

NON_SCOPE_PARENTS: frozenset[str] = frozenset(
    {
        "scf.for",
        "scf.if",
        "scf.parallel",
        "scf.while",
        "scf.index_switch",
        "affine.for",
        "affine.if",
        "affine.parallel",
    }
)
"""Region-holding ops that are not affine scopes upstream: an access below only these ops
belongs to the affine scope of the enclosing function."""


def affine_scope(op: Operation) -> func.FuncOp | None:
    """The function whose body is the affine scope of `op`, or None when some enclosing op
    may start a scope of its own (then no affine op is emitted there)."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, func.FuncOp):
            return parent
        if parent.name not in NON_SCOPE_PARENTS:
            return None
        parent = parent.parent_op()
    return None


def is_valid_affine_symbol(value: SSAValue, function: func.FuncOp) -> bool:
    """True for an `index` value that is a valid affine symbol in `function`'s scope."""
    if not isinstance(value.type, IndexType):
        return False
    if isinstance(value, BlockArgument):
        return value.block.parent is function.body
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        return True
    block = owner.parent_block() if isinstance(owner, Operation) else None
    return block is not None and block.parent is function.body


def is_valid_affine_dim(value: SSAValue, function: func.FuncOp) -> bool:
    """True for an `index` value that is a valid affine dimension in `function`'s scope."""
    if isinstance(value, BlockArgument) and isinstance(value.type, IndexType):
        loop = value.block.parent_op()
        if isinstance(loop, affine.ForOp) and value.index == 0:
            return True
        if isinstance(loop, affine.ParallelOp):
            return True
    return is_valid_affine_symbol(value, function)


@dataclass(frozen=True)
class AffineAccess:
    """An access map over dimensions only, and its operands (one per dimension)."""

    map: AffineMap
    operands: tuple[SSAValue, ...]


def affine_access(
    access: Operation, indices: Sequence[Expr], leaves: Mapping[str, SSAValue]
) -> AffineAccess | None:
    """The dimension-only affine map of `indices` at `access`, or None when some leaf is not
    a valid affine dimension there. `leaves` binds the expressions' names to values (in the
    order their dimensions get their positions)."""
    function = affine_scope(access)
    if function is None:
        return None
    used: set[str] = set()
    for expr in indices:
        used |= expr.dims()
    names = [name for name in leaves if name in used]
    if any(not is_valid_affine_dim(leaves[name], function) for name in names):
        return None
    affine_map = IndexMap(tuple(names), tuple(indices)).to_affine_map()
    return AffineAccess(affine_map, tuple(leaves[name] for name in names))


# Access patterns --------------------------------------------------------------------------


def _index_exprs(
    access: LoadOp | StoreOp, lanes: int
) -> tuple[list[Expr], IndexAnalysis]:
    analysis = IndexAnalysis()
    exprs = [simplify(analysis.expr_of(i), analysis.bounds) for i in access.indices]
    if lanes != 1:
        exprs[-1] = simplify(Mul(exprs[-1], Const(lanes)), analysis.bounds)
    return exprs, analysis


def _memref_indices(
    access: LoadOp | StoreOp, lanes: int, rewriter: PatternRewriter
) -> list[SSAValue]:
    """The access's own index values (innermost scaled by `lanes`) for memref/vector ops."""
    indices = list(access.indices)
    if lanes != 1:
        point = InsertPoint.before(access)
        emitter = RewritingEmitter(point, {"i": indices[-1]}, {}, rewriter=rewriter)
        indices[-1] = emitter.emit(Mul(Dim("i"), Const(lanes)))
    return indices


@dataclass(frozen=True)
class _LoweredAccess:
    """Where a `layout.load`/`layout.store` goes: `memref` (the buffer's view) at `indices`,
    through the dimension map `map` when the access is affine (`indices` are then the map's
    operands; None: a `memref`/`vector` access on the index values). `vector`: the value
    is a vector over scalar storage (a `vector_load`/`vector_store`)."""

    memref: SSAValue
    indices: Sequence[SSAValue]
    map: AffineMapAttr | None
    vector: bool


def _lowered_access(
    op: LoadOp | StoreOp, view: View, value_type: Attribute, rewriter: PatternRewriter
) -> _LoweredAccess:
    """Analyse `op`'s indices: an affine map where `affine_access` finds one, else the
    access's own index values (the innermost scaled by the view's lanes, emitted through
    `rewriter`)."""
    vector_value = isinstance(value_type, VectorType) and value_type != _element(view)
    exprs, analysis = _index_exprs(op, view.lanes)
    access = affine_access(op, exprs, analysis.leaves)
    if access is None:
        indices = _memref_indices(op, view.lanes, rewriter)
        return _LoweredAccess(view.memref, indices, None, vector_value)
    return _LoweredAccess(view.memref, access.operands, AffineMapAttr(access.map), vector_value)


def _replace_access(op: LoadOp | StoreOp, new: Operation, rewriter: PatternRewriter) -> None:
    """Replace `op` by its lowered access `new`, then erase the index math left dead."""
    old_indices = list(op.indices)
    rewriter.replace(op, new)
    erase_dead_index_math(old_indices, rewriter)


@dataclass
class LowerLoadToAffineOrMemRef(RewritePattern):
    """`layout.load` -> `affine.load`/`affine.vector_load` with a dimension map, or
    `memref.load`/`vector.load` on the index values when the indices are not affine."""

    state: LoweringState

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoadOp, rewriter: PatternRewriter) -> None:
        value_type = op.result.type
        to = _lowered_access(op, self.state.view_of(op.buffer), value_type, rewriter)
        new: Operation
        if to.map is not None and to.vector:
            new = affine.VectorLoadOp.build(
                operands=[to.memref, to.indices],
                result_types=[value_type],
                properties={"map": to.map},
            )
        elif to.map is not None:
            new = affine.LoadOp(to.memref, to.indices, to.map, value_type)
        elif to.vector:
            assert isinstance(value_type, VectorType)
            new = vector.LoadOp(to.memref, to.indices, value_type)
        else:
            new = memref.LoadOp.get(to.memref, to.indices)
        _replace_access(op, new, rewriter)


@dataclass
class LowerStoreToAffineOrMemRef(RewritePattern):
    """`layout.store` -> `affine.store`/`affine.vector_store` with a dimension map, or
    `memref.store`/`vector.store` on the index values when the indices are not affine."""

    state: LoweringState

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StoreOp, rewriter: PatternRewriter) -> None:
        to = _lowered_access(op, self.state.view_of(op.buffer), op.value.type, rewriter)
        new: Operation
        if to.map is not None and to.vector:
            new = affine.VectorStoreOp.build(
                operands=[op.value, to.memref, to.indices], properties={"map": to.map}
            )
        elif to.map is not None:
            new = affine.StoreOp(op.value, to.memref, to.indices, to.map)
        elif to.vector:
            new = vector.StoreOp(op.value, to.memref, to.indices)
        else:
            new = memref.StoreOp.get(op.value, to.memref, to.indices)
        _replace_access(op, new, rewriter)


def _element(view: View) -> Attribute:
    memref_type = view.memref.type
    assert isinstance(memref_type, MemRefType)
    return memref_type.get_element_type()
