"""normalize-graph: the graph-level ops frontends print (torch-mlir's linalg-on-tensors) ->
the forms the layout passes and `legalize-layout` handle. The first pass of
`physlayout-adreno`; `raise-layout-rewrites` follows it (pads, reshapes, slices, transposes).

What it rewrites:

- ``linalg.broadcast %x dimensions = [..]`` -> the `linalg.generic` with the same meaning
  (all loops parallel, ``%x`` read at the result's indices without the added dimensions,
  body ``yield in``), keeping the op's discardable attributes;
- poolings (``linalg.pooling_*``) and ``linalg.depthwise_conv_2d_nchw_chw`` -> their
  `linalg.generic` form (layout transforms then flow through them);
- ``tensor.concat dim(d) %a, %b, ...`` -> ``tensor.empty`` and one ``tensor.insert_slice``
  per operand at its offset along ``d`` (upstream's decomposition of concat);
- a `linalg.generic` input that is a splat dense tensor `arith.constant` (the rank-0
  ``dense<6.0> : tensor<f32>`` of torch-mlir's relu6) -> the scalar constant in the body,
  the input dropped: no kernel stores the constant tensor on every call;
- ``select(cmpf ugt %x, %c), %x, %c`` in a body (torch-mlir's relu) -> ``maximumf %x, %c``
  when ``%c`` is a constant neither NaN nor -0.0 (bit-exact then), so that the relu runs on
  whole texels;
- ``math.fpowi %x, %n`` with a constant exponent ``|n| <= 64`` -> the multiplies of
  upstream MLIR's own lowering of it (`convert-math-to-funcs`: binary exponentiation,
  ``result *= b`` for each set bit of ``|n|`` from the lowest, ``b *= b`` between them,
  ``1 / result`` for a negative ``n``, ``1`` for ``n = 0``), the same values bit for bit
  (the evaluator computes `fpowi` that way too); OpenCL's `pown` runs 1,500x slower than
  two multiplies on PoCL (torch-mlir's tanh GELU cubes its input);
- a `linalg.generic` whose output map holds the constant 0 on a result axis of extent 1
  (a keepdim reduction, ``(d0, d1, d2, d3) -> (d0, d1, 0, 0)``) -> one more parallel loop
  of extent 1 per such axis, before the reductions (the output map becomes a projected
  permutation, which `flow-layout-rewrites` moves transforms through);
- an elementwise `linalg.generic` whose only user already reads every input of it at the
  same indices, at a permutation of its loops (torch-mlir's SiLU, ``mul(x, sigmoid(x))``) ->
  inlined into that user's body (`generic_inlining`: no operand added, nothing recomputed),
  so that the layout passes see ``silu(0) = 0`` and move padded layouts through it;
- a gather's index tensors (`index_functions`): an input produced by an *index function*
  (a generic with no inputs whose body is `linalg.index` and integer arithmetic: the
  `arange` of a resize's channels, the zeros of its batch) -> computed in the reader from
  its own loop indices (`InlineIndexFunction`), so a gather's channel stays the texel lane's
  index and the gather runs on whole texels; a `select` whose condition `ValueBounds`
  decides (the wraparound ``select(i < 0, i + n, i)`` of an index proven non-negative) ->
  the operand it picks (`FoldDecidedSelect`); ``index_cast(index_cast(x))`` through `i64`
  -> ``x`` (`FoldIndexCastPair`);
- ``cf.assert`` whose condition is a constant true -> erased (xDSL's `AssertTrue`, also in
  `linalg.generic` bodies);
- ``cf.assert %c, "msg"`` in the body of a `linalg.generic` whose loops are all parallel ->
  moved out of the body: a *flags* generic over the same iteration space and inputs computes
  ``extui(%c) : i8`` per point (the body's ops up to the condition, cloned), and
  ``layout.check %flags, "msg"`` fails on the host unless every flag is 1; the assert is
  erased from the original body. Kernels never assert.

Refused (PassFailedException naming the op): an assert in a generic with reduction loops,
or whose condition depends on the generic's outputs (the flags generic could not compute
it from the inputs), or an assert at the top level of a graph function whose condition is
not a constant (a scalar condition the host cannot read from a buffer).

Guarantees: every result keeps its value, and a failing assert still fails (with its
message) before any value computed from the asserted point is returned; a second run
changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, cf, tensor
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    i8,
)
from xdsl.dialects.linalg.abstract_ops import NamedOperation, PoolingOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import BroadcastOp, GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free
from xdsl.transforms.canonicalization_patterns.cf import AssertTrue
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.layout_check import CheckOp
from physlayout.dialects.layout_graph import static_shape
from physlayout.dialects.linalg_generic import generalized
from physlayout.dialects.linalg_named import DepthwiseConv2DNchwChwOp
from physlayout.transforms.fusion_plan import splat_init, splat_scalar
from physlayout.transforms.generic_inlining import (
    erase_dead_body_ops,
    inline_problem,
    inlined,
    is_strict_permutation,
    producer_reads,
)
from physlayout.transforms.index_functions import (
    FoldDecidedSelect,
    FoldIndexCastPair,
    InlineIndexFunction,
)
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker


def _fail(op: Operation, message: str) -> PassFailedException:
    return PassFailedException(f"normalize-graph: '{op.name}' {message}")


class GeneralizeBroadcast(RewritePattern):
    """``linalg.broadcast`` on tensors -> its `linalg.generic`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastOp, rewriter: PatternRewriter) -> None:
        if not op.result or not isinstance(op.init.type, TensorType):
            return
        rank = len(op.init.type.get_shape())
        added = {int(d) for d in op.dimensions.get_values()}
        kept = tuple(AffineDimExpr(d) for d in range(rank) if d not in added)
        maps = [
            AffineMapAttr(AffineMap(rank, 0, kept)),
            AffineMapAttr(AffineMap.identity(rank)),
        ]
        element = op.init.type.get_element_type()
        body = Block(arg_types=[op.input.type.get_element_type(), element])  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        body.add_op(YieldOp(body.args[0]))
        generic = GenericOp(
            [op.input], [op.init], Region(body), maps,
            [IteratorTypeAttr.parallel()] * rank, [op.init.type],
        )  # fmt: skip
        generic.attributes.update(op.attributes)
        rewriter.replace(op, generic)


