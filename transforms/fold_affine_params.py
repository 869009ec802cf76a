"""fold-affine-params{params=""}: a chain of elementwise steps by parameters becomes one
multiply-add, and its scale moves into the weights of the convolution before it (a batch norm
in inference: four per-channel operands -> one).

What it rewrites: in a graph function, a chain ``S1 -> S2 -> ... -> Sk`` (k >= 2) of
top-level *affine steps*, each the only reader of the one before. An affine step is a
`linalg.generic` with only parallel loops, two inputs and one output, whose body is one
`arith.addf` / `arith.subf` / `arith.mulf` of its two inputs (``x + p``, ``p + x``,
``x - p``, ``p - x``, ``x * p``, ``p * x``) yielded as it is; ``x`` is
read at the identity (the chain's value), the output is written at the identity, and ``p``
is computed from the parameters alone (``params``: comma-separated argument names; empty:
every argument but the first, as torch-mlir exports them) and read at a map ``P`` (a
per-channel broadcast). Every step of a chain reads its ``p`` at the same ``P`` with the same
shape. The chain becomes ``x * A + B`` in one generic: ``A`` and ``B`` are two new generics
over the shape of the ``p``s (``(x - m) * r * g + b`` gives ``A = r * g`` and ``B = b - m * r
* g``); they read parameters only, so `lift-transform-params` moves them into
``@main_prepare`` and every inference reads two values per channel instead of four. A
chain without a multiply or divide is ``x + B``, one without an add or subtract ``x * A``.

Then ``conv(x, W) * A + B`` (`FoldScaleIntoWeights`), where ``conv`` is a
`linalg.conv_2d_nchw_fchw` or a generic summing ``x * w`` (the depthwise form
`normalize-graph` makes), accumulated from a `linalg.fill` of 0.0, read by nothing else, with
weights ``W`` computed from parameters and ``A`` read along the output's dimension 1 (the
channel) only, becomes ``conv(x, W') + B`` with ``W' = W * A`` scaling the dimension of ``W``
that the output channel indexes (0 for both forms): every term of the sum is multiplied by
``A`` of its output element's channel. ``W'`` is parameter work, lifted like ``A`` and ``B``.

Refused (left alone): a step whose ``p`` reads anything but parameters and constants (an
activation: ``A`` and ``B`` would be computed on every inference); an intermediate value
with a second reader (it is needed as it is); a change of ``P`` or of the ``p`` shape along
the chain (the chain is cut there); integer element types (the rewrite reassociates). The weight fold
refuses a nonzero init (it would be scaled too), a convolution result with another reader,
a scale along anything but the channel, and weights that are not parameters.

Guarantees: the same values up to floating-point reassociation (``x * A + B`` rounds
differently from the chain; within 1e-5 relative on the models, as PyTorch's own conv-bn
folding); only parameter work is added; a second run changes nothing (a folded chain is
one step of each kind at most, and the new generic has three inputs). Run it before
`lift-transform-params` and only when that pass runs (`physlayout-adreno{lift-params=true}`
does): without it, ``A`` and ``B`` are recomputed on every call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import AffineMapAttr, AnyFloat, FloatAttr, ModuleOp, TensorType
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import Conv2DNchwFchwOp, FillOp, GenericOp, YieldOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from physlayout.transforms.fusion_plan import has_reductions
from physlayout.transforms.legalize_layout import is_graph_function
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker
from physlayout.transforms.sink_layout_rewrites import ParameterValues, parameter_names

_KINDS: dict[type[Operation], str] = {
    arith.AddfOp: "add",
    arith.SubfOp: "sub",
    arith.MulfOp: "mul",
}


@dataclass(frozen=True)
class Step:
    """One affine step ``y = x (kind) p`` (``rsub``: ``p - x``)."""

    op: GenericOp
    x: SSAValue
    p: SSAValue
    p_map: AffineMapAttr
    kind: str


def affine_step(op: Operation, by_params: Callable[[SSAValue], bool]) -> Step | None:
    """`op` as an affine step by a value `by_params` accepts (module docstring), else None."""
    if not isinstance(op, GenericOp) or len(op.inputs) != 2 or len(op.outputs) != 1:
        return None
    if len(op.res) != 1 or not isinstance(op.res[0].type, TensorType):
        return None
    if not isinstance(op.res[0].type.get_element_type(), AnyFloat) or has_reductions(op):
        return None
    maps = [m.data for m in op.indexing_maps]
    identity = AffineMap.identity(maps[-1].num_dims)
    if maps[-1] != identity:
        return None
    block = op.body.block
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[1], YieldOp) or tuple(ops[1].operands) != (ops[0].results[0],):
        return None
    kind = _KINDS.get(type(ops[0]))
    if kind is None or block.args[2].uses:
        return None
    lhs, rhs = ops[0].operands
    for x_at in (0, 1):
        x, p = op.inputs[x_at], op.inputs[1 - x_at]
        if maps[x_at] != identity or x.type != op.res[0].type or not by_params(p):
            continue
        if (lhs, rhs) == (block.args[x_at], block.args[1 - x_at]):
            return Step(op, x, p, op.indexing_maps.data[1 - x_at], kind)
        if (lhs, rhs) == (block.args[1 - x_at], block.args[x_at]):
            return Step(op, x, p, op.indexing_maps.data[1 - x_at], "rsub" if kind == "sub" else kind)
    return None


def _continues(step: Step, after: Step) -> bool:
    """Whether `after` continues a chain at `step`: it is the only reader of `step`'s
    result, reads it as its ``x``, and its ``p`` has `step`'s map and type."""
    value = step.op.res[0]
    return (
        after.x == value
        and value.uses.get_length() == 1
        and after.p_map == step.p_map
        and after.p.type == step.p.type
    )


