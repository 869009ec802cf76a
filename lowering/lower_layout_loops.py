"""Raising `scf` loops to `affine` loops for `lower-layout`.

Upstream `affine.load`/`affine.store` accept only affine loop variables and function-level
values as map operands, so a buffer access inside an `scf.for` nest would have to fall back
to `memref.load` with `arith` index math. `lower-layout` (option `affine-loops`, on by
default) first raises the loops around `layout` accesses:

- `scf.for` with an `index` induction variable, a constant positive step and bounds that
  are constants or function-level values -> `affine.for` (loop-carried values kept:
  `scf.yield` becomes `affine.yield`);
- `scf.parallel` without reductions, with constant bounds and positive constant steps ->
  `affine.parallel` (`scf.reduce` becomes `affine.yield`).

Iteration spaces are unchanged (same bounds, same steps, same order for `scf.for`), so the
raise is exact. Loops that contain no `layout.load`/`layout.store`, or that sit below an op
that could start an affine scope, are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import affine, func, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    StringAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from physlayout.dialects.layout import LoadOp, StoreOp
from physlayout.lowering.lower_layout_access import affine_scope, is_valid_affine_symbol


def _contains_access(op: Operation) -> bool:
    return any(isinstance(inner, LoadOp | StoreOp) for inner in op.walk())


def _bound(value: SSAValue, function: func.FuncOp) -> tuple[AffineMapAttr, list[SSAValue]] | None:
    """An `affine.for` bound for `value`: a constant map, or `()[s0] -> (s0)` over a
    function-level value."""
    constant = const_evaluate_operand(value)
    if constant is not None:
        return AffineMapAttr(AffineMap(0, 0, (AffineExpr.constant(constant),))), []
    if is_valid_affine_symbol(value, function):
        return AffineMapAttr(AffineMap(0, 1, (AffineExpr.symbol(0),))), [value]
    return None


@dataclass
class RaiseScfForToAffineFor(RewritePattern):
    """`scf.for` around a buffer access -> `affine.for` with the same iteration space."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        body = op.body.block
        if not isinstance(body.args[0].type, IndexType) or not _contains_access(op):
            return
        function = affine_scope(op)
        step = const_evaluate_operand(op.step)
        if function is None or step is None or step <= 0:
            return
        lower = _bound(op.lb, function)
        upper = _bound(op.ub, function)
        if lower is None or upper is None:
            return
        terminator = body.last_op
        assert isinstance(terminator, scf.YieldOp)
        rewriter.replace(terminator, affine.YieldOp.get(*terminator.arguments))
        loop = affine.ForOp.from_region(
            lower[1],
            upper[1],
            op.iter_args,
            op.result_types,
            lower[0],
            upper[0],
            op.detach_region(op.body),
            step,
        )
        rewriter.replace(op, loop)


@dataclass
class RaiseScfParallelToAffineParallel(RewritePattern):
    """`scf.parallel` (no reductions, constant bounds) around a buffer access ->
    `affine.parallel` with the same iteration space."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ParallelOp, rewriter: PatternRewriter) -> None:
        if op.initVals or not _contains_access(op) or affine_scope(op) is None:
            return
        lowers = [const_evaluate_operand(v) for v in op.lowerBound]
        uppers = [const_evaluate_operand(v) for v in op.upperBound]
        steps = [const_evaluate_operand(v) for v in op.step]
        if any(v is None for v in [*lowers, *uppers]) or any(s is None or s <= 0 for s in steps):
            return
        terminator = op.body.block.last_op
        if not isinstance(terminator, scf.ReduceOp) or terminator.args:
            return
        rank = len(lowers)
        groups = DenseIntOrFPElementsAttr.from_list(VectorType(i32, [rank]), [1] * rank)
        rewriter.replace(terminator, affine.YieldOp.get())
        loop = affine.ParallelOp.build(
            operands=[[]],
            result_types=[[]],
            properties={
                "reductions": ArrayAttr[StringAttr]([]),
                "lowerBoundsMap": _constants_map(lowers),
                "lowerBoundsGroups": groups,
                "upperBoundsMap": _constants_map(uppers),
                "upperBoundsGroups": groups,
                "steps": ArrayAttr(IntegerAttr(s or 0, i64) for s in steps),
            },
            regions=[op.detach_region(op.body)],
        )
        rewriter.replace(op, loop)


def _constants_map(values: list[int | None]) -> AffineMapAttr:
    return AffineMapAttr(AffineMap(0, 0, tuple(AffineExpr.constant(v or 0) for v in values)))