class SelectOfUgtToMaximumf(RewritePattern):
    """``select(cmpf ugt %x, %c), %x, %c`` -> ``maximumf %x, %c`` (torch-mlir's relu; the
    maximum vectorize-texels runs on whole texels). Exact when ``%c`` is a constant that is
    neither NaN nor -0.0: for a NaN ``%x`` both give NaN, for ``%x`` equal to ``%c`` (or a
    zero of either sign when ``%c`` is +0.0) both give ``%c``, else the larger value."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter) -> None:
        compare = op.cond.owner
        if not isinstance(compare, arith.CmpfOp) or compare.predicate.value.data != _UGT:
            return
        x, c = compare.lhs, compare.rhs
        if op.lhs is not x or op.rhs is not c or not _safe_bound(c):
            return
        rewriter.replace(op, arith.MaximumfOp(x, c))
        if not compare.result.uses:
            rewriter.erase(compare)


_UGT = arith.CMPF_COMPARISON_OPERATIONS.index("ugt")
"""`arith.cmpf`'s predicate number of ``ugt`` (unordered or greater than)."""


def _safe_bound(value: SSAValue) -> bool:
    """Whether `value` is a float constant that is neither NaN nor -0.0."""
    owner = value.owner
    if not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, FloatAttr):
        return False
    number = owner.value.value.data
    return not math.isnan(number) and not (number == 0.0 and math.copysign(1.0, number) < 0)


MAX_EXPANDED_POWER = 64
"""The largest ``|n|`` whose ``math.fpowi`` is expanded into multiplies (at most 12)."""