def _chain(first: Step, by_params: Callable[[SSAValue], bool]) -> list[Step]:
    """`first` and the steps that continue it."""
    chain = [first]
    while True:
        uses = list(chain[-1].op.res[0].uses)
        step = affine_step(uses[0].operation, by_params) if len(uses) == 1 else None
        if step is None or not _continues(chain[-1], step):
            return chain
        chain.append(step)


def _elementwise(
    inputs: Sequence[SSAValue],
    out_type: TensorType[Attribute],
    body: Block,
    maps: Sequence[AffineMap] | None = None,
) -> list[Operation]:
    """`tensor.empty` + a generic over `out_type`'s shape reading `inputs` at `maps` (by
    default the identity) and writing at the identity."""
    empty = tensor.EmptyOp([], out_type)
    rank = len(out_type.get_shape())
    identity = AffineMap.identity(rank)
    reads = list(maps) if maps is not None else [identity] * len(inputs)
    generic = GenericOp(
        inputs,
        [empty.tensor],
        Region(body),
        [AffineMapAttr(m) for m in (*reads, identity)],
        [IteratorTypeAttr.parallel()] * rank,
        [out_type],
    )
    return [empty, generic]


def _coefficient(chain: Sequence[Step], element: AnyFloat, which: str) -> Block | None:
    """The body of a generic computing ``A`` (`which` "a") or ``B`` ("b") of ``x * A + B``
    from the chain's ``p``s (its block arguments, in chain order), or None when it is
    exactly 1 (``A``) or 0 (``B``). ``A`` only changes at a multiply (``A * p``) and at
    ``p - y`` (``-A``); ``B`` at every step (``B + p``, ``B - p``, ``p - B``, ``B * p``)."""
    block = Block(arg_types=[*(element for _ in chain), element])
    value: SSAValue | None = None

    def emit(new: Operation) -> SSAValue:
        block.add_op(new)
        return new.results[0]

    for step, p in zip(chain, block.args[: len(chain)], strict=True):
        if which == "a" and step.kind == "mul":
            value = p if value is None else emit(arith.MulfOp(value, p))
        elif which == "a" and step.kind == "rsub":
            minus_one = arith.ConstantOp(FloatAttr(-1.0, element))
            value = emit(minus_one) if value is None else emit(arith.NegfOp(value))
        elif which == "b" and step.kind == "add":
            value = p if value is None else emit(arith.AddfOp(value, p))
        elif which == "b" and step.kind == "sub":
            value = emit(arith.NegfOp(p)) if value is None else emit(arith.SubfOp(value, p))
        elif which == "b" and step.kind == "rsub":
            value = p if value is None else emit(arith.SubfOp(p, value))
        elif which == "b" and step.kind == "mul" and value is not None:
            value = emit(arith.MulfOp(value, p))
    if value is None:
        return None
    block.add_op(YieldOp(value))
    return block


def _multiply_add(x: SSAValue, a: SSAValue | None, b: SSAValue | None) -> Block:
    """The body ``x * a + b`` over block arguments (x, a?, b?, out)."""
    element = x.type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
    count = 1 + (a is not None) + (b is not None)
    block = Block(arg_types=[element] * (count + 1))  # pyright: ignore[reportUnknownArgumentType]
    value: SSAValue = block.args[0]
    k = 1
    if a is not None:
        mul = arith.MulfOp(value, block.args[k])
        block.add_op(mul)
        value, k = mul.result, k + 1
    if b is not None:
        add = arith.AddfOp(value, block.args[k])
        block.add_op(add)
        value = add.result
    block.add_op(YieldOp(value))
    return block


