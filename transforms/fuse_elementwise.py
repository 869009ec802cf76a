"""fuse-elementwise{remarks=false}: group graph ops so that one kernel computes each group
(TVM's FuseOps, MLIR's elementwise linalg fusion; `dialects/layout_fused.py`).

What it rewrites (in the functions' top-level blocks):

- `FuseIntoProducer`: a consumer (a `linalg.generic` or a `layout.fused` group) and the
  producer of one of its tensor operands (a generic or a group) become one `layout.fused`
  group holding the producer's ops, then the consumer's; a conv followed by bias, batch norm
  (sub/mul/mul/add with per-channel broadcast operands), relu and a residual add ends as one
  group: its epilogue runs on the conv's final accumulator, before its one store;
- `AbsorbAccumulatorStart`: a generic whose output's initial value is a `linalg.fill` or a
  splat dense `arith.constant` that nothing else reads becomes a group holding both, so the
  fill is the accumulator's starting value, not a kernel of its own; `SplitSharedStart`
  first gives each generic its own copy of a fill several generics start from (a fill
  costs nothing to repeat, a kernel of its own costs a launch and a store);
- `FusePadIntoConsumer`: a `layout.pad` read only by inputs of one consumer's root (a
  generic or a group) joins the consumer's group: the root reads the pad's source through
  the padding (a clamped load and a select of the pad value), and the padded tensor is
  never stored. Any read pattern is legal here (a 3x3 window reads neighbours of the pad,
  but the pad is a function of a tensor that exists before the kernel runs).

- `InlineProducerIntoRoot` (after the rules above): a generic left unfused (or a group
  without reductions, as one generic: `fuse_prologues.collapsed`) whose only user is a
  reduction root (a conv, a matmul, a pool, a mean, alone or in its group) and whose body
  is a cheap prologue (at most two of add, sub, mul, neg, max, min, besides conversions;
  any for a root reading each element once: `prologue_problem`) is computed by the root
  (`generic_inlining`): squeeze-excite's ``x * s`` into the projection conv, a relu of an
  argument into the 3x3 conv that reads it, LayerNorm's centred square into the variance's
  sum. The root repeats those ops per read (the reads of a window or of every output
  channel), which costs less than the launch and the store of a tensor; any read pattern
  is exact (the producer's inputs exist before the kernel). A producer that a group can
  take as an epilogue has been taken by then.
- `ReadRelayoutInRoot` (after the rules above): a `layout.crop`, or a `layout.transform`
  that only relabels elements (a bijection of its box that does not raise the rank: a
  blocked layout back to NCHW, a permutation of texels and lanes such as ShuffleNet's
  channel shuffle), or a crop of one, read by one generic only (alone, or in a group: a
  conv, a pool, an elementwise op), is read by that generic from the source at the
  composed map (``M^-1(C(i) + start)``): a model's last relayout to NCHW (and the crop of
  its padded classes) before the global mean pool, a branch's half of a shuffled split
  read by its first convolution. Data movement only, so exact for any read pattern; the
  view is never stored, and the reader's own result keeps its layout. A reader whose loops
  could then no longer be read off its maps, or a group that would no longer be one
  kernel, keeps the view.
- `FuseRelayoutChain`: ``crop(T(x))`` with ``T`` a bijection read only by the crop
  becomes one group whose copy generic reads ``x`` at ``T^-1(i + start)``: one
  data-movement kernel instead of two (the other half of a shuffled split, stored straight
  into the next concat by `legalize-layout`; a conv's padded channels back to NCHW).
- `RecomputeInReaders` (last, with groups as prologues, when no other rule applies): such
  a cheap producer read by several generics or groups (or through a view) is computed by
  EVERY reader where it reads it, reductions included (LayerNorm's f64 ``extf(x)``), so its
  kernel goes; else it is stored for all (`fuse_prologues`).

Legality is PROVEN on the merged group (`fusion_plan.plan_group`, the same check
`legalize-layout` makes): at most one generic with reduction loops (the root) and every value
computed in the group read only by elementwise stages, each at its own output map, so the
iteration that writes element ``e`` reads the element ``e`` the same point of the root nest
computed, after the root's reductions are complete. Fusion is refused (with a remark under
``remarks=true``) when:

- the producer's result has uses outside the consumer (it is needed whole: fusing would
  compute it once per consumer, or store it anyway), unless it is cheap and every reader
  recomputes it (`RecomputeInReaders`, above; a remark says why not);
- the consumer reads a neighbourhood of it (a 3x3 convolution, a pool: reduction loops), a
  broadcast of it, or a transposed copy of it (its read map differs from its output map);
- the group would hold two reductions, a multi-output generic, or a stage that reads its
  own output's initial value;
- the group's result is a texture whose store would not be whole texels;
- the value reaches the consumer through a `layout.copy` or `layout.transform` (a scope or
  layout `annotate-texture-scope`/`convert-layout` decided: fusion never crosses them; a
  root may read through a relayout, above: its own result keeps its layout).

Where it runs: after `realize-scopes`, before `legalize-layout`. The layouts (convert-layout,
flow/fold-layout-rewrites) and the memory scopes (annotate-texture-scope, realize-scopes) are
decided on the unfused graph, tensor by tensor; fusion keeps every decision: a group stores
its result in the scope decided for the consumer's result (its `layout.scope`), at the
element indices the producer would have stored, and the tensors inside a group are never
stored at all. Guarantees: values are unchanged (a group's value is its region's value);
a second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import FillOp, GenericOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from physlayout.dialects.layout_fused import FusedOp, YieldOp
from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp, element_type
from physlayout.dialects.layout_scopes import SCOPE_ATTR, CopyOp, producer_scope
from physlayout.dialects.linalg_generic import generalized
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.transforms.diagnostics import emit_remark
from physlayout.transforms.flow_plan import loop_names
from physlayout.transforms.flow_through_windows import bijection_inverse
from physlayout.transforms.fuse_prologues import (
    collapsed,
    computing_reads,
    discard,
    prologue_problem,
)
from physlayout.transforms.fusion_plan import (
    has_reductions,
    is_gather,
    merge_problem,
    plan_group,
    root_problem,
    splat_init,
    store_problem,
)
from physlayout.transforms.generic_inlining import producer_problem
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a tensor"


def _top_level(op: Operation) -> bool:
    return isinstance(op.parent_op(), func.FuncOp)


@dataclass
class Remarks:
    """The refusals of one run: the last one per producer value, printed at the end for
    the values that were never fused (a group that grows retries its producers)."""

    enabled: bool
    made: dict[SSAValue, tuple[Operation | None, str]] = field(
        default_factory=dict[SSAValue, tuple[Operation | None, str]]
    )

    def add(self, value: SSAValue, op: Operation | None, message: str) -> None:
        """Record that `value` was not fused, and why (when remarks are enabled)."""
        if self.enabled:
            self.made[value] = (op, message)

    def extend(self, value: SSAValue, op: Operation | None, message: str) -> None:
        """Add `message` to the refusal recorded for `value` (or record it)."""
        if self.enabled:
            earlier = self.made.get(value)
            self.made[value] = (op, f"{earlier[1]}; nor {message}" if earlier else message)

    def emit(self) -> None:
        """Print the remarks (`emit_remark`) of the values still in the IR, unfused."""
        for value, (op, message) in self.made.items():
            owner = value.owner
            if isinstance(owner, Operation) and owner.parent is None:
                continue
            if op is not None and op.parent is None:
                op = None
            emit_remark(FuseElementwisePass.name, op, message)


@dataclass
class GroupBuilder:
    """Builds the block of a new group: outer tensors become block arguments (one per
    value), `tensor.empty` operands are re-created inside."""

    block: Block = field(default_factory=Block)
    inputs: list[SSAValue] = field(default_factory=list[SSAValue])
    args: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])

    def outer(self, value: SSAValue) -> SSAValue:
        """The group's view of the outer tensor `value`."""
        inside = self.args.get(value)
        if inside is not None:
            return inside
        owner = value.owner
        if isinstance(owner, EmptyOp):
            inside = self.add(owner.clone()).results[0]
        else:
            inside = self.block.insert_arg(value.type, len(self.block.args))
            inside.name_hint = value.name_hint
            self.inputs.append(value)
        self.args[value] = inside
        return inside

    def add(self, op: Operation) -> Operation:
        """Append `op` to the group's block."""
        self.block.add_op(op)
        return op

    def clone(self, op: Operation, substitutions: dict[SSAValue, SSAValue]) -> SSAValue:
        """Clone the group `op` (a generic, with an absorbable start, or a `layout.fused`)
        into the block, its operand `v` read as `substitutions[v]` where given; returns
        the clone of its result."""
        mapper: dict[SSAValue, SSAValue] = {}

        def operand(value: SSAValue) -> SSAValue:
            if value in substitutions:
                return substitutions[value]
            return self.outer(value)

        if isinstance(op, FusedOp):
            for arg, value in zip(op.block.args, op.inputs, strict=True):
                mapper[arg] = operand(value)
            for inner in op.block.ops:
                if isinstance(inner, YieldOp):
                    return mapper[inner.value]
                self.add(inner.clone(value_mapper=mapper))
            raise AssertionError("layout.fused verified to end in layout.yield")
        assert isinstance(op, GenericOp)
        start = absorbable_start(op)
        for value in op.operands:
            if not isinstance(value.type, TensorType) or value in mapper:
                continue
            if start is not None and value is start.results[0]:
                mapper[value] = self._clone_start(start)
                continue
            mapper[value] = operand(value)
        return self.add(op.clone(value_mapper=mapper)).results[0]

    def _clone_start(self, start: Operation) -> SSAValue:
        mapper = {v: self.outer(v) for v in start.operands if isinstance(v.type, TensorType)}
        return self.add(start.clone(value_mapper=mapper)).results[0]

    def finish(self, result: SSAValue, attributes_from: Operation) -> FusedOp:
        """The group yielding `result` (its scope that of `attributes_from`'s result)."""
        self.block.add_op(YieldOp(result))
        fused = FusedOp(self.inputs, result.type, Region(self.block))
        scope = attributes_from.attributes.get(SCOPE_ATTR)
        if isinstance(scope, StringAttr):
            fused.attributes[SCOPE_ATTR] = scope
        return fused