class ExpandConstantFPowI(RewritePattern):
    """``math.fpowi %x, %n`` with ``%n`` a constant, ``|n| <= MAX_EXPANDED_POWER`` -> its
    multiplies in the order of upstream's lowering (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math_dialect.FPowIOp, rewriter: PatternRewriter) -> None:
        owner = op.rhs.owner
        if not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, IntegerAttr):
            return
        power = owner.value.value.data
        kind = op.result.type
        if abs(power) > MAX_EXPANDED_POWER or not isinstance(kind, AnyFloat):
            return  # vectors do not occur in graph bodies
        made: list[Operation] = []
        result: SSAValue | None = None
        base: SSAValue = op.lhs
        left = abs(power)
        while left:
            if left & 1:
                if result is None:
                    result = base  # upstream's 1.0 * b: exactly b
                else:
                    made.append(product := arith.MulfOp(result, base))
                    result = product.result
            left >>= 1
            if left:
                made.append(square := arith.MulfOp(base, base))
                base = square.result
        if result is None:  # n = 0
            made.append(one := arith.ConstantOp(FloatAttr(1.0, kind)))
            result = one.result
        elif power < 0:
            one = arith.ConstantOp(FloatAttr(1.0, kind))
            inverse = arith.DivfOp(one.result, result)
            made = [one, *made, inverse]
            result = inverse.result
        rewriter.replace(op, made, [result])


class GeneralizeWindowOp(RewritePattern):
    """A pooling or depthwise convolution -> its `linalg.generic` form, so that layout
    transforms flow through it like through any generic (convolutions stay named:
    `convert-layout` freezes their layouts)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NamedOperation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, PoolingOperation | DepthwiseConv2DNchwChwOp):
            return
        rewriter.replace(op, generalized(op))


