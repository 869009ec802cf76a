"""fold-layout-rewrites: fold adjacent graph-level layout rewrites into each other and into
constants (the Relax layout-transformation design, "Folding/Fusing Layout Rewrites").

What it rewrites (``T`` is a `layout.transform`, ``v`` a pad value):

- ``T(x)`` whose map is proven (isl) the identity on the box of ``x``, with the result type
  of ``x``, becomes ``x``; ``layout.pad`` with zero widths and ``layout.crop`` of the whole
  tensor become their input.
- ``T2(T1(x))`` becomes one transform whose map is the composition ``T2 . T1`` simplified
  on the box of ``x``, or ``x`` itself when that composition is proven the identity on the
  box and the result type is the type of ``x``. The positions of the result without a
  preimage hold ``v1`` (padding of ``T1`` moved by ``T2``) or ``v2`` (padding of ``T2``), so
  the pair folds only when at most one of them pads or both pad with the same value. When
  the composed map's structural shape is smaller than the result, whose extents are the
  step-by-step ones of the pair (`transformed_shape`; e.g. a padded transform followed by
  its inverse: ``i -> (i floordiv 4, i mod 4)`` on [6], then ``(a, b) -> (a * 4 + b)``),
  the pair becomes the composed transform followed by a high ``layout.pad`` with
  that value (here: ``layout.pad`` of ``x`` by 2), which a following crop then removes.
  Unlike TVM's OptimizeLayoutTransform a pair is never deleted because its shapes match:
  ``i -> (i floordiv 4, i mod 4)`` then ``(i, j) -> (j * 4 + i)`` on [16] is a transpose and
  becomes one transform ``i -> (i mod 4) * 4 + i floordiv 4``.
- ``crop(pad(x))`` always folds: into ``x``, a crop of ``x``, a pad of a crop of ``x``, or a
  splat constant when the window only holds padding.
- ``pad(crop(x, cropped_value = c), v)`` becomes ``x`` when the pad puts back exactly what
  the crop removed and ``c`` is ``"undef"`` or the same constant as ``v`` (bit for bit).
  Without such a promise it is left alone (the crop may have removed other values).
- ``T(crop(x, cropped_value = c), v)`` where ``T`` pads becomes ``T'(x)`` with ``T'(j) =
  T(j - start)`` when ``T'`` is injective on the box of ``x`` with the same result shape and
  ``c`` is ``"undef"`` or ``v``: the cropped-away elements land in ``T``'s padding (the
  padded transform of a crop restores it, e.g. NCHW4c -> NCHW + crop -> NCHW4c).
- ``crop(crop(x))`` becomes one crop; ``pad(pad(x))`` with the same value one pad.
- A rewrite of an `arith.constant` dense tensor becomes a new constant (computed with
  `IndexMap.map_ndarray`, `numpy.pad`, slicing), up to `max_constant_elements` elements; a
  rewrite of `linalg.fill` becomes a fill of the new shape when every element of the result
  is the fill value (any padding it adds is that same constant); a crop of `tensor.empty`, or a transform of it that
  does not pad, becomes a `tensor.empty` of the new shape.
- A gather ``tensor.extract T(x)[i]`` whose indices are proven inside ``T(x)``
  (`value_bounds`) becomes ``tensor.extract x[M^-1(i)]`` when ``T``
  (map ``M``) pads nothing and ``M^-1`` is proven (isl) on the box of ``x``: the gather
  reads through the layout (`ReadGatherThroughTransform`); a gather of a crop reads the
  crop's input at the shifted index (`ReadGatherThroughCrop`).

What it refuses: anything it cannot prove. Every condition above is decided exactly
(isl for identity and injectivity, interval arithmetic only for shapes); pad values are
compared bit for bit. It never changes a value of any result (the `cropped_value` promise
of a crop is taken as given).

Guarantees: results are unchanged; the pass only removes or merges rewrites (each rewrite
it creates replaces at least one) and moves gathers to the inputs of the transforms they
read (closer to a function argument or a producer each time), so it terminates and a
second run changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.linalg.ops import FillOp
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from physlayout.dialects.canonicalization_patterns import (
    FoldIdentityTransform,
    FoldTrivialCrop,
    FoldTrivialPad,
)
from physlayout.dialects.layout_graph import (
    UNDEF,
    CropOp,
    PadOp,
    TransformOp,
    dense_attr,
    same_scalar,
    scalar_value,
    static_shape,
)
from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.extents import transformed_shape
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim
from physlayout.indexing.simplify import simplify
from physlayout.transforms.diagnostics import require_options
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker
from physlayout.transforms.value_bounds import extract_proven_inside
from physlayout.transforms.verify_buffers import refuse_invalid_buffers

LayoutRewrite = TransformOp | PadOp | CropOp
"""The graph-level layout rewrite ops."""


# Facts ------------------------------------------------------------------------------------


def effective_pad(op: TransformOp) -> Attribute | None:
    """The pad value of a transform that pads, else None (an unused pad value is ignored)."""
    return op.pad_value if op.pads() else None


def _added_value(op: LayoutRewrite) -> Attribute | None:
    """The value a rewrite puts where its result has no element of its input, or None when
    there is no such position."""
    if isinstance(op, PadOp):
        return op.pad_value
    if isinstance(op, TransformOp):
        return effective_pad(op)
    return None


def _merge_pads(first: Attribute | None, second: Attribute | None) -> tuple[bool, Attribute | None]:
    """The one value two sets of padding positions hold: ``(ok, value)``; not ok when both
    pad with different values."""
    if first is not None and second is not None and not same_scalar(first, second):
        return False, None
    return True, first if first is not None else second


def _merge_hints(first: Attribute | None, second: Attribute | None) -> Attribute | None:
    """The cropped_value of two crops applied in a row (undef adopts the other promise)."""
    if first is None or second is None:
        return None
    if _is_undef(first):
        return second
    if _is_undef(second) or same_scalar(first, second):
        return first
    return None


def _is_undef(attr: Attribute | None) -> bool:
    return isinstance(attr, StringAttr) and attr.data == UNDEF


def _hint_allows(hint: Attribute | None, pad_value: Attribute | None) -> bool:
    """Whether elements promised to hold `hint` may stand for padding of `pad_value`."""
    return _is_undef(hint) or same_scalar(hint, pad_value)


# Identities -------------------------------------------------------------------------------


# Adjacent rewrites ------------------------------------------------------------------------


class ComposeAdjacentTransforms(RewritePattern):
    """``T2(T1(x))`` -> ``x``, ``(T2 . T1)(x)`` or ``pad((T2 . T1)(x))``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, TransformOp):
            return
        source = inner.input
        shape = inner.input_shape()
        # The pair's result keeps the step-by-step extents of [M1, M2]; the composed map,
        # simplified on the box, may have smaller ones (then a high pad makes up the rest).
        out_shape = op.result_shape()
        try:
            composed = inner.map.compose(op.map, shape=shape)
            composed_shape = tuple(transformed_shape([composed], shape))
        except ValueError:
            return
        if shape == out_shape and composed.is_identity_on(shape):
            rewriter.replace(op, [], [source])
            return
        ok, pad_value = _merge_pads(effective_pad(inner), effective_pad(op))
        if not ok or any(c > o for c, o in zip(composed_shape, out_shape, strict=True)):
            return
        pads = composed.padding_predicate(shape) is not None
        if pad_value is None and (pads or composed_shape != out_shape):
            return
        new_ops: list[Operation] = []
        value = source
        if composed_shape != shape or not composed.is_identity_on(shape):
            transform = TransformOp(source, composed, pad_value if pads else None)
            new_ops.append(transform)
            value = transform.result
        if composed_shape != out_shape:
            assert pad_value is not None
            high = [o - c for c, o in zip(composed_shape, out_shape, strict=True)]
            new_ops.append(PadOp(value, [0] * len(high), high, pad_value))
        rewriter.replace(op, new_ops)


