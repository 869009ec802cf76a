"""Index tensors computed where they are read (patterns of `normalize-graph`).

torch-mlir builds a gather's indices as tensors: a resize's channel index is the `arange`
``linalg.generic outs(tensor<Cxi64>) { yield index_cast(linalg.index 0) }`` reshaped to
``Cx1x1``, its batch index a tensor of zeros, and the gather wraps every index read from
them with ``select(i < 0, i + n, i)``. Read from a tensor, the channel index is data to
every later pass: `lift-transform-params` prepares it as a parameter, and a gather whose
channel (a texel's lane) comes from a loaded value cannot run on whole texels, so the
gather stays a kernel of its own that stores its result for the next one to read.

What it rewrites (inside `linalg.generic`s of a graph function):

- `InlineIndexFunction`: an input of a generic produced (directly or through
  `tensor.expand_shape`s) by an *index function* -- a generic with no inputs, only parallel
  loops, a permutation as output map, and a body of at most `MAX_INDEX_OPS` ops among
  `linalg.index`, constants and integer `addi`/`subi`/`muli`/`index_cast`/`extsi`/`trunci`
  (an `arange`, a tensor of zeros) -- is computed by the reader from its own loop indices:
  the producer's ``linalg.index j`` becomes component ``j`` of ``P_out^-1 . E . C`` (``C``
  the reader's map, ``E`` the expand_shape's linearization of each reassociation group),
  written with `linalg.index`, constants, `addi` and `muli` (a map needing a division is
  left alone). The input is dropped; the reader keeps every loop extent (each of its loops
  must appear bare in another of its maps, else it is left alone).
- `FoldDecidedSelect`: an `arith.select` in a generic's body whose condition `ValueBounds`
  decides (the wraparound ``i < 0`` of an index proven non-negative) -> the operand it
  picks; the condition's ops left unused are erased.
- `FoldIndexCastPair`: ``index_cast(index_cast(x : index -> i64) : i64 -> index)`` ->
  ``x`` (an `index` is 64 bits wide: the pair is the identity).

Guarantees: every generic computes the same elements (an index function's element at a
point is the same integer expression of that point, wherever it is evaluated; a decided
select picks the operand it would pick for every value the analysis admits); the producer
and the reshapes are erased when nothing else reads them; a second run changes nothing.
"""

from __future__ import annotations

from math import prod

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import AffineMapAttr, IndexType, IntegerAttr, IntegerType
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from physlayout.dialects.layout_graph import static_shape
from physlayout.transforms.generic_inlining import (
    erase_dead_body_ops,
    is_strict_permutation,
    producer_point,
)
from physlayout.transforms.lift_transform_params import pure_on_tensors
from physlayout.transforms.value_bounds import ValueBounds

MAX_INDEX_OPS = 8
"""The most ops (its yield aside) an index function's body may have to be recomputed by
its readers."""

INDEX_FUNCTION_OPS: frozenset[str] = frozenset(
    {
        "linalg.index", "arith.constant", "arith.index_cast", "arith.addi", "arith.subi",
        "arith.muli", "arith.extsi", "arith.trunci",
    }
)  # fmt: skip
"""The ops an index function's body may hold."""


def is_index_function(op: GenericOp) -> bool:
    """Whether `op` is an index function (module docstring): its element is an integer
    expression of its loop indices alone."""
    if op.inputs or len(op.outputs) != 1 or len(op.results) != 1:
        return False
    if any(str(t.data) != "parallel" for t in op.iterator_types.data):
        return False
    if not is_strict_permutation(op.indexing_maps.data[-1].data):
        return False
    block = op.body.block
    if block.args[0].uses:
        return False
    ops = [inner for inner in block.ops if not isinstance(inner, YieldOp)]
    if len(ops) > MAX_INDEX_OPS or any(inner.name not in INDEX_FUNCTION_OPS for inner in ops):
        return False
    for inner in ops:  # values from above: constants only
        for operand in inner.operands:
            owner = operand.owner
            inside = isinstance(owner, Operation) and owner.parent_block() is block
            if not inside and not isinstance(owner, arith.ConstantOp):
                return False
    return True


