"""The analysis half of vectorize-texels: whether a lane loop may run its four iterations
in lock-step, and how each of its loads and stores becomes a vector, gathered or scalar
access (the rules are stated in `transforms.vectorize_texels`).

`LaneLoopPlan.of(loop)` returns the plan of a lane loop or None (the loop must be left
unchanged); it reads the IR and never changes it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    VectorType,
    i1,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from physlayout.dialects.buffer_layout import TEXEL_LANES
from physlayout.dialects.layout import BufferType, LoadOp, StoreOp
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.indexing.quasi_affine import Add, Const, Dim, Expr, Mod, Mul
from physlayout.indexing.simplify import simplify
from physlayout.transforms.buffer_aliases import buffer_root

ELEMENTWISE: frozenset[str] = frozenset(
    {
        "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.negf",
        "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf",
        "math.exp", "math.exp2", "math.expm1", "math.log", "math.log2", "math.log10",
        "math.log1p", "math.sqrt", "math.rsqrt", "math.cbrt", "math.tanh", "math.sinh",
        "math.cosh", "math.sin", "math.cos", "math.tan", "math.asin", "math.acos",
        "math.atan", "math.atan2", "math.absf", "math.copysign", "math.fma", "math.powf",
        "math.floor", "math.ceil", "math.trunc", "math.round", "math.roundeven", "math.erf",
        "arith.extf", "arith.truncf",
    }
)  # fmt: skip
"""Float ops computed lane by lane: their vector form computes exactly the scalar form
(`extf`/`truncf` too: each lane is converted, and rounded, on its own)."""

def is_lane_wise_float_op(op: Operation) -> bool:
    """Whether `op` is a float op vectorize-texels computes lane by lane: in `ELEMENTWISE`,
    on floats of one type (`extf`/`truncf`: of two)."""
    types = [v.type for v in (*op.operands, *op.results)]
    cast = op.name in ("arith.extf", "arith.truncf")
    floats = all(isinstance(t, _FLOATS) for t in types)
    return op.name in ELEMENTWISE and floats and (len(set(types)) == 1 or cast)


def is_uniform_select(op: Operation, varying: Collection[SSAValue]) -> bool:
    """Whether `op` is an `arith.select` of floats whose condition does not depend on the
    lane: one select of whole texels (a scalar condition picks one of two vectors; a pad
    read through its padding at a uniform position is one)."""
    return (
        isinstance(op, arith.SelectOp)
        and op.cond not in varying
        and isinstance(op.result.type, _FLOATS)
    )


def is_lane_wise_compare(op: Operation) -> bool:
    """Whether `op` is an `arith.cmpf` of two floats of one type whose every use is the
    condition of an `arith.select` of floats (a clamp: torch-mlir's hardtanh, hardswish):
    vectorize-texels compares the four lanes one by one and selects per lane, so the `i1`
    never needs a vector of its own."""
    if not isinstance(op, arith.CmpfOp) or op.lhs.type != op.rhs.type:
        return False
    if not isinstance(op.lhs.type, _FLOATS) or not op.result.uses:
        return False
    return all(
        isinstance(use.operation, arith.SelectOp)
        and use.index == 0
        and isinstance(use.operation.result.type, _FLOATS)
        for use in op.result.uses
    )


def is_lane_wise_select(op: Operation) -> bool:
    """Whether `op` is an `arith.select` of floats whose condition is a lane-wise compare
    (`is_lane_wise_compare`): each lane picks its own value."""
    return (
        isinstance(op, arith.SelectOp)
        and isinstance(op.result.type, _FLOATS)
        and isinstance(op.cond.owner, Operation)
        and is_lane_wise_compare(op.cond.owner)
    )


def is_uniform_op(op: Operation) -> bool:
    """Whether `op`, on values that do not depend on the lane, is computed once for all
    lanes (`arith`, `math`, `affine.apply` and `index` ops)."""
    return not op.regions and op.name.startswith(("arith.", "math.", "affine.apply", "index."))


INDEX_OPS: frozenset[str] = frozenset(
    {
        "arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.divui", "arith.remsi",
        "arith.remui", "arith.floordivsi", "arith.ceildivsi", "affine.apply", "arith.select",
    }
)  # fmt: skip
"""Index arithmetic that may depend on the lane when it only feeds access indices (an index
`arith.select`: the sign fix of a lowered ``mod``, with its `arith.cmpi`)."""

MASK_OPS: frozenset[str] = frozenset({"arith.cmpi", "arith.andi", "arith.ori", "arith.xori"})
"""Ops that may compute a lane-dependent `i1` when it only feeds conditions of masked ifs."""

_INT_DIVISIONS: frozenset[str] = frozenset(
    {
        "arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi",
        "arith.ceildivsi",
    }
)  # fmt: skip
"""Ops that may trap (division by zero) when executed for a lane that would not run them."""


_FLOATS = (Float16Type, Float32Type, Float64Type)

_CMPI: dict[int, Callable[[int, int], bool]] = {
    0: operator.eq, 1: operator.ne, 2: operator.lt, 3: operator.le, 4: operator.gt,
    5: operator.ge, 6: operator.lt, 7: operator.le, 8: operator.gt, 9: operator.ge,
}  # fmt: skip
"""`arith.cmpi` predicates (eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge) on integers
(the unsigned ones only for non-negative operands)."""

_MASK_COMBINE: dict[str, Callable[[frozenset[int], frozenset[int]], frozenset[int]]] = {
    "arith.andi": frozenset.__and__, "arith.ori": frozenset.__or__,
    "arith.xori": frozenset.__xor__,
}  # fmt: skip
"""The lanes where a boolean combination of two lane masks holds."""


LaneLoop = scf.ForOp | scf.ParallelOp
"""The loops a plan is made for: `scf.for` and one-dimensional `scf.parallel`."""


def _is_lane_loop(loop: LaneLoop, lanes: int = TEXEL_LANES) -> bool:
    """`scf.for %l = 0 to LANES step 1` without `iter_args`, or the one-dimensional
    `scf.parallel` of the same range without reductions."""
    if isinstance(loop, scf.ParallelOp):
        if len(loop.lowerBound) != 1 or loop.initVals or loop.res:
            return False
        terminator = loop.body.block.last_op
        if not isinstance(terminator, scf.ReduceOp) or terminator.operands:
            return False
        bounds = (loop.lowerBound[0], loop.upperBound[0], loop.step[0])
    else:
        if loop.iter_args:
            return False
        bounds = (loop.lb, loop.ub, loop.step)
    return [const_evaluate_operand(b) for b in bounds] == [0, lanes, 1]


def _walk_ops(block: Block) -> Iterator[Operation]:
    for op in block.ops:
        yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _walk_ops(inner)


class _Refused(Exception):
    """The lane loop does not satisfy the rules (internal; the loop is left unchanged)."""


@dataclass
class LaneAccess:
    """How one load/store is vectorized: `exprs` are its index expressions (over the
    analysis leaves), `kind` is 'invariant', 'contiguous' or 'gather'; `guarded` loads lie
    in a masked branch and are not proven in bounds for every lane, so each lane loads only
    when it takes the branch."""

    op: LoadOp | StoreOp
    exprs: tuple[Expr, ...]
    kind: str
    guarded: bool = False


@dataclass
class MaskedIf:
    """An `scf.if` at the top of a lane loop body, run for all lanes at once: `stores` maps
    each storage root it stores to to its store in the then and in the else branch."""

    op: scf.IfOp
    stores: dict[SSAValue, tuple[StoreOp, StoreOp]]


@dataclass
class LaneLoopPlan:
    """The analysis of one lane loop: which values vary with the lane and how each access
    is vectorized. `LaneLoopPlan.of` returns None when the loop must be left unchanged."""

    loop: LaneLoop
    lane: SSAValue
    analysis: IndexAnalysis
    varying: set[SSAValue] = field(default_factory=set[SSAValue])
    accesses: dict[Operation, LaneAccess] = field(default_factory=dict[Operation, LaneAccess])
    masked: dict[Operation, MaskedIf] = field(default_factory=dict[Operation, MaskedIf])
    branch_of: scf.IfOp | None = None
    """While checking a branch of a masked if: that if."""
    lanes: int = TEXEL_LANES
    """The loop's iterations, the width of its vectors: the four lanes of a texel, or
    (`vectorize-texels{vector-width}`) a wider block of a plain buffer's row, whose plan
    then refuses texture accesses."""

    @staticmethod
    def of(loop: LaneLoop, lanes: int = TEXEL_LANES) -> LaneLoopPlan | None:
        """The plan of `loop` (a loop of `lanes` iterations), or None when it is not a lane
        loop or breaks a rule."""
        if not _is_lane_loop(loop, lanes):
            return None
        analysis = IndexAnalysis(see_floor_mods=True)
        plan = LaneLoopPlan(loop, loop.body.block.args[0], analysis, lanes=lanes)
        try:
            plan._find_varying()
            plan._check_ops(loop.body.block)
            plan._check_memory()
        except _Refused:
            return None
        return plan

    @property
    def lane_name(self) -> str:
        """The name the index analysis gives the lane variable in access expressions."""
        return self.analysis.leaf(self.lane).name

    def inside(self, value: SSAValue) -> bool:
        """True for values defined in the loop body (the lane included)."""
        if isinstance(value, BlockArgument):
            return self.loop.is_ancestor(value.block)
        owner = value.owner
        return isinstance(owner, Operation) and owner is not self.loop and (
            self.loop.is_ancestor(owner)
        )

    # Lane dependence --------------------------------------------------------------------

    def _find_varying(self) -> None:
        """The values that depend on the lane: the least set holding the lane and closed
        under the rules below (through nested loop carries and if results), found by
        following the uses of each value once it is known to vary. Only ops of the loop
        body (at any depth) are followed. An `scf.for`'s body argument and result `k`
        vary when its init `k` or its yielded value `k` does (never through its bounds);
        an `scf.if`'s results vary when its condition or a value one of its blocks yields
        does; any other op's results vary when one of its operands does."""
        inside = set(_walk_ops(self.loop.body.block))
        self.varying = {self.lane}
        pending: list[SSAValue] = [self.lane]

        def vary(values: Iterable[SSAValue]) -> None:
            for value in values:
                if value not in self.varying:
                    self.varying.add(value)
                    pending.append(value)

        while pending:
            for use in pending.pop().uses:
                user = use.operation
                if user not in inside:
                    continue
                if isinstance(user, scf.ForOp):
                    k = use.index - 3  # operands: lb, ub, step, then the inits
                    if k >= 0:
                        vary((user.body.block.args[k + 1], user.results[k]))
                    continue
                if isinstance(user, scf.IfOp):
                    if use.index == 0:  # the condition
                        vary(user.results)
                    continue
                vary(user.results)
                block = user.parent
                owner = None if block is None else block.parent_op()
                if owner is None or owner not in inside or block is None:
                    continue
                if isinstance(owner, scf.ForOp):
                    if user is block.last_op and use.index < len(owner.iter_args):
                        vary((block.args[use.index + 1], owner.results[use.index]))
                elif isinstance(owner, scf.IfOp) and user is block.last_op:
                    vary(owner.results)

    # Op rules ---------------------------------------------------------------------------

    def _check_ops(self, block: Block) -> None:
        for op in block.ops:
            if any(isinstance(r.type, VectorType) for r in op.results) or any(
                isinstance(o.type, VectorType) for o in op.operands
            ):
                raise _Refused
            match op:
                case LoadOp() | StoreOp():
                    self._check_access(op)
                case scf.ForOp():
                    if any(v in self.varying for v in (op.lb, op.ub, op.step)):
                        raise _Refused
                    self._check_ops(op.body.block)
                case scf.IfOp() if self._is_uniform_if(op):
                    for region in op.regions:
                        for inner in region.blocks:
                            self._check_ops(inner)
                case scf.IfOp():
                    self._check_if(op, block)
                case scf.YieldOp() if block is not self.loop.body.block:
                    continue
                case scf.YieldOp() | scf.ReduceOp() if block is self.loop.body.block:
                    if op.operands:
                        raise _Refused
                case _:
                    self._check_plain(op)

    def _check_plain(self, op: Operation) -> None:
        if op.regions:
            raise _Refused
        if not any(o in self.varying for o in op.operands):
            if self.branch_of is not None and not _speculatable(op):
                raise _Refused
            if is_uniform_op(op):
                return
            raise _Refused
        if op.name in ELEMENTWISE:
            if not is_lane_wise_float_op(op):
                raise _Refused
            return
        if is_uniform_select(op, self.varying):
            return
        if is_lane_wise_compare(op) or is_lane_wise_select(op):
            return
        index_math = op.name in INDEX_OPS and all(isinstance(r.type, IndexType) for r in op.results)
        # a comparison of indices that only picks an index (the sign fix of a lowered mod)
        index_math |= isinstance(op, arith.CmpiOp) and all(
            isinstance(o.type, IndexType) for o in op.operands
        )
        if index_math and all(self._feeds_indices_only(r) for r in op.results):
            return
        if self._is_mask_op(op) and all(self._feeds_masks_only(r) for r in op.results):
            return
        raise _Refused

    def _feeds_indices_only(self, value: SSAValue) -> bool:
        """Whether `value` only reaches access indices and mask comparisons."""
        for use in value.uses:
            user = use.operation
            if isinstance(user, LoadOp) and use.index >= 1:
                continue
            if isinstance(user, StoreOp) and use.index >= 2:
                continue
            if user.name in INDEX_OPS and all(self._feeds_indices_only(r) for r in user.results):
                continue
            if isinstance(user, arith.CmpiOp) and (
                self._feeds_masks_only(user.result) or self._feeds_indices_only(user.result)
            ):
                continue  # a mask, or the condition of an index select
            return False
        return True

    # Masked ifs -------------------------------------------------------------------------

    def _is_mask_op(self, op: Operation) -> bool:
        """A lane-dependent `i1` op the vectorizer evaluates lane by lane: a comparison of
        index expressions (whose leaves other than the lane do not vary) or a boolean
        combination of such."""
        if op.name not in MASK_OPS or [r.type for r in op.results] != [i1]:
            return False
        if isinstance(op, arith.CmpiOp):
            if not all(isinstance(o.type, IndexType) for o in op.operands):
                return False
            exprs = [self.analysis.expr_of(o) for o in op.operands]
            return all(self._lane_only(e) for e in exprs)
        return all(o.type == i1 for o in op.operands)

    def _lane_only(self, expr: Expr) -> bool:
        """True when no leaf of `expr` varies with the lane other than the lane itself."""
        return all(
            self.analysis.leaves[n] is self.lane or self.analysis.leaves[n] not in self.varying
            for n in expr.dims()
        )

    def _feeds_masks_only(self, value: SSAValue) -> bool:
        for use in value.uses:
            user = use.operation
            if isinstance(user, scf.IfOp) and use.index == 0:
                continue
            if self._is_mask_op(user) and all(self._feeds_masks_only(r) for r in user.results):
                continue
            return False
        return True

    def _is_mask(self, value: SSAValue) -> bool:
        """Whether the vectorizer can evaluate `value` for each lane."""
        if value not in self.varying:
            return True
        owner = value.owner
        if not isinstance(owner, Operation) or not self._is_mask_op(owner):
            return False
        return isinstance(owner, arith.CmpiOp) or all(self._is_mask(o) for o in owner.operands)

    def _is_uniform_if(self, op: scf.IfOp) -> bool:
        """An `scf.if` whose condition does not depend on the lane and that stores nothing
        (a transposed conv's tap guard, in a reduction loop): every lane takes the same
        branch, so it stays one `scf.if` with vectorized branches (`_check_if`'s masked
        ifs, the others, store)."""
        return (
            op.cond not in self.varying
            and self.branch_of is None
            and not any(isinstance(inner, StoreOp) for inner in op.walk())
        )

    def _check_if(self, op: scf.IfOp, block: Block) -> None:
        """An `scf.if` directly in the lane loop body, with a condition evaluable per lane,
        float results and a then and an else branch, runs for all lanes: both branches
        execute (their ops must be safe to execute for lanes that would not), loads not
        proven in bounds are guarded per lane, and each storage it stores to must be stored
        exactly once directly in each branch, as the branch's last access to it; the two
        stores merge into one store whose lanes select the branch each lane takes."""
        if block is not self.loop.body.block or not self._is_mask(op.cond):
            raise _Refused
        if not op.false_region.blocks or any(not isinstance(r.type, _FLOATS) for r in op.results):
            raise _Refused
        self.branch_of = op
        for region in op.regions:
            self._check_ops(region.block)
        self.branch_of = None
        then, otherwise = op.true_region.block, op.false_region.block
        roots = {buffer_root(s.buffer) for s in op.walk() if isinstance(s, StoreOp)}
        stores: dict[SSAValue, tuple[StoreOp, StoreOp]] = {}
        for root in roots:
            stores[root] = (_last_store(then, root), _last_store(otherwise, root))
        self.masked[op] = MaskedIf(op, stores)

    def _check_access(self, op: LoadOp | StoreOp) -> None:
        buffer_type = op.buffer.type
        if not isinstance(buffer_type, BufferType) or isinstance(
            buffer_type.element_type, VectorType
        ):
            raise _Refused
        if op.buffer in self.varying:
            raise _Refused
        exprs = tuple(simplify(self.analysis.expr_of(i), self.analysis.bounds) for i in op.indices)
        lane = self.lane_name
        for expr in exprs:
            for name in expr.dims():
                leaf = self.analysis.leaves[name]
                if leaf is not self.lane and leaf in self.varying:
                    raise _Refused
        kind = self._access_kind(exprs, lane)
        if isinstance(op, StoreOp) and kind != "contiguous" and self.branch_of is not None:
            exprs, kind = self._pinned(op, exprs), "contiguous"
        if isinstance(op, StoreOp) and kind != "contiguous":
            raise _Refused
        if buffer_type.get_scope().is_texture and kind != "invariant" and self.lanes != TEXEL_LANES:
            raise _Refused  # a texture is accessed by texels of four lanes
        if (
            kind == "contiguous"
            and buffer_type.get_scope().is_texture
            and not self._texel_aligned(exprs[-1], lane)
        ):
            # A texture is read and written by whole texels: four lanes that straddle two
            # texels are gathered one by one (a store like that cannot be one texel write).
            if isinstance(op, StoreOp):
                raise _Refused
            kind = "gather"
        guarded = False
        if self.branch_of is not None:
            branch_blocks = [r.block for r in self.branch_of.regions]
            if isinstance(op, StoreOp) and op.parent_block() not in branch_blocks:
                raise _Refused
            guarded = isinstance(op, LoadOp) and not self._in_bounds(exprs, buffer_type)
            scalar_element = (*_FLOATS, IntegerType, IndexType)
            if guarded and not isinstance(buffer_type.element_type, scalar_element):
                raise _Refused
        self.accesses[op] = LaneAccess(op, exprs, kind, guarded)

    def _pinned(self, op: StoreOp, exprs: tuple[Expr, ...]) -> tuple[Expr, ...]:
        """The indices of store `op` of a masked branch as `base + %l`, when they equal that
        for every lane that takes the branch (e.g. `apply-layout` simplified the lane index
        to 0 in a branch only lane 0 takes); refused when the lanes are not known."""
        assert self.branch_of is not None
        then = op.parent_block() is self.branch_of.true_region.block
        taking = self.lanes_taking(self.branch_of, then)
        if not taking:
            raise _Refused
        lane, bounds = self.lane_name, self.analysis.bounds
        bases: set[tuple[Expr, ...]] = set()
        for k in taking:
            at_k = [simplify(e.substitute({lane: Const(k)}), bounds) for e in exprs]
            bases.add((*at_k[:-1], simplify(Add(at_k[-1], Const(-k)), bounds)))
        if len(bases) != 1:
            raise _Refused
        (base,) = bases
        pinned = (*base[:-1], simplify(Add(base[-1], Dim(lane)), bounds))
        if self._access_kind(pinned, lane) != "contiguous":
            raise _Refused
        return pinned

    def lanes_taking(self, op: scf.IfOp, then: bool) -> frozenset[int] | None:
        """The lanes that take the then (`then`) or the else branch of the masked if `op`,
        when its condition is a constant for each lane (None: not known)."""
        where = self._lanes_where(op.cond)
        if where is None or then:
            return where
        return frozenset(range(self.lanes)) - where

    def _lanes_where(self, value: SSAValue) -> frozenset[int] | None:
        """The lanes where the mask `value` holds, when it is a constant per lane (None:
        not known, e.g. it depends on other values)."""
        owner = value.owner
        if value not in self.varying or not isinstance(owner, Operation):
            return None
        if isinstance(owner, arith.CmpiOp):
            compare = _CMPI.get(owner.predicate.value.data)
            if compare is None:
                return None
            lanes: set[int] = set()
            for k in range(self.lanes):
                lhs, rhs = (
                    simplify(
                        self.analysis.expr_of(o).substitute({self.lane_name: Const(k)}),
                        self.analysis.bounds,
                    )
                    for o in owner.operands
                )
                if not isinstance(lhs, Const) or not isinstance(rhs, Const):
                    return None
                if owner.predicate.value.data >= 6 and min(lhs.value, rhs.value) < 0:
                    return None  # unsigned comparison of a negative index
                if compare(lhs.value, rhs.value):
                    lanes.add(k)
            return frozenset(lanes)
        combine = _MASK_COMBINE.get(owner.name)
        if combine is None:
            return None
        lhs_lanes, rhs_lanes = (self._lanes_where(o) for o in owner.operands)
        if lhs_lanes is None or rhs_lanes is None:
            return None
        return combine(lhs_lanes, rhs_lanes)

    def _in_bounds(self, exprs: tuple[Expr, ...], buffer_type: BufferType) -> bool:
        """Whether the indices lie in the buffer for every lane and every value of the
        other leaves in their known ranges (unknown ranges: not proven)."""
        for expr, extent in zip(exprs, buffer_type.get_shape(), strict=True):
            low, high = self.analysis.range_of(expr)
            if low < 0 or high > extent - 1:
                return False
        return True

    def _texel_aligned(self, innermost: Expr, lane: str) -> bool:
        """Whether `innermost - %l` is provably a multiple of the texel width."""
        base = simplify(Add(innermost, Mul(Dim(lane), Const(-1))), self.analysis.bounds)
        return simplify(Mod(base, TEXEL_LANES), self.analysis.bounds) == Const(0)

    def _access_kind(self, exprs: tuple[Expr, ...], lane: str) -> str:
        if all(lane not in e.dims() for e in exprs):
            return "invariant"
        if any(lane in e.dims() for e in exprs[:-1]):
            return "gather"
        base = simplify(Add(exprs[-1], Mul(Dim(lane), Const(-1))), self.analysis.bounds)
        return "gather" if lane in base.dims() else "contiguous"

    # Memory rule ------------------------------------------------------------------------

    def _check_memory(self) -> None:
        stored = {
            buffer_root(a.op.buffer) for a in self.accesses.values() if isinstance(a.op, StoreOp)
        }
        for root in stored:
            group = [a for a in self.accesses.values() if buffer_root(a.op.buffer) is root]
            first = group[0]
            for access in group:
                if access.op.buffer is not first.op.buffer or access.exprs != first.exprs:
                    raise _Refused
                if access.kind != "contiguous":
                    raise _Refused
                for expr in access.exprs:
                    for name in expr.dims():
                        leaf = self.analysis.leaves[name]
                        if leaf is not self.lane and self.inside(leaf):
                            raise _Refused


def _speculatable(op: Operation) -> bool:
    """Whether executing `op` where the program would not cannot fault: anything but an
    integer division or remainder whose divisor is not a non-zero constant."""
    if op.name not in _INT_DIVISIONS:
        return True
    divisor = const_evaluate_operand(op.operands[1])
    return divisor is not None and divisor != 0


def _last_store(block: Block, root: SSAValue) -> StoreOp:
    """The one store to `root` directly in `block`, which must be the last access to
    `root` in `block` (else the if is refused)."""
    stores = [op for op in block.ops if isinstance(op, StoreOp) and buffer_root(op.buffer) is root]
    if len(stores) != 1:
        raise _Refused
    after = stores[0].next_op
    while after is not None:
        for inner in after.walk():
            if isinstance(inner, LoadOp | StoreOp) and buffer_root(inner.buffer) is root:
                raise _Refused
        after = after.next_op
    return stores[0]