class FoldPaddedTransformOfCrop(RewritePattern):
    """``T(crop(x, cropped_value = c), v)`` with padding -> ``T'(x)``, ``T'(j) = T(j -
    start)``, when the cropped-away elements may stand for ``T``'s padding."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        crop = op.input.owner
        if not isinstance(crop, CropOp) or not op.pads():
            return
        if not _hint_allows(crop.cropped_value, op.pad_value):
            return
        source_shape = static_shape(crop.input)
        assert source_shape is not None
        imap = op.map
        bounds = {
            name: (0, extent - 1)
            for name, extent in zip(imap.initial_indices, source_shape, strict=True)
        }
        shift = {
            name: Dim(name) - s
            for name, s in zip(imap.initial_indices, crop.get_start(), strict=True)
        }
        shifted = IndexMap(
            imap.initial_indices,
            tuple(simplify(e.substitute(shift), bounds) for e in imap.final_indices),
        )
        try:
            if tuple(shifted.map_shape(source_shape)) != op.result_shape():
                return
            if not shifted.is_injective(source_shape):
                return
            pads = shifted.padding_predicate(source_shape) is not None
        except ValueError:
            return
        rewriter.replace(op, TransformOp(crop.input, shifted, op.pad_value if pads else None))


class FoldCropOfPad(RewritePattern):
    """``crop(pad(x))`` -> ``x``, a crop of ``x``, a pad of (a crop of) ``x``, or a splat."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CropOp, rewriter: PatternRewriter) -> None:
        pad = op.input.owner
        if not isinstance(pad, PadOp):
            return
        x = pad.input
        x_shape = static_shape(x)
        assert x_shape is not None
        inner_start: list[int] = []
        inner_sizes: list[int] = []
        low: list[int] = []
        high: list[int] = []
        for s, n, lo, extent in zip(
            op.get_start(), op.get_sizes(), pad.get_low(), x_shape, strict=True
        ):
            first, last = max(s, lo), min(s + n, lo + extent)
            if first >= last:
                assert isinstance(op.result.type, TensorType)
                assert isinstance(pad.pad_value, FloatAttr | IntegerAttr)
                splat = dense_attr(op.result.type, [scalar_value(pad.pad_value)])
                rewriter.replace(op, ConstantOp(splat, op.result.type))
                return
            inner_start.append(first - lo)
            inner_sizes.append(last - first)
            low.append(first - s)
            high.append(s + n - last)
        new_ops: list[Operation] = []
        value = x
        if tuple(inner_sizes) != x_shape:
            crop = CropOp(x, inner_start, inner_sizes, op.cropped_value)
            new_ops.append(crop)
            value = crop.result
        if any(low) or any(high):
            new_ops.append(PadOp(value, low, high, pad.pad_value))
        rewriter.replace(op, new_ops, [new_ops[-1].results[0] if new_ops else value])


