"""Reference semantics of `vector` (`VectorFunctions`): register ops and 1-D loads/stores.

Register ops work on the trailing vector axes of lane arrays (static positions only);
`vector.reduction` combines all elements with its kind (and the accumulator, if any);
`vector.load/store` access consecutive elements along the innermost axis of a scalar
buffer, or one element of a buffer of vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import vector
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from physlayout.semantics.evaluator_arith import (
    float_op,
    fused_multiply_add,
    operand_type,
    result_type,
    value_impl,
)
from physlayout.semantics.evaluator_memory import load, store
from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    as_signed,
    as_unsigned,
    is_integer_like,
    vector_shape,
    wrap,
)


def _static_positions(op: Operation) -> tuple[int, ...]:
    attr = op.properties.get("static_position")
    if not isinstance(attr, DenseArrayBase):
        raise EvaluationError(f"'{op.name}': missing static_position")
    positions = tuple(int(p) for p in attr.get_values())
    if any(p == DYNAMIC_INDEX for p in positions):
        raise EvaluationError(f"'{op.name}': dynamic positions are not supported")
    return positions


def _vector_broadcast(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
    source = vector_shape(operand_type(op))
    result = vector_shape(result_type(op))
    value = args[0]
    lane_shape = value.shape[: value.ndim - len(source)]
    value = value.reshape(lane_shape + (1,) * (len(result) - len(source)) + source)
    return np.broadcast_to(value, lane_shape + result)


def _vector_extract(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
    positions = _static_positions(op)
    rank = len(vector_shape(operand_type(op)))
    return args[0][(Ellipsis, *positions) + (slice(None),) * (rank - len(positions))]


def _vector_insert(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
    source, dest = args
    positions = _static_positions(op)
    dest_shape = vector_shape(result_type(op))
    source_rank = len(vector_shape(operand_type(op)))
    lanes = np.broadcast_shapes(
        dest.shape[: dest.ndim - len(dest_shape)], source.shape[: source.ndim - source_rank]
    )
    result = np.broadcast_to(dest, lanes + dest_shape).copy()
    result[(Ellipsis, *positions) + (slice(None),) * source_rank] = source
    return result


def _reduce_all(
    kind: str, value: Array, type_: Attribute, axes: tuple[int, ...], op_name: str
) -> Array:
    """Reduce `value` over `axes` with a `vector.kind` combining kind."""
    if kind == "add":
        return (
            wrap(np.sum(value, axis=axes), type_)
            if is_integer_like(type_)
            else np.sum(value, axis=axes, dtype=value.dtype)
        )
    if kind == "mul":
        return (
            wrap(np.prod(value, axis=axes), type_)
            if is_integer_like(type_)
            else np.prod(value, axis=axes, dtype=value.dtype)
        )
    signed_kinds: dict[str, Callable[..., Any]] = {
        "minsi": np.min,
        "maxsi": np.max,
    }
    if kind in signed_kinds:
        return wrap(signed_kinds[kind](as_signed(value, type_), axis=axes), type_)
    if kind in ("minui", "maxui"):
        fn = np.min if kind == "minui" else np.max
        return wrap(fn(as_unsigned(value, type_), axis=axes), type_)
    float_kinds: dict[str, Callable[..., Any]] = {
        "minnumf": np.fmin.reduce,
        "maxnumf": np.fmax.reduce,
        "minimumf": np.minimum.reduce,
        "maximumf": np.maximum.reduce,
    }
    if kind in float_kinds:
        return np.asarray(float_kinds[kind](value, axis=axes))
    bit_kinds: dict[str, Callable[..., Any]] = {
        "and": np.bitwise_and.reduce,
        "or": np.bitwise_or.reduce,
        "xor": np.bitwise_xor.reduce,
    }
    if kind in bit_kinds:
        return wrap(bit_kinds[kind](as_unsigned(value, type_), axis=axes), type_)
    raise EvaluationError(f"'{op_name}': unsupported combining kind '{kind}'")


def _vector_reduction(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
    kind_attr = op.properties.get("kind")
    kind = str(getattr(kind_attr, "data", ""))
    rank = len(vector_shape(operand_type(op)))
    type_ = result_type(op)
    axes = tuple(range(-rank, 0))
    result = _reduce_all(kind, args[0], type_, axes, op.name)
    if len(args) == 1:
        return result
    pair = np.stack(np.broadcast_arrays(result, args[1]), axis=-1)
    return _reduce_all(kind, pair, type_, (-1,), op.name)


@register_impls
class VectorFunctions(InterpreterFunctions):
    """`vector.broadcast/extract/insert/reduction/fma/load/store`."""

    run_broadcast = value_impl(vector.BroadcastOp, _vector_broadcast)
    run_extract = value_impl(vector.ExtractOp, _vector_extract)
    run_insert = value_impl(vector.InsertOp, _vector_insert)
    run_reduction = value_impl(vector.ReductionOp, _vector_reduction)
    run_fma = value_impl(vector.FMAOp, float_op(fused_multiply_add))

    @impl(vector.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: vector.LoadOp, args: PythonValues
    ) -> PythonValues:
        return load(interpreter, op, args)

    @impl(vector.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: vector.StoreOp, args: PythonValues
    ) -> PythonValues:
        return store(interpreter, op, args)
