"""The SIMT block runner of the reference evaluator, on `xdsl.interpreter.Interpreter`.

The meaning of each op is an `@impl` function of an `InterpreterFunctions` class (one per
dialect family, in the `evaluator_*` modules); this module runs blocks of them. The SIMT
state (`Simt`: current lanes, the values of the current function activation, caches) is
kept on the interpreter with `get_data`. A number is a numpy array over the lanes it was
computed at (lane axes, then the axes of its vector type), a buffer or data handle is a
`View` or `Handle`. `run_block` hands every op its operands at the current lane depth and
binds its results. Values are keyed by SSA value identity rather than in the interpreter's
`ScopedDict`, whose hashing of SSA values doubles the cost of sequential code. Python
errors in an implementation and ops without one become `EvaluationError`s naming the op
(located in the printed IR for a missing implementation).

The affine helpers evaluate affine maps over lane arrays with MLIR semantics (floordiv
rounds down, mod is non-negative for positive divisors)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
from xdsl.dialects.builtin import AffineMapAttr, DenseArrayBase
from xdsl.interpreter import Interpreter, InterpreterFunctions, OpImplResult, PythonValues
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import DiagnosticException

from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    Handle,
    Lanes,
    View,
    uniform_value,
    vector_shape,
)

Memory: TypeAlias = View | Handle
Entry: TypeAlias = "Array | View | Handle"
"""A value during evaluation: a lane array or a memory object."""

_OpImpl: TypeAlias = Callable[[InterpreterFunctions, Interpreter, Operation, PythonValues], Any]


# State ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Step:
    """An op prepared for execution: its implementation, and the identity and vector rank
    of each operand and result."""

    op: Operation
    reads: tuple[tuple[int, int], ...]
    writes: tuple[tuple[int, int], ...]
    functions: Any
    impl: _OpImpl | None
    terminator: bool


@dataclass(slots=True)
class Prepared:
    """A block prepared for execution: its arguments (identity, vector rank) and steps."""

    args: tuple[tuple[int, int], ...]
    steps: list[Step]


@dataclass
class Simt:
    """The SIMT state of one interpreter: the current lanes, the values of the current
    function activation (keyed by SSA value identity), the loop mode, and the caches of
    prepared blocks and loop decisions (valid while the module is unchanged)."""

    lanes: Lanes = field(default_factory=lambda: Lanes((), None))
    values: dict[int, Any] = field(default_factory=lambda: {})
    vectorize_loops: bool = True
    blocks: dict[Block, Prepared] = field(default_factory=lambda: {})
    decisions: dict[Operation, tuple[tuple[object, ...], bool]] = field(default_factory=lambda: {})
    externals: dict[Operation, list[SSAValue]] = field(default_factory=lambda: {})
    padded_params: dict[Operation, list[int]] = field(default_factory=lambda: {})
    functions: dict[str, Operation] | None = None


_SIMT_KEY = "physlayout.simt"


def simt(interpreter: Interpreter) -> Simt:
    """The SIMT state kept on `interpreter` (created on first use)."""
    try:  # the fast path of `get_data`: this runs for most ops
        return interpreter._impl_data[InterpreterFunctions][_SIMT_KEY]  # pyright: ignore[reportPrivateUsage]
    except KeyError:
        return interpreter.get_data(InterpreterFunctions, _SIMT_KEY, Simt)


def install_simt(interpreter: Interpreter, state: Simt) -> None:
    """Use `state` as the SIMT state of `interpreter`."""
    interpreter.set_data(InterpreterFunctions, _SIMT_KEY, state)


def function_named(interpreter: Interpreter, name: str) -> Operation:
    """The `func.func` called `name` in the interpreter's module."""
    state = simt(interpreter)
    if state.functions is None:
        state.functions = {}
        for op in interpreter.module.ops:
            sym = op.properties.get("sym_name")
            if op.name == "func.func" and sym is not None:
                state.functions[getattr(sym, "data", "")] = op
    func = state.functions.get(name)
    if func is None:
        raise EvaluationError(f"evaluator: no function @{name} in the module")
    return func


def lookup(interpreter: Interpreter, value: SSAValue) -> Any | None:
    """The current value of `value` (None when it has none yet)."""
    return simt(interpreter).values.get(id(value))


# Running blocks -------------------------------------------------------------------------


def name_of(value: SSAValue) -> str:
    """How errors name a value: its SSA name, else the op that made it."""
    if value.name_hint:
        return f"%{value.name_hint}"
    if isinstance(value, BlockArgument):
        return f"block argument #{value.index}"
    owner = value.owner
    assert isinstance(owner, Operation)
    return f"result of '{owner.name}'"


def _rank(value: SSAValue) -> int:
    return len(vector_shape(value.type))


def _lift(value: Array, depth: int, rank: int) -> Array:
    """A value bound at an outer lane depth, seen at `depth` (unit axes for the new lanes)."""
    defined = value.ndim - rank
    shape = value.shape
    return value.reshape(shape[:defined] + (1,) * (depth - defined) + shape[defined:])


