"""vectorize-texels: turn a loop over the four lanes of a texel into `vector<4xT>` code.

Texture stores write whole texels (`write_imagef` sets all four channels), and whole-texel
loads are one `read_imagef`; this pass makes both visible in the IR. It rewrites an
`scf.for %l = 0 to 4 step 1` without `iter_args` (a *lane loop*) into ONE iteration of
vector code, inlined where the loop was (a one-dimensional `scf.parallel %l = 0 to 4 step 1`
without reductions is a lane loop too, checked and rewritten as that `scf.for`):

- a `layout.load` / `layout.store` whose innermost index is `base + %l` (as a quasi-affine
  expression: `indexing/bridges/arith`), all other indices free of `%l`, becomes a
  `vector<4xT>` access at `base` (lane 0). That covers the flat 2-D texture buffers of
  `flatten-buffers` (column `x * 4 + %l`) and N-d buffers before flattening (innermost
  index `%l`);
- a load from a buffer the loop does not write, at indices that depend on `%l` in any
  other way, becomes four scalar loads gathered with `vector.broadcast`/`vector.insert`;
- a load at indices free of `%l` stays a scalar load;
- elementwise float `arith`/`math` ops on lane-varying values become the same ops on
  `vector<4xT>`; lane-invariant operands are `vector.broadcast`; lane-invariant ops are
  kept as they are (computed once instead of four times: they are pure);
- nested `scf.for` loops with lane-invariant bounds are kept; their `iter_args` that
  carry lane-varying values become vectors (so a reduction inside a texel loop, e.g. the
  accumulation of a conv2d output texel, vectorizes);
- an `scf.if` directly in the lane loop body (a *masked if*: the padding test that
  `apply-layout` puts around the body of a re-iterated nest, `if (lane is padding) store
  pad else compute and store`) runs both branches for all lanes. Its condition is
  evaluated per lane: it is lane-invariant, or `arith.cmpi` of index expressions (whose
  only lane-varying leaf is `%l`) combined with `arith.andi/ori/xori`. Each storage the
  if stores to must be stored exactly once directly in each branch, as that branch's last
  access to it; the two stores become ONE store after the if whose lane k is
  `arith.select` of condition k between the two stored values (so a texel whose lanes are
  partly padding is one whole-texel write with the pad value in its padding lanes).
  A branch store whose indices are not `base + %l` is accepted when the lanes that take
  the branch are known (the condition is a constant for each lane) and the indices equal
  `base + %l` for each of them (e.g. the channel index `apply-layout` simplified to 0 in
  the branch only lane 0 takes, with one real channel per texel).
  Float results become per-lane selects likewise. A load in a branch whose indices are
  not proven in bounds (interval analysis over the known loop ranges, every lane) is
  guarded: each lane loads under `scf.if` only when it takes that branch (0 otherwise; a
  lane-invariant load: when some lane takes it); other branch ops must be safe to run for
  every lane (no integer division or remainder by a non-constant).

Index arithmetic that depends on `%l` may only feed load/store indices and masked-if
conditions; the new indices are emitted from the quasi-affine expressions with `%l = 0`
(or `%l = k` for gathers and per-lane conditions).

Refused (the loop is left unchanged): other bounds or steps, `iter_args`, vector values
already in the body, any op with a lane-varying operand that is not listed above
(comparisons of data, selects, integer arithmetic on data, calls, ...), an `scf.if` that
is not a masked if as above (nested in a loop or another if, without an else branch, a
storage stored in one branch only, twice, inside a loop of a branch, or accessed after
its store in the branch, non-float results), a store whose indices are not `base + %l`
(in a masked branch: for the lanes that take it), and any buffer written in the loop (traced through
`layout.decl_buffer`/`layout.data` to its parameter or allocation) that is also accessed
through another buffer value, at other indices, or at indices that depend on values
defined inside the loop other than `%l`. With that rule each lane touches only its own
elements of every written buffer, so executing the four iterations in lock-step (op by op)
gives the same result as executing them one after the other. Like OpenCL kernel
arguments, distinct buffer parameters are assumed not to overlap.

Guarantees: the numpy evaluator gives identical results before and after (the vector ops
compute exactly the scalar ops lane by lane); a second run changes nothing (no lane loops
are left to match, and loops whose body already holds vectors are refused). The pass
works before or after `flatten-buffers`; the OpenCL target runs it after flattening.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, scf, vector
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerType,
    ModuleOp,
    VectorType,
    i1,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from physlayout.dialects.buffer_layout import TEXEL_LANES
from physlayout.dialects.layout import BufferType, LoadOp, StoreOp
from physlayout.indexing.bridges.arith import ExprEmitter, IndexAnalysis
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
    }
)  # fmt: skip
"""Float ops computed lane by lane: their vector form computes exactly the scalar form."""

INDEX_OPS: frozenset[str] = frozenset(
    {
        "arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.divui", "arith.remsi",
        "arith.remui", "arith.floordivsi", "arith.ceildivsi", "affine.apply",
    }
)  # fmt: skip
"""Index arithmetic that may depend on the lane when it only feeds access indices."""

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


def _is_lane_loop(loop: scf.ForOp) -> bool:
    return (
        not loop.iter_args
        and const_evaluate_operand(loop.lb) == 0
        and const_evaluate_operand(loop.ub) == TEXEL_LANES
        and const_evaluate_operand(loop.step) == 1
    )


def _walk_ops(block: Block) -> Iterator[Operation]:
    for op in block.ops:
        yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _walk_ops(inner)


class _Refused(Exception):
    """The lane loop does not satisfy the rules (internal; the loop is left unchanged)."""


@dataclass
class _Access:
    """How one load/store is vectorized: `exprs` are its index expressions (over the
    analysis leaves), `kind` is 'invariant', 'contiguous' or 'gather'; `guarded` loads lie
    in a masked branch and are not proven in bounds for every lane, so each lane loads only
    when it takes the branch."""

    op: LoadOp | StoreOp
    exprs: tuple[Expr, ...]
    kind: str
    guarded: bool = False


@dataclass
class _MaskedIf:
    """An `scf.if` at the top of a lane loop body, run for all lanes at once: `stores` maps
    each storage root it stores to to its store in the then and in the else branch."""

    op: scf.IfOp
    stores: dict[SSAValue, tuple[StoreOp, StoreOp]]


@dataclass
class LaneLoopPlan:
    """The analysis of one lane loop: which values vary with the lane and how each access
    is vectorized. `LaneLoopPlan.of` returns None when the loop must be left unchanged."""

    loop: scf.ForOp
    lane: SSAValue
    analysis: IndexAnalysis
    varying: set[SSAValue] = field(default_factory=set[SSAValue])
    accesses: dict[Operation, _Access] = field(default_factory=dict[Operation, _Access])
    masked: dict[Operation, _MaskedIf] = field(default_factory=dict[Operation, _MaskedIf])
    branch_of: scf.IfOp | None = None
    """While checking a branch of a masked if: that if."""

    @staticmethod
    def of(loop: scf.ForOp) -> LaneLoopPlan | None:
        if not _is_lane_loop(loop):
            return None
        plan = LaneLoopPlan(loop, loop.body.block.args[0], IndexAnalysis())
        try:
            plan._find_varying()
            plan._check_ops(loop.body.block)
            plan._check_memory()
        except _Refused:
            return None
        return plan

    @property
    def lane_name(self) -> str:
        return self.analysis.leaf(self.lane).name

    def _inside(self, value: SSAValue) -> bool:
        """True for values defined in the loop body (the lane included)."""
        if isinstance(value, BlockArgument):
            return self.loop.is_ancestor(value.block)
        owner = value.owner
        return isinstance(owner, Operation) and owner is not self.loop and (
            self.loop.is_ancestor(owner)
        )

    # Lane dependence --------------------------------------------------------------------

    def _find_varying(self) -> None:
        """The values that depend on the lane (a fixpoint through nested loop carries)."""
        self.varying = {self.lane}
        changed = True
        while changed:
            changed = False
            for op in _walk_ops(self.loop.body.block):
                if isinstance(op, scf.ForOp):
                    changed |= self._carry(op)
                    continue
                if isinstance(op, scf.IfOp):
                    changed |= self._merge(op)
                    continue
                if any(o in self.varying for o in op.operands):
                    for result in op.results:
                        if result not in self.varying:
                            self.varying.add(result)
                            changed = True

    def _carry(self, loop: scf.ForOp) -> bool:
        changed = False
        yielded = loop.body.block.last_op
        assert yielded is not None
        for k, init in enumerate(loop.iter_args):
            if init in self.varying or yielded.operands[k] in self.varying:
                for value in (loop.body.block.args[k + 1], loop.results[k]):
                    if value not in self.varying:
                        self.varying.add(value)
                        changed = True
        return changed

    def _merge(self, op: scf.IfOp) -> bool:
        """The results of an if vary when its condition or a yielded value does."""
        yielded = [v for r in op.regions for b in r.blocks if b.last_op for v in b.last_op.operands]
        if op.cond not in self.varying and not any(v in self.varying for v in yielded):
            return False
        new = [r for r in op.results if r not in self.varying]
        self.varying.update(new)
        return bool(new)

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
                case scf.IfOp():
                    self._check_if(op, block)
                case scf.YieldOp() if block is not self.loop.body.block:
                    continue
                case scf.YieldOp():
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
            if op.name.startswith(("arith.", "math.", "affine.apply", "index.")):
                return
            raise _Refused
        if op.name in ELEMENTWISE:
            types = [v.type for v in (*op.operands, *op.results)]
            if not all(isinstance(t, _FLOATS) for t in types) or len(set(types)) != 1:
                raise _Refused
            return
        index_math = op.name in INDEX_OPS and all(isinstance(r.type, IndexType) for r in op.results)
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
            if isinstance(user, arith.CmpiOp) and self._feeds_masks_only(user.result):
                continue
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
        self.masked[op] = _MaskedIf(op, stores)

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
        self.accesses[op] = _Access(op, exprs, kind, guarded)

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
        return frozenset(range(TEXEL_LANES)) - where

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
            for k in range(TEXEL_LANES):
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
                        if leaf is not self.lane and self._inside(leaf):
                            raise _Refused


def _zero(element_type: Attribute) -> arith.ConstantOp:
    """`arith.constant 0` of a scalar element type (what a lane that skips a guarded load
    gets; its value is never selected)."""
    if isinstance(element_type, Float16Type | Float32Type | Float64Type):
        return arith.ConstantOp(FloatAttr(0.0, element_type))
    assert isinstance(element_type, IntegerType | IndexType)
    return arith.ConstantOp.from_int_and_width(0, element_type)


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


@dataclass
class _Branch:
    """The branch of a masked if being emitted: the per-lane conditions, which branch it
    is, and the value each of its stores would store, by storage root (emitted later)."""

    conditions: list[SSAValue]
    then: bool
    taking: frozenset[int] | None = None
    """The lanes that take this branch, when known at compile time."""
    stored: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])

    def may_take(self, lane: int) -> bool:
        return self.taking is None or lane in self.taking

    @property
    def uniform(self) -> SSAValue | None:
        """The condition, when it is the same for every lane."""
        return self.conditions[0] if len(set(self.conditions)) == 1 else None


@dataclass
class _Vectorizer:
    """Emits the vector form of a planned lane loop before the loop."""

    plan: LaneLoopPlan
    mapper: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    vectors: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    branch: _Branch | None = None
    lane_conditions: dict[SSAValue, list[SSAValue]] = field(
        default_factory=dict[SSAValue, list[SSAValue]]
    )

    def scalar(self, value: SSAValue) -> SSAValue:
        return self.mapper.get(value, value)

    def vector(self, value: SSAValue, point: InsertPoint) -> SSAValue:
        """The vector form of `value`: its vectorized value, or a broadcast."""
        if value in self.vectors:
            return self.vectors[value]
        return self._insert(
            vector.BroadcastOp(self.scalar(value), VectorType(value.type, [TEXEL_LANES])), point
        )

    @staticmethod
    def _insert(op: Operation, point: InsertPoint) -> SSAValue:
        Rewriter.insert_op(op, point)
        return op.results[0]

    def at_lane(self, exprs: Iterable[Expr], lane: int, point: InsertPoint) -> list[SSAValue]:
        """Emit quasi-affine expressions over the analysis leaves with the lane = `lane`."""
        analysis = self.plan.analysis
        name = self.plan.lane_name
        values = {n: self.scalar(v) for n, v in analysis.leaves.items() if n != name}
        bounds = {n: b for n, b in analysis.bounds.items() if n != name}
        emitter = ExprEmitter(point, values, bounds)
        return [emitter.emit(simplify(e.substitute({name: Const(lane)}), bounds)) for e in exprs]

    def indices(self, access: _Access, lane: int, point: InsertPoint) -> list[SSAValue]:
        return self.at_lane(access.exprs, lane, point)

    def conditions(self, value: SSAValue, point: InsertPoint) -> list[SSAValue]:
        """The `i1` value `value` for each lane (a mask op evaluated lane by lane)."""
        if value not in self.plan.varying:
            return [self.scalar(value)] * TEXEL_LANES
        if value in self.lane_conditions:
            return self.lane_conditions[value]
        op = value.owner
        assert isinstance(op, Operation)
        lanes: list[SSAValue] = []
        if isinstance(op, arith.CmpiOp):
            exprs = [self.plan.analysis.expr_of(o) for o in op.operands]
            for lane in range(TEXEL_LANES):
                lhs, rhs = self.at_lane(exprs, lane, point)
                lanes.append(self._insert(arith.CmpiOp(lhs, rhs, op.predicate.value.data), point))
        else:
            lhs, rhs = (self.conditions(o, point) for o in op.operands)
            for a, b in zip(lhs, rhs, strict=True):
                lanes.append(self._insert(type(op).create(operands=[a, b], result_types=[i1]), point))
        self.lane_conditions[value] = lanes
        return lanes

    def lane_of(self, value: SSAValue, lane: int, point: InsertPoint) -> SSAValue:
        """Lane `lane` of `value` (a scalar for lane-invariant values)."""
        if value not in self.vectors:
            return self.scalar(value)
        vector_value = self.vectors[value]
        return self._insert(vector.ExtractOp(vector_value, [lane], value.type), point)

    def pack(self, lanes: Iterable[SSAValue], point: InsertPoint) -> SSAValue:
        """A vector of the `TEXEL_LANES` values `lanes` yields (a broadcast of lane 0, then
        inserts; each lane is inserted as soon as it is produced)."""
        packed: SSAValue | None = None
        for lane, element in enumerate(lanes):
            if packed is None:
                vector_type = VectorType(element.type, [TEXEL_LANES])
                packed = self._insert(vector.BroadcastOp(element, vector_type), point)
            else:
                packed = self._insert(vector.InsertOp(element, packed, [lane]), point)
        assert packed is not None
        return packed

    def select(
        self, conditions: list[SSAValue], then: SSAValue, otherwise: SSAValue, point: InsertPoint
    ) -> SSAValue:
        """The vector whose lane k is lane k of `then` where condition k holds, else of
        `otherwise`."""
        if then is otherwise:
            return self.vector(then, point)
        if len(set(conditions)) == 1:
            both = (self.vector(then, point), self.vector(otherwise, point))
            return self._insert(arith.SelectOp(conditions[0], *both), point)
        lanes = (
            self._insert(
                arith.SelectOp(c, self.lane_of(then, k, point), self.lane_of(otherwise, k, point)),
                point,
            )
            for k, c in enumerate(conditions)
        )
        return self.pack(lanes, point)

    def block(self, block: Block, point: InsertPoint) -> None:
        for op in block.ops:
            if isinstance(op, scf.YieldOp):
                continue
            self.op(op, point)

    def op(self, op: Operation, point: InsertPoint) -> None:
        plan = self.plan
        varying = plan.varying
        if isinstance(op, LoadOp | StoreOp):
            self.access(plan.accesses[op], point)
        elif isinstance(op, scf.ForOp):
            self.loop(op, point)
        elif isinstance(op, scf.IfOp):
            self.masked_if(plan.masked[op], point)
        elif not any(o in varying for o in op.operands):
            clone = op.clone(self.mapper)
            Rewriter.insert_op(clone, point)
        elif op.name in ELEMENTWISE:
            result = op.results[0]
            new = type(op).create(
                operands=[self.vector(o, point) for o in op.operands],
                result_types=[VectorType(result.type, [TEXEL_LANES])],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            new.results[0].name_hint = result.name_hint
            self.vectors[result] = self._insert(new, point)
        # Lane-dependent index arithmetic is re-emitted at each access.

    def access(self, access: _Access, point: InsertPoint) -> None:
        op = access.op
        buffer = self.scalar(op.buffer)
        if isinstance(op, StoreOp):
            if self.branch is not None:
                self.branch.stored[buffer_root(op.buffer)] = op.value
                return
            value = self.vector(op.value, point)
            indices = self.indices(access, 0, point)
            Rewriter.insert_op(StoreOp(value, buffer, indices), point)
            return
        if access.guarded:
            self.guarded_load(access, point)
            return
        if access.kind == "invariant":
            load = LoadOp(buffer, self.indices(access, 0, point), op.result.type)
            load.attributes.update(op.attributes)
            load.result.name_hint = op.result.name_hint
            self.mapper[op.result] = self._insert(load, point)
            return
        vector_type = VectorType(op.result.type, [TEXEL_LANES])
        if access.kind == "contiguous":
            load = LoadOp(buffer, self.indices(access, 0, point), vector_type)
            load.result.name_hint = op.result.name_hint
            self.vectors[op.result] = self._insert(load, point)
            return
        elements = (
            self._insert(LoadOp(buffer, self.indices(access, lane, point)), point)
            for lane in range(TEXEL_LANES)
        )
        self.vectors[op.result] = self.pack(elements, point)

    def guarded_load(self, access: _Access, point: InsertPoint) -> None:
        """A load in a masked branch not proven in bounds: each lane loads only when it
        takes the branch (a lane-invariant load: when some lane does), else gets 0. Lanes
        known never to take the branch get 0 without a load (whose indices may then be
        out of bounds even as constants)."""
        branch = self.branch
        assert branch is not None and isinstance(access.op, LoadOp)
        result = access.op.result
        if branch.taking is not None and not branch.taking:
            zero = self._insert(_zero(result.type), point)
            if access.kind == "invariant":
                self.mapper[result] = zero
            else:
                self.vectors[result] = self.vector(zero, point)
            return
        uniform = branch.uniform
        if uniform is not None and access.kind == "contiguous":
            self.vectors[result] = self._load_if(
                access, 0, uniform, branch.then, point, TEXEL_LANES
            )
            return
        if access.kind != "invariant":
            elements = (
                self._load_if(access, lane, branch.conditions[lane], branch.then, point)
                if branch.may_take(lane)
                else self._insert(_zero(result.type), point)
                for lane in range(TEXEL_LANES)
            )
            self.vectors[result] = self.pack(elements, point)
            return
        combine = arith.OrIOp if branch.then else arith.AndIOp
        taken = branch.conditions[0]
        for condition in branch.conditions[1:]:
            taken = self._insert(combine(taken, condition), point)
        self.mapper[result] = self._load_if(access, 0, taken, branch.then, point)

    def _load_if(
        self,
        access: _Access,
        lane: int,
        condition: SSAValue,
        when: bool,
        point: InsertPoint,
        width: int = 1,
    ) -> SSAValue:
        """`scf.if` yielding the load at lane `lane` (`width` elements from there) where
        `condition` is `when`, else 0."""
        op = access.op
        assert isinstance(op, LoadOp)
        element_type = op.result.type
        zero_ops: list[Operation] = [_zero(element_type)]
        value_type = element_type
        if width != 1:
            value_type = VectorType(element_type, [width])
            zero_ops.append(vector.BroadcastOp(zero_ops[0].results[0], value_type))
        zero_block = Block([*zero_ops, scf.YieldOp(zero_ops[-1].results[0])])
        load_block = Block()
        indices = self.indices(access, lane, InsertPoint.at_end(load_block))
        load = LoadOp(self.scalar(op.buffer), indices, value_type)
        load_block.add_ops([load, scf.YieldOp(load.result)])
        blocks = (load_block, zero_block) if when else (zero_block, load_block)
        guarded = scf.IfOp(condition, [value_type], Region(blocks[0]), Region(blocks[1]))
        guarded.results[0].name_hint = op.result.name_hint
        return self._insert(guarded, point)

    def masked_if(self, masked: _MaskedIf, point: InsertPoint) -> None:
        """Both branches for all lanes, then one store per stored storage and one vector
        per result, selecting per lane the branch the lane takes."""
        op = masked.op
        conditions = self.conditions(op.cond, point)
        branches: list[tuple[_Branch, list[SSAValue]]] = []
        for then, region in ((True, op.true_region), (False, op.false_region)):
            self.branch = _Branch(conditions, then, self.plan.lanes_taking(op, then))
            self.block(region.block, point)
            yielded = region.block.last_op
            branches.append((self.branch, list(yielded.operands) if yielded else []))
        self.branch = None
        (then_branch, then_values), (else_branch, else_values) = branches
        for root, (store, _) in masked.stores.items():
            value = self.select(
                conditions, then_branch.stored[root], else_branch.stored[root], point
            )
            indices = self.indices(self.plan.accesses[store], 0, point)
            Rewriter.insert_op(StoreOp(value, self.scalar(store.buffer), indices), point)
        for result, then, otherwise in zip(op.results, then_values, else_values, strict=True):
            if result in self.plan.varying:
                merged = self.select(conditions, then, otherwise, point)
                self.vectors[result] = merged
            else:
                merged = self._insert(
                    arith.SelectOp(self.scalar(op.cond), self.scalar(then), self.scalar(otherwise)),
                    point,
                )
                self.mapper[result] = merged
            merged.name_hint = result.name_hint

    def loop(self, loop: scf.ForOp, point: InsertPoint) -> None:
        varying = self.plan.varying
        carried = [arg in varying for arg in loop.body.block.args[1:]]
        inits = [
            self.vector(init, point) if vec else self.scalar(init)
            for init, vec in zip(loop.iter_args, carried, strict=True)
        ]
        body = Block(arg_types=[IndexType(), *(v.type for v in inits)])
        old_args = loop.body.block.args
        for old, new in zip(old_args, body.args, strict=True):
            new.name_hint = old.name_hint
        self.mapper[old_args[0]] = body.args[0]
        for old, new, vec in zip(old_args[1:], body.args[1:], carried, strict=True):
            (self.vectors if vec else self.mapper)[old] = new
        inner = InsertPoint.at_end(body)
        self.block(loop.body.block, inner)
        yielded = loop.body.block.last_op
        assert yielded is not None
        outs = [
            self.vector(v, inner) if vec else self.scalar(v)
            for v, vec in zip(yielded.operands, carried, strict=True)
        ]
        body.add_op(scf.YieldOp(*outs))
        new = scf.ForOp(
            self.scalar(loop.lb), self.scalar(loop.ub), self.scalar(loop.step), inits, Region(body)
        )
        Rewriter.insert_op(new, point)
        for old, result, vec in zip(loop.results, new.results, carried, strict=True):
            result.name_hint = old.name_hint
            (self.vectors if vec else self.mapper)[old] = result


def vectorize_lane_loop(loop: scf.ForOp) -> bool:
    """Vectorize `loop` when it is a lane loop satisfying the rules; True when rewritten."""
    plan = LaneLoopPlan.of(loop)
    if plan is None:
        return False
    point = InsertPoint.before(loop)
    zero = arith.ConstantOp.from_int_and_width(0, IndexType())
    Rewriter.insert_op(zero, point)
    vectorizer = _Vectorizer(plan)
    vectorizer.mapper[plan.lane] = zero.result
    vectorizer.block(loop.body.block, point)
    _erase_dead_range(zero, loop)
    Rewriter.erase_op(loop, safe_erase=False)
    return True


def vectorize_parallel_lane_loop(loop: scf.ParallelOp) -> bool:
    """Vectorize a one-dimensional `scf.parallel` over the four lanes (no reductions) that
    satisfies the lane-loop rules as the same loop written as `scf.for`: those rules make
    every lane touch only its own elements of each written buffer, so any order of the
    iterations, lock-step included, gives the same result. True when rewritten."""
    if len(loop.lowerBound) != 1 or loop.initVals or loop.res:
        return False
    body = loop.body.clone()
    block = body.block
    terminator = block.last_op
    if not isinstance(terminator, scf.ReduceOp) or terminator.operands:
        return False
    Rewriter.erase_op(terminator)
    Rewriter.insert_op(scf.YieldOp(), InsertPoint.at_end(block))
    sequential = scf.ForOp(loop.lowerBound[0], loop.upperBound[0], loop.step[0], [], body)
    Rewriter.insert_op(sequential, InsertPoint.before(loop))
    if vectorize_lane_loop(sequential):
        Rewriter.erase_op(loop)
        return True
    Rewriter.erase_op(sequential)
    return False


def _erase_dead_range(first: Operation, stop: Operation) -> None:
    """Erase the unused pure ops among the ops emitted from `first` up to `stop` (the
    vectorizer clones lane-invariant index math that the re-emitted indices may not use)."""
    emitted: list[Operation] = []
    op: Operation | None = first
    while op is not None and op is not stop:
        emitted.extend(op.walk())
        op = op.next_op
    for candidate in reversed(emitted):
        if is_trivially_dead(candidate):
            Rewriter.erase_op(candidate)


@dataclass(frozen=True)
class VectorizeTexelsPass(ModulePass):
    """Rewrite `scf.for %l = 0 to 4` loops over texel lanes into `vector<4xT>` code."""

    name = "vectorize-texels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        loops = [loop for loop in op.walk() if isinstance(loop, scf.ForOp | scf.ParallelOp)]
        for loop in reversed(loops):
            if loop.parent is None:
                continue
            if isinstance(loop, scf.ForOp):
                vectorize_lane_loop(loop)
            else:
                vectorize_parallel_lane_loop(loop)