class UnitResultAxesAsLoops(RewritePattern):
    """A `linalg.generic` whose output map holds the constant 0 on a result axis of extent 1
    (torch-mlir's keepdim reductions: ``(d0, d1, d2, d3) -> (d0, d1, 0, 0)`` over reduction
    loops ``d2, d3``) -> the same generic with one new parallel loop (extent 1, read by no
    input) per such axis, placed before the first reduction loop: the output map becomes a
    projected permutation of the parallel loops, so layout transforms flow through it.
    Every point is computed as before (the new loops take the one value 0)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        shape = static_shape(op.outputs[0]) if len(op.outputs) == 1 else None
        if shape is None or any(isinstance(o, IndexOp) for o in op.body.walk()):
            return
        out_map = op.indexing_maps.data[-1].data
        units = [
            k
            for k, expr in enumerate(out_map.results)
            if isinstance(expr, AffineConstantExpr) and expr.value == 0 and shape[k] == 1
        ]
        kinds = [str(t.data) for t in op.iterator_types.data]
        if not units or "reduction" not in kinds:
            return
        at = kinds.index("reduction")
        count = len(kinds) + len(units)
        moved = [AffineDimExpr(m if m < at else m + len(units)) for m in range(len(kinds))]
        maps = [m.data.replace_dims_and_symbols(moved, [], count, 0) for m in op.indexing_maps.data]
        results = list(maps[-1].results)
        for j, k in enumerate(units):
            results[k] = AffineDimExpr(at + j)
        maps[-1] = AffineMap(count, 0, tuple(results))
        iterators = list(op.iterator_types.data)
        iterators[at:at] = [IteratorTypeAttr.parallel()] * len(units)
        generic = GenericOp(
            op.inputs, op.outputs, op.detach_region(op.body),
            [AffineMapAttr(m) for m in maps], iterators, op.result_types,
        )  # fmt: skip
        generic.attributes.update(op.attributes)
        for old, new in zip(op.results, generic.results, strict=True):
            new.name_hint = old.name_hint
        rewriter.replace(op, generic)


class InlineSharedInputProducer(RewritePattern):
    """An elementwise generic whose one user already reads every input of it at the same
    indices (torch-mlir's SiLU: ``mul(x, sigmoid(x))``) -> that user computing it in its body
    (`generic_inlining`). No operand is added and nothing is recomputed (the user reads it
    at a permutation of its loops); the layout passes then see the whole SiLU, whose
    ``silu(0) = 0`` lets a padded layout flow through it where ``sigmoid(0) = 0.5`` alone
    would stop it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        maps = [m.data for m in op.indexing_maps.data]
        for k, value in enumerate(op.inputs):
            producer = value.owner
            if not isinstance(producer, GenericOp) or not is_strict_permutation(maps[k]):
                continue
            if inline_problem(producer, op, k) is not None:
                continue
            read = {(v, m) for j, (v, m) in enumerate(zip(op.inputs, maps, strict=False)) if j != k}
            wanted = zip(producer.inputs, producer_reads(producer, maps[k]), strict=True)
            if all(pair in read for pair in wanted):
                rewriter.replace(op, inlined(producer, op, k))
                rewriter.erase(producer)
                return


class SplatInputAsScalar(RewritePattern):
    """A `linalg.generic` input that is a splat dense tensor `arith.constant` (torch-mlir's
    ``dense<6.0> : tensor<f32>`` of a relu6's clamp, read at ``()``) -> that input dropped
    and its block argument replaced by the scalar constant at the top of the body. Every
    point read the same element, so every point computes the same value; the tensor is
    no longer stored by a kernel of its own on every call. The constant is erased when no
    other op reads it. An output (an init) is left alone: `fuse-elementwise` absorbs a
    splat accumulator start."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        splats = [
            k for k, value in enumerate(op.inputs)
            if isinstance(value.owner, arith.ConstantOp) and splat_init(value.owner)
        ]  # fmt: skip
        if not splats:
            return
        body = op.detach_region(op.body)
        block = body.blocks[0]
        for k in reversed(splats):
            constant = op.inputs[k].owner
            assert isinstance(constant, arith.ConstantOp)
            scalar = arith.ConstantOp(splat_scalar(constant))
            assert block.first_op is not None  # a body ends in linalg.yield
            block.insert_op_before(scalar, block.first_op)
            block.args[k].replace_all_uses_with(scalar.result)
            block.erase_arg(block.args[k])
        kept = [k for k in range(len(op.inputs)) if k not in splats]
        maps = [op.indexing_maps.data[k] for k in kept]
        maps += op.indexing_maps.data[len(op.inputs) :]
        generic = GenericOp(
            [op.inputs[k] for k in kept], op.outputs, body, maps, op.iterator_types,
            op.result_types,
        )  # fmt: skip
        generic.attributes.update(op.attributes)
        for old, new in zip(op.results, generic.results, strict=True):
            new.name_hint = old.name_hint
        constants = {op.inputs[k].owner for k in splats}
        rewriter.replace(op, generic)
        for constant in constants:
            assert isinstance(constant, arith.ConstantOp)
            if not constant.result.uses:
                rewriter.erase(constant)


class DecomposeConcat(RewritePattern):
    """``tensor.concat`` -> ``tensor.empty`` + one ``tensor.insert_slice`` per operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.ConcatOp, rewriter: PatternRewriter) -> None:
        shape = static_shape(op.result)
        shapes = [static_shape(v) for v in op.inputs]
        if shape is None or any(s is None for s in shapes):
            raise _fail(op, "with dynamic shapes is not supported")
        result_type = op.result.type
        assert isinstance(result_type, TensorType)
        dim = op.dim.value.data
        empty = tensor.EmptyOp([], result_type)
        new_ops: list[Operation] = [empty]
        current: SSAValue = empty.tensor
        offset = 0
        for value, part in zip(op.inputs, shapes, strict=True):
            assert part is not None
            offsets = [0] * len(shape)
            offsets[dim] = offset
            insert = tensor.InsertSliceOp.get(
                value,
                current,
                static_offsets=offsets,
                static_sizes=list(part),
                static_strides=[1] * len(shape),
            )
            insert.result.name_hint = op.result.name_hint
            new_ops.append(insert)
            current = insert.result
            offset += part[dim]
        rewriter.replace(op, new_ops, [current])