def _fit(value: Any, depth: int, rank: int) -> Any:
    """A value computed at lane depth `depth`, with all its lane axes (unit when missing)."""
    if value is None or isinstance(value, View | Handle):
        return value
    array = value if type(value) is np.ndarray else np.asarray(value)
    need = depth + rank
    if array.ndim < need:
        return array.reshape((1,) * (need - array.ndim) + array.shape)
    return array


def impl_of(interpreter: Interpreter, op: Operation) -> tuple[Any, Any] | None:
    """The registered `(functions, impl)` of `op` on `interpreter`, None when it has none."""
    table = interpreter._impls._impl_dict  # pyright: ignore[reportPrivateUsage]
    return table.get(type(op))


def _prepare(interpreter: Interpreter, block: Block) -> Prepared:
    steps: list[Step] = []
    for op in block.ops:
        found = impl_of(interpreter, op)
        functions, impl = found if found is not None else (None, None)
        steps.append(
            Step(
                op,
                tuple((id(v), _rank(v)) for v in op.operands),
                tuple((id(v), _rank(v)) for v in op.results),
                functions,
                impl,
                op.has_trait(IsTerminator),
            )
        )
    prepared = Prepared(tuple((id(a), _rank(a)) for a in block.args), steps)
    simt(interpreter).blocks[block] = prepared
    return prepared


def unsupported(op: Operation) -> EvaluationError:
    """The error for an op without an implementation, with the op located in the IR."""
    message = f"evaluator: unsupported operation '{op.name}'"
    try:
        op.emit_error(message, EvaluationError(message))
    except EvaluationError as err:
        return err


def _missing(op: Operation, values: dict[int, Any]) -> EvaluationError:
    value = next(v for v in op.operands if id(v) not in values)
    return EvaluationError(f"evaluator: {name_of(value)} has no value")


def call_frame(interpreter: Interpreter, block: Block, args: Sequence[Any]) -> list[Any]:
    """Run `block` as a function body over the current lanes, with values of its own."""
    state = simt(interpreter)
    caller = state.values
    state.values = {}
    try:
        return run_block(interpreter, block, args, state.lanes)
    finally:
        state.values = caller


def run_block(
    interpreter: Interpreter, block: Block, args: Sequence[Any], lanes: Lanes
) -> list[Any]:
    """Run `block` over `lanes` with `args` bound; returns its terminator's operands."""
    state = simt(interpreter)
    outer = state.lanes
    state.lanes = lanes
    depth = lanes.depth
    values = state.values
    prepared = state.blocks.get(block)
    if prepared is None:
        prepared = _prepare(interpreter, block)
    for (key, rank), value in zip(prepared.args, args, strict=True):
        values[key] = _fit(value, depth, rank)
    ndarray = np.ndarray
    for step in prepared.steps:
        if step.impl is None:
            raise unsupported(step.op)
        inputs: list[Any] = []
        for key, rank in step.reads:
            value = values.get(key)
            if value is None:
                raise _missing(step.op, values)
            if type(value) is ndarray and value.ndim - rank < depth:
                value = _lift(value, depth, rank)
            inputs.append(value)
        if step.terminator:
            state.lanes = outer
            return inputs
        try:
            result: OpImplResult = step.impl(step.functions, interpreter, step.op, tuple(inputs))
        except DiagnosticException:
            raise
        except Exception as err:
            raise EvaluationError(f"'{step.op.name}': {type(err).__name__}: {err}") from err
        for (key, rank), value in zip(step.writes, result.values, strict=True):
            if type(value) is ndarray and value.ndim >= depth + rank:
                values[key] = value
            else:
                values[key] = _fit(value, depth, rank)
    state.lanes = outer
    return []


def run_region(
    interpreter: Interpreter, region: Region, args: Sequence[Any], lanes: Lanes
) -> list[Any]:
    """Run the single block of `region` (nothing for an empty region)."""
    if not region.blocks:
        return []
    if len(region.blocks) > 1:
        raise EvaluationError("evaluator: regions with several blocks are not supported")
    return run_block(interpreter, region.blocks[0], args, lanes)


# Operand access ---------------------------------------------------------------------------


def num(op: Operation, args: PythonValues, index: int) -> Array:
    """Operand `index` of `op`, which must be a number."""
    value = args[index]
    if isinstance(value, View | Handle):
        raise EvaluationError(f"evaluator: {name_of(op.operands[index])} is not a number here")
    return value


def mem(op: Operation, args: PythonValues, index: int) -> Memory:
    """Operand `index` of `op`, which must be a buffer or a data handle."""
    value = args[index]
    if isinstance(value, View | Handle):
        return value
    raise EvaluationError(f"'{op.name}': {name_of(op.operands[index])} is not a buffer here")


def view(op: Operation, args: PythonValues, index: int) -> View:
    """Operand `index` of `op`, which must be a buffer."""
    value = mem(op, args, index)
    if isinstance(value, View):
        return value
    raise EvaluationError(
        f"'{op.name}': {name_of(op.operands[index])} is a data handle, not a buffer"
    )


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


# Affine maps ------------------------------------------------------------------------------


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
    results: list[Array] = []
    for expr in amap.results:
        value = np.asarray(eval_expr(expr, dims, syms), dtype=np.int64)
        results.append(value.reshape((1,) * max(depth - value.ndim, 0) + value.shape))
    return results


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
