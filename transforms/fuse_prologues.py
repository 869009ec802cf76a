"""Cheap producers computed where they are read: the policy and the IR builders behind
`fuse-elementwise`'s `InlineProducerIntoRoot` and `RecomputeInReaders`.

A *prologue* is a producer left a kernel of its own after the grouping rules: a parallel
`linalg.generic`, or a `layout.fused` group without reductions whose generics `collapsed`
turns into one generic (each stage inlined into the next: LayerNorm's centred square
``(x - mean) * (x - mean)``, which the grouping made one group). A reader (a generic or a
group) computes it where it reads it (`computing_reads`): each generic of the reader that
reads the value runs the producer's body on the producer's inputs, read at the composed
maps of `generic_inlining`. Exact for any read pattern (a window, a broadcast, a row of a
reduction): the producer's inputs exist before either kernel runs, and the same ops run on
the same values in the same order.

The cost is the producer's body once per read, so only a cheap body qualifies
(`prologue_problem`): at most `CHEAP_PROLOGUE_LIMIT` of `CHEAP_PROLOGUE_OPS`, precision
conversions free. A reduction, a gather (`tensor.extract`), a division or a
transcendental is never repeated per read.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from physlayout.dialects.layout_fused import FusedOp, YieldOp
from physlayout.transforms.generic_inlining import inlined, producer_body_ops, producer_problem

__all__ = [
    "CHEAP_PROLOGUE_LIMIT",
    "CHEAP_PROLOGUE_OPS",
    "PROLOGUE_CONVERSIONS",
    "collapsed",
    "computing_reads",
    "discard",
    "prologue_problem",
]

CHEAP_PROLOGUE_OPS = frozenset(
    {"arith.addf", "arith.subf", "arith.mulf", "arith.negf", "arith.maximumf", "arith.minimumf"}
)
"""The ops a root may repeat per read of a producer's element (one ALU op beside the
multiply-add it feeds), at most `CHEAP_PROLOGUE_LIMIT` of them."""
CHEAP_PROLOGUE_LIMIT = 2
PROLOGUE_CONVERSIONS = frozenset({"arith.extf", "arith.truncf"})
"""Precision conversions a prologue may hold besides (f16 storage: ``truncf(extf(x) *
extf(s))``; torch's f64 LayerNorm statistics: ``extf(x) - mean``); the root converts what
it loads anyway, so they do not count to the limit."""


def prologue_problem(producer: GenericOp, read: AffineMap | None = None) -> str | None:
    """Why `producer` should not be computed by the root that reads it (None: it may). A
    root that reads each element once at `read` (every loop once, bare: a mean pool over
    it) repeats nothing, so any body qualifies but a gather's (`tensor.extract`);
    otherwise only a cheap one does (repeated per read)."""
    problem = producer_problem(producer)
    if problem is not None:
        return problem
    if read is not None and _reads_each_once(read, producer.res[0].type):
        extract = "tensor.extract" in producer_body_ops(producer)
        return "its body gathers (tensor.extract)" if extract else None
    ops = [name for name in producer_body_ops(producer) if name not in PROLOGUE_CONVERSIONS]
    costly = [name for name in ops if name not in CHEAP_PROLOGUE_OPS]
    if costly:
        return f"its body has '{costly[0]}', which the root would repeat per read"
    if len(ops) > CHEAP_PROLOGUE_LIMIT:
        return f"its body has {len(ops)} ops, which the root would repeat per read"
    return None


def _reads_each_once(read: AffineMap, produced: Attribute) -> bool:
    """Whether a root reading a tensor of type `produced` at `read` reads each element at
    one point of its loops: every loop once, bare, and else only 0 on axes of extent 1."""
    if not isinstance(produced, TensorType) or read.num_symbols:
        return False
    shape = produced.get_shape()
    dims: list[int] = []
    for expr, extent in zip(read.results, shape, strict=True):
        if isinstance(expr, AffineDimExpr):
            dims.append(expr.position)
        elif not (isinstance(expr, AffineConstantExpr) and expr.value == 0 and extent == 1):
            return False
    return sorted(dims) == list(range(read.num_dims))


def discard(op: Operation) -> None:
    """Erase `op`, a detached op built here and not used (a temporary)."""
    op.drop_all_references()
    op.erase(safe_erase=False)


def collapsed(group: FusedOp) -> GenericOp | None:
    """A detached generic that computes the value of `group` from the group's inputs, when
    the group holds only parallel generics (`producer_problem` None for each) and empty
    tensors: each generic inlined into the next reader, last to first. None otherwise (a
    reduction, a fill, a pad). Its output operand is a placeholder: read it as a producer
    only (`computing_reads`), then `discard` it."""
    block = group.block
    generics: list[GenericOp] = []
    for op in block.ops:
        if isinstance(op, EmptyOp | YieldOp):
            continue
        if not isinstance(op, GenericOp) or producer_problem(op) is not None:
            return None
        generics.append(op)
    last = block.last_op
    if not generics or not isinstance(last, YieldOp) or last.value is not generics[-1].res[0]:
        return None
    mapper: dict[SSAValue, SSAValue] = dict(zip(block.args, group.inputs, strict=True))
    clones = [g.clone(value_mapper=mapper) for g in generics]
    current = clones[-1]
    for earlier in reversed(clones[:-1]):
        new = _computing(earlier, current, earlier.res[0], earlier.inputs)
        if new is not current and current not in clones:
            discard(current)
        current = new
    for clone in reversed(clones):
        if clone is not current:
            discard(clone)
    return current


def _computing(
    producer: GenericOp, consumer: GenericOp, value: SSAValue, sources: Sequence[SSAValue]
) -> GenericOp:
    """`consumer` (a detached or top-level generic, left unchanged) with every input that
    reads `value` computing `producer`'s body instead, on `sources` (the producer's inputs
    as the consumer sees them): one copy of the body per distinct read map."""
    current = consumer
    while True:
        reads = [k for k, v in enumerate(current.inputs) if v is value]
        if not reads:
            return current
        maps = current.indexing_maps.data
        same = [k for k in reads if maps[k] == maps[reads[0]]]
        new = inlined(producer, current, same, sources)
        if current is not consumer:
            discard(current)
        current = new


def computing_reads(
    user: GenericOp | FusedOp, value: SSAValue, producer: GenericOp
) -> GenericOp | FusedOp | None:
    """A new `user` (detached: the caller replaces `user` with it, or discards it) that
    computes `producer`'s body where it read `value` (the producer's result), reading the
    producer's inputs instead. In a group, the producer's tensor inputs take the place of
    `value` among the group's inputs (an input the group already has is read once), and
    every generic that read it runs the body. None when `user` also reads `value` otherwise
    (as an output's initial value, or by an op of its group that is not a generic's input);
    whether the new group is one legal kernel is the caller's check."""
    if isinstance(user, GenericOp):
        if value in user.outputs:
            return None
        return _computing(producer, user, value, producer.inputs)
    tensors = [v for v in producer.inputs if isinstance(v.type, TensorType)]
    if any(isinstance(t.owner, EmptyOp) for t in tensors):
        return None
    old = user.block
    hidden = {a for a, v in zip(old.args, user.inputs, strict=True) if v is value}
    for arg in hidden:
        for use in arg.uses:
            reader = use.operation
            if not isinstance(reader, GenericOp) or use.index >= len(reader.inputs):
                return None
    order = list(dict.fromkeys(t for v in user.inputs for t in (tensors if v is value else (v,))))
    block = Block(arg_types=[v.type for v in order])
    args = dict(zip(order, block.args, strict=True))
    for outer, arg in args.items():
        arg.name_hint = outer.name_hint
    mapper: dict[SSAValue, SSAValue] = {
        a: args[v] for a, v in zip(old.args, user.inputs, strict=True) if v is not value
    }
    sources = [args.get(v, v) for v in producer.inputs]
    for op in old.ops:
        clone = op.clone(value_mapper=mapper)
        reading = [v for v in clone.operands if v in hidden]
        if not reading:
            block.add_op(clone)
            continue
        assert isinstance(clone, GenericOp)
        for arg in dict.fromkeys(reading):
            new = _computing(producer, clone, arg, sources)
            discard(clone)
            clone = new
        assert isinstance(clone, GenericOp)
        mapper[op.results[0]] = clone.results[0]
        clone.results[0].name_hint = op.results[0].name_hint
        block.add_op(clone)
    fused = FusedOp(order, user.result.type, Region(block))
    fused.attributes.update(user.attributes)
    fused.result.name_hint = user.result.name_hint
    return fused
