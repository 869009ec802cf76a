"""contract-fma: a multiply whose only use is an add becomes one fused multiply-add.

Rewrites

    %p = arith.mulf %a, %b : T
    %s = arith.addf %p, %c : T        (or `arith.addf %c, %p`)

where `%p` has no other use and `T` is a vector of f32 (with `scalars=true`, also f32),
into

    %s = math.fma %a, %b, %c : T

(`-t opencl` writes `fma(a, b, c)`). Scalars are left alone by default: on PoCL's CPU
device a scalar `fma` ran at a third of the speed of its multiply and add (the RFC
example's second conv, whose accumulators are scalars: 2.1-2.5 against 7.9-8.2 GMAC/s),
while a `float4` one is faster than its two ops (14.8-16.1 against 9.9-13.1). When both
operands of the add are such products, the first one is contracted (the second stays a
multiply, rounded): the order of the additions is never changed, only the rounding of one
product per add is dropped.

Refuses (leaves as they are): f32 scalars unless `scalars`, a multiply with other uses (its
rounded product is needed there anyway), other element types (f16 stored in `half` is
computed in float with an explicit rounding after each op, which an `fma` would change; f64
is rare in kernels), an add or a multiply with fast-math flags (their meaning for a fused
op is not defined here), subtractions.

Semantics: `math.fma` rounds once (OpenCL's `fma` is correctly rounded, and so is the
evaluator's `math.fma` up to its double rounding through f64), so the result of the
contracted IR differs from the uncontracted one by the rounding error of the dropped
product: within 1e-5 relative for the reductions of the shared models
(test/python/test_contract_fma.py), not bit-exact. That is why the pipelines' `fp-contract`
option is off by default (docs/opencl.md).

Guarantees: idempotent (an `fma` is not an `addf`); every other op unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float32Type, ModuleOp, VectorType
from xdsl.ir import Attribute, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from physlayout.transforms.pass_options import PhyslayoutPass


def _is_f32(kind: Attribute, scalars: bool) -> bool:
    if isinstance(kind, VectorType):
        return isinstance(kind.get_element_type(), Float32Type)
    return scalars and isinstance(kind, Float32Type)


def _plain(op: arith.AddfOp | arith.MulfOp) -> bool:
    return not op.fastmath.data


def _single_use_product(value: SSAValue) -> arith.MulfOp | None:
    """The `arith.mulf` defining `value` when `value` has that one use and no fast-math
    flags; else None."""
    owner = value.owner
    if not isinstance(owner, arith.MulfOp) or not _plain(owner):
        return None
    return owner if value.has_one_use() else None


@dataclass
class ContractMulAdd(RewritePattern):
    """`addf(mulf(a, b), c)` or `addf(c, mulf(a, b))` of f32 vectors (and scalars, with
    `scalars`), the product used only there: `math.fma(a, b, c)`."""

    scalars: bool = False

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddfOp, rewriter: PatternRewriter) -> None:
        if not _is_f32(op.result.type, self.scalars) or not _plain(op):
            return
        for product, addend in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            mul = _single_use_product(product)
            if mul is None:
                continue
            rewriter.replace(op, math.FmaOp(mul.lhs, mul.rhs, addend))
            rewriter.erase(mul)
            return


@dataclass(frozen=True)
class ContractFmaPass(PhyslayoutPass):
    """Contract each f32 vector multiply whose only use is an add into a `math.fma` with
    it (see the module docstring).

    Options:
        scalars (bool, false): contract f32 scalars too.
    """

    name = "contract-fma"

    scalars: bool = False
    """Contract f32 scalars too (slower on PoCL's CPU device)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.apply_and_report(ctx, op)

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        walker = PatternRewriteWalker(ContractMulAdd(self.scalars), apply_recursively=False)
        return walker.rewrite_module(op)
