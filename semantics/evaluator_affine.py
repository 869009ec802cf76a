"""Reference semantics of `affine` over SIMT lanes (`evaluator_loops`).

Bound maps are evaluated per lane (lower bounds combined with max, upper with min, per
group for `affine.parallel`); `affine.parallel` reductions combine the lanes with numpy
reductions (inactive lanes contribute the kind's identity); loads and stores index the
buffer at the results of their map.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import affine
from xdsl.dialects.builtin import AffineSetAttr, ArrayAttr, DenseIntOrFPElementsAttr, IntegerAttr
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Operation
from xdsl.ir.affine.affine_set import AffineConstraintKind

from physlayout.semantics.evaluator_arith import (
    REDUCTION_KINDS,
    float_reduction,
    int_reduction,
    is_float_kind,
)
from physlayout.semantics.evaluator_frame import (
    apply_map,
    eval_expr,
    map_prop,
    num,
    reduce_bounds,
    simt,
    view,
)
from physlayout.semantics.evaluator_loops import (
    as_array,
    check_steps,
    run_branch,
    run_loop,
    run_parallel,
)
from physlayout.semantics.evaluator_memory import read, write
from physlayout.semantics.evaluator_values import Array, EvaluationError, any_active, dtype_of


def _nums(op: Operation, args: PythonValues, start: int = 0) -> list[Array]:
    return [num(op, args, i) for i in range(start, len(args))]


@register_impls
class AffineFunctions(InterpreterFunctions):
    """`affine.for/parallel/if/apply/min/load/store/vector_load/vector_store/yield`."""

    @impl(affine.ForOp)
    def run_for(
        self, interpreter: Interpreter, op: affine.ForOp, args: PythonValues
    ) -> PythonValues:
        lb_map = map_prop(op, "lowerBoundMap")
        ub_map = map_prop(op, "upperBoundMap")
        count_lb = lb_map.num_dims + lb_map.num_symbols
        count_ub = ub_map.num_dims + ub_map.num_symbols
        operands = [num(op, args, i) for i in range(count_lb + count_ub)]
        lb = reduce_bounds(apply_map(lb_map, operands[:count_lb]), np.maximum)
        ub = reduce_bounds(apply_map(ub_map, operands[count_lb:]), np.minimum)
        step = np.asarray(op.step.value.data, dtype=np.int64)
        inits = list(args[count_lb + count_ub :])
        return tuple(run_loop(interpreter, op, (lb, ub, step), inits))

    @impl(affine.ParallelOp)
    def run_parallel(
        self, interpreter: Interpreter, op: affine.ParallelOp, args: PythonValues
    ) -> PythonValues:
        lanes = simt(interpreter).lanes
        lb_map = map_prop(op, "lowerBoundsMap")
        ub_map = map_prop(op, "upperBoundsMap")
        operands = _nums(op, args)
        count_lb = lb_map.num_dims + lb_map.num_symbols
        lbs = _grouped(
            apply_map(lb_map, operands[:count_lb]), _groups(op, "lowerBoundsGroups"), np.maximum
        )
        ubs = _grouped(
            apply_map(ub_map, operands[count_lb:]), _groups(op, "upperBoundsGroups"), np.minimum
        )
        steps_attr = op.properties.get("steps")
        steps = [
            np.asarray(s.value.data, dtype=np.int64)
            for s in (steps_attr.data if isinstance(steps_attr, ArrayAttr) else ())
            if isinstance(s, IntegerAttr)
        ]
        if not (len(lbs) == len(ubs) == len(steps)):
            raise EvaluationError(f"'{op.name}': inconsistent bounds and steps")
        kinds = _reduction_kinds(op)
        identities = tuple(
            _identity(kind, r.type) for kind, r in zip(kinds, op.results, strict=True)
        )
        if not any_active(lanes):
            return identities
        for step in steps:
            check_steps(op, step, lanes)
        block = op.regions[0].blocks[0]
        bounds = list(zip(lbs, ubs, steps, strict=True))
        out = run_parallel(interpreter, block, bounds, [np.dtype(np.int64)] * len(bounds), lanes)
        if not kinds or out is None:
            return identities
        inner, partials = out
        axes = tuple(range(lanes.depth, len(inner.shape)))
        valid = (
            np.ones(inner.shape, np.bool_)
            if inner.mask is None
            else np.broadcast_to(inner.mask, inner.shape)
        )
        results: list[Array] = []
        for kind, partial, result in zip(kinds, partials, op.results, strict=True):
            value = np.broadcast_to(as_array(op, partial), inner.shape)
            if is_float_kind(kind):
                results.append(float_reduction(kind, value, valid, axes))
            else:
                results.append(int_reduction(kind, value, valid, axes, result.type))
        return tuple(results)

    @impl(affine.IfOp)
    def run_if(self, interpreter: Interpreter, op: affine.IfOp, args: PythonValues) -> PythonValues:
        attr = op.properties.get("condition")
        if not isinstance(attr, AffineSetAttr):
            raise EvaluationError(f"'{op.name}': missing condition")
        affine_set = attr.data
        operands = _nums(op, args)
        dims, syms = operands[: affine_set.num_dims], operands[affine_set.num_dims :]
        cond: Array = np.asarray(True)
        for constraint in affine_set.constraints:
            lhs = eval_expr(constraint.lhs, dims, syms)
            rhs = eval_expr(constraint.rhs, dims, syms)
            if constraint.kind == AffineConstraintKind.eq:
                cond = cond & (lhs == rhs)
            elif constraint.kind == AffineConstraintKind.ge:
                cond = cond & (lhs >= rhs)
            else:
                cond = cond & (lhs <= rhs)
        depth = simt(interpreter).lanes.depth
        cond = np.asarray(cond).reshape((1,) * max(depth - np.ndim(cond), 0) + np.shape(cond))
        return tuple(run_branch(interpreter, op, cond, op.regions[0], op.regions[1]))

    @impl(affine.ApplyOp)
    def run_apply(
        self, interpreter: Interpreter, op: affine.ApplyOp, args: PythonValues
    ) -> PythonValues:
        (result,) = apply_map(map_prop(op, "map"), _nums(op, args))
        return (result.astype(np.int64),)

    @impl(affine.MinOp)
    def run_min(
        self, interpreter: Interpreter, op: affine.MinOp, args: PythonValues
    ) -> PythonValues:
        return (reduce_bounds(apply_map(map_prop(op, "map"), _nums(op, args)), np.minimum),)

    @impl(affine.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: affine.LoadOp, args: PythonValues
    ) -> PythonValues:
        return (_load(interpreter, op, args),)

    @impl(affine.VectorLoadOp)
    def run_vector_load(
        self, interpreter: Interpreter, op: affine.VectorLoadOp, args: PythonValues
    ) -> PythonValues:
        return (_load(interpreter, op, args),)

    @impl(affine.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: affine.StoreOp, args: PythonValues
    ) -> PythonValues:
        _store(interpreter, op, args)
        return ()

    @impl(affine.VectorStoreOp)
    def run_vector_store(
        self, interpreter: Interpreter, op: affine.VectorStoreOp, args: PythonValues
    ) -> PythonValues:
        _store(interpreter, op, args)
        return ()

    @impl_terminator(affine.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: affine.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


def _load(interpreter: Interpreter, op: Operation, args: PythonValues) -> Array:
    indices = apply_map(map_prop(op, "map"), _nums(op, args, 1))
    return read(op, view(op, args, 0), indices, simt(interpreter).lanes)


def _store(interpreter: Interpreter, op: Operation, args: PythonValues) -> None:
    indices = apply_map(map_prop(op, "map"), _nums(op, args, 2))
    lanes = simt(interpreter).lanes
    write(op, args[0], view(op, args, 1), indices, lanes)


def _groups(op: Operation, name: str) -> list[int]:
    attr = op.properties.get(name)
    if not isinstance(attr, DenseIntOrFPElementsAttr):
        raise EvaluationError(f"'{op.name}': missing '{name}'")
    values = np.broadcast_to(np.asarray(attr.get_values()), attr.get_shape())
    return [int(v) for v in values.reshape(-1)]


def _reduction_kinds(op: Operation) -> list[str]:
    attr = op.properties.get("reductions")
    kinds = [getattr(k, "data", "") for k in getattr(attr, "data", ())]
    for kind in kinds:
        if kind not in REDUCTION_KINDS:
            raise EvaluationError(f"'{op.name}': unsupported reduction '{kind}'")
    return kinds


def _identity(kind: str, type_: Attribute) -> Array:
    """The identity of an affine.parallel reduction kind (the result of zero iterations)."""
    dtype = dtype_of(type_)
    if is_float_kind(kind):
        table = {
            "addf": 0.0,
            "mulf": 1.0,
            "maximumf": -np.inf,
            "minimumf": np.inf,
            "maxnumf": -np.inf,
            "minnumf": np.inf,
        }
        return np.asarray(table[kind], dtype=dtype)
    empty = np.zeros((0,), dtype=dtype)
    return int_reduction(kind, empty, np.zeros((0,), np.bool_), (0,), type_)


def _grouped(values: list[Array], groups: list[int], combine: Any) -> list[Array]:
    result: list[Array] = []
    start = 0
    for size in groups:
        result.append(reduce_bounds(values[start : start + size], combine))
        start += size
    return result