@dataclass
class AdoptedGroup:
    """A group's own block taken out of it to grow, instead of a clone of the group:
    `builder` is in the state `GroupBuilder().clone(group, {})` leaves a new builder in (the
    same block arguments, one per input in order, named as the inputs; the same ops, the
    same order, `result` the value the group yields; its terminator taken out, without
    operands, so that `result` has no use but those in the block), without copying its
    ops. Only a group whose inputs are distinct and none a `tensor.empty` (those a new
    builder would merge or re-create inside) is adopted. Until `give_back`, the group has
    no block, so it is erased (its result replaced: `announce_removal` first) or given
    its block back before anything reads it."""

    group: FusedOp
    builder: GroupBuilder
    result: SSAValue
    terminator: Operation
    kept: Operation | None
    """The group's last op before its terminator (None: it had no other)."""
    hints: list[str | None]

    @staticmethod
    def of(group: FusedOp) -> AdoptedGroup | None:
        """The group's block adopted, or None when a new builder would make another."""
        inputs = list(group.inputs)
        if len(set(inputs)) != len(inputs) or any(isinstance(v.owner, EmptyOp) for v in inputs):
            return None
        block = group.block
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            return None
        hints = [arg.name_hint for arg in block.args]
        for arg, value in zip(block.args, inputs, strict=True):
            arg.name_hint = value.name_hint
        result = terminator.value
        block.detach_op(terminator)
        terminator.operands = ()  # the yielded value gets no use from outside the block
        group.body.detach_block(block)
        builder = GroupBuilder(block, inputs, dict(zip(inputs, block.args, strict=True)))
        return AdoptedGroup(group, builder, result, terminator, block.last_op, hints)

    def announce_removal(self, fused: FusedOp, rewriter: PatternRewriter) -> None:
        """Tell the walker that the group is removed while it holds the block again (and
        that its terminator is, which left the block), before `_erase_dead` erases it: a
        walker drops from its worklist the ops nested in a removed op, and a cloned
        group's ops would have left the worklist so. The block returns to `fused` after;
        the ops added to it are new, in no worklist. (The notice of the erasure itself
        then repeats the first: it pushes the same operand producers, already pushed, and
        drops the group, already dropped.)"""
        block = fused.block
        fused.body.detach_block(block)
        self.group.body.add_block(block)
        rewriter.handle_operation_removal(self.group)
        rewriter.handle_operation_removal(self.terminator)  # no operands: nothing pushed
        self.group.body.detach_block(block)
        fused.body.add_block(block)
        self.terminator.erase()

    def give_back(self, fused: FusedOp) -> None:
        """Undo the adoption after `fused` (the builder's finished group) was refused: erase
        what the builder added and `fused`, and return the block, as it was, to the group."""
        block = self.builder.block
        fused.body.detach_block(block)
        fused.erase()
        while (last := block.last_op) is not self.kept:
            assert last is not None
            block.erase_op(last)
        while len(block.args) > len(self.hints):
            block.erase_arg(block.args[-1])
        for arg, hint in zip(block.args, self.hints, strict=True):
            arg.name_hint = hint
        self.terminator.operands = (self.result,)
        block.add_op(self.terminator)
        self.group.body.add_block(block)


