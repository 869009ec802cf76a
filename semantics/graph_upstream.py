"""numpy reference semantics of the upstream tensor relayout ops that
`lower-layout-rewrites` emits and `raise-layout-rewrites` reads, for the graph evaluator
(`physlayout.semantics.graph_evaluator`).

- `linalg.pack`: ``pack_map.map_ndarray(source, padding_value)`` (positions past the end of
  a tiled dimension hold the padding value); `linalg.unpack` into a destination of shape
  ``D``: ``result[i] = source[pack_map(i)]`` for every index ``i`` of ``D``
  (`IndexMap.inverse_map_ndarray`). The destination's contents are never read.
- `linalg.transpose`: ``result = numpy.transpose(input, permutation)`` (result dimension
  ``i`` is input dimension ``permutation[i]``); the init's contents are never read.
- `tensor.expand_shape` / `tensor.collapse_shape`: row-major reshapes.
- `tensor.pad` (static widths): `numpy.pad` with the value the region yields, which must be
  defined outside the region or be an `arith.constant` in it (a value that depends on the
  position is not supported).
- `tensor.extract_slice` (static offsets, sizes, strides): the strided window, with the unit
  dimensions the result type drops removed.
- `tensor.extract`: one element, bounds checked.
- `linalg.broadcast`: the input repeated along the added dimensions; `tensor.concat`: the
  operands joined along `dim`; `tensor.insert_slice` (static): `dest` with the window
  replaced by `source`.

Everything else raises `EvaluationError`, as does a dynamic shape, tile or index list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IntegerAttr, TensorType
from xdsl.dialects.linalg.ops import BroadcastOp, TransposeOp
from xdsl.ir import Operation, SSAValue

from physlayout.dialects.linalg_pack import PackOp, UnPackOp
from physlayout.indexing.index_map import IndexMap
from physlayout.semantics.evaluator_values import Array, EvaluationError

UpstreamFn = Callable[[Operation, Sequence[Array], Callable[[SSAValue], Array | None]], Array]
"""Evaluates an op on its operand arrays; the callback reads values defined elsewhere."""


def _static(op: Operation, values: Sequence[int], what: str) -> tuple[int, ...]:
    if DYNAMIC_INDEX in values:
        raise EvaluationError(f"'{op.name}': dynamic {what} are not supported")
    return tuple(values)


def _result_shape(op: Operation) -> tuple[int, ...]:
    type_ = op.results[0].type
    if not isinstance(type_, TensorType):
        raise EvaluationError(f"'{op.name}': expected a tensor result, got {type_}")
    return _static(op, tuple(type_.get_shape()), "extents")


def pack(op: Operation, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]) -> Array:
    """`linalg.pack`: the source relaid out by the op's index map into the result's tiled shape, padding filled with the op's padding value."""
    assert isinstance(op, PackOp)
    pad = None if op.padding_value is None else np.asarray(args[2]).item()
    return _relaid_out(op, lambda imap: imap.map_ndarray(args[0], pad_value=pad))


def unpack(
    op: Operation, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]
) -> Array:
    """`linalg.unpack`: the inverse relayout of `linalg.pack`, dropping the padding."""
    assert isinstance(op, UnPackOp)
    return _relaid_out(op, lambda imap: imap.inverse_map_ndarray(args[0], _result_shape(op)))


def _relaid_out(op: PackOp | UnPackOp, relayout: Callable[[IndexMap], Array]) -> Array:
    """`relayout` of the op's index map; a dynamic tile or a refused relayout is an
    `EvaluationError` naming the op."""
    imap = op.index_map()
    if imap is None:
        raise EvaluationError(f"'{op.name}': dynamic tiles are not supported")
    try:
        return relayout(imap)
    except ValueError as err:
        raise EvaluationError(f"'{op.name}': {err}") from None


def transpose(
    op: Operation, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]
) -> Array:
    """`linalg.transpose`: the input with its axes permuted by the op's permutation."""
    assert isinstance(op, TransposeOp)
    if not op.res:
        raise EvaluationError("'linalg.transpose' on buffers is not supported")
    perm = tuple(int(v) for v in op.permutation.get_values())
    return np.array(np.transpose(args[0], perm))


def reshape(
    op: Operation, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]
) -> Array:
    """`tensor.expand_shape`/`collapse_shape`: the row-major elements in the result's static shape."""
    shape = _result_shape(op)
    if int(np.prod(shape)) != args[0].size:
        raise EvaluationError(f"'{op.name}': cannot reshape {args[0].shape} into {shape}")
    return np.array(np.reshape(args[0], shape))


def pad(op: Operation, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]) -> Array:
    """`tensor.pad` with static widths and a constant pad value (`pad_scalar`)."""
    assert isinstance(op, tensor.PadOp)
    low = _static(op, tuple(op.static_low.get_values()), "pad widths")
    high = _static(op, tuple(op.static_high.get_values()), "pad widths")
    return padded(args[0], low, high, pad_scalar(op, outer))


