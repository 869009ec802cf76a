"""Memory scopes at the graph level (the Adreno texture RFC): where each tensor lives.

Two discardable attributes carry the scope decisions of `annotate-texture-scope`, and one op
realizes a change of scope (the RFC's `to_vdevice` copy):

- ``layout.scope = "global.texture"`` on an op: the memory scope its (single) tensor
  result is materialized in when `legalize-layout` allocates it (absent: ``"global"``);
- ``layout.operand_scopes = ["global.texture", "global", ...]`` on an op: the scope each
  operand is *demanded* in by this consumer, one entry per operand (``""`` for an operand
  that is not a tensor); `realize-scopes` inserts a copy where a demand differs from the
  scope of the operand's producer and then drops the attribute;
- ``%r = layout.copy %t {scope = "global.texture"} : tensor<...> -> tensor<...>``: the value
  of ``%t``, materialized in ``scope`` (an explicit copy between memory scopes). It is
  pure; ``legalize-layout`` turns it into a copy kernel.

Function arguments and results live in ``"global"`` (the host passes plain buffers).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, StringAttr, TensorType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from physlayout.dialects.layout import SCOPES, MemoryScope, memory_scope_problem

SCOPE_ATTR = "layout.scope"
"""Discardable attribute: the memory scope of an op's tensor result."""

OPERAND_SCOPES_ATTR = "layout.operand_scopes"
"""Discardable attribute: the memory scope a consumer demands for each of its operands."""

GLOBAL: str = MemoryScope.GLOBAL


@irdl_op_definition
class CopyOp(IRDLOperation):
    """`layout.copy`: the input tensor, materialized in the memory scope `scope`."""

    name = "layout.copy"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    scope = prop_def(StringAttr)

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, scope: str):
        super().__init__(
            operands=[input], result_types=[input.type], properties={"scope": StringAttr(scope)}
        )

    def verify_(self) -> None:
        if self.input.type != self.result.type:
            raise VerifyException(
                f"'{self.name}' must keep the tensor type: {self.input.type} -> {self.result.type}"
            )
        problem = memory_scope_problem(self.scope.data)
        if problem is not None:
            raise VerifyException(f"'{self.name}' {problem}")


def producer_scope(value: SSAValue) -> str:
    """The memory scope `value` is materialized in: a copy's target scope, its producer's
    `layout.scope`, else global (function arguments, unannotated producers)."""
    owner = value.owner
    if isinstance(value, BlockArgument) or not isinstance(owner, Operation):
        return GLOBAL
    if isinstance(owner, CopyOp):
        return owner.scope.data
    attr = owner.attributes.get(SCOPE_ATTR)
    return attr.data if isinstance(attr, StringAttr) else GLOBAL


def set_scope(op: Operation, scope: str) -> None:
    """Record the scope of `op`'s result (`layout.scope`, or a copy's target scope)."""
    if isinstance(op, CopyOp):
        op.scope = StringAttr(scope)
        return
    op.attributes[SCOPE_ATTR] = StringAttr(scope)


def operand_demands(op: Operation) -> list[str] | None:
    """The scopes `op` demands for its operands (`layout.operand_scopes`), or None."""
    attr = op.attributes.get(OPERAND_SCOPES_ATTR)
    if not isinstance(attr, ArrayAttr):
        return None
    demands: list[str] = []
    for entry in attr.data:
        if not isinstance(entry, StringAttr):
            return None
        demands.append(entry.data)
    return demands if len(demands) == len(op.operands) else None


def demands_attr(demands: Sequence[str]) -> ArrayAttr[StringAttr]:
    """The `layout.operand_scopes` attribute of `demands` (one scope per operand, "" for none)."""
    return ArrayAttr(StringAttr(d) for d in demands)


def scope_problem(op: Operation) -> str | None:
    """Why `op`'s scope annotations are malformed, or None."""
    attr: Attribute | None = op.attributes.get(SCOPE_ATTR)
    if attr is not None and (not isinstance(attr, StringAttr) or attr.data not in SCOPES):
        return f"'{op.name}' has an invalid {SCOPE_ATTR} {attr}, expected one of {list(SCOPES)}"
    demands = op.attributes.get(OPERAND_SCOPES_ATTR)
    if demands is None:
        return None
    listed = operand_demands(op)
    if listed is None or any(d and d not in SCOPES for d in listed):
        return (
            f"'{op.name}' has an invalid {OPERAND_SCOPES_ATTR} {demands}: expected one scope "
            f'(or "") per operand ({len(op.operands)}), each one of {list(SCOPES)}'
        )
    return None