def _expand_map(op: tensor.ExpandShapeOp) -> AffineMap | None:
    """The source index of each element of `op`'s result: each reassociation group's
    indices linearized row-major over the result's extents (None: a dynamic shape)."""
    shape = static_shape(op.result)
    if shape is None:
        return None
    groups = [[a.value.data for a in g.data] for g in op.reassociation.data]
    results: list[AffineExpr] = []
    for group in groups:
        expr: AffineExpr = AffineConstantExpr(0)
        for position, axis in enumerate(group):
            stride = prod(shape[a] for a in group[position + 1 :])
            expr = expr + AffineDimExpr(axis) * stride
        results.append(expr)
    return AffineMap(len(shape), 0, tuple(results))


def _index_function_read(value: SSAValue, read: AffineMap) -> tuple[GenericOp, AffineMap] | None:
    """The index function `value` comes from (through `tensor.expand_shape`s) and the map
    from the reader's loops to the function's element indices; None for anything else."""
    while isinstance(value.owner, tensor.ExpandShapeOp):
        expand = _expand_map(value.owner)
        if expand is None:
            return None
        read = expand.compose(read)
        value = value.owner.src
    producer = value.owner
    if not isinstance(producer, GenericOp) or not is_index_function(producer):
        return None
    return producer, read


def _materialize(
    expr: AffineExpr, block: Block, cache: dict[AffineExpr, SSAValue]
) -> SSAValue | None:
    """`expr` (dimensions: the generic's loops) computed by ops appended to `block`, or
    None for a division or a modulus."""
    if expr in cache:
        return cache[expr]
    new: Operation
    match expr:
        case AffineDimExpr():
            new = IndexOp(expr.position)
        case AffineConstantExpr():
            new = arith.ConstantOp(IntegerAttr(expr.value, IndexType()))
        case AffineBinaryOpExpr(kind=AffineBinaryOpKind.Add | AffineBinaryOpKind.Mul):
            lhs = _materialize(expr.lhs, block, cache)
            rhs = _materialize(expr.rhs, block, cache)
            if lhs is None or rhs is None:
                return None
            kind = arith.AddiOp if expr.kind is AffineBinaryOpKind.Add else arith.MuliOp
            new = kind(lhs, rhs)
        case _:
            return None
    block.add_op(new)
    cache[expr] = new.results[0]
    return new.results[0]


def _keeps_extents(op: GenericOp, dropped: int) -> bool:
    """Whether every loop of `op` still appears bare in a map of an operand other than
    input `dropped` (so its extent can still be read off the operands)."""
    maps = [m.data for k, m in enumerate(op.indexing_maps.data) if k != dropped]
    bare = {r.position for m in maps for r in m.results if isinstance(r, AffineDimExpr)}
    return bare >= set(range(len(op.iterator_types.data)))


def _erase_unused(rewriter: PatternRewriter, values: list[SSAValue]) -> None:
    """Erase the side-effect-free ops defining `values` that nothing reads any more, and
    then the ops defining their operands, transitively."""
    while values:
        owner = values.pop().owner
        if not isinstance(owner, Operation) or owner.parent is None:
            continue
        if any(r.uses for r in owner.results) or not pure_on_tensors(owner):
            continue
        operands = list(owner.operands)
        rewriter.erase(owner)
        values.extend(operands)


class InlineIndexFunction(RewritePattern):
    """The inputs produced by index functions -> computed in the reader, whose body's
    decided selects and cast pairs are then folded (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        current, dropped = op, list[SSAValue]()
        while True:
            step = _inline_one(current)
            if step is None:
                break
            if current is not op:
                current.erase()
            dropped.append(current.inputs[step[1]])
            current = step[0]
        if current is op:
            return
        _fold_body(current)
        rewriter.replace(op, current)
        _erase_unused(rewriter, dropped)


def _inline_one(op: GenericOp) -> tuple[GenericOp, int] | None:
    """`op` with its first input that an index function produces computed in its body, and
    that input's position; None when no input qualifies."""
    maps = [m.data for m in op.indexing_maps.data]
    for k, value in enumerate(op.inputs):
        found = _index_function_read(value, maps[k])
        if found is None or not _keeps_extents(op, k):
            continue
        producer, read = found
        point = producer_point(producer.indexing_maps.data[-1].data, read)
        new = _inlined(op, k, producer, point)
        if new is not None:
            return new, k
    return None