def absorbable_start(op: GenericOp) -> Operation | None:
    """The `linalg.fill` / splat constant initializing `op`'s one output, when only `op`
    reads it and `op` writes every element once (so it is the accumulator's start)."""
    if len(op.outputs) != 1 or root_problem(op) is not None:
        return None
    owner = op.outputs[0].owner
    if not isinstance(owner, Operation) or not splat_init(owner) or not _top_level(owner):
        return None
    if len(list(owner.results[0].uses)) != 1:
        return None
    return owner


def _erase_dead(op: Operation, rewriter: PatternRewriter) -> None:
    """Erase `op` if nothing uses it, then the init producers it was the last user of."""
    if op.parent is None or any(r.uses for r in op.results):
        return
    owners = [v.owner for v in op.operands]
    rewriter.erase(op)
    for owner in owners:
        if isinstance(owner, EmptyOp | FillOp | arith.ConstantOp) and _top_level(owner):
            _erase_dead(owner, rewriter)


def _group_problem(fused: FusedOp, result: SSAValue) -> str | None:
    """Why `fused` (replacing the op whose result is `result`) is not one kernel: its
    `plan_group` problem, or its store into `result`'s scope (`_store_problem`)."""
    plan = plan_group(fused)
    return plan if isinstance(plan, str) else store_problem(plan, producer_scope(result))