class FoldPadOfCrop(RewritePattern):
    """``pad(crop(x, cropped_value = c), v)`` restoring exactly the cropped elements ->
    ``x``, when ``c`` is undef or ``v``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter) -> None:
        crop = op.input.owner
        if not isinstance(crop, CropOp) or crop.input.type != op.result.type:
            return
        if op.get_low() != crop.get_start():
            return
        if not _hint_allows(crop.cropped_value, op.pad_value):
            return
        rewriter.replace(op, [], [crop.input])


class ComposeAdjacentCrops(RewritePattern):
    """``crop(crop(x))`` -> one crop."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CropOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, CropOp):
            return
        start = [a + b for a, b in zip(inner.get_start(), op.get_start(), strict=True)]
        hint = _merge_hints(inner.cropped_value, op.cropped_value)
        rewriter.replace(op, CropOp(inner.input, start, op.get_sizes(), hint))


class ComposeAdjacentPads(RewritePattern):
    """``pad(pad(x, v), v)`` -> one pad."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, PadOp) or not same_scalar(inner.pad_value, op.pad_value):
            return
        low = [a + b for a, b in zip(inner.get_low(), op.get_low(), strict=True)]
        high = [a + b for a, b in zip(inner.get_high(), op.get_high(), strict=True)]
        rewriter.replace(op, PadOp(inner.input, low, high, op.pad_value))


# Producers --------------------------------------------------------------------------------


@dataclass
class FoldRewriteIntoConstant(RewritePattern):
    """A layout rewrite of a dense `arith.constant` -> a new constant."""

    max_elements: int

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, LayoutRewrite):
            return
        constant = op.input.owner
        if not isinstance(constant, ConstantOp):
            return
        value = constant.value
        result_type = op.result.type
        if not isinstance(value, DenseIntOrFPElementsAttr) or not isinstance(
            result_type, TensorType
        ):
            return
        if prod(result_type.get_shape()) > self.max_elements:
            return
        # The evaluator (numpy) is imported when a constant is folded.
        import numpy as np

        from physlayout.semantics.graph_evaluator import (
            EvaluationError,
            apply_rewrite,
            dense_array,
        )

        try:
            array = apply_rewrite(op, dense_array(value, op.input.type))
        except EvaluationError:
            return
        flat = np.ascontiguousarray(array).ravel()
        bits = flat.view(np.dtype(f"u{flat.dtype.itemsize}"))
        splat = bool(flat.size) and bool(np.all(bits == bits[0]))
        attr = dense_attr(result_type, [flat[0].item()] if splat else flat.tolist())
        rewriter.replace(op, ConstantOp(attr, result_type))


class FoldRewriteOfFill(RewritePattern):
    """A layout rewrite of ``linalg.fill`` -> a fill of the new shape, when every element of
    the result is the fill value (a pad must add that same constant)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, LayoutRewrite):
            return
        fill = op.input.owner
        if not isinstance(fill, FillOp) or len(fill.inputs) != 1:
            return
        added = _added_value(op)
        scalar = fill.inputs[0].owner
        if added is not None and not (
            isinstance(scalar, ConstantOp) and same_scalar(scalar.value, added)
        ):
            return
        empty = EmptyOp([], op.result.type)
        # A copy of the fill with the new output: `FillOp(...)` would build its hidden body
        # again through xDSL's builder (about 5 ms a fill); the body is the same.
        new_fill = FillOp.create(
            operands=[fill.inputs[0], empty.tensor],
            result_types=[op.result.type],
            properties=dict(fill.properties),
            attributes=dict(fill.attributes),
            regions=[fill.regions[0].clone()],
        )
        rewriter.replace(op, [empty, new_fill])
        if not fill.res[0].uses:
            rewriter.erase(fill)


