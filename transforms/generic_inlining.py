"""Inline an elementwise `linalg.generic` into the generic that reads it (MLIR's
producer-consumer elementwise fusion): the consumer computes the producer's element where
it reads it, from the producer's own inputs, and the producer's tensor is never built.

`inline_problem(producer, consumer, index)` says why input `index` of `consumer` cannot take
`producer`'s body (None: it can); `inlined(...)` builds the new consumer. The policy (when
recomputing the producer's body per read is worth a tensor and a kernel less) is the
caller's: `normalize-graph` inlines a producer whose inputs the consumer already reads at
the same indices (torch-mlir's SiLU, ``x * sigmoid(x)``), `fuse-elementwise` a cheap
producer into a reduction root (squeeze-excite's ``x * scale`` into the next convolution).

Exact: the producer has only parallel loops and writes its output at a permutation of
them, so the element the consumer reads at iteration ``i`` (its map ``C``) was computed at
the one producer point ``P_out^-1(C(i))``, from input ``j`` at ``P_j(P_out^-1(C(i)))``; the
new consumer reads input ``j`` at that composed map and runs the producer's body ops, then
its own, in the same order on the same values: results are bit for bit the same, whatever
the consumer's read pattern (a window, a broadcast, a reduction), since the producer's
inputs exist before either op runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import AffineMapAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.traits import is_side_effect_free

__all__ = [
    "erase_dead_body_ops",
    "inline_problem",
    "inlined",
    "is_strict_permutation",
    "producer_body_ops",
    "producer_point",
    "producer_problem",
    "producer_reads",
]


def is_strict_permutation(amap: AffineMap) -> bool:
    """Whether `amap` lists each of its dimensions once, bare (no constants, no symbols)."""
    return (
        amap.num_symbols == 0
        and len(amap.results) == amap.num_dims
        and amap.inverse_permutation() is not None
    )


def producer_body_ops(producer: GenericOp) -> list[str]:
    """The names of the ops of `producer`'s body, without its yield."""
    return [op.name for op in producer.body.block.ops if not isinstance(op, LinalgYieldOp)]


def producer_problem(producer: GenericOp) -> str | None:
    """Why `producer`'s element cannot be computed where a consumer reads it (None: it
    can): it must have one result, only parallel loops, an output map that is a permutation,
    and a body without side effects (an assert stays where it is) that reads neither its
    output's initial value nor `linalg.index`."""
    if len(producer.results) != 1 or len(producer.outputs) != 1:
        return "has several results"
    if any(str(t.data) != "parallel" for t in producer.iterator_types.data):
        return "has reduction loops"
    if not is_strict_permutation(producer.indexing_maps.data[-1].data):
        return "writes its output at a map that is not a permutation of its loops"
    block = producer.body.block
    if block.args[len(producer.inputs)].uses:
        return "reads the initial value of its output"
    for op in producer.body.walk():
        if isinstance(op, IndexOp):
            return "reads linalg.index"
        if not isinstance(op, LinalgYieldOp) and not is_side_effect_free(op):
            return f"has a body op with side effects ('{op.name}')"
    return None


def inline_problem(producer: GenericOp, consumer: GenericOp, index: int) -> str | None:
    """Why input `index` of `consumer` cannot compute `producer`'s value in place (None:
    it can): `producer_problem`, and the consumer must be the one reader of its result."""
    if index >= len(consumer.inputs) or consumer.inputs[index].owner is not producer:
        return "is not read as an input of the consumer"
    if len(list(producer.results[0].uses)) != 1:
        return "has other users (it is needed whole)"
    return producer_problem(producer)


def producer_point(producer_out: AffineMap, consumer_read: AffineMap) -> AffineMap:
    """The producer's loops, over the consumer's, at which the producer wrote the element the
    consumer reads: ``P_out^-1 . C`` (`producer_out` a permutation)."""
    inverse = producer_out.inverse_permutation()
    assert inverse is not None
    return inverse.compose(consumer_read)