class OutlineBodyAssert(RewritePattern):
    """``cf.assert`` in a `linalg.generic` body -> a flags generic + ``layout.check`` before the
    generic (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.AssertOp, rewriter: PatternRewriter) -> None:
        generic = op.parent_op()
        if not isinstance(generic, GenericOp):
            if not isinstance(op.arg.owner, arith.ConstantOp):
                raise _fail(op, "with a condition only known at run time is only supported "
                            "inside a linalg.generic body")  # fmt: skip
            return
        if any(str(t.data) != "parallel" for t in generic.iterator_types.data):
            raise _fail(op, "in a linalg.generic with reduction loops is not supported")
        flags = _flags_generic(generic, op)
        check = CheckOp(flags.res[0], op.msg.data)
        empty = flags.outputs[0].owner
        assert isinstance(empty, Operation)
        rewriter.insert([empty, flags, check], InsertPoint.before(generic))
        condition = op.arg.owner
        rewriter.erase(op)
        if not isinstance(condition, Operation):
            return
        if not condition.results[0].uses and is_side_effect_free(condition):
            rewriter.erase(condition)


def _flags_generic(generic: GenericOp, assertion: cf.AssertOp) -> GenericOp:
    """The generic computing ``extui(condition) : i8`` of `assertion` at every point of
    `generic`'s (parallel) iteration space, from its inputs."""
    body = generic.body.block
    position = list(body.ops).index(assertion)
    region = generic.body.clone()
    block = region.block
    cloned = list(block.ops)
    cloned_assert = cloned[position]
    assert isinstance(cloned_assert, cf.AssertOp)
    condition = cloned_assert.arg
    flag = arith.ExtUIOp(condition, i8)
    block.insert_op_before(flag, cloned_assert)
    terminator = block.last_op
    assert terminator is not None
    block.insert_op_before(YieldOp(flag.result), terminator)
    terminator.detach()
    terminator.erase()
    for other in [o for o in block.ops if isinstance(o, cf.AssertOp)]:
        other.detach()
        other.erase()
    erase_dead_body_ops(block)
    count = len(generic.inputs)
    for arg in list(block.args[count:]):
        if arg.uses:
            raise _fail(assertion, "depends on the outputs of its linalg.generic")
        block.erase_arg(arg)
    block.insert_arg(i8, len(block.args))
    result_type = generic.res[0].type
    shape = static_shape(generic.res[0])
    if shape is None or not isinstance(result_type, TensorType):
        raise _fail(assertion, "in a linalg.generic with a dynamic result is not supported")
    flags_type = TensorType(i8, shape)
    empty = tensor.EmptyOp([], flags_type)
    maps = list(generic.indexing_maps.data)
    flags = GenericOp(
        list(generic.inputs), [empty.tensor], region,
        [*maps[:count], maps[count]], list(generic.iterator_types.data), [flags_type],
    )  # fmt: skip
    hint = generic.res[0].name_hint
    flags.res[0].name_hint = f"{hint}_flags" if hint else "flags"
    return flags


@dataclass(frozen=True)
class NormalizeGraphPass(PhyslayoutPass):
    """Frontend graph ops -> the forms the layout passes handle (module docstring)."""

    name = "normalize-graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        RootedWalker(
            GreedyRewritePatternApplier(
                [
                    AssertTrue(),
                    OutlineBodyAssert(),
                    GeneralizeBroadcast(),
                    DecomposeConcat(),
                    SplatInputAsScalar(),
                    SelectOfUgtToMaximumf(),
                    ExpandConstantFPowI(),
                    GeneralizeWindowOp(),
                    UnitResultAxesAsLoops(),
                    InlineSharedInputProducer(),
                    InlineIndexFunction(),
                    FoldDecidedSelect(),
                    FoldIndexCastPair(),
                ],
                dce_enabled=False,  # rewrite only what the patterns match (idempotent)
            ),
            apply_recursively=False,
        ).rewrite_module(op)