def padded(x: Array, low: Sequence[int], high: Sequence[int], value: Any) -> Array:
    """`x` with `low`/`high` elements of `value` added before/after each dimension (a new
    array). A rank-0 `x` has nothing to pad: its copy (`np.pad` refuses a 0-d array)."""
    if x.ndim == 0:
        return np.array(x)
    return np.pad(x, list(zip(low, high, strict=True)), constant_values=value)


def pad_scalar(
    op: tensor.PadOp, outer: Callable[[SSAValue], Array | None] | None = None
) -> float | int:
    """The constant a `tensor.pad` yields: a value defined outside its region (read with
    `outer`) or an `arith.constant` in it."""
    yielded = op.region.block.last_op
    if not isinstance(yielded, tensor.YieldOp) or len(yielded.operands) != 1:
        raise EvaluationError("'tensor.pad': expected a region ending in one tensor.yield")
    value = yielded.operands[0]
    owner = value.owner
    if isinstance(owner, ConstantOp) and isinstance(owner.value, FloatAttr | IntegerAttr):
        return owner.value.value.data
    if isinstance(owner, Operation) and owner.parent_block() is op.region.block:
        raise EvaluationError("'tensor.pad': only a constant padding value is supported")
    found = None if outer is None else outer(value)
    if found is None:
        raise EvaluationError("'tensor.pad': only a constant padding value is supported")
    return np.asarray(found).item()


def extract_slice(
    op: Operation, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]
) -> Array:
    """`tensor.extract_slice` with static offsets, sizes and strides (rank-reducing slices drop their unit axes)."""
    assert isinstance(op, tensor.ExtractSliceOp)
    offsets = _static(op, tuple(op.static_offsets.get_values()), "offsets")
    sizes = _static(op, tuple(op.static_sizes.get_values()), "sizes")
    strides = _static(op, tuple(op.static_strides.get_values()), "strides")
    x = args[0]
    window = _window(op, offsets, sizes, strides, x.shape)
    return np.array(np.reshape(x[window], _result_shape(op)))


def _window(
    op: Operation,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int],
    shape: Sequence[int],
) -> tuple[slice, ...]:
    """The strided window of a slice op, bounds checked against `shape`."""
    window: list[slice] = []
    for axis, (o, n, s, extent) in enumerate(zip(offsets, sizes, strides, shape, strict=True)):
        last = o + (n - 1) * s
        if n <= 0 or s <= 0 or o < 0 or last >= extent:
            raise EvaluationError(
                f"'{op.name}': window offset {o}, size {n}, stride {s} leaves "
                f"dimension {axis} of extent {extent}"
            )
        window.append(slice(o, last + 1, s))
    return tuple(window)


def extract(op: Operation, source: Array, indices: Sequence[Array]) -> Array:
    """`tensor.extract` of `source` at `indices` (integer arrays that broadcast together),
    bounds checked."""
    if len(indices) != source.ndim:
        raise EvaluationError(f"'{op.name}': expected {source.ndim} indices, got {len(indices)}")
    checked: list[Array] = []
    for axis, (index, extent) in enumerate(zip(indices, source.shape, strict=True)):
        index = np.asarray(index, dtype=np.int64)
        if index.size and (int(index.min()) < 0 or int(index.max()) >= extent):
            raise EvaluationError(
                f"'{op.name}': index out of bounds on dimension {axis} (range "
                f"[{int(index.min())}, {int(index.max())}], extent {extent})"
            )
        checked.append(index)
    return np.asarray(source[tuple(checked)])


def broadcast(
    op: Operation, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]
) -> Array:
    """`linalg.broadcast`: the input repeated along the result dimensions `dimensions` adds."""
    assert isinstance(op, BroadcastOp)
    if not op.result:
        raise EvaluationError("'linalg.broadcast' on buffers is not supported")
    shape = _result_shape(op)
    added = sorted(int(d) for d in op.dimensions.get_values())
    expanded = np.expand_dims(args[0], added) if added else args[0]
    return np.array(np.broadcast_to(expanded, shape))


def concat(
    op: Operation, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]
) -> Array:
    """`tensor.concat`: the operands joined along `dim`."""
    assert isinstance(op, tensor.ConcatOp)
    return np.concatenate(list(args), axis=op.dim.value.data)


def insert_slice(
    op: Operation, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]
) -> Array:
    """`tensor.insert_slice` with static offsets, sizes and strides: a copy of `dest` with the
    strided window replaced by `source` (reshaped to the window when it drops unit axes)."""
    assert isinstance(op, tensor.InsertSliceOp)
    offsets = _static(op, tuple(op.static_offsets.get_values()), "offsets")
    sizes = _static(op, tuple(op.static_sizes.get_values()), "sizes")
    strides = _static(op, tuple(op.static_strides.get_values()), "strides")
    source, dest = args[0], args[1]
    window = _window(op, offsets, sizes, strides, dest.shape)
    result = np.array(dest)
    result[window] = np.reshape(source, sizes)
    return result


def extract_op(
    op: Operation, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]
) -> Array:
    """`tensor.extract`: the element of the tensor operand at the index operands."""
    return extract(op, args[0], args[1:])