def producer_reads(producer: GenericOp, consumer_read: AffineMap) -> list[AffineMap]:
    """Where the consumer, reading `producer`'s value at `consumer_read`, reads each input
    of the producer: ``P_j . P_out^-1 . C``."""
    maps = [m.data for m in producer.indexing_maps.data]
    to_producer = producer_point(maps[-1], consumer_read)
    return [amap.compose(to_producer) for amap in maps[: len(producer.inputs)]]


def inlined(
    producer: GenericOp,
    consumer: GenericOp,
    index: int | Sequence[int],
    producer_inputs: Sequence[SSAValue] | None = None,
) -> GenericOp:
    """`consumer` with input `index` (`producer`'s value, `producer_problem` None)
    replaced by `producer`'s inputs (read as `producer_inputs` when given: the same values
    seen from inside a group) at composed maps, its body running the producer's ops first.
    Several indices (all read at the same map: ``x * x``) share one copy of the producer's
    ops. An input the consumer already reads at the same map is read once. The new op
    carries the consumer's attributes; the caller replaces the consumer with it."""
    indices = {index} if isinstance(index, int) else set(index)
    consumer_maps = [m.data for m in consumer.indexing_maps.data]
    first = min(indices)
    assert all(consumer_maps[k] == consumer_maps[first] for k in indices)
    producer_maps = producer_reads(producer, consumer_maps[first])
    sources = list(producer_inputs if producer_inputs is not None else producer.inputs)
    consumer_args = consumer.body.block.args
    producer_args = producer.body.block.args

    inputs: list[SSAValue] = []
    maps: list[AffineMap] = []
    arg_types: list = []  # pyright: ignore[reportMissingTypeArgument, reportUnknownVariableType]
    position: dict[tuple[SSAValue, AffineMap], int] = {}

    def read(value: SSAValue, amap: AffineMap, arg_type: object) -> int:
        key = (value, amap)
        if key not in position:
            position[key] = len(inputs)
            inputs.append(value)
            maps.append(amap)
            arg_types.append(arg_type)  # pyright: ignore[reportUnknownMemberType]
        return position[key]

    consumer_slot: dict[int, int] = {}
    producer_slot: dict[int, int] = {}
    for k, value in enumerate(consumer.inputs):
        if k == first:
            for j, (source, amap) in enumerate(zip(sources, producer_maps, strict=True)):
                producer_slot[j] = read(source, amap, producer_args[j].type)
        if k in indices:
            continue
        consumer_slot[k] = read(value, consumer_maps[k], consumer_args[k].type)
    outputs = len(consumer.outputs)
    out_maps = consumer_maps[len(consumer.inputs) :]
    out_types = [a.type for a in consumer_args[len(consumer.inputs) :]]
    block = Block(arg_types=[*arg_types, *out_types])  # pyright: ignore[reportUnknownArgumentType]

    mapper: dict[SSAValue, SSAValue] = {
        producer_args[j]: block.args[slot] for j, slot in producer_slot.items()
    }
    produced: SSAValue | None = None
    for op in producer.body.block.ops:
        if isinstance(op, LinalgYieldOp):
            produced = mapper.get(op.operands[0], op.operands[0])
            break
        block.add_op(op.clone(value_mapper=mapper))
    assert produced is not None
    mapper = {consumer_args[k]: block.args[slot] for k, slot in consumer_slot.items()}
    for k in indices:
        mapper[consumer_args[k]] = produced
    for o in range(outputs):
        mapper[consumer_args[len(consumer.inputs) + o]] = block.args[len(inputs) + o]
    for op in consumer.body.block.ops:
        block.add_op(op.clone(value_mapper=mapper))

    new = GenericOp(
        inputs,
        consumer.outputs,
        Region(block),
        [AffineMapAttr(m) for m in (*maps, *out_maps)],
        consumer.iterator_types,
        consumer.result_types,
    )
    new.attributes.update(consumer.attributes)
    for old, result in zip(consumer.results, new.results, strict=True):
        result.name_hint = old.name_hint
    return new


def erase_dead_body_ops(block: Block) -> None:
    """Erase the ops of `block` (its terminator aside) whose results are unused and that have
    no effect, last first (so an op only the erased ones read goes too)."""
    for op in reversed(list(block.ops)):
        if op is block.last_op:
            continue
        if all(not r.uses for r in op.results) and is_side_effect_free(op):
            op.detach()
            op.erase()
