"""The flow rules of `flow-layout-rewrites` through the window ops of real graphs:
`layout.pad` (a conv's or pool's spatial padding) and `tensor.insert_slice` (a channel
concatenation, as `normalize-graph` decomposes `tensor.concat`), so that a transform at their
result moves to their operands and can cancel against the previous conv's transform back.

- ``transform_M(pad(x, low, high, v))`` -> ``pad'(transform_M(x), low', high', v)`` when
  every padded dimension ``d`` of ``x`` is an output of ``M`` by itself (a bare ``d`` at one
  output axis ``j``, and in no other output): ``pad'`` pads axis ``j`` as ``pad`` padded
  ``d``. When ``M`` itself pads (channels), its pad value must equal ``v`` bit for bit
  (the corner points that both pad hold ``v`` on one side and ``M``'s value on the other).
- ``transform_M(insert_slice(src, dest, offsets, sizes))`` (unit strides, static) ->
  ``insert_slice(transform_M(src), transform_M(dest), offsets', sizes')`` when every output
  of ``M`` that reads a sliced dimension ``d`` (offset not 0 or size not the whole extent)
  reads ``d`` alone, as a bare ``d`` (offset and size carry over) or as the pair ``d floordiv
  b`` / ``d mod b`` (the window must start at a multiple of ``b`` and end at one or at the
  end of ``d``: the slice is then whole blocks of the transformed tensor, the last one
  padded by ``M`` as the destination's is). A destination that is `tensor.empty` becomes a
  `tensor.empty` of the transformed type.

- ``transform_M(crop(x, start, sizes))`` -> ``crop(transform_M(x), start', sizes')`` when
  ``M`` does not lower the rank and moves the window as whole blocks (the conditions above:
  ShuffleNet's split of a shuffled concat, channels [24, 48) of 48, is texels [6, 12) of the
  blocked concat); the crop must be the transform's only input use (else ``x`` would be
  stored in both layouts). Where ``M`` pads ``x``, it pads the window's last block as it
  padded the crop; a transform without a pad value (it pads nothing of the crop) whose
  ``M`` would pad ``x`` stays where it is (``transform_M(x)`` would need a pad value).
- ``crop(x, start, sizes)`` read by a `tensor.insert_slice`, where ``x`` already has a
  blocked form ``T(x)`` (a bijection that raises the rank, in the same block, before the
  crop) that moves the window as whole blocks -> ``T^-1(crop(T(x), start', sizes'))``: the
  other half of the split joins the concat in its blocked form, and
  `sink-layout-rewrites` then moves ``T^-1`` below the concat (no transform of ``x`` is
  added; the crop reads the blocked tensor instead).

- ``tensor.extract x[i]`` (a gather: an upsample reading a feature map) where ``x`` also
  has a blocked form ``T(x)`` (a bijection of ``x``'s box onto ``T(x)``'s, in the same block)
  and every other use of ``x`` is such a gather, proven inside ``x`` ->
  ``tensor.extract T(x)[M(i)]`` (``T`` moved up to just after ``x``'s producer so that it
  dominates every gather): ``T`` is then ``x``'s only use and flows on into ``x``'s
  producer, which then writes the blocked form directly (FPN's top-down sums, read both by
  the next level's upsample and, blocked, by their 3x3 output conv).

Equal transforms of one value are merged first (`MergeEqualTransforms`), so a value with
several consumers that want the same layout flows too.

Soundness: both sides hold ``M(result)`` at every point (the window of the transformed
slice is exactly the image of the slice's window under ``M``, by the conditions above), and
the padding of ``M`` holds its pad value on both sides. Anything else is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp, static_shape
from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr, FloorDiv, Mod
from physlayout.transforms.block_order import precedes
from physlayout.transforms.value_bounds import extract_proven_inside

__all__ = [
    "CropThroughBlockedForm",
    "FlowTransformThroughCrop",
    "FlowTransformThroughInsertSlice",
    "FlowTransformThroughPad",
    "MergeEqualTransforms",
    "ReadGathersThroughBlockedForm",
    "bijection_inverse",
]


class MergeEqualTransforms(RewritePattern):
    """Two `layout.transform`s of the same tensor by the same map and pad value, in the same
    block -> the first one (a value with several consumers that all want one layout, e.g. the
    squeeze output of a fire module read by a 1x1 and a padded 3x3 conv; after the merge the
    transform is the value's only use and flows on)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        for use in op.input.uses:
            other = use.operation
            if other is op or not isinstance(other, TransformOp):
                continue
            if other.parent_block() is not op.parent_block() or not precedes(other, op):
                continue
            same = other.index_map == op.index_map or _renamed(other.map) == _renamed(op.map)
            if same and other.pad_value == op.pad_value and other.result.type == op.result.type:
                rewriter.replace(op, [], [other.result])
                return


class ReadGathersThroughBlockedForm(RewritePattern):
    """``T(x)`` with ``x`` otherwise read only by gathers ``tensor.extract x[i]`` ->
    ``tensor.extract T(x)[M(i)]`` (module docstring): ``T`` pads nothing and maps ``x``'s
    box onto its result's one to one (`bijection_inverse`), so ``T(x)[M(i)]`` is ``x[i]``
    for every ``i`` in the box, and every gather's indices are proven inside it. Refused:
    ``x`` a block argument (its layout is the caller's), a transform in another block, any
    other use of ``x``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        producer = op.input.owner
        if not isinstance(producer, Operation) or producer.parent_block() is not op.parent_block():
            return
        gathers = [use.operation for use in op.input.uses if use.operation is not op]
        if not gathers or bijection_inverse(op) is None:
            return
        if not all(_proven_gather(g, op.input) for g in gathers):
            return
        blocked = op.result
        if not all(precedes(op, _ancestor_in(g, op)) for g in gathers):
            moved = op.clone()
            rewriter.insert(moved, InsertPoint.after(producer))
            rewriter.replace(op, [], [moved.result])
            blocked = moved.result
        imap = op.map
        names = imap.initial_indices
        box = {n: (0, e - 1) for n, e in zip(names, op.input_shape(), strict=True)}
        for gather in gathers:
            assert isinstance(gather, tensor.ExtractOp)
            values = dict(zip(names, gather.indices, strict=True))
            emitter = ExprEmitter(InsertPoint.before(gather), values, box)
            indices = [emitter.emit(e) for e in imap.final_indices]
            rewriter.replace(gather, tensor.ExtractOp(blocked, indices, gather.result.type))


def _proven_gather(user: Operation, value: SSAValue) -> bool:
    """Whether `user` is a `tensor.extract` of `value` (as its tensor, not an index) whose
    indices are proven inside `value`'s box."""
    if not isinstance(user, tensor.ExtractOp) or user.tensor is not value:
        return False
    if any(index is value for index in user.indices):
        return False
    return extract_proven_inside(user)


def _ancestor_in(op: Operation, sibling: Operation) -> Operation:
    """The ancestor of `op` (or `op` itself) in `sibling`'s block (`op` is nested in it: an
    operand of `op` is defined in that block)."""
    block = sibling.parent_block()
    current = op
    while current.parent_block() is not block:
        parent = current.parent_op()
        assert parent is not None, "a use of a value lies inside the value's block"
        current = parent
    return current


def _renamed(imap: IndexMap) -> tuple[Expr, ...]:
    """The outputs of `imap` over its inputs renamed by position (``x0, x1, ...``), so that
    maps differing only in their input names compare equal."""
    rename = {name: Dim(f"x{k}") for k, name in enumerate(imap.initial_indices)}
    return tuple(e.substitute(rename) for e in imap.final_indices)


def _sole_use(op: TransformOp, producer: type[Operation]) -> Operation | None:
    """The producer of the transform's input when it is a `producer` whose result only the
    transform uses."""
    owner = op.input.owner
    if not isinstance(owner, producer) or not op.input.has_one_use():
        return None
    return owner


def _bare_axis(imap: IndexMap, name: str) -> int | None:
    """The output axis that is exactly `name`, when no other output reads `name`."""
    readers = [j for j, e in enumerate(imap.final_indices) if name in e.dims()]
    if len(readers) != 1 or imap.final_indices[readers[0]] != Dim(name):
        return None
    return readers[0]


class FlowTransformThroughPad(RewritePattern):
    """``transform(pad(x))`` -> ``pad(transform(x))`` (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        pad = _sole_use(op, PadOp)
        if not isinstance(pad, PadOp):
            return
        imap = op.map
        low, high = pad.get_low(), pad.get_high()
        rank = len(imap.final_indices)
        new_low, new_high = [0] * rank, [0] * rank
        for k, (lo, hi) in enumerate(zip(low, high, strict=True)):
            if not lo and not hi:
                continue
            axis = _bare_axis(imap, imap.initial_indices[k])
            if axis is None:
                return
            new_low[axis], new_high[axis] = lo, hi
        x_shape = static_shape(pad.input)
        if x_shape is None:
            return
        pads = imap.padding_predicate(x_shape) is not None
        if pads and op.pad_value != pad.pad_value:
            return
        moved = TransformOp(pad.input, imap, op.pad_value if pads else None)
        moved.result.name_hint = pad.input.name_hint
        padded = PadOp(moved.result, new_low, new_high, pad.pad_value)
        if padded.result.type != op.result.type:
            return
        padded.result.name_hint = op.result.name_hint
        rewriter.replace(op, [moved, padded])
        rewriter.erase(pad)


def sliced_window(
    imap: IndexMap, offsets: Sequence[int], sizes: Sequence[int], shape: Sequence[int]
) -> tuple[list[int], list[int]] | None:
    """The window (offsets, sizes) of the transformed slice in the transformed destination, or
    None when `imap` does not move the slice as whole blocks (module docstring)."""
    out_shape = imap.map_shape(list(shape))
    new_offsets, new_sizes = [0] * len(out_shape), list(out_shape)
    for k, (offset, size, extent) in enumerate(zip(offsets, sizes, shape, strict=True)):
        if offset == 0 and size == extent:
            continue
        name = imap.initial_indices[k]
        readers = [j for j, e in enumerate(imap.final_indices) if name in e.dims()]
        exprs = [imap.final_indices[j] for j in readers]
        if any(e.dims() != {name} for e in exprs):
            return None
        if exprs == [Dim(name)]:
            new_offsets[readers[0]], new_sizes[readers[0]] = offset, size
            continue
        blocks = [e for e in exprs if isinstance(e, FloorDiv) and e.lhs == Dim(name)]
        lanes = [e for e in exprs if isinstance(e, Mod) and e.lhs == Dim(name)]
        if len(exprs) != 2 or len(blocks) != 1 or len(lanes) != 1:
            return None
        b = blocks[0].divisor
        if lanes[0].divisor != b or offset % b or (size % b and offset + size != extent):
            return None
        axis = readers[exprs.index(blocks[0])]
        new_offsets[axis], new_sizes[axis] = offset // b, -(-size // b)
    return new_offsets, new_sizes


class FlowTransformThroughInsertSlice(RewritePattern):
    """``transform(insert_slice(src, dest))`` -> ``insert_slice(transform(src),
    transform(dest))`` (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        insert = _sole_use(op, tensor.InsertSliceOp)
        if not isinstance(insert, tensor.InsertSliceOp) or insert.offsets or insert.sizes:
            return
        if insert.strides or any(int(s) != 1 for s in insert.static_strides.get_values()):
            return
        offsets = [int(v) for v in insert.static_offsets.get_values()]
        sizes = [int(v) for v in insert.static_sizes.get_values()]
        dest_shape, src_shape = static_shape(insert.dest), static_shape(insert.source)
        if dest_shape is None or src_shape is None or list(src_shape) != sizes:
            return
        window = sliced_window(op.map, offsets, sizes, dest_shape)
        if window is None:
            return
        new_offsets, new_sizes = window
        source = self._transformed(op, insert.source, src_shape)
        if static_shape(source[-1]) != tuple(new_sizes):
            return
        dest = self._transformed(op, insert.dest, dest_shape)
        ops = [*(v.owner for v in (source[-1], dest[-1]) if isinstance(v.owner, Operation))]
        moved = tensor.InsertSliceOp.get(
            source[-1], dest[-1], static_offsets=new_offsets, static_sizes=new_sizes,
            static_strides=[1] * len(new_sizes),
        )  # fmt: skip
        if moved.result.type != op.result.type:
            for new in ops:
                new.erase()
            return
        moved.result.name_hint = op.result.name_hint
        rewriter.replace(op, [*ops, moved])
        rewriter.erase(insert)

    @staticmethod
    def _transformed(op: TransformOp, value: SSAValue, shape: Sequence[int]) -> list[SSAValue]:
        """`value` under the transform's map (a new `tensor.empty` for an empty tensor)."""
        if isinstance(value.owner, tensor.EmptyOp):
            element = op.result.type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
            empty = tensor.EmptyOp([], TensorType(element, op.map.map_shape(list(shape))))  # pyright: ignore[reportUnknownArgumentType]
            return [empty.tensor]
        pads = op.map.padding_predicate(list(shape)) is not None
        moved = TransformOp(value, op.map, op.pad_value if pads else None)
        moved.result.name_hint = value.name_hint
        return [moved.result]


class FlowTransformThroughCrop(RewritePattern):
    """``transform(crop(x))`` -> ``crop(transform(x))`` for a transform that does not lower
    the rank and moves the window as whole blocks (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        crop = _sole_use(op, CropOp)
        if not isinstance(crop, CropOp) or op.map.final_ndim < op.map.ndim:
            return
        moved = _blocked_crop(op, crop.input, crop.get_start(), crop.get_sizes(), crop)
        if moved is None or moved[-1].results[0].type != op.result.type:
            return
        blocked, cropped = moved
        # The blocked form right after x: other crops of x find it (CropThroughBlockedForm).
        owner = crop.input.owner
        where = (
            InsertPoint.after(owner)
            if isinstance(owner, Operation)
            else InsertPoint.at_start(owner)
        )
        rewriter.insert(blocked, where)
        rewriter.replace(op, cropped)
        rewriter.erase(crop)


def _blocked_crop(
    op: TransformOp,
    value: SSAValue,
    start: Sequence[int],
    sizes: Sequence[int],
    crop: CropOp | None,
) -> list[Operation] | None:
    """``crop(op's map of value)`` over the image of the window [start, start + sizes), as
    new ops (a transform of `value` first unless `crop` is None: `op` is then that transform
    already), or None when the window does not move as whole blocks."""
    shape = static_shape(value)
    if shape is None:
        return None
    try:  # the map may not be defined on the whole of `value` (``1 - i``)
        window = sliced_window(op.map, start, sizes, shape)
        pads = op.map.padding_predicate(list(shape)) is not None
    except ValueError:
        return None
    if window is None:
        return None
    if crop is not None and pads and op.pad_value is None:
        return None  # the map pads `value` but not the window: no pad value to block it with
    ops: list[Operation] = []
    if crop is not None:
        blocked = TransformOp(value, op.map, op.pad_value if pads else None)
        blocked.result.name_hint = value.name_hint
        ops.append(blocked)
        source = blocked.result
        promise = None if pads else crop.cropped_value
    else:
        source, promise = op.result, None
    moved = CropOp(source, window[0], window[1], promise)
    moved.result.name_hint = (crop.result if crop is not None else value).name_hint
    ops.append(moved)
    return ops


class CropThroughBlockedForm(RewritePattern):
    """``insert_slice(crop(x))`` where ``x`` has a blocked form ``T(x)`` ->
    ``insert_slice(T^-1(crop(T(x))))`` (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CropOp, rewriter: PatternRewriter) -> None:
        uses = list(op.result.uses)
        if len(uses) != 1 or not isinstance(uses[0].operation, tensor.InsertSliceOp):
            return
        if uses[0].index != 0:
            return
        shape = static_shape(op.input)
        if shape is None:
            return
        for use in op.input.uses:
            blocked = use.operation
            if not isinstance(blocked, TransformOp) or blocked.map.final_ndim <= blocked.map.ndim:
                continue
            if blocked.parent_block() is not op.parent_block() or not precedes(blocked, op):
                continue
            inverse = bijection_inverse(blocked)
            if inverse is None:
                continue
            cropped = _blocked_crop(blocked, op.input, op.get_start(), op.get_sizes(), None)
            if cropped is None:
                continue
            back = TransformOp(cropped[-1].results[0], inverse)
            if back.result.type != op.result.type:
                back.erase()
                for new in cropped:
                    new.erase()
                continue
            back.result.name_hint = op.result.name_hint
            rewriter.replace(op, [*cropped, back])
            return


def bijection_inverse(op: TransformOp) -> IndexMap | None:
    """The inverse of `op`'s map when the map is a bijection from the box of its input onto
    the box of its result (no padding, nothing cropped: every element of the result is
    ``input[inverse(j)]``), else None."""
    try:
        inverse, padding = op.map.non_surjective_inverse(op.input_shape())
    except ValueError:
        return None
    if padding is not None or tuple(inverse.map_shape(op.result_shape())) != op.input_shape():
        return None
    if inverse.padding_predicate(op.result_shape()) is not None:
        return None
    return inverse
