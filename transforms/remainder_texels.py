"""Whole texels apart from the remainder: the versioning step of vectorize-texels.

A lane loop whose body holds a masked if (apply-layout's padding test `x * 4 + %l >= C`
around a re-iterated body, C not a multiple of 4) runs both branches for all lanes once
vectorized, with a select per lane. For a channel count such as 5 or 6, every texel but
the last of a row has no padding lane. `VersionRemainderTexels` rewrites such a loop into

    scf.if (no lane takes the then branch) { the loop with the else branch inlined }
    else { the loop as it was }

so whole texels run plain vector code (one load and one store per texel, no selects or
guarded loads) and only the remainder texel runs the masked form. The test is the per-lane
condition evaluated before the loop (`!c0 & !c1 & !c2 & !c3`).

Applies only when the loop is accepted by `LaneLoopPlan` before and after the inlining,
it has exactly one masked if, which lanes take it is not known at compile time (a
constant per-lane condition, e.g. 3 channels in one texel, needs no version), and the
condition's index expressions use no value defined in the loop other than the lane.
Guarantees: the same stores of the same values for every lane (when the test holds, every
lane takes the else branch, whose ops the first version runs unguarded); the versioned
loops are not versioned again (the pass walks the loops that existed before).
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, i1
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from physlayout.transforms.lane_loop_plan import LaneLoopPlan
from physlayout.transforms.lane_vectorizer import LaneVectorizer


def _whole_texel_loop(loop: scf.ForOp, masked: scf.IfOp) -> scf.ForOp:
    """A detached copy of `loop` whose copy of `masked` is replaced by its else branch."""
    index = list(loop.body.block.ops).index(masked)
    whole = loop.clone()
    block = whole.body.block
    copy = list(block.ops)[index]
    assert isinstance(copy, scf.IfOp)
    else_block = copy.false_region.block
    yielded = else_block.last_op
    assert isinstance(yielded, scf.YieldOp)
    for op in list(else_block.ops):
        if op is yielded:
            break
        op.detach()
        block.insert_op_before(op, copy)
    for result, value in zip(copy.results, yielded.operands, strict=True):
        result.replace_all_uses_with(value)
    copy.detach()
    copy.erase()
    return whole


def _outside(plan: LaneLoopPlan, condition: SSAValue) -> bool:
    """Whether the per-lane forms of the mask `condition` use only values defined outside
    the loop (besides the lane, which they replace by a constant)."""
    analysis = plan.analysis
    pending = [condition]
    while pending:
        value = pending.pop()
        if value not in plan.varying:
            if plan.inside(value):
                return False
            continue
        owner = value.owner
        if isinstance(owner, arith.CmpiOp):
            for operand in owner.operands:
                for name in analysis.expr_of(operand).dims():
                    leaf = analysis.leaves[name]
                    if leaf is not plan.lane and plan.inside(leaf):
                        return False
            continue
        assert isinstance(owner, Operation)
        pending.extend(owner.operands)
    return True


class VersionRemainderTexels(RewritePattern):
    """A lane loop with a masked if -> `scf.if` between a whole-texel copy (else branch
    only) and the masked loop, by the per-lane condition."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        if not any(isinstance(inner, scf.IfOp) for inner in op.body.block.ops):
            return  # no masked if (an `scf.if` directly in the body): nothing to version
        plan = LaneLoopPlan.of(op)
        if plan is None or len(plan.masked) != 1:
            return
        (masked,) = plan.masked
        assert isinstance(masked, scf.IfOp)
        if masked.cond not in plan.varying or plan.lanes_taking(masked, True) is not None:
            return
        if not _outside(plan, masked.cond):
            return
        whole = _whole_texel_loop(op, masked)
        if LaneLoopPlan.of(whole) is None:
            whole.erase()
            return
        point = InsertPoint.before(op)
        lanes = LaneVectorizer(plan, rewriter).conditions(masked.cond, point)
        true = rewriter.insert(arith.ConstantOp(IntegerAttr(1, i1)), point).result
        test: SSAValue | None = None
        for lane in lanes:
            skips = rewriter.insert(arith.XOrIOp(lane, true), point).result
            test = (
                skips if test is None else rewriter.insert(arith.AndIOp(test, skips), point).result
            )
        assert test is not None
        test.name_hint = "whole_texel"
        versions = scf.IfOp(
            test,
            [],
            Region(Block([whole, scf.YieldOp()])),
            Region(Block([op.clone(), scf.YieldOp()])),
        )
        rewriter.insert(versions, point)
        rewriter.erase(op)