@dataclass
class FuseIntoProducer(RewritePattern):
    """A consumer and the producer of one of its tensor operands -> one group (module
    docstring), when the merged group is proven legal."""

    remarks: Remarks

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GenericOp | FusedOp) or not _top_level(op) or len(op.results) != 1:
            return
        operands = op.inputs
        for value in dict.fromkeys(operands):
            if not isinstance(value, OpResult) or not isinstance(value.type, TensorType):
                continue
            producer = value.op
            if isinstance(producer, CopyOp | TransformOp):
                self._decided(op, value, producer)
                continue
            if not isinstance(producer, GenericOp | FusedOp) or not _top_level(producer):
                continue
            if self._fuse(op, value, producer, rewriter):
                return

    def _decided(self, consumer: Operation, value: SSAValue, rewrite: Operation) -> None:
        source = rewrite.operands[0]
        if not isinstance(source.owner, GenericOp | FusedOp):
            return
        what = (
            f"a copy into {producer_scope(value)} (a decided scope)"
            if isinstance(rewrite, CopyOp)
            else "a layout.transform (a decided layout)"
        )
        self.remarks.add(
            source,
            consumer,
            f"{_name(source)} is not fused into its consumer: it reaches it through {what}",
        )

    def _recomputed(self, value: OpResult, producer: Operation, users: set[Operation]) -> bool:
        """Whether `value`, a gather (`is_gather`) read by several `users`, is read by each of
        them at its own iteration point (`merge_problem`): each consumer's group then
        recomputes it (one load, exact), and it is stored only while some user has not
        taken it. A gather any user reads otherwise (a window, a broadcast, a shifted read)
        is stored for all of them."""
        for user in users:
            if not isinstance(user, GenericOp | FusedOp) or not _top_level(user):
                self.remarks.add(
                    value,
                    user,
                    f"{_name(value)} is not recomputed by its readers: it is used by "
                    f"'{user.name}', so it is stored",
                )
                return False
            problem = merge_problem(producer, user, value)
            if problem is not None:
                self.remarks.add(
                    value,
                    user,
                    f"{_name(value)} is not recomputed by its {len(users)} readers: {problem}, "
                    "so it is stored",
                )
                return False
        return True

    def _fuse(
        self, consumer: Operation, value: OpResult, producer: Operation, rewriter: PatternRewriter
    ) -> bool:
        users = {use.operation for use in value.uses}
        if len(producer.results) != 1:
            self.remarks.add(
                value, consumer, f"{_name(value)} is not fused: its producer has several results"
            )
            return False
        gather = isinstance(producer, GenericOp) and is_gather(producer)
        if users != {consumer} and gather and not self._recomputed(value, producer, users):
            return False
        if users != {consumer} and not gather:
            self.remarks.add(
                value,
                consumer,
                f"{_name(value)} is not fused into {_name(consumer.results[0])}: it has "
                f"{len(users)} users, so it is needed whole (fusing would compute it once per "
                "consumer)",
            )
            return False
        problem = merge_problem(producer, consumer, value)
        if problem is not None:
            self.remarks.add(
                value,
                consumer,
                f"{_name(value)} is not fused into {_name(consumer.results[0])}: {problem}",
            )
            return False
        adopted = AdoptedGroup.of(producer) if isinstance(producer, FusedOp) else None
        if adopted is not None:
            builder, produced = adopted.builder, adopted.result
        else:
            builder = GroupBuilder()
            produced = builder.clone(producer, {})
        result = builder.clone(consumer, {value: produced})
        fused = builder.finish(result, consumer)
        problem = _group_problem(fused, consumer.results[0])
        if problem is not None:
            if adopted is not None:
                adopted.give_back(fused)
            else:
                fused.erase()
            self.remarks.add(
                value,
                consumer,
                f"{_name(value)} is not fused into {_name(consumer.results[0])}: {problem}",
            )
            return False
        fused.result.name_hint = consumer.results[0].name_hint
        rewriter.replace(consumer, fused)
        if adopted is not None:
            adopted.announce_removal(fused, rewriter)
        _erase_dead(producer, rewriter)
        return True


@dataclass
class FusePadIntoConsumer(RewritePattern):
    """A consumer whose root reads a `layout.pad` that nothing else reads -> a group holding
    the pad, read through its padding (module docstring; `fusion_plan.pad_problem`)."""

    remarks: Remarks

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GenericOp | FusedOp) or not _top_level(op) or len(op.results) != 1:
            return
        for value in dict.fromkeys(op.inputs):
            pad = value.owner
            if not isinstance(pad, PadOp) or not _top_level(pad):
                continue
            if {use.operation for use in value.uses} != {op}:
                self.remarks.add(
                    value,
                    op,
                    f"{_name(value)} is not read through its padding: it has other users than "
                    f"{_name(op.results[0])}, so it is stored",
                )
                continue
            builder = GroupBuilder()
            inner = builder.add(pad.clone(value_mapper={pad.input: builder.outer(pad.input)}))
            fused = builder.finish(builder.clone(op, {value: inner.results[0]}), op)
            problem = plan_group(fused)
            if isinstance(problem, str):
                fused.erase()
                self.remarks.add(
                    value, op, f"{_name(value)} is not read through its padding: {problem}"
                )
                continue
            fused.result.name_hint = op.results[0].name_hint
            owners = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
            rewriter.replace(op, fused)
            for owner in owners:
                if isinstance(owner, PadOp | EmptyOp | FillOp | arith.ConstantOp):
                    _erase_dead(owner, rewriter)
            return


