"""realize-scopes: make the memory-scope decisions explicit (the Adreno RFC's RealizeVDevice,
RemoveRedundantAssignments and OptimizeToVDeviceForScopeChange).

What it rewrites (scopes as in `dialects/layout_scopes.py`: a producer's ``layout.scope``,
a `layout.copy`'s ``scope``, ``global`` for arguments and unannotated producers):

- `RealizeOperandDemands`: each operand whose ``layout.operand_scopes`` demand differs from
  the scope its value is in is replaced by ``layout.copy %v {scope = demand}``, created
  right after ``%v`` is defined and shared by every use that demands that scope (a copy's
  own operand needs none: a copy reads any scope); the ``layout.operand_scopes`` attribute
  is then dropped (the demands are realized);
- `RemoveRedundantCopy`: a `layout.copy` into the scope its input is already in is its
  input;
- `MergeDuplicateCopies`: two copies of one value into one scope in one block: the later
  one is the earlier one;
- `WriteConsumerScopeDirectly`: when every use of a producer's result is a copy into one
  scope ``S``, the producer writes ``S`` itself and the copies go (a producer that cannot
  write whole texels, see `annotate_texture_scope.writes_texels`, keeps its copies; a copy
  of a copy composes into one copy).

Copies never change values (`layout.copy` is the identity on values), so results are
unchanged. Guarantees: after the pass no operand demands another scope than its value's,
no copy is redundant, and a second run changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.layout import is_texture_scope
from physlayout.dialects.layout_scopes import (
    OPERAND_SCOPES_ATTR,
    CopyOp,
    operand_demands,
    producer_scope,
    scope_problem,
    set_scope,
)
from physlayout.transforms.annotate_texture_scope import image_size, writes_texels
from physlayout.transforms.block_order import precedes
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker


def _copy_of(value: SSAValue, scope: str) -> CopyOp | None:
    """An existing copy of `value` into `scope` in the block that defines `value`."""
    block = value.owner if isinstance(value, BlockArgument) else value.owner.parent_block()
    for use in value.uses:
        user = use.operation
        if isinstance(user, CopyOp) and user.scope.data == scope and user.parent_block() is block:
            return user
    return None


def _after_definition(value: SSAValue) -> InsertPoint:
    if isinstance(value, BlockArgument):
        block = value.block
        first = block.first_op
        return InsertPoint.before(first) if first else InsertPoint.at_end(block)
    assert isinstance(value, OpResult)
    return InsertPoint.after(value.op)


class RealizeOperandDemands(RewritePattern):
    """Insert the copies that `layout.operand_scopes` demands, then drop the attribute."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if OPERAND_SCOPES_ATTR not in op.attributes:
            return
        problem = scope_problem(op)
        demands = operand_demands(op)
        if problem is not None or demands is None:
            raise PassFailedException(f"realize-scopes: {problem}")
        if isinstance(op, CopyOp):
            demands = [""]
        for index, (value, demand) in enumerate(zip(op.operands, demands, strict=True)):
            if not demand or not isinstance(value.type, TensorType):
                continue
            if isinstance(value.owner, EmptyOp) or producer_scope(value) == demand:
                continue
            copy = _copy_of(value, demand)
            if copy is None:
                copy = CopyOp(value, demand)
                copy.result.name_hint = value.name_hint
                rewriter.insert(copy, _after_definition(value))
            op.operands[index] = copy.result
        del op.attributes[OPERAND_SCOPES_ATTR]
        rewriter.notify_op_modified(op)


class RemoveRedundantCopy(RewritePattern):
    """`layout.copy` into the scope its input already lives in -> its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CopyOp, rewriter: PatternRewriter) -> None:
        if producer_scope(op.input) == op.scope.data:
            rewriter.replace(op, [], [op.input])


class MergeDuplicateCopies(RewritePattern):
    """A second copy of a value into the same scope, in the same block -> the first."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CopyOp, rewriter: PatternRewriter) -> None:
        block = op.parent_block()
        if block is None:
            return
        for use in op.input.uses:
            other = use.operation
            if (
                other is not op
                and isinstance(other, CopyOp)
                and other.scope == op.scope
                and other.parent_block() is block
                and precedes(other, op)
            ):
                rewriter.replace(op, [], [other.result])
                return


class WriteConsumerScopeDirectly(RewritePattern):
    """A producer whose every use is a copy into one scope writes that scope itself."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if len(op.results) != 1 or isinstance(op, EmptyOp):
            return
        result = op.results[0]
        copies = [use.operation for use in result.uses]
        if not copies or not all(isinstance(c, CopyOp) for c in copies):
            return
        scopes = {c.scope.data for c in copies if isinstance(c, CopyOp)}
        if len(scopes) != 1:
            return
        (scope,) = scopes
        if is_texture_scope(scope) and (
            image_size(result, scope) is None or writes_texels(op) is not None
        ):
            return
        set_scope(op, scope)
        rewriter.notify_op_modified(op)
        for copy in copies:
            rewriter.replace(copy, [], [result])


@dataclass(frozen=True)
class RealizeScopesPass(PhyslayoutPass):
    """Realize scope demands as copies and remove the copies that are not needed."""

    name = "realize-scopes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        RootedWalker(RealizeOperandDemands(), apply_recursively=False).rewrite_module(op)
        RootedWalker(
            GreedyRewritePatternApplier(
                [RemoveRedundantCopy(), MergeDuplicateCopies(), WriteConsumerScopeDirectly()]
            )
        ).rewrite_module(op)
