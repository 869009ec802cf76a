"""Frames, prepared ops and shared helpers of the numpy reference evaluator.

A `Frame` holds the values of one function activation; a `Step` is an op prepared for
execution (operands, results and handler looked up once). The affine helpers evaluate
affine maps over lane arrays with MLIR semantics (floordiv rounds down, mod is
non-negative for positive divisors).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
from xdsl.dialects.builtin import AffineMapAttr, DenseArrayBase
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    Handle,
    Lanes,
    View,
    to_depth,
    uniform_value,
    vector_shape,
)

Memory: TypeAlias = View | Handle
Entry: TypeAlias = "Array | View | Handle"
"""A value during evaluation: a lane array (at the current depth) or a memory object."""


def name_of(value: SSAValue) -> str:
    """How errors name a buffer: its SSA name, else the op that made it."""
    if value.name_hint:
        return f"%{value.name_hint}"
    if isinstance(value, BlockArgument):
        return f"block argument #{value.index}"
    owner = value.owner
    assert isinstance(owner, Operation)
    return f"result of '{owner.name}'"


@dataclass
class Frame:
    """The values of one function activation: numbers with their lane depth, or memory.

    Keyed by `id(value)` (SSA values hash by identity anyway; this is faster)."""

    values: dict[int, tuple[Array, int] | View | Handle] = field(default_factory=lambda: {})

    def num(self, value: SSAValue, lanes: Lanes) -> Array:
        entry = self.values.get(id(value))
        if type(entry) is tuple:
            array, depth = entry
            return array if depth == lanes.depth else to_depth(array, depth, lanes.depth)
        raise EvaluationError(f"evaluator: {name_of(value)} is not a number here")

    def mem(self, value: SSAValue, what: str) -> Memory:
        entry = self.values.get(id(value))
        if isinstance(entry, View | Handle):
            return entry
        raise EvaluationError(f"{what}: {name_of(value)} is not a buffer here")

    def view(self, value: SSAValue, what: str) -> View:
        entry = self.mem(value, what)
        if isinstance(entry, View):
            return entry
        raise EvaluationError(f"{what}: {name_of(value)} is a data handle, not a buffer")

    def lookup(self, value: SSAValue) -> tuple[Array, int] | View | Handle | None:
        """The raw entry of `value` (None when it has no value yet)."""
        return self.values.get(id(value))

    def get(self, value: SSAValue, lanes: Lanes) -> Entry:
        entry = self.values.get(id(value))
        if type(entry) is tuple:
            array, depth = entry
            return array if depth == lanes.depth else to_depth(array, depth, lanes.depth)
        if entry is None:
            raise EvaluationError(f"evaluator: {name_of(value)} has no value")
        assert isinstance(entry, View | Handle)
        return entry

    def set(self, value: SSAValue, entry: Entry, depth: int) -> None:
        """Bind `value` (a number is stored with the lane depth it was computed at)."""
        if isinstance(entry, View | Handle):
            self.values[id(value)] = entry
            return
        array = entry if type(entry) is np.ndarray else np.asarray(entry)
        if array.ndim < depth:
            need = depth + len(vector_shape(value.type))
            array = array.reshape((1,) * (need - array.ndim) + array.shape)
        self.values[id(value)] = (array, depth)


@dataclass(slots=True)
class Step:
    """An op prepared for execution: its operands and results cached, its handler chosen."""

    op: Operation
    operands: tuple[SSAValue, ...]
    results: tuple[SSAValue, ...]
    handler: Callable[[Step, Frame, Lanes], None]
    terminator: bool


Handler = Callable[["Step", "Frame", Lanes], None]
"""Executes one prepared op in a frame over the given lanes."""


def uniform_int(op: Operation, value: Array, lanes: Lanes, what: str) -> int:
    """The value of `value`, which must be the same in all active lanes (`what` names it)."""
    uniform = uniform_value(value, lanes)
    if uniform is None:
        raise EvaluationError(f"'{op.name}': {what} must be the same in all lanes")
    return int(uniform)


def segments(op: Operation) -> list[int]:
    """The `operandSegmentSizes` of `op`."""
    attr = op.properties.get("operandSegmentSizes")
    if not isinstance(attr, DenseArrayBase):
        raise EvaluationError(f"'{op.name}': missing operandSegmentSizes")
    return [int(v) for v in attr.get_values()]


def map_prop(op: Operation, name: str) -> AffineMap:
    """The affine map held by property `name` of `op`."""
    attr = op.properties.get(name)
    if not isinstance(attr, AffineMapAttr):
        raise EvaluationError(f"'{op.name}': missing affine map '{name}'")
    return attr.data


def reduce_bounds(values: list[Array], combine: Any) -> Array:
    """Fold the results of a bound map with `combine` (np.maximum for lower bounds,
    np.minimum for upper bounds)."""
    if not values:
        raise EvaluationError("evaluator: an affine bound map has no result")
    result = values[0]
    for value in values[1:]:
        result = combine(result, value)
    return np.asarray(result)


def apply_map(amap: AffineMap, operands: Sequence[Array]) -> list[Array]:
    """Evaluate `amap` on `operands` (dims first, then symbols) over the lanes."""
    dims, syms = operands[: amap.num_dims], operands[amap.num_dims :]
    depth = max((np.ndim(o) for o in operands), default=0)
    return [_pad(np.asarray(eval_expr(e, dims, syms), dtype=np.int64), depth) for e in amap.results]


def _pad_shape(shape: tuple[int, ...], depth: int) -> tuple[int, ...]:
    return (1,) * max(depth - len(shape), 0) + shape


def _pad(value: Array, depth: int) -> Array:
    return value.reshape(_pad_shape(value.shape, depth))


def eval_expr(expr: AffineExpr, dims: Sequence[Array], syms: Sequence[Array]) -> Any:
    """Evaluate an affine expression with numpy integer semantics (floordiv rounds down,
    mod is non-negative for positive divisors)."""
    if isinstance(expr, AffineConstantExpr):
        return np.int64(expr.value)
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineSymExpr):
        return syms[expr.position]
    if not isinstance(expr, AffineBinaryOpExpr):
        raise EvaluationError(f"evaluator: unsupported affine expression {expr}")
    lhs = eval_expr(expr.lhs, dims, syms)
    rhs = eval_expr(expr.rhs, dims, syms)
    if expr.kind == AffineBinaryOpKind.Add:
        return lhs + rhs
    if expr.kind == AffineBinaryOpKind.Mul:
        return lhs * rhs
    if np.any(np.asarray(rhs) == 0):
        raise EvaluationError(f"evaluator: division by zero in affine expression {expr}")
    if expr.kind == AffineBinaryOpKind.FloorDiv:
        return lhs // rhs
    if expr.kind == AffineBinaryOpKind.CeilDiv:
        return -((-lhs) // rhs)
    return lhs % rhs