@dataclass
class SplitSharedStart(RewritePattern):
    """A `linalg.fill` / splat constant that several generics start their output from ->
    one copy per generic that could absorb it (`absorbable_start`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        if not _top_level(op) or len(op.outputs) != 1 or root_problem(op) is not None:
            return
        owner = op.outputs[0].owner
        if not isinstance(owner, Operation) or not splat_init(owner) or not _top_level(owner):
            return
        if len(list(owner.results[0].uses)) < 2:
            return
        copy = owner.clone()
        rewriter.insert(copy, InsertPoint.before(op))
        rewriter.replace_uses_with_if(
            owner.results[0], copy.results[0], lambda use: use.operation is op
        )


@dataclass
class InlineProducerIntoRoot(RewritePattern):
    """A generic left unfused (or a group without reductions, `collapsed`), whose one user
    is a reduction root (a conv, a matmul, a pool, a mean; alone or the root of a group) ->
    computed by that root where it reads it (`fuse_prologues.computing_reads`:
    squeeze-excite's ``x * scale`` into the projection conv, LayerNorm's centred square into
    the variance's sum), when its body is a cheap prologue (`prologue_problem`). The root
    repeats those ops per read (a 1x1 conv per output texel), so the tensor is never stored
    nor launched."""

    remarks: Remarks
    groups: bool = False
    """Take groups too (a late phase: views read once are read through first)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        kinds = GenericOp | FusedOp if self.groups else GenericOp
        if not isinstance(op, kinds) or not _top_level(op) or len(op.results) != 1:
            return
        reader = _sole_reader(op.results[0])
        if reader is None or not has_reductions(reader[1]):
            return
        user, root, index = reader
        prologue = op if isinstance(op, GenericOp) else collapsed(op)
        if prologue is None:
            return
        problem = prologue_problem(prologue, root.indexing_maps.data[index].data)
        replacement = None if problem else computing_reads(user, op.results[0], prologue)
        if prologue is not op:
            discard(prologue)
        if problem is not None:
            self.remarks.extend(op.results[0], user, f"computed by the root reading it: {problem}")
            return
        if replacement is None or _kernel_problem(replacement, user) is not None:
            if replacement is not None:
                discard(replacement)
            return
        rewriter.replace(user, replacement)
        _erase_dead(op, rewriter)


@dataclass
class RecomputeInReaders(RewritePattern):
    """A cheap producer (`prologue_problem`: a parallel generic, or a group without
    reductions that `collapsed` makes one generic) left a kernel of its own, whose readers
    are all generics or groups (directly, or through a view `ReadRelayoutInRoot` reads
    through) -> computed by each reader where it reads it (`computing_reads`), a reduction
    included: LayerNorm's f64 ``extf(x)``, read by the mean and by the centred square. Only
    when EVERY reader takes it, so its kernel and its tensor go (as a gather's readers
    recompute it, `FuseIntoProducer._recomputed`); else it is stored for all of them."""

    remarks: Remarks
    refused: set[SSAValue] = field(default_factory=set[SSAValue])  # one remark each

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GenericOp | FusedOp) or not _top_level(op) or len(op.results) != 1:
            return
        value = op.results[0]
        users = list(dict.fromkeys(use.operation for use in value.uses))
        prologue = op if isinstance(op, GenericOp) else collapsed(op)
        if not users or prologue is None or producer_problem(prologue) is not None:
            if prologue is not None and prologue is not op:
                discard(prologue)
            return
        made: list[tuple[Operation, Operation]] = []
        problem = prologue_problem(prologue) or self._rebuild(value, users, prologue, made)
        if prologue is not op:
            discard(prologue)
        if problem is not None:
            for _, new in made:
                discard(new)
            if len(users) > 1 and value not in self.refused:
                self.refused.add(value)
                self.remarks.extend(value, None, f"recomputed by its {len(users)} readers: {problem}")
            return
        views = [user for user in users if isinstance(user, TransformOp | CropOp)]
        for old, new in made:
            rewriter.replace(old, new)
        for view in views:
            _erase_view(view, rewriter)
        _erase_dead(op, rewriter)

    @staticmethod
    def _rebuild(
        value: SSAValue,
        users: Sequence[Operation],
        prologue: GenericOp,
        made: list[tuple[Operation, Operation]],
    ) -> str | None:
        """Add to `made` each reader of `value` and its replacement computing `prologue`;
        why one reader cannot (None: all can)."""
        for user in users:
            if isinstance(user, TransformOp | CropOp) and _top_level(user):
                view = relayout_view(user)
                if view is None or view[0] is not value:
                    return f"it is read through '{user.name}', which is not a relabelling view"
                for reader in dict.fromkeys(use.operation for use in user.results[0].uses):
                    through = _read_through(user, reader)
                    if through is None:
                        return f"a reader of its view {_name(user.results[0])} reads it otherwise"
                    new = computing_reads(through, value, prologue)
                    discard(through)
                    if new is None or _kernel_problem(new, reader) is not None:
                        return f"{_name(reader.results[0])} would not be one kernel"
                    made.append((reader, new))
                continue
            if not isinstance(user, GenericOp | FusedOp) or not _top_level(user):
                return f"it is used by '{user.name}'"
            new = computing_reads(user, value, prologue)
            if new is None or _kernel_problem(new, user) is not None:
                return f"{_name(user.results[0])} would not be one kernel"
            made.append((user, new))
        return None


