"""The emission half of vectorize-texels: the vector form of a lane loop that
`LaneLoopPlan` accepted, inserted before the loop through the pass's `PatternRewriter`
(vector ops for lane-varying values, gathers, per-lane guarded loads, masked ifs run for
all lanes with per-lane selects, nested loops with vector carries).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.dialects import arith, scf, vector
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerType,
    VectorType,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from physlayout.dialects.layout import LoadOp, StoreOp
from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.quasi_affine import Const, Expr
from physlayout.indexing.simplify import simplify
from physlayout.transforms.buffer_aliases import buffer_root
from physlayout.transforms.lane_loop_plan import (
    ELEMENTWISE,
    LaneAccess,
    LaneLoopPlan,
    MaskedIf,
    is_lane_wise_select,
    is_uniform_select,
)


def _zero(element_type: Attribute) -> arith.ConstantOp:
    """`arith.constant 0` of a scalar element type (what a lane that skips a guarded load
    gets; its value is never selected)."""
    if isinstance(element_type, Float16Type | Float32Type | Float64Type):
        return arith.ConstantOp(FloatAttr(0.0, element_type))
    assert isinstance(element_type, IntegerType | IndexType)
    return arith.ConstantOp.from_int_and_width(0, element_type)


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
class LaneVectorizer:
    """Emits the vector form of a planned lane loop, every op through `rewriter`."""

    plan: LaneLoopPlan
    rewriter: PatternRewriter
    mapper: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    vectors: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    branch: _Branch | None = None
    lane_conditions: dict[SSAValue, list[SSAValue]] = field(
        default_factory=dict[SSAValue, list[SSAValue]]
    )

    def scalar(self, value: SSAValue) -> SSAValue:
        """The value standing for the lane-invariant `value` in the vectorized code (its
        clone where the loop body was copied, else `value` itself)."""
        return self.mapper.get(value, value)

    def vector(self, value: SSAValue, point: InsertPoint) -> SSAValue:
        """The vector form of `value`: its vectorized value, or a broadcast."""
        if value in self.vectors:
            return self.vectors[value]
        return self._insert(
            vector.BroadcastOp(self.scalar(value), VectorType(value.type, [self.plan.lanes])), point
        )

    def _insert(self, op: Operation, point: InsertPoint) -> SSAValue:
        self.rewriter.insert(op, point)
        return op.results[0]

    def at_lane(self, exprs: Iterable[Expr], lane: int, point: InsertPoint) -> list[SSAValue]:
        """Emit quasi-affine expressions over the analysis leaves with the lane = `lane`."""
        analysis = self.plan.analysis
        name = self.plan.lane_name
        values = {n: self.scalar(v) for n, v in analysis.leaves.items() if n != name}
        bounds = {n: b for n, b in analysis.bounds.items() if n != name}
        scratch = Block()
        emitter = ExprEmitter(InsertPoint.at_end(scratch), values, bounds)
        emitted = [emitter.emit(simplify(e.substitute({name: Const(lane)}), bounds)) for e in exprs]
        for op in list(scratch.ops):
            op.detach()
            self.rewriter.insert(op, point)
        return emitted

    def indices(self, access: LaneAccess, lane: int, point: InsertPoint) -> list[SSAValue]:
        """The indices `access` addresses in lane `lane`, emitted at `point`."""
        return self.at_lane(access.exprs, lane, point)

    def conditions(self, value: SSAValue, point: InsertPoint) -> list[SSAValue]:
        """The `i1` value `value` for each lane (a mask op evaluated lane by lane)."""
        if value not in self.plan.varying:
            return [self.scalar(value)] * self.plan.lanes
        if value in self.lane_conditions:
            return self.lane_conditions[value]
        op = value.owner
        assert isinstance(op, Operation)
        lanes: list[SSAValue] = []
        if isinstance(op, arith.CmpfOp):  # a lane-wise compare of data
            for lane in range(self.plan.lanes):
                lhs, rhs = (self.lane_of(o, lane, point) for o in op.operands)
                compare = arith.CmpfOp(lhs, rhs, op.predicate.value.data, op.fastmath)
                lanes.append(self._insert(compare, point))
        elif isinstance(op, arith.CmpiOp):
            exprs = [self.plan.analysis.expr_of(o) for o in op.operands]
            for lane in range(self.plan.lanes):
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
        """A vector of the `plan.lanes` values `lanes` yields (a broadcast of lane 0, then
        inserts; each lane is inserted as soon as it is produced)."""
        packed: SSAValue | None = None
        for lane, element in enumerate(lanes):
            if packed is None:
                vector_type = VectorType(element.type, [self.plan.lanes])
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
        """The vector form of the ops of `block` (its terminator aside) at `point`."""
        for op in block.ops:
            if isinstance(op, scf.YieldOp | scf.ReduceOp):
                continue
            self.op(op, point)

    def op(self, op: Operation, point: InsertPoint) -> None:
        """Emit the vectorized form of body op `op` at `point`: texel accesses as one vector
        access (or lane by lane where they straddle texels), nested loops and masked ifs
        recursively, lane-varying values as vector ops, invariant ones cloned once."""
        plan = self.plan
        varying = plan.varying
        if isinstance(op, LoadOp | StoreOp):
            self.access(plan.accesses[op], point)
        elif isinstance(op, scf.ForOp):
            self.loop(op, point)
        elif isinstance(op, scf.IfOp) and op in plan.masked:
            self.masked_if(plan.masked[op], point)
        elif isinstance(op, scf.IfOp):
            self.uniform_if(op, point)
        elif not any(o in varying for o in op.operands):
            clone = op.clone(self.mapper)
            self.rewriter.insert(clone, point)
        elif isinstance(op, arith.SelectOp) and is_uniform_select(op, varying):
            new = arith.SelectOp(
                self.scalar(op.cond), self.vector(op.lhs, point), self.vector(op.rhs, point)
            )
            new.result.name_hint = op.result.name_hint
            self.vectors[op.result] = self._insert(new, point)
        elif is_lane_wise_select(op):
            assert isinstance(op, arith.SelectOp)
            conditions = self.conditions(op.cond, point)
            self.vectors[op.result] = self.select(conditions, op.lhs, op.rhs, point)
        elif op.name in ELEMENTWISE:
            result = op.results[0]
            new = type(op).create(
                operands=[self.vector(o, point) for o in op.operands],
                result_types=[VectorType(result.type, [self.plan.lanes])],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            new.location = op.location  # a profile names the source line of a kernel's op
            new.results[0].name_hint = result.name_hint
            self.vectors[result] = self._insert(new, point)
        # Lane-dependent index arithmetic is re-emitted at each access.

    def access(self, access: LaneAccess, point: InsertPoint) -> None:
        """Emit `access` for all four lanes at `point`: one whole-texel vector load/store
        when its lanes are contiguous in one texel, else a gather/scatter lane by lane (a
        store under a masked branch is recorded for the branch's merge instead)."""
        op = access.op
        buffer = self.scalar(op.buffer)
        if isinstance(op, StoreOp):
            if self.branch is not None:
                self.branch.stored[buffer_root(op.buffer)] = op.value
                return
            value = self.vector(op.value, point)
            indices = self.indices(access, 0, point)
            self.rewriter.insert(StoreOp(value, buffer, indices), point)
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
        vector_type = VectorType(op.result.type, [self.plan.lanes])
        if access.kind == "contiguous":
            load = LoadOp(buffer, self.indices(access, 0, point), vector_type)
            load.result.name_hint = op.result.name_hint
            self.vectors[op.result] = self._insert(load, point)
            return
        elements = (
            self._insert(LoadOp(buffer, self.indices(access, lane, point)), point)
            for lane in range(self.plan.lanes)
        )
        self.vectors[op.result] = self.pack(elements, point)

    def guarded_load(self, access: LaneAccess, point: InsertPoint) -> None:
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
                access, 0, uniform, branch.then, point, self.plan.lanes
            )
            return
        if access.kind != "invariant":
            elements = (
                self._load_if(access, lane, branch.conditions[lane], branch.then, point)
                if branch.may_take(lane)
                else self._insert(_zero(result.type), point)
                for lane in range(self.plan.lanes)
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
        access: LaneAccess,
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

    def masked_if(self, masked: MaskedIf, point: InsertPoint) -> None:
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
            self.rewriter.insert(StoreOp(value, self.scalar(store.buffer), indices), point)
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

    def uniform_if(self, op: scf.IfOp, point: InsertPoint) -> None:
        """Emit a copy of the `scf.if` `op`, whose condition does not depend on the lane,
        at `point`: one branch for all lanes, its lane-varying results as vectors."""
        varying = [result in self.plan.varying for result in op.results]
        types = [
            VectorType(r.type, [self.plan.lanes]) if vec else r.type
            for r, vec in zip(op.results, varying, strict=True)
        ]
        regions: list[Region] = []
        for region in op.regions:
            if not region.blocks:
                regions.append(Region())
                continue
            body = Block()
            inner = InsertPoint.at_end(body)
            self.block(region.block, inner)
            yielded = region.block.last_op
            assert yielded is not None
            body.add_op(
                scf.YieldOp(
                    *(
                        self.vector(v, inner) if vec else self.scalar(v)
                        for v, vec in zip(yielded.operands, varying, strict=True)
                    )
                )
            )
            regions.append(Region(body))
        new = scf.IfOp(self.scalar(op.cond), types, regions[0], regions[1])
        self.rewriter.insert(new, point)
        for old, result, vec in zip(op.results, new.results, varying, strict=True):
            result.name_hint = old.name_hint
            (self.vectors if vec else self.mapper)[old] = result

    def loop(self, loop: scf.ForOp, point: InsertPoint) -> None:
        """Emit a copy of the inner `scf.for` `loop` at `point`, its lane-varying carried
        values as vectors and its body vectorized."""
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
        self.rewriter.insert(new, point)
        for old, result, vec in zip(loop.results, new.results, carried, strict=True):
            result.name_hint = old.name_hint
            (self.vectors if vec else self.mapper)[old] = result