def _fold_body(op: GenericOp) -> None:
    """Fold the decided selects and the cast pairs of the body of `op`, a generic being
    built (not yet in the IR), and erase the body ops left unused."""
    bounds = ValueBounds()
    block = op.body.block
    for inner in list(block.ops):
        folded = None
        if isinstance(inner, arith.SelectOp):
            folded = decided_pick(inner, bounds)
        elif isinstance(inner, arith.IndexCastOp):
            folded = cast_pair_source(inner)
        if folded is not None:
            inner.results[0].replace_all_uses_with(folded)
    erase_dead_body_ops(block)


def decided_pick(op: arith.SelectOp, bounds: ValueBounds) -> SSAValue | None:
    """The operand `op` picks when `bounds` decides its condition, else None."""
    decided = bounds.of(op.cond)
    if decided == (1, 1):
        return op.lhs
    if decided == (0, 0):
        return op.rhs
    return None


def cast_pair_source(op: arith.IndexCastOp) -> SSAValue | None:
    """``x`` when `op` is ``index_cast(index_cast(x : index -> iN) : iN -> index)`` with
    ``N >= 64`` (the identity), else None."""
    inner = op.input.owner
    if not isinstance(op.result.type, IndexType) or not isinstance(inner, arith.IndexCastOp):
        return None
    middle = inner.result.type
    if not isinstance(middle, IntegerType) or middle.width.data < 64:
        return None
    return inner.input if isinstance(inner.input.type, IndexType) else None


def _inlined(op: GenericOp, k: int, producer: GenericOp, point: AffineMap) -> GenericOp | None:
    """`op` without input `k`, its body computing `producer`'s element at `point` (the
    producer's loop indices over `op`'s loops) first; None when `point` needs a
    division."""
    old = op.body.block
    kept = [j for j in range(len(op.inputs)) if j != k]
    block = Block(arg_types=[a.type for j, a in enumerate(old.args) if j != k])
    cache: dict[AffineExpr, SSAValue] = {}
    indices: list[SSAValue] = []
    for expr in point.results:
        value = _materialize(expr, block, cache)
        if value is None:
            return None
        indices.append(value)
    mapper: dict[SSAValue, SSAValue] = {}
    produced: SSAValue | None = None
    for inner in producer.body.block.ops:
        if isinstance(inner, YieldOp):
            produced = mapper.get(inner.operands[0], inner.operands[0])
            break
        if isinstance(inner, IndexOp):
            mapper[inner.result] = indices[inner.dim.value.data]
            continue
        block.add_op(inner.clone(value_mapper=mapper))
    assert produced is not None
    mapper = {a: block.args[n] for n, a in enumerate(a for j, a in enumerate(old.args) if j != k)}
    mapper[old.args[k]] = produced
    for inner in old.ops:
        block.add_op(inner.clone(value_mapper=mapper))
    maps = [m for j, m in enumerate(op.indexing_maps.data) if j != k]
    new = GenericOp(
        [op.inputs[j] for j in kept], op.outputs, Region(block),
        [AffineMapAttr(m.data) for m in maps], op.iterator_types, op.result_types,
    )  # fmt: skip
    new.attributes.update(op.attributes)
    for before, after in zip(op.results, new.results, strict=True):
        after.name_hint = before.name_hint
    return new


class FoldDecidedSelect(RewritePattern):
    """A select in a generic's body whose condition `ValueBounds` decides -> the operand
    it picks (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.parent_op(), GenericOp):
            return
        picked = decided_pick(op, ValueBounds())
        if picked is None:
            return
        others = [op.cond, op.rhs if picked is op.lhs else op.lhs]
        rewriter.replace(op, [], [picked])
        _erase_unused(rewriter, others)


class FoldIndexCastPair(RewritePattern):
    """``index_cast(index_cast(x : index -> i64) : i64 -> index)`` -> ``x``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.IndexCastOp, rewriter: PatternRewriter) -> None:
        source = cast_pair_source(op)
        if source is None:
            return
        inner = op.input
        rewriter.replace(op, [], [source])
        _erase_unused(rewriter, [inner])