def _kernel_problem(new: GenericOp | FusedOp, old: Operation) -> str | None:
    """Why `new` (replacing `old`) would not be one kernel storing `old`'s result (None: it
    would); a generic is checked as the group of it alone."""
    try:
        new.verify()  # a root's loops must still be read off its maps
    except VerifyException as error:
        return str(error)
    if isinstance(new, FusedOp):
        return _group_problem(new, old.results[0])
    builder = GroupBuilder()
    fused = builder.finish(builder.clone(new, {}), new)
    problem = _group_problem(fused, old.results[0])
    discard(fused)
    return problem


class ReadRelayoutInRoot(RewritePattern):
    """``root(crop(T(x)))``, ``root(T(x))`` or ``root(crop(x))``, for a transform ``T``
    that relabels (`relabelling`) and a view read only by the root -> the root reads ``x``
    at ``M^-1(C(i) + start)`` (module docstring): the view is never stored nor launched."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp | CropOp, rewriter: PatternRewriter) -> None:
        if not _top_level(op) or relayout_view(op) is None:
            return
        reader = _sole_reader(op.results[0])
        if reader is None:
            return
        replacement = _read_through(op, reader[0])
        if replacement is None:
            return
        rewriter.replace(reader[0], replacement)
        _erase_view(op, rewriter)


def _read_through(view: TransformOp | CropOp, user: Operation) -> GenericOp | FusedOp | None:
    """`user` (detached new op), whose root reads the relayout `view` once, reading the
    view's source at the composed map instead (`relayout_view`, `_reading_source`)."""
    found = relayout_view(view)
    if found is None or not isinstance(user, GenericOp | FusedOp) or not _top_level(user):
        return None
    source, read = found
    root, index = _root_read(user, view.results[0])
    if root is None:
        return None
    amap = root.indexing_maps.data[index].data
    names = loop_names(amap.num_dims)
    exprs = read(IndexMap.from_affine_map(amap, names).final_indices)
    new_map = IndexMap(tuple(names), tuple(exprs)).to_affine_map()
    return _reading_source(user, view.results[0], index, source, new_map)


def relayout_view(op: TransformOp | CropOp) -> tuple[SSAValue, Callable[[Sequence[Expr]], list[Expr]]] | None:
    """The tensor `op` reads from (``x`` of ``T(x)`` or ``crop(T(x))``, ``T`` a bijection that
    does not raise the rank, `relabelling`; else the input of a crop) and the map from an
    index of `op`'s result to the index of that tensor that holds its element, or None."""
    start = op.get_start() if isinstance(op, CropOp) else (0,) * len(op.result_shape())
    inner = op.input.owner if isinstance(op, CropOp) else op
    inverse = relabelling(inner) if isinstance(inner, TransformOp) else None
    if isinstance(inner, TransformOp) and inverse is not None:
        return inner.input, lambda indices: inverse.map_exprs(_shifted(indices, start))
    if isinstance(op, CropOp):
        return op.input, lambda indices: _shifted(indices, start)
    return None


def relabelling(op: TransformOp) -> IndexMap | None:
    """The inverse of `op`'s map when `op` only relabels elements: a bijection of its box
    (`bijection_inverse`) that does not raise the rank (a blocked layout back to NCHW, a
    permutation of texels and lanes such as ShuffleNet's channel shuffle); reading through
    a blocking transform would leave a root's loops inside floordivs."""
    if op.map.final_ndim > op.map.ndim:
        return None
    return bijection_inverse(op)


def _shifted(indices: Sequence[Expr], start: Sequence[int]) -> list[Expr]:
    return [e + s if s else e for e, s in zip(indices, start, strict=True)]