class FoldRewriteOfEmpty(RewritePattern):
    """A crop of ``tensor.empty``, or a transform of it without padding -> ``tensor.empty``
    of the new shape (the contents stay undefined)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, TransformOp | CropOp) or not isinstance(op.input.owner, EmptyOp):
            return
        if isinstance(op, TransformOp) and op.pads():
            return
        rewriter.replace(op, EmptyOp([], op.result.type))


class ReadGatherThroughTransform(RewritePattern):
    """``tensor.extract T(x)[i]`` (a gather, e.g. an upsample reading a tensor that
    convert-layout moved to NCHW4c and back) -> ``tensor.extract x[M^-1(i)]``, where ``M``
    is ``T``'s map and ``M^-1`` its exact inverse on the box of ``x`` (isl; ``T`` pads
    nothing, so every element of ``T(x)`` is an element of ``x``). The inverse's index
    arithmetic is emitted before the extract, over the extract's indices taken in the
    result's box (an index outside it is undefined behaviour already). ``T`` itself goes
    when nothing else reads it, and the gather reads ``x`` in its layout (a texture's
    texel and lane computed from the logical index)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.ExtractOp, rewriter: PatternRewriter) -> None:
        source = op.tensor.owner
        if not isinstance(source, TransformOp) or source.pads() or not extract_proven_inside(op):
            return
        shape = source.input_shape()
        if not shape:
            return
        try:
            inverse = source.map.inverse(shape)
        except ValueError:
            return
        names = inverse.initial_indices
        box = {n: (0, e - 1) for n, e in zip(names, source.result_shape(), strict=True)}
        values = dict(zip(names, op.indices, strict=True))
        emitter = ExprEmitter(InsertPoint.before(op), values, box)
        indices = [emitter.emit(e) for e in inverse.final_indices]
        rewriter.replace(op, tensor.ExtractOp(source.input, indices, op.result.type))


class ReadGatherThroughCrop(RewritePattern):
    """``tensor.extract crop(x)[i]`` -> ``tensor.extract x[i + start]``: an element of the
    window is the element of ``x`` at the shifted index (an index outside the window is
    undefined behaviour already), so a gather reads past a crop (e.g. the crop of the
    padded channels after NCHW4c -> NCHW, then through that transform)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.ExtractOp, rewriter: PatternRewriter) -> None:
        crop = op.tensor.owner
        if not isinstance(crop, CropOp) or not extract_proven_inside(op):
            return
        start = crop.get_start()
        names = [f"i{k}" for k in range(len(start))]
        box = {n: (0, e - 1) for n, e in zip(names, crop.get_sizes(), strict=True)}
        values = dict(zip(names, op.indices, strict=True))
        emitter = ExprEmitter(InsertPoint.before(op), values, box)
        indices = [emitter.emit(Dim(n) + k if k else Dim(n)) for n, k in zip(names, start, strict=True)]
        rewriter.replace(op, tensor.ExtractOp(crop.input, indices, op.result.type))


@dataclass(frozen=True)
class FoldLayoutRewritesPass(PhyslayoutPass):
    """Fold adjacent layout rewrites and rewrites of constants (see the module docstring).

    Options:
        max-constant-elements (int, 1048576): the largest constant (in elements) a rewrite
            is folded into.
    """

    name = "fold-layout-rewrites"

    max_constant_elements: int = 1 << 20
    """The largest constant (in elements) a rewrite is folded into."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.apply_and_report(ctx, op)

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        require_options(self.name, 0, max_constant_elements=self.max_constant_elements)
        refuse_invalid_buffers(self.name, op)
        return fold_layout_rewrites(op, self.max_constant_elements)


def fold_layout_rewrites(module: ModuleOp, max_constant_elements: int = 1 << 20) -> bool:
    """Apply the folds of `fold-layout-rewrites` to `module` until none applies; whether
    any did (or dead code was erased)."""
    return RootedWalker(
        GreedyRewritePatternApplier(
            [
                FoldIdentityTransform(),
                FoldTrivialPad(),
                FoldTrivialCrop(),
                ComposeAdjacentTransforms(),
                FoldPaddedTransformOfCrop(),
                FoldCropOfPad(),
                FoldPadOfCrop(),
                ComposeAdjacentCrops(),
                ComposeAdjacentPads(),
                FoldRewriteIntoConstant(max_constant_elements),
                FoldRewriteOfFill(),
                FoldRewriteOfEmpty(),
                ReadGatherThroughTransform(),
                ReadGatherThroughCrop(),
            ]
        )
    ).rewrite_module(module)
