"""Canonicalization patterns of the `layout` dialect's graph-level ops, attached to the ops
with `HasCanonicalizationPatternsTrait`, so that stock `xdsl-opt -p canonicalize` applies
them (`fold-layout-rewrites` runs them too, among its other folds).

- `FoldIdentityTransform`: ``layout.transform`` whose map is proven (isl) the identity on
  the box of its input, with the input's type, -> its input.
- `FoldInverseTransforms`: ``T2(T1(x))`` whose composition ``T2 . T1`` is proven the
  identity on the box of ``x``, with the type of ``x``, -> ``x``. Exact with padding too:
  ``T2`` is injective on the box of ``T1``'s result (the verifier proves it), so every
  position ``i`` of the result holds ``T1(x)[T1(i)] = x[i]``. A padded transform followed
  by its inverse map has a larger result than ``x`` (the padding is kept) and is left to
  `fold-layout-rewrites`, which folds it into a ``layout.pad``.
- `FoldTrivialPad`: ``layout.pad`` with all widths zero -> its input.
- `FoldTrivialCrop`: ``layout.crop`` of the whole tensor -> its input.

Each pattern only removes ops and refuses what it cannot prove.
"""

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp


class FoldIdentityTransform(RewritePattern):
    """``layout.transform`` with a map proven the identity on its input box -> its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        if op.input.type != op.result.type or not op.map.is_identity_on(op.input_shape()):
            return
        rewriter.replace(op, [], [op.input])


class FoldInverseTransforms(RewritePattern):
    """``T2(T1(x))`` with ``T2 . T1`` proven the identity on the box of ``x`` -> ``x``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, TransformOp) or inner.input.type != op.result.type:
            return
        shape = inner.input_shape()
        try:
            composed = inner.map.compose(op.map, shape=shape)
        except ValueError:
            return
        if composed.is_identity_on(shape):
            rewriter.replace(op, [], [inner.input])


class FoldTrivialPad(RewritePattern):
    """``layout.pad`` with all widths zero -> its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter) -> None:
        if any(op.get_low()) or any(op.get_high()):
            return
        rewriter.replace(op, [], [op.input])


class FoldTrivialCrop(RewritePattern):
    """``layout.crop`` of the whole tensor -> its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CropOp, rewriter: PatternRewriter) -> None:
        if op.input.type != op.result.type:
            return
        rewriter.replace(op, [], [op.input])