class FuseRelayoutChain(RewritePattern):
    """``crop(T(x))``, ``T`` read only by the crop -> one group whose copy generic reads
    ``x`` at ``T^-1(i + start)`` (module docstring): one data-movement kernel instead of
    two, the relabelled tensor never stored. ``P(copy)`` for a bijective transform ``P``
    (PixelShuffle's expand/transpose/collapse, composed into one transform by
    `fold-layout-rewrites`) of such a copy group read only by ``P`` -> the copy reading at
    ``read(P^-1(i))``: ``P`` folds into the copy's indexing, no kernel of its own."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CropOp | TransformOp, rewriter: PatternRewriter) -> None:
        if not _top_level(op) or not op.input.has_one_use():
            return
        element = element_type(op.result)
        chain = _copy_chain(op)
        if chain is None or element is None:
            return
        source, read, inner = chain
        shape = op.result_shape() if isinstance(op, TransformOp) else tuple(op.get_sizes())
        rank = len(shape)
        names = loop_names(rank)
        builder = GroupBuilder()
        outer = builder.outer(source)
        empty = builder.add(EmptyOp([], TensorType(element, shape)))
        block = Block(arg_types=[element, element])
        block.add_op(LinalgYieldOp(block.args[0]))
        copy = GenericOp(
            [outer],
            [empty.results[0]],
            Region(block),
            [
                AffineMapAttr(IndexMap(tuple(names), tuple(read(names))).to_affine_map()),
                AffineMapAttr(AffineMap.identity(rank)),
            ],
            ArrayAttr([IteratorTypeAttr.parallel()] * rank),
            [op.result.type],
        )
        scope = op.attributes.get(SCOPE_ATTR)
        if scope is not None:
            copy.attributes[SCOPE_ATTR] = scope
        builder.add(copy)
        fused = builder.finish(copy.results[0], op)
        try:
            copy.verify()
        except VerifyException:
            fused.erase()
            return
        if _group_problem(fused, op.result) is not None:
            fused.erase()
            return
        fused.result.name_hint = op.result.name_hint
        rewriter.replace(op, fused)
        rewriter.erase(inner)


def _copy_chain(
    op: CropOp | TransformOp,
) -> tuple[SSAValue, Callable[[Sequence[str]], list[Expr]], Operation] | None:
    """For `FuseRelayoutChain`: the tensor the chain ending in `op` copies from, the index
    of it that each result index (named loops) reads, and the op the chain replaces besides
    `op` (read only by `op`); None when `op` ends no such chain."""
    inner = op.input.owner
    if isinstance(op, CropOp):
        if not isinstance(inner, TransformOp):
            return None
        inverse = bijection_inverse(inner)
        if inverse is None:
            return None
        start = op.get_start()
        return (
            inner.input,
            lambda names: inverse.map_exprs(_shifted([Dim(n) for n in names], start)),
            inner,
        )
    if not isinstance(inner, FusedOp):
        return None
    copied = copy_group_read(inner)
    outer_inverse = bijection_inverse(op)
    if copied is None or outer_inverse is None:
        return None
    source, amap = copied
    names_in = loop_names(amap.num_dims)
    read_in = IndexMap.from_affine_map(amap, names_in)
    return (
        source,
        lambda names: read_in.map_exprs(outer_inverse.map_exprs([Dim(n) for n in names])),
        inner,
    )


def copy_group_read(group: FusedOp) -> tuple[SSAValue, AffineMap] | None:
    """The tensor a copy group (one parallel generic yielding its one input, written at the
    identity: what `FuseRelayoutChain` builds) reads and the map it reads it at, or None."""
    ops = [o for o in group.block.ops if not isinstance(o, EmptyOp | YieldOp)]
    if len(ops) != 1 or not isinstance(ops[0], GenericOp) or has_reductions(ops[0]):
        return None
    copy = ops[0]
    body = copy.body.blocks[0]
    terminator = body.last_op
    if len(copy.inputs) != 1 or len(list(body.ops)) != 1 or not isinstance(
        terminator, LinalgYieldOp
    ):
        return None
    if tuple(terminator.operands) != (body.args[0],):
        return None
    maps = [m.data for m in copy.indexing_maps.data]
    if maps[1] != AffineMap.identity(maps[1].num_dims):
        return None
    arg = copy.inputs[0]
    if not isinstance(arg, BlockArgument) or arg.owner is not group.block:
        return None
    return group.inputs[arg.index], maps[0]


def _reading_source(
    user: GenericOp | FusedOp, value: SSAValue, index: int, source: SSAValue, amap: AffineMap
) -> GenericOp | FusedOp | None:
    """`user`, whose root reads `value` as its input `index`, reading `source` at `amap`
    there instead (None: the new group would not be one legal kernel)."""
    new = user.clone()
    if isinstance(new, GenericOp):
        new_root = new
        new.operands[index] = source
    else:
        assert isinstance(user, FusedOp) and isinstance(new, FusedOp)
        position = list(user.inputs).index(value)
        arg = new.block.args[position]
        fresh = new.block.insert_arg(source.type, position)
        fresh.name_hint = source.name_hint
        (use,) = arg.uses
        new_root = use.operation
        assert isinstance(new_root, GenericOp) and use.index == index
        arg.replace_all_uses_with(fresh)
        new.block.erase_arg(arg)
        new.operands[position] = source
    maps = list(new_root.indexing_maps.data)
    maps[index] = AffineMapAttr(amap)
    new_root.indexing_maps = ArrayAttr(maps)
    for old, result in zip(user.results, new.results, strict=True):
        result.name_hint = old.name_hint
    try:
        new_root.verify()  # its loops must still be read off its maps (bare somewhere)
    except VerifyException:
        new.erase()
        return None
    if isinstance(new, FusedOp) and _group_problem(new, user.results[0]) is not None:
        new.erase()
        return None
    return new


def _erase_view(op: Operation, rewriter: PatternRewriter) -> None:
    """Erase the relayout `op` and the transform it crops, once nothing reads them."""
    inner = op.operands[0].owner if isinstance(op, CropOp) else None
    rewriter.erase(op)
    if isinstance(inner, TransformOp) and inner.parent is not None and not inner.result.uses:
        rewriter.erase(inner)


def _sole_reader(value: SSAValue) -> tuple[GenericOp | FusedOp, GenericOp, int] | None:
    """The one user of `value` (a top-level generic or group), the generic of it that reads
    `value`, and at which input (`_root_read`), or None."""
    uses = list(value.uses)
    if len(uses) != 1:
        return None
    user = uses[0].operation
    if not _top_level(user) or not isinstance(user, GenericOp | FusedOp):
        return None
    root, index = _root_read(user, value)
    return None if root is None else (user, root, index)


def _root_read(user: Operation, value: SSAValue) -> tuple[GenericOp | None, int]:
    """The generic of `user` (itself, or the one op of its group) that reads `value` as
    input, and at which input (None: read otherwise, or by several ops)."""
    if isinstance(user, GenericOp):
        reads = [k for k, v in enumerate(user.operands) if v is value]
        return (user, reads[0]) if len(reads) == 1 and reads[0] < len(user.inputs) else (None, 0)
    assert isinstance(user, FusedOp)
    arg = user.block.args[list(user.inputs).index(value)]
    uses = list(arg.uses)
    if len(uses) != 1 or not isinstance(uses[0].operation, GenericOp):
        return None, 0
    reader = uses[0].operation
    if uses[0].index >= len(reader.inputs):
        return None, 0
    return reader, uses[0].index


class GeneralizeNamedOp(RewritePattern):
    """A named linalg op other than `linalg.fill` (a conv, `linalg.add`, ...) -> its
    `linalg.generic` form (attributes kept), so it can be a producer or a consumer; a fill
    stays, to become an accumulator's start."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NamedOperation, rewriter: PatternRewriter) -> None:
        if isinstance(op, FillOp) or not _top_level(op):
            return
        rewriter.replace(op, generalized(op))


