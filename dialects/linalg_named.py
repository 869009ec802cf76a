"""Named linalg ops that torch-mlir emits and xDSL 0.74 lacks: `linalg.depthwise_conv_2d_nchw_chw`,
`linalg.pooling_nchw_sum` and `linalg.batch_matmul`, with upstream's syntax (xDSL's named-op
format: `{strides, dilations}` in front, `ins(...) outs(...) -> type`) and upstream's
meaning: the indexing maps, iterator types and body that `mlir-opt-22
--linalg-generalize-named-ops` gives them (checked against it), so that every pass and the
evaluator handle them through their `linalg.generic` form.

- ``depthwise_conv_2d_nchw_chw``: loops ``(n, oh, ow, c, kh, kw)``, the last two reductions;
  ``I[n, c, oh * sh + kh * dh, ow * sw + kw * dw]``, ``K[c, kh, kw]``, ``O[n, c, oh, ow]``;
  body ``out + in * k``.
- ``pooling_nchw_sum``: loops ``(n, c, oh, ow, kh, kw)``; the window operand only gives the
  extents of ``kh, kw``; body ``out + in``.
- ``batch_matmul``: loops ``(b, i, j, k)``; ``A[b, i, k]``, ``B[b, k, j]``, ``C[b, i, j]``;
  body ``out + a * b``.

The verifier (xDSL's structured-op verifier) checks operand ranks against the maps.

`PoolingNchwMaxOp` replaces xDSL's `linalg.pooling_nchw_max`, whose body in xDSL 0.74 is
``max(in, window)``: it reads the window operand (an uninitialized `tensor.empty` that
only gives the window's extents) instead of the accumulator. Upstream's (and this) body is
``max(out, in)``. It is a plain subclass (no new IRDL definition), so `isinstance` with
xDSL's class still holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, ArrayAttr, IntegerType
from xdsl.dialects.linalg.abstract_ops import ConvOperation, NamedOperation, PoolingOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import PoolingNchwMaxOp as XdslPoolingNchwMaxOp
from xdsl.dialects.linalg.ops import YieldOp
from xdsl.ir import BlockArgument, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.irdl import irdl_op_definition

__all__ = ["BatchMatmulOp", "DepthwiseConv2DNchwChwOp", "PoolingNchwMaxOp", "PoolingNchwSumOp"]


def _mac_region(arg_types: Sequence[AnyFloat | IntegerType]) -> Region:
    """The body ``out + in0 * in1`` (floats: addf/mulf, integers: addi/muli)."""
    add, mul = (
        (arith.AddfOp, arith.MulfOp)
        if isinstance(arg_types[-1], AnyFloat)
        else (arith.AddiOp, arith.MuliOp)
    )

    @Builder.implicit_region(arg_types)
    def region(args: tuple[BlockArgument, ...]) -> None:
        product = mul(args[0], args[1])
        YieldOp(add(args[2], product))

    return region


@irdl_op_definition
class DepthwiseConv2DNchwChwOp(ConvOperation):
    """Depthwise 2-D convolution, NCHW data and CHW filter (one filter per channel)."""

    name = "linalg.depthwise_conv_2d_nchw_chw"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _mac_region(cls.body_arg_types((*inputs, *outputs)))

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, oh, ow, c, kh, kw = (AffineDimExpr(dim) for dim in range(6))
        stride_h, stride_w = self.strides.get_values()
        dilation_h, dilation_w = self.dilations.get_values()
        return (
            AffineMap(
                6, 0, (n, c, oh * stride_h + kh * dilation_h, ow * stride_w + kw * dilation_w)
            ),
            AffineMap(6, 0, (c, kh, kw)),
            AffineMap(6, 0, (n, c, oh, ow)),
        )

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return ArrayAttr((IteratorTypeAttr.parallel(),) * 4 + (IteratorTypeAttr.reduction(),) * 2)


class PoolingNchwMaxOp(XdslPoolingNchwMaxOp):
    """Max pooling over NCHW windows, with upstream's body ``max(out, in)``."""

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        arg_types = cls.body_arg_types((*inputs, *outputs))
        maximum = arith.MaximumfOp if isinstance(arg_types[-1], AnyFloat) else arith.MaxSIOp

        @Builder.implicit_region(arg_types)
        def region(args: tuple[BlockArgument, ...]) -> None:
            YieldOp(maximum(args[2], args[0]))

        return region


@irdl_op_definition
class PoolingNchwSumOp(PoolingOperation):
    """Sum pooling over NCHW windows (average pooling divides its result afterwards)."""

    name = "linalg.pooling_nchw_sum"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        arg_types = cls.body_arg_types((*inputs, *outputs))
        add = arith.AddfOp if isinstance(arg_types[-1], AnyFloat) else arith.AddiOp

        @Builder.implicit_region(arg_types)
        def region(args: tuple[BlockArgument, ...]) -> None:
            YieldOp(add(args[2], args[0]))

        return region

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, c, oh, ow, kh, kw = (AffineDimExpr(dim) for dim in range(6))
        stride_h, stride_w = self.strides.get_values()
        dilation_h, dilation_w = self.dilations.get_values()
        return (
            AffineMap(
                6, 0, (n, c, oh * stride_h + kh * dilation_h, ow * stride_w + kw * dilation_w)
            ),
            AffineMap(6, 0, (kh, kw)),
            AffineMap(6, 0, (n, c, oh, ow)),
        )


@irdl_op_definition
class BatchMatmulOp(NamedOperation):
    """``C[b] += A[b] @ B[b]`` for every batch ``b``."""

    name = "linalg.batch_matmul"

    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _mac_region(cls.body_arg_types((*inputs, *outputs)))

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        b, i, j, k = (AffineDimExpr(dim) for dim in range(4))
        return (AffineMap(4, 0, (b, i, k)), AffineMap(4, 0, (b, k, j)), AffineMap(4, 0, (b, i, j)))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return ArrayAttr((IteratorTypeAttr.parallel(),) * 3 + (IteratorTypeAttr.reduction(),))
