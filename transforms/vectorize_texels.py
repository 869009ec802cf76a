"""vectorize-texels: turn a loop over the four lanes of a texel into `vector<4xT>` code.

Texture stores write whole texels (`write_imagef` sets all four channels), and whole-texel
loads are one `read_imagef`; this pass makes both visible in the IR. It rewrites an
`scf.for %l = 0 to 4 step 1` without `iter_args` (a *lane loop*) into ONE iteration of
vector code, inlined where the loop was:

- a `layout.load` / `layout.store` whose innermost index is `base + %l` (as a quasi-affine
  expression: `transforms/index_exprs`), all other indices free of `%l`, becomes a
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
  accumulation of a conv2d output texel, vectorizes).

Index arithmetic that depends on `%l` may only feed load/store indices; the new indices
are emitted from the quasi-affine expressions with `%l = 0` (or `%l = k` for gathers).

Refused (the loop is left unchanged): other bounds or steps, `iter_args`, vector values
already in the body, any op with a lane-varying operand that is not listed above
(comparisons, selects, integer arithmetic on data, calls, `scf.if`, ...), a store whose
indices are not `base + %l`, and any buffer written in the loop (traced through
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

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, scf, vector
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from physlayout.dialects.layout import BufferType, DataOp, DeclBufferOp, LoadOp, StoreOp
from physlayout.dialects.quasi_affine import Add, Const, Dim, Expr, Mul, simplify
from physlayout.transforms.index_exprs import ExprEmitter, IndexAnalysis

LANES = 4
"""Lanes of a texel (RGBA)."""

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


_FLOATS = (Float16Type, Float32Type, Float64Type)


def _constant_int(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def buffer_root(buffer: SSAValue) -> SSAValue:
    """The storage a buffer value is declared over: through `layout.decl_buffer` and
    `layout.data` back to a parameter, an allocation or another opaque handle."""
    value = buffer
    for _ in range(10_000):
        owner = value.owner
        if isinstance(owner, DeclBufferOp):
            value = owner.ptr
        elif isinstance(owner, DataOp):
            value = owner.buffer
        else:
            return value
    return value


def _is_lane_loop(loop: scf.ForOp) -> bool:
    return (
        not loop.iter_args
        and _constant_int(loop.lb) == 0
        and _constant_int(loop.ub) == LANES
        and _constant_int(loop.step) == 1
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
    analysis leaves), `kind` is 'invariant', 'contiguous' or 'gather'."""

    op: LoadOp | StoreOp
    exprs: tuple[Expr, ...]
    kind: str


@dataclass
class LaneLoopPlan:
    """The analysis of one lane loop: which values vary with the lane and how each access
    is vectorized. `LaneLoopPlan.of` returns None when the loop must be left unchanged."""

    loop: scf.ForOp
    lane: SSAValue
    analysis: IndexAnalysis
    varying: set[SSAValue] = field(default_factory=set[SSAValue])
    accesses: dict[Operation, _Access] = field(default_factory=dict[Operation, _Access])

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
        raise _Refused

    def _feeds_indices_only(self, value: SSAValue) -> bool:
        for use in value.uses:
            user = use.operation
            if isinstance(user, LoadOp) and use.index >= 1:
                continue
            if isinstance(user, StoreOp) and use.index >= 2:
                continue
            if user.name in INDEX_OPS and all(self._feeds_indices_only(r) for r in user.results):
                continue
            return False
        return True

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
        if isinstance(op, StoreOp) and kind != "contiguous":
            raise _Refused
        self.accesses[op] = _Access(op, exprs, kind)

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


@dataclass
class _Vectorizer:
    """Emits the vector form of a planned lane loop before the loop."""

    plan: LaneLoopPlan
    mapper: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    vectors: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])

    def scalar(self, value: SSAValue) -> SSAValue:
        return self.mapper.get(value, value)

    def vector(self, value: SSAValue, point: InsertPoint) -> SSAValue:
        """The vector form of `value`: its vectorized value, or a broadcast."""
        if value in self.vectors:
            return self.vectors[value]
        return self._insert(
            vector.BroadcastOp(self.scalar(value), VectorType(value.type, [LANES])), point
        )

    @staticmethod
    def _insert(op: Operation, point: InsertPoint) -> SSAValue:
        Rewriter.insert_op(op, point)
        return op.results[0]

    def indices(self, access: _Access, lane: int, point: InsertPoint) -> list[SSAValue]:
        analysis = self.plan.analysis
        name = self.plan.lane_name
        values = {n: self.scalar(v) for n, v in analysis.leaves.items() if n != name}
        bounds = {n: b for n, b in analysis.bounds.items() if n != name}
        emitter = ExprEmitter(point, values, bounds)
        return [
            emitter.emit(simplify(e.substitute({name: Const(lane)}), bounds))
            for e in access.exprs
        ]

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
        elif not any(o in varying for o in op.operands):
            clone = op.clone(self.mapper)
            Rewriter.insert_op(clone, point)
        elif op.name in ELEMENTWISE:
            result = op.results[0]
            new = type(op).create(
                operands=[self.vector(o, point) for o in op.operands],
                result_types=[VectorType(result.type, [LANES])],
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
            value = self.vector(op.value, point)
            indices = self.indices(access, 0, point)
            Rewriter.insert_op(StoreOp(value, buffer, indices), point)
            return
        if access.kind == "invariant":
            load = LoadOp(buffer, self.indices(access, 0, point), op.result.type)
            load.attributes.update(op.attributes)
            load.result.name_hint = op.result.name_hint
            self.mapper[op.result] = self._insert(load, point)
            return
        vector_type = VectorType(op.result.type, [LANES])
        if access.kind == "contiguous":
            load = LoadOp(buffer, self.indices(access, 0, point), vector_type)
            load.result.name_hint = op.result.name_hint
            self.vectors[op.result] = self._insert(load, point)
            return
        gathered: SSAValue | None = None
        for lane in range(LANES):
            element = self._insert(LoadOp(buffer, self.indices(access, lane, point)), point)
            if gathered is None:
                gathered = self._insert(vector.BroadcastOp(element, vector_type), point)
            else:
                gathered = self._insert(vector.InsertOp(element, gathered, [lane]), point)
        assert gathered is not None
        self.vectors[op.result] = gathered

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
        loops = [loop for loop in op.walk() if isinstance(loop, scf.ForOp)]
        for loop in reversed(loops):
            if loop.parent is not None:
                vectorize_lane_loop(loop)
