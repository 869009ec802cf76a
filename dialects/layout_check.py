"""`layout.check`: a run-time assertion over a whole tensor or buffer, decided on the host.

    layout.check %flags, "unimplemented: tensor with zero element" : tensor<16xi8>
    layout.check %flags, "unimplemented: tensor with zero element" : !layout.buffer<16xi8>

Meaning: the program fails with the message unless every element of ``%flags`` (integers)
is non-zero. It is the host-side form of `cf.assert` inside a `linalg.generic` body
(`normalize-graph` moves such asserts out of bodies: kernels never assert); at the graph
level it reads a tensor, after `legalize-layout` the buffer holding it, and the host
(`physlayout run`, the evaluators) reads the buffer back and reports the failure with the
message. It has an effect (a failure), so dead-code elimination keeps it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def
from xdsl.utils.exceptions import VerifyException

from physlayout.dialects.layout_types import BufferType

__all__ = ["CheckOp"]


@irdl_op_definition
class CheckOp(IRDLOperation):
    """`layout.check %flags, "message" : type`: fail with `message` unless every element of
    `flags` is non-zero."""

    name = "layout.check"

    flags = operand_def(TensorType | BufferType)
    message = prop_def(StringAttr)

    assembly_format = "$flags `,` $message attr-dict `:` type($flags)"

    def __init__(self, flags: SSAValue, message: str):
        super().__init__(operands=[flags], properties={"message": StringAttr(message)})

    def verify_(self) -> None:
        type_ = self.flags.type
        element: Attribute = (
            type_.element_type if isinstance(type_, BufferType) else type_.get_element_type()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        )
        if not isinstance(element, IntegerType):
            raise VerifyException(
                f"'{self.name}' expects flags of an integer element type, got {element}"
            )
