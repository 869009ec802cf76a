"""Fused groups of graph-level ops (`fuse-elementwise`; TVM's primitive functions of FuseOps,
MLIR's fused `linalg.generic`): one op whose region is the group, legalized as ONE kernel.

Semantics:

- ``%r = layout.fused ins(%a, %b : tensor<A>, tensor<B>) -> tensor<R> { ^bb0(%x: tensor<A>,
  %y: tensor<B>): ... layout.yield %v : tensor<R> }``: the value of the region run on the
  operands (block argument ``k`` is operand ``k``); ``%r`` is what ``layout.yield`` yields.
  The region may also use scalars defined above it (e.g. the ``0.0`` of a relu); tensors
  enter through ``ins`` only.
- The region is ordinary graph IR; which groups are *legal* (one kernel computes them:
  at most one generic with reduction loops, its *root*, the others elementwise on the
  element the root writes, read nowhere else) is decided by `fuse-elementwise` and
  checked again by `legalize-layout`.

``layout.scope`` on a `layout.fused` is the scope of its result, as on any producer.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import HasParent, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class FusedOp(IRDLOperation):
    """`layout.fused`: a group of graph ops computed by one kernel (module docstring)."""

    name = "layout.fused"

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    body = region_def("single_block")

    traits = traits_def(Pure(), RecursiveMemoryEffect())

    assembly_format = (
        "(`ins` `(` $inputs^ `:` type($inputs) `)`)? `->` type($result) attr-dict-with-keyword $body"
    )

    def __init__(self, inputs: Sequence[SSAValue], result_type: Attribute, body: Region):
        super().__init__(operands=[inputs], result_types=[result_type], regions=[body])

    @property
    def block(self) -> Block:
        """The group's one block."""
        return self.body.block

    def yielded(self) -> SSAValue:
        """The value the group yields."""
        last = self.block.last_op
        assert isinstance(last, YieldOp)
        return last.value

    def verify_(self) -> None:
        block = self.body.block
        arg_types = [a.type for a in block.args]
        in_types = [v.type for v in self.inputs]
        if arg_types != in_types:
            raise VerifyException(
                f"'{self.name}' block arguments ({', '.join(map(str, arg_types))}) must have "
                f"the types of its inputs ({', '.join(map(str, in_types))})"
            )
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException(f"'{self.name}' region must end in 'layout.yield'")
        if last.value.type != self.result.type:
            raise VerifyException(
                f"'{self.name}' yields {last.value.type} but its result is {self.result.type}"
            )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """`layout.yield`: the value of a `layout.fused` group."""

    name = "layout.yield"

    value = operand_def(TensorType)

    traits = traits_def(IsTerminator(), HasParent(FusedOp), Pure())

    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value])