class AbsorbAccumulatorStart(RewritePattern):
    """A generic initialized by a fill or splat constant only it reads -> a group of both
    (the fill becomes the accumulator's starting value)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        if not _top_level(op) or absorbable_start(op) is None:
            return
        builder = GroupBuilder()
        fused = builder.finish(builder.clone(op, {}), op)
        if isinstance(plan_group(fused), str):
            fused.erase()
            return
        fused.result.name_hint = op.res[0].name_hint
        start = absorbable_start(op)
        rewriter.replace(op, fused)
        if start is not None:
            _erase_dead(start, rewriter)


@dataclass(frozen=True)
class FuseElementwisePass(PhyslayoutPass):
    """Group producers with their elementwise consumers (module docstring).

    Options:
        remarks (bool, false): say on stderr which fusions were refused, and why.
    """

    name = "fuse-elementwise"

    remarks: bool = False
    """Print a remark for every refused fusion."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        remarks = Remarks(self.remarks)
        RootedWalker(GeneralizeNamedOp(), apply_recursively=False).rewrite_module(op)
        RootedWalker(SplitSharedStart(), apply_recursively=False).rewrite_module(op)
        grouping = RootedWalker(
            GreedyRewritePatternApplier(
                [FuseIntoProducer(remarks), FusePadIntoConsumer(remarks), AbsorbAccumulatorStart()]
            ),
            apply_recursively=True,
        )
        grouping.rewrite_module(op)
        # The rules that follow the grouping make groups and views the grouping may take
        # further (a pad read by a new copy group): repeat until nothing changes, so that a
        # second run of the pass changes nothing. Groups as prologues and recomputing in
        # several readers come last, once no other rule applies: a view read once is read
        # through, a generic read once is inlined, before producers gain readers.
        while True:
            changed = RootedWalker(
                InlineProducerIntoRoot(remarks), apply_recursively=False
            ).rewrite_module(op)
            changed |= RootedWalker(
                ReadRelayoutInRoot(), apply_recursively=False
            ).rewrite_module(op)
            changed |= RootedWalker(
                FuseRelayoutChain(), apply_recursively=False
            ).rewrite_module(op)
            if not changed:
                changed = RootedWalker(
                    GreedyRewritePatternApplier(
                        [InlineProducerIntoRoot(remarks, groups=True), RecomputeInReaders(remarks)]
                    ),
                    apply_recursively=False,
                ).rewrite_module(op)
            if not changed:
                break
            grouping.rewrite_module(op)
        remarks.emit()
