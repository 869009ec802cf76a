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

Cropped relayouts (`direct_cropped_relayouts`): the transform's result is read by one
`layout.crop` alone (a model's result: NCHW4c back to NCHW, then the padded channels cropped
away). The producer stores element ``i`` at ``M(i) - start`` of the crop's storage, and only
where that lies inside the crop's window (`CroppedStore`: a guarded store; the cropped
elements are never stored). The same conditions hold (a bijection onto the transform's box,
read by the crop alone, a non-texture crop result), so every element of the window is
written by exactly one point of the producer, and nothing else reads the uncropped tensor;
neither the transform nor the crop launches a kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, Operation, SSAValue

from physlayout.dialects.layout import StoreOp, is_texture_scope
from physlayout.dialects.layout_fused import FusedOp
from physlayout.dialects.layout_graph import CropOp, TransformOp
from physlayout.dialects.layout_scopes import GLOBAL, producer_scope
from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr
from physlayout.transforms.flow_through_windows import bijection_inverse

__all__ = [
    "CroppedStore",
    "cropped_relayout_problem",
    "cropped_store",
    "direct_cropped_relayouts",
    "direct_relayouts",
    "preserves_row_major_order",
    "relayout_problem",
]


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


def _only_transform_reader(value: SSAValue) -> TransformOp | str:
    """The `layout.transform` that alone reads `value`, the one result of a generic or
    fused group; else why not."""
    producer = value.owner
    if not isinstance(producer, GenericOp | FusedOp) or len(producer.results) != 1:
        return "its producer is not a one-result linalg.generic or layout.fused group"
    uses = list(value.uses)
    if len(uses) != 1 or not isinstance(uses[0].operation, TransformOp):
        return "it is not read by one layout.transform alone"
    return uses[0].operation


def relayout_problem(value: SSAValue) -> str | None:
    """Why the producer of `value` cannot store it through the layout of the transform that
    reads it (module docstring), or None when it can."""
    transform = _only_transform_reader(value)
    if isinstance(transform, str):
        return transform
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


def cropped_relayout_problem(value: SSAValue) -> str | None:
    """Why the producer of `value` cannot store it through the transform that reads it and
    the crop that alone reads the transform's result (module docstring), or None."""
    transform = _only_transform_reader(value)
    if isinstance(transform, str):
        return transform
    readers = list(transform.result.uses)
    if len(readers) != 1 or not isinstance(readers[0].operation, CropOp):
        return "the transform's result is not read by one layout.crop alone"
    if not isinstance(value.type, TensorType) or not transform.input_shape():
        return "it is not a tensor of rank 1 or more"
    scope = producer_scope(readers[0].operation.result)
    if is_texture_scope(scope):
        return f"the crop's result lives in {scope} (a guarded store splits texels)"
    if bijection_inverse(transform) is None:
        return "the transform is not a bijection of its box (it pads or is not onto)"
    return None


def direct_cropped_relayouts(block: Block) -> dict[SSAValue, CropOp]:
    """The values of `block` whose producers can store them straight into the window of the
    crop that reads their transform (`cropped_relayout_problem` is None): that crop, by
    value."""
    direct: dict[SSAValue, CropOp] = {}
    for op in block.ops:
        if not isinstance(op, GenericOp | FusedOp) or len(op.results) != 1:
            continue
        value = op.results[0]
        if cropped_relayout_problem(value) is None:
            (use,) = value.uses
            (read,) = use.operation.results[0].uses
            assert isinstance(read.operation, CropOp)
            direct[value] = read.operation
    return direct


def cropped_store(crop: CropOp | None) -> CroppedStore | None:
    """How the producer of the transform `crop` reads stores into `crop`'s storage (None
    for no crop)."""
    if crop is None:
        return None
    transform = crop.input.owner
    assert isinstance(transform, TransformOp)
    return CroppedStore(transform.map, tuple(crop.get_start()), tuple(crop.get_sizes()))


@dataclass(frozen=True)
class CroppedStore:
    """A store of element ``i`` of a producer's result at ``map(i) - start`` of a crop's
    storage (extents `sizes`), done only where that index lies inside it (module
    docstring)."""

    map: IndexMap
    start: tuple[int, ...]
    sizes: tuple[int, ...]

    def store(
        self, value: SSAValue, target: SSAValue, exprs: Sequence[Expr], emitter: ExprEmitter
    ) -> None:
        """Emit the store of `value` (element `exprs` of the result, over the kernel's loop
        variables bounded by `emitter.bounds`) at the emitter's insertion point, inside an
        `scf.if` on the window's bounds where an index may leave them (`expr_range`)."""
        mapped = self.map.map_exprs(exprs, emitter.bounds)
        moved = [e - k if k else e for e, k in zip(mapped, self.start, strict=True)]
        indices = [emitter.emit(e) for e in moved]
        inside: SSAValue | None = None
        for expr, index, size in zip(moved, indices, self.sizes, strict=True):
            low, high = expr_range(expr, emitter.bounds)
            checks = [(0, "sge")] if low < 0 else []
            checks += [(size, "slt")] if high >= size else []
            for bound, predicate in checks:
                check = arith.CmpiOp(index, emitter.constant(bound), predicate)
                emitter.insert(check)
                inside = check.result if inside is None else _and(inside, check.result, emitter)
        store: Operation = StoreOp(value, target, indices)
        if inside is not None:
            store = scf.IfOp(inside, [], [store, scf.YieldOp()])
        emitter.insert(store)


def _and(first: SSAValue, second: SSAValue, emitter: ExprEmitter) -> SSAValue:
    both = arith.AndIOp(first, second)
    emitter.insert(both)
    return both.result
