"""Which graph values `legalize-layout` stores straight through the layout of the
`layout.transform` that reads them (destination passing through a pending layout, RFC 0039:
the producer's kernel writes logical element ``i`` at physical ``M(i)``), so that the
transform launches no copy kernel: a model's last convolution writes its NCHW result
directly instead of an NCHW4c texture that a boundary kernel copies to NCHW.

`direct_relayouts(block)` names them. Proven per value (`relayout_problem`): it is the one
result of a top-level `linalg.generic` or `layout.fused` group, the transform is its only
use, and the transform's map is a bijection of the value's box onto the result's box
(`bijection_inverse`: no padding, so every element of the result is written, by exactly
one point of the producer; injective, so no two points write the same element). The
result's scope is not a texture (a store of a relabelled element is not a whole texel).
Not taken: a reshape between global buffers (`preserves_row_major_order`), which
`legalize-layout` already legalizes as a second declaration of one storage, no kernel
(unless the reshape is returned: the view would then be copied into the out-parameter).

Soundness (no reader sees a half-written buffer): the producer's result has no other
reader, and the transform's result is only read by ops after the transform, hence after
the producer's kernel; nothing is read from the transform's storage while the producer
writes it (it is fresh storage, or an out-parameter, distinct from every input).
`legalize-layout` checks at the producer that its parallel points cover its whole result
(else it keeps the copy kernel).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, SSAValue

from physlayout.dialects.layout import is_texture_scope
from physlayout.dialects.layout_fused import FusedOp
from physlayout.dialects.layout_graph import TransformOp
from physlayout.dialects.layout_scopes import GLOBAL, producer_scope
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr
from physlayout.transforms.flow_through_windows import bijection_inverse

__all__ = ["direct_relayouts", "preserves_row_major_order", "relayout_problem"]


def preserves_row_major_order(
    imap: IndexMap, shape: tuple[int, ...], result_shape: tuple[int, ...]
) -> bool:
    """Whether `imap` sends every index of the box `shape` to the index of `result_shape`
    at the same row-major position (a reshape: the buffers hold the same bytes), proven
    (isl) on the box."""
    if prod(shape) != prod(result_shape) or not shape or not result_shape:
        return False

    def linear(exprs: Sequence[Expr], extents: Sequence[int]) -> Expr:
        total: Expr = Const(0)
        for expr, extent in zip(exprs, extents, strict=True):
            total = total * extent + expr
        return total

    names = imap.initial_indices
    source = IndexMap(names, (linear([Dim(n) for n in names], shape),))
    moved = IndexMap(names, (linear(imap.final_indices, result_shape),))
    try:
        return source.is_equivalent_to(moved, shape)
    except ValueError:
        return False


def relayout_problem(value: SSAValue) -> str | None:
    """Why the producer of `value` cannot store it through the layout of the transform that
    reads it (module docstring), or None when it can."""
    producer = value.owner
    if not isinstance(producer, GenericOp | FusedOp) or len(producer.results) != 1:
        return "its producer is not a one-result linalg.generic or layout.fused group"
    uses = list(value.uses)
    if len(uses) != 1 or not isinstance(uses[0].operation, TransformOp):
        return "it is not read by one layout.transform alone"
    transform = uses[0].operation
    if not isinstance(value.type, TensorType) or not transform.input_shape():
        return "it is not a tensor of rank 1 or more"
    scope = producer_scope(transform.result)
    if is_texture_scope(scope):
        return f"the transform's result lives in {scope} (relabelled stores split texels)"
    if bijection_inverse(transform) is None:
        return "the transform is not a bijection of its box (it pads or is not onto)"
    reshape = preserves_row_major_order(
        transform.map, transform.input_shape(), transform.result_shape()
    )
    returned = any(isinstance(use.operation, func.ReturnOp) for use in transform.result.uses)
    if reshape and producer_scope(value) == GLOBAL and not returned:
        return "the transform is a reshape of a global buffer (a view, no kernel)"
    return None


def direct_relayouts(block: Block) -> dict[SSAValue, TransformOp]:
    """The values of `block` whose producers store them straight through the layout of the
    transform that reads them (`relayout_problem` is None), by value."""
    direct: dict[SSAValue, TransformOp] = {}
    for op in block.ops:
        if not isinstance(op, GenericOp | FusedOp) or len(op.results) != 1:
            continue
        value = op.results[0]
        if relayout_problem(value) is None:
            (use,) = value.uses
            assert isinstance(use.operation, TransformOp)
            direct[value] = use.operation
    return direct
