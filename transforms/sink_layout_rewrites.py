"""sink-layout-rewrites{params="" prepared=true}: move a `layout.transform` from an operand of an
elementwise `linalg.generic` to its result (forward flow, choice F2 of the Relax layout
transformation design), so the epilogue of the last convolution of a model (bias, batch
norm, residual add, relu) runs in the convolution's layout and fuses into its kernel, and
the one transform back to the model's layout comes last.

What it rewrites: a top-level `linalg.generic` ``G`` with only parallel loops, one result
written at the identity, and an input ``T(y)`` read at the identity, where ``T`` is a
`layout.transform` by a map ``M`` that is a bijection from the box of ``y`` onto the box of
``G``'s result that lowers the rank (no padding either way: NCHW4c -> NCHW with a channel
count divisible by 4; the operand transforms a sink creates raise the rank and never sink
in turn, so nothing sinks back and forth). ``G`` is rebuilt over ``M``'s inverse (`flow_plan.rebuild_over_transformed_result`, the
backward flow's construction: every other tensor operand gets its operand transform, a
broadcast bias its blocked form), the operand ``M^-1(T(y))`` is ``y`` itself (``M`` is a
bijection), and ``G``'s uses read ``T(G')``. Repeated, a transform sinks through a chain of
elementwise ops.

Refused (left alone), so that a sink never adds a kernel per inference: an operand
transform that neither equals a transform of the same value already computed before ``G``
(it is reused: the residual input of a ResNet block is already blocked for the first
convolution), nor undoes the bijective transform that computed its operand (``M^-1(T'(z))``
with ``T'`` by ``M``: the operand is ``z``; a residual add of two convolutions' results),
nor reads only constants, or, with ``prepared=true``, only parameters and
constants (``params``: comma-separated argument names; empty: every argument but the first,
as torch-mlir exports them; their transforms move to ``@main_prepare`` under
`lift-transform-params`, which is what ``prepared`` promises; constants' transforms fold
into constants); a result
read by a `layout.transform` other than ``M^-1`` (a layout a consumer decided: the backward
flow's business; ``M^-1`` itself is what a blocked consumer such as the next convolution
asks for, and ``M^-1(T(G'))`` folds to ``G'`` in `fold-layout-rewrites`);
`linalg.index` in the body; frozen generics (``layout.frozen``); a transform that pads or
crops (its padding positions would have to be proven, see `flow-layout-rewrites`).

Where it runs: after `flow-layout-rewrites` and `fold-layout-rewrites` (so every transform
a consumer wanted has flowed backward and folded; a transform that is still in front of an
elementwise op only feeds results and layout-agnostic consumers). Guarantees: values are
unchanged (``T(G'(y, M^-1(z))) = G(T(y), z)`` for a bijective ``M``); each rewrite moves a
transform strictly later in its chain, so the pass terminates; a second run changes
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, tensor
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp, TensorType
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from physlayout.dialects.layout_graph import CropOp, TransformOp, element_type, static_shape
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim
from physlayout.transforms.block_order import precedes
from physlayout.transforms.flow_plan import FROZEN, rebuild_over_transformed_result
from physlayout.transforms.flow_through_windows import bijection_inverse, sliced_window
from physlayout.transforms.fusion_plan import generic_maps
from physlayout.transforms.lift_transform_params import pure_on_tensors, values_read
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker


def bijective_inverse(op: TransformOp) -> IndexMap | None:
    """The inverse of `op`'s map when the map is a bijection (`bijection_inverse`) that
    lowers the rank (a blocked layout back to the model's:
    NCHW4c -> NCHW), else None. Only such transforms sink: the operand transforms a sink
    creates raise the rank, so they never sink in turn (the pass terminates; no transform
    sinks back and forth)."""
    if len(op.result_shape()) >= len(op.input_shape()):
        return None
    return bijection_inverse(op)


def _is_identity(imap: IndexMap) -> bool:
    return imap.final_indices == tuple(Dim(n) for n in imap.initial_indices)


def parameter_names(spec: str) -> frozenset[str]:
    """The argument names of a `params` option (comma-separated, `%` optional)."""
    return frozenset(n.strip().lstrip("%") for n in spec.split(",") if n.strip())


@dataclass
class ParameterValues:
    """Which values of a function are computed from its parameters and constants only."""

    params: frozenset[str]
    """Parameter names; empty: every argument but the first."""
    arguments: bool = True
    """Whether parameters count (false: only values computed from constants do)."""
    known: dict[SSAValue, bool] = field(default_factory=dict[SSAValue, bool])

    def only_parameters(self, value: SSAValue) -> bool:
        """Whether `value` depends on no argument but the parameters (a walk over the values
        it reads, with an explicit stack: model graphs are thousands of ops deep)."""
        stack = [value]
        while stack:
            top = stack[-1]
            if top in self.known:
                stack.pop()
                continue
            if isinstance(top, BlockArgument):
                self.known[top] = self._argument(top)
                stack.pop()
                continue
            op = top.owner
            assert isinstance(op, Operation)
            reads = values_read(op) if pure_on_tensors(op) else None
            if reads is None or any(self.known.get(v) is False for v in reads):
                self.known[top] = False
                stack.pop()
                continue
            pending = [v for v in reads if v not in self.known]
            if pending:
                stack.extend(pending)
                continue
            self.known[top] = True
            stack.pop()
        return self.known[value]

    def _argument(self, value: BlockArgument) -> bool:
        owner = value.owner.parent_op() if isinstance(value.owner, Block) else None
        if not isinstance(owner, func.FuncOp) or not self.arguments:
            return False
        if self.params:
            return value.name_hint in self.params
        return value.index > 0


@dataclass
class SinkTransformBelowElementwise(RewritePattern):
    """``G(T(y), z)`` -> ``T(G'(y, M^-1(z)))`` for an elementwise generic ``G`` and a
    bijective transform ``T`` (module docstring)."""

    parameters: ParameterValues

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.parent_op(), func.FuncOp) or not self._sinkable(op):
            return
        maps = generic_maps(op)
        if maps is None or not _is_identity(maps[-1]):
            return
        for k, operand in enumerate(op.inputs):
            transform = operand.owner
            if not isinstance(transform, TransformOp) or not _is_identity(maps[k]):
                continue
            if static_shape(operand) != static_shape(op.res[0]):
                continue
            if self._sink(op, transform, rewriter):
                return

    def _sinkable(self, op: GenericOp) -> bool:
        return _elementwise(op)

    def _sink(self, op: GenericOp, transform: TransformOp, rewriter: PatternRewriter) -> bool:
        inverse = bijective_inverse(transform)
        if inverse is None:
            return False
        for use in op.res[0].uses:
            user = use.operation
            if isinstance(user, TransformOp) and not _same_rewrite(user, inverse, None):
                return False
        probe = TransformOp(op.res[0], inverse)
        created = rebuild_over_transformed_result(op, probe)
        probe.erase()
        if created is None:
            return False
        new_generic = created[-1]
        assert isinstance(new_generic, GenericOp)
        replacements: dict[SSAValue, SSAValue] = {}
        for new in created[:-1]:
            if not isinstance(new, TransformOp):
                continue
            source = new.input
            undone = _undone(new)
            if undone is not None:
                replacements[new.result] = undone
                continue
            existing = _earlier_equal_transform(new, op)
            if existing is not None:
                replacements[new.result] = existing
            elif not self.parameters.only_parameters(source):
                for dropped in reversed(created):
                    dropped.erase()
                return False
        for new in created[:-1]:
            if new.results and new.results[0] in replacements:
                continue
            rewriter.insert(new, InsertPoint.before(op))
        for index, value in enumerate(new_generic.operands):
            if value in replacements:
                new_generic.operands[index] = replacements[value]
        for new in created[:-1]:
            if new.results and new.results[0] in replacements:
                new.erase()
        rewriter.insert(new_generic, InsertPoint.before(op))
        back = TransformOp(new_generic.results[0], transform.map, transform.pad_value)
        back.result.name_hint = op.res[0].name_hint
        for name, attr in transform.attributes.items():
            back.attributes.setdefault(name, attr)
        rewriter.replace(op, back)
        if not transform.result.uses:
            rewriter.erase(transform)
        return True


class SinkCropBelowElementwise(RewritePattern):
    """``G(crop(y))`` -> ``crop(G'(y))`` for an elementwise generic ``G`` whose one tensor
    input of rank 1 or more is the crop, read at the identity (its other inputs rank-0,
    read at ``()``), written at the identity from a `tensor.empty`, where ``G'`` is ``G``
    over ``y``'s box and the crop is read only by ``G``: a model's sigmoid after the crop of
    its padded channels runs in the layout of the convolution before it (and joins its
    kernel, once the transform back to NCHW sinks below it in turn). Taken only when ``y``
    is a transform that sinks (`bijective_inverse`) or the one-use result of a generic, so
    ``G'`` has a producer to join. Values: every element the crop keeps is ``G`` of the same
    element of ``y``; ``G'`` also computes the elements cropped away (no promise about
    them: the new crop carries no `cropped_value`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.parent_op(), func.FuncOp) or not _elementwise(op):
            return
        maps = generic_maps(op)
        if maps is None or not _is_identity(maps[-1]):
            return
        if not isinstance(op.outputs[0].owner, EmptyOp):
            return
        shaped = [k for k, v in enumerate(op.inputs) if static_shape(v)]
        if len(shaped) != 1 or not _is_identity(maps[shaped[0]]):
            return
        crop = op.inputs[shaped[0]].owner
        if not isinstance(crop, CropOp) or not crop.result.has_one_use():
            return
        source = crop.input.owner
        joins = isinstance(source, TransformOp) and bijective_inverse(source) is not None
        if not (joins or (isinstance(source, GenericOp) and crop.input.has_one_use())):
            return
        element, shape = element_type(op.res[0]), static_shape(crop.input)
        if element is None or shape is None:
            return
        empty = EmptyOp([], TensorType(element, shape))
        operands = list(op.inputs)
        operands[shaped[0]] = crop.input
        identity = AffineMapAttr(AffineMap.identity(len(shape)))
        new_maps = [
            identity if k == shaped[0] else op.indexing_maps.data[k] for k in range(len(operands))
        ]
        wide = GenericOp(
            operands, [empty.tensor], op.detach_region(op.body), [*new_maps, identity],
            op.iterator_types, [empty.tensor.type],
        )  # fmt: skip
        wide.attributes.update(op.attributes)
        wide.res[0].name_hint = op.res[0].name_hint
        back = _crop_like(wide.res[0], crop)
        back.result.name_hint = op.res[0].name_hint
        rewriter.replace(op, [empty, wide, back])
        rewriter.erase(crop)


def _crop_like(value: SSAValue, crop: CropOp) -> CropOp:
    """The crop of `value` to `crop`'s box (no `cropped_value` promise)."""
    return CropOp(value, crop.get_start(), crop.get_sizes())


def _elementwise(op: GenericOp) -> bool:
    """Whether `op` has only parallel loops, one result, is not frozen and reads no
    `linalg.index`."""
    kinds = {str(t.data) for t in op.iterator_types.data}
    return (
        kinds == {"parallel"}
        and len(op.res) == 1
        and FROZEN not in op.attributes
        and not any(isinstance(inner, IndexOp) for inner in op.body.walk())
    )


class SinkTransformBelowInsertSlice(RewritePattern):
    """``insert_slice(T(a) into D)`` -> ``T(insert_slice(a into D'))`` for a bijective
    ``T`` (module docstring), where ``D`` is a `tensor.empty` (``D'``: an empty of the
    blocked shape) or ``T(D')`` read only here: a concat of blocked parts stays blocked, so
    each part's producer can store into it (`legalize-layout`'s direct inserts)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.InsertSliceOp, rewriter: PatternRewriter) -> None:
        source = op.source.owner
        if not isinstance(op.parent_op(), func.FuncOp) or not isinstance(source, TransformOp):
            return
        if op.offsets or op.sizes or op.strides:
            return
        if any(int(s) != 1 for s in op.static_strides.get_values()):
            return
        dest_shape = static_shape(op.dest)
        sizes = [int(v) for v in op.static_sizes.get_values()]
        if dest_shape is None or tuple(sizes) != source.result_shape():
            return
        if bijective_inverse(source) is None:
            return
        inverse = _inverse_on(source.map, source.input_shape(), dest_shape)
        if inverse is None:
            return
        blocked_shape = tuple(inverse.map_shape(dest_shape))
        window = sliced_window(
            inverse, [int(v) for v in op.static_offsets.get_values()], sizes, dest_shape
        )
        if window is None or tuple(window[1]) != source.input_shape():
            return
        owner = op.dest.owner
        new: list[Operation] = []
        element = element_type(op.dest)
        if isinstance(owner, EmptyOp) and element is not None:
            empty = EmptyOp([], TensorType(element, blocked_shape))
            empty.tensor.name_hint = op.dest.name_hint
            new.append(empty)
            blocked: SSAValue = empty.tensor
        elif (
            isinstance(owner, TransformOp)
            and op.dest.has_one_use()
            and owner.input_shape() == blocked_shape
            and bijective_inverse(owner) is not None
            and _same_rewrite(owner, source.map, source.pad_value)
        ):
            blocked = owner.input
        else:
            return
        moved = tensor.InsertSliceOp.from_static_parameters(
            source.input, blocked, window[0], window[1]
        )
        moved.result.name_hint = op.result.name_hint
        back = TransformOp(moved.result, source.map, source.pad_value)
        back.result.name_hint = op.result.name_hint
        rewriter.replace(op, [*new, moved, back])
        for dead in (source, owner):
            if isinstance(dead, TransformOp) and dead.parent is not None and not dead.result.uses:
                rewriter.erase(dead)


def _inverse_on(
    imap: IndexMap, shape: tuple[int, ...], result_shape: tuple[int, ...]
) -> IndexMap | None:
    """The inverse of `imap` on a box it maps bijectively onto `result_shape` (the box of
    a destination, where `shape` is one box the map is known to work on), or None.

    The candidate box comes from the inverse derived on `shape` with every extent at least
    2 (so no axis simplifies away); it is then proven: the map is injective on it, pads
    nothing and covers exactly `result_shape`."""
    try:
        general, _ = imap.non_surjective_inverse(tuple(max(e, 2) for e in shape))
        blocked = tuple(general.map_shape(result_shape))
        inverse, padding = imap.non_surjective_inverse(blocked)
    except ValueError:
        return None
    if padding is not None or tuple(imap.map_shape(blocked)) != result_shape:
        return None
    if tuple(inverse.map_shape(result_shape)) != blocked:
        return None
    if inverse.padding_predicate(result_shape) is not None:
        return None
    return inverse


def _undone(new: TransformOp) -> SSAValue | None:
    """The value `new` gives back when it undoes the transform that computed its input: that
    transform is a bijection of its input's box and `new`'s map is its inverse, so
    ``new(T(x)) = x`` element for element (the sinking transform itself, and another operand
    that comes from the same blocked layout: a residual add of two convolutions' results)."""
    earlier = new.input.owner
    if not isinstance(earlier, TransformOp):
        return None
    inverse = bijective_inverse(earlier)
    if inverse is None or not _same_rewrite(new, inverse, None):
        return None
    return earlier.input


def _earlier_equal_transform(new: TransformOp, before: Operation) -> SSAValue | None:
    """A transform of the same value by the same map and pad value as `new`, in the block of
    `before` and before it."""
    block = before.parent_block()
    for use in new.input.uses:
        other = use.operation
        if other is new or not isinstance(other, TransformOp) or other.parent_block() is not block:
            continue
        if _same_rewrite(other, new.map, new.pad_value) and precedes(other, before):
            return other.result
    return None


def _same_rewrite(op: TransformOp, imap: IndexMap, pad_value: Attribute | None) -> bool:
    """Whether `op` transforms its input by a map equivalent to `imap` on the input's box
    (names may differ; proven) with the pad value `pad_value`."""
    if op.pad_value != pad_value or op.map.final_ndim != imap.final_ndim:
        return False
    if tuple(imap.map_shape(op.input_shape())) != op.result_shape():
        return False
    try:
        return op.map.is_equivalent_to(imap, op.input_shape())
    except ValueError:
        return False


@dataclass(frozen=True)
class SinkLayoutRewritesPass(PhyslayoutPass):
    """Move layout transforms from operands of elementwise generics to their results
    (module docstring).

    Options:
        params (str, ""): the parameter arguments (comma-separated names without ``%``;
            empty: every argument but the first).
        prepared (bool, true): new transforms of parameters are allowed (their work is
            done once, by `lift-transform-params`); false: only of constants.
    """

    name = "sink-layout-rewrites"

    params: str = ""
    """Parameter argument names (empty: all but the first)."""
    prepared: bool = True
    """Parameters are prepared once (new transforms of them cost no launch per inference)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.apply_and_report(ctx, op)

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        names = parameter_names(self.params)
        return RootedWalker(
            GreedyRewritePatternApplier(
                [
                    SinkTransformBelowElementwise(ParameterValues(names, self.prepared)),
                    SinkTransformBelowInsertSlice(),
                    SinkCropBelowElementwise(),
                ]
            ),
            apply_recursively=True,
        ).rewrite_module(op)


__all__ = [
    "SinkCropBelowElementwise",
    "SinkLayoutRewritesPass",
    "SinkTransformBelowElementwise",
    "SinkTransformBelowInsertSlice",
    "bijective_inverse",
]