class FoldAffineChain(RewritePattern):
    """A chain of affine steps by parameters -> ``x * A + B`` (module docstring)."""

    def __init__(self, by_params: Callable[[SSAValue], bool]):
        self.by_params = by_params
        """Whether a value is computed from parameters (and constants), not constants alone."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        first = affine_step(op, self.by_params)
        if first is None or not isinstance(op.parent_op(), func.FuncOp):
            return
        before = first.x.owner
        earlier = affine_step(before, self.by_params) if isinstance(before, Operation) else None
        if earlier is not None and _continues(earlier, first):
            return  # not the head of its chain
        chain = _chain(first, self.by_params)
        if len(chain) < 2:
            return
        p_type = chain[0].p.type
        assert isinstance(p_type, TensorType)
        element = p_type.get_element_type()
        assert isinstance(element, AnyFloat)
        last = chain[-1].op
        new_ops: list[Operation] = []
        coefficients: list[SSAValue | None] = []
        for which in ("a", "b"):
            body = _coefficient(chain, element, which)
            if body is None:
                coefficients.append(None)
                continue
            yielded = body.last_op.operands[0] if body.last_op is not None else None
            if isinstance(yielded, BlockArgument):  # a parameter as it is: no generic
                coefficients.append(chain[yielded.index].p)
                continue
            used = [k for k, arg in enumerate(body.args[: len(chain)]) if arg.uses]
            for k in reversed(range(len(chain))):
                if k not in used:
                    body.erase_arg(body.args[k])
            made = _elementwise([chain[k].p for k in used], p_type, body)
            new_ops += made
            coefficients.append(made[-1].results[0])
        a, b = coefficients
        if a is None and b is None:
            return
        out_type = last.res[0].type
        rank = len(chain[0].op.iterator_types)
        identity = AffineMapAttr(AffineMap.identity(rank))
        inputs = [first.x, *(v for v in (a, b) if v is not None)]
        folded = GenericOp(
            inputs,
            [last.outputs[0]],
            Region(_multiply_add(first.x, a, b)),
            [identity, *(first.p_map for v in (a, b) if v is not None), identity],
            [IteratorTypeAttr.parallel()] * rank,
            [out_type],
        )
        folded.attributes.update(last.attributes)
        rewriter.insert(new_ops, InsertPoint.before(last))
        rewriter.replace(last, folded)
        for step in reversed(chain[:-1]):
            rewriter.erase(step.op)


def _scale_and_shift(op: GenericOp) -> tuple[SSAValue, SSAValue, SSAValue | None] | None:
    """``(x, A, B)`` of a generic whose body is ``x * A + B`` or ``x * A`` (as
    `FoldAffineChain` builds it, or one multiply step), x read at the identity."""
    if len(op.outputs) != 1 or len(op.inputs) not in (2, 3) or len(op.res) != 1:
        return None
    if has_reductions(op):
        return None
    maps = [m.data for m in op.indexing_maps]
    if maps[0] != maps[-1] or maps[-1] != AffineMap.identity(maps[-1].num_dims):
        return None
    args = op.body.block.args
    ops = list(op.body.block.ops)
    if not ops or not isinstance(ops[0], arith.MulfOp) or tuple(ops[0].operands) != (args[0], args[1]):
        return None
    if len(op.inputs) == 2:
        if len(ops) != 2 or not isinstance(ops[1], YieldOp) or tuple(ops[1].operands) != (ops[0].result,):
            return None
        return op.inputs[0], op.inputs[1], None
    add = ops[1] if len(ops) == 3 else None
    if not isinstance(add, arith.AddfOp) or tuple(add.operands) != (ops[0].result, args[2]):
        return None
    if not isinstance(ops[2], YieldOp) or tuple(ops[2].operands) != (add.result,):
        return None
    return op.inputs[0], op.inputs[1], op.inputs[2]


def _zero_init(value: SSAValue) -> bool:
    """Whether `value` is a `linalg.fill` of 0.0."""
    fill = value.owner
    if not isinstance(fill, FillOp):
        return False
    scalar = fill.inputs[0].owner
    return (
        isinstance(scalar, arith.ConstantOp)
        and isinstance(scalar.value, FloatAttr)
        and scalar.value.value.data == 0.0
    )


def _weight_channel(conv: Operation) -> tuple[int, int] | None:
    """For a convolution summing ``x * w`` into a zero init: (the dimension of its output
    that is the output channel, the dimension of its weight (input 1) indexed by it), such
    that scaling the weight along the latter scales the output along the former."""
    if isinstance(conv, Conv2DNchwFchwOp):
        return (1, 0) if _zero_init(conv.outputs[0]) else None
    if not isinstance(conv, GenericOp) or len(conv.inputs) != 2 or len(conv.outputs) != 1:
        return None
    if not _zero_init(conv.outputs[0]):
        return None
    args = conv.body.block.args
    ops = list(conv.body.block.ops)
    if len(ops) != 3 or not isinstance(ops[0], arith.MulfOp) or not isinstance(ops[1], arith.AddfOp):
        return None
    if set(ops[0].operands) != {args[0], args[1]} or set(ops[1].operands) != {ops[0].result, args[2]}:
        return None
    if not isinstance(ops[2], YieldOp) or tuple(ops[2].operands) != (ops[1].result,):
        return None
    out_map, w_map = conv.indexing_maps.data[2].data, conv.indexing_maps.data[1].data
    channel = out_map.results[1] if len(out_map.results) > 1 else None  # NCHW: C
    if isinstance(channel, AffineDimExpr) and channel in w_map.results:
        return 1, w_map.results.index(channel)
    return None


class FoldScaleIntoWeights(RewritePattern):
    """``conv(x, W) * A + B`` with ``A`` per output channel -> ``conv(x, W * A) + B``: the
    scale of a folded batch norm moves into the convolution's weights (parameter work)."""

    def __init__(self, by_params: Callable[[SSAValue], bool]):
        self.by_params = by_params
        """Whether a value is computed from parameters (and constants), not constants alone."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        parts = _scale_and_shift(op)
        if parts is None:
            return
        x, scale, shift = parts
        conv = x.owner
        if not isinstance(conv, Operation) or x.uses.get_length() != 1 or not self.by_params(scale):
            return
        channel = _weight_channel(conv)
        if channel is None or not self.by_params(conv.operands[1]):
            return
        weight = conv.operands[1]
        out_dim, weight_dim = channel
        scale_map = op.indexing_maps.data[1].data
        if any(r != AffineDimExpr(out_dim) and not isinstance(r, AffineConstantExpr) for r in scale_map.results):
            return
        w_type = weight.type
        assert isinstance(w_type, TensorType)
        rank = len(w_type.get_shape())
        along = AffineMap(
            rank, 0, tuple(AffineDimExpr(weight_dim) if r == AffineDimExpr(out_dim) else r for r in scale_map.results)
        )
        scaled = _elementwise(
            [weight, scale], w_type, _multiply_add(weight, scale, None), [AffineMap.identity(rank), along]
        )
        new_conv = conv.clone()
        new_conv.operands = [*conv.operands[:1], scaled[-1].results[0], *conv.operands[2:]]
        rewriter.insert([*scaled, new_conv], InsertPoint.before(op))
        if shift is None:
            rewriter.replace(op, [], [new_conv.results[0]])
        else:
            maps = op.indexing_maps.data
            shifted = GenericOp(
                [new_conv.results[0], shift],
                [op.outputs[0]],
                Region(_multiply_add(new_conv.results[0], None, shift)),
                [maps[0], maps[2], maps[3]],
                op.iterator_types.data,
                [op.res[0].type],
            )
            shifted.attributes.update(op.attributes)
            rewriter.replace(op, shifted)
        rewriter.erase(conv)


@dataclass(frozen=True)
class FoldAffineParamsPass(PhyslayoutPass):
    """Fold chains of elementwise steps by parameters into one multiply-add (module
    docstring).

    Options:
        params (str, ""): the parameter arguments, comma-separated names without `%`
            (empty: every argument but the first).
    """

    name = "fold-affine-params"

    params: str = ""
    """The parameter arguments (comma-separated names; empty: all but the first)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = parameter_names(self.params)
        with_params, constants = ParameterValues(names), ParameterValues(names, arguments=False)

        def by_params(value: SSAValue) -> bool:
            return with_params.only_parameters(value) and not constants.only_parameters(value)

        for function in list(op.ops):
            if not isinstance(function, func.FuncOp) or not is_graph_function(function):
                continue
            RootedWalker(FoldAffineChain(by_params), apply_recursively=False).rewrite_region(
                function.body
            )
            RootedWalker(FoldScaleIntoWeights(by_params), apply_recursively=False).rewrite_region(
                function.body
            )
