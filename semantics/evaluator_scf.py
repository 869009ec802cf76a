"""Reference semantics of `scf` and `func` over SIMT lanes (`evaluator_loops`).

`scf.for` iterates (or runs as a parallel loop when `vectorize_loops` proves it safe);
`scf.parallel` runs all iterations at once as lane axes and combines its `scf.reduce`
regions pairwise over the lanes, then with the initial values; `scf.if` runs the taken
branch, or both under masks. A call binds buffer arguments as parameters (a callee's
`layout.data` starts at the parameter's first element) and fills the padding of the
parameters it stores to (see `evaluator_values.fills_padding`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import func, scf
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Block, Operation

from physlayout.dialects.scf_syntax import ParallelOp, ReduceOp
from physlayout.semantics.evaluator_frame import (
    Entry,
    call_frame,
    function_named,
    num,
    segments,
    simt,
)
from physlayout.semantics.evaluator_loops import (
    as_array,
    check_steps,
    run_branch,
    run_loop,
    run_parallel,
    tree_reduce,
)
from physlayout.semantics.evaluator_memory import fill_padding
from physlayout.semantics.evaluator_values import (
    EvaluationError,
    View,
    any_active,
    fills_padding,
)


@register_impls
class ScfFunctions(InterpreterFunctions):
    """`scf.for/parallel/if/yield/reduce/reduce.return`."""

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues) -> PythonValues:
        bounds = (num(op, args, 0), num(op, args, 1), num(op, args, 2))
        return tuple(run_loop(interpreter, op, bounds, list(args[3:])))

    @impl(scf.ParallelOp)
    def run_parallel(
        self, interpreter: Interpreter, op: scf.ParallelOp, args: PythonValues
    ) -> PythonValues:
        return run_parallel_loop(interpreter, op, args)

    @impl(ParallelOp)
    def run_parsed_parallel(
        self, interpreter: Interpreter, op: ParallelOp, args: PythonValues
    ) -> PythonValues:
        """`scf.parallel` as physlayout parses and builds it (`dialects.scf_syntax`; the
        interpreter finds implementations by exact class)."""
        return run_parallel_loop(interpreter, op, args)

    @impl(scf.IfOp)
    def run_if(self, interpreter: Interpreter, op: scf.IfOp, args: PythonValues) -> PythonValues:
        cond = num(op, args, 0)
        return tuple(run_branch(interpreter, op, cond, op.true_region, op.false_region))

    @impl_terminator(scf.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: scf.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(scf.ReduceOp)
    def run_reduce(
        self, interpreter: Interpreter, op: scf.ReduceOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(ReduceOp)
    def run_parsed_reduce(
        self, interpreter: Interpreter, op: ReduceOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(scf.ReduceReturnOp)
    def run_reduce_return(
        self, interpreter: Interpreter, op: scf.ReduceReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


def run_parallel_loop(
    interpreter: Interpreter, op: scf.ParallelOp, args: PythonValues
) -> PythonValues:
    """`scf.parallel`: every iteration at once as lane axes; its `scf.reduce` regions
    combine the partial results pairwise over the lanes, then with the initial values."""
    lanes = simt(interpreter).lanes
    count = segments(op)[0]
    values = [num(op, args, i) for i in range(3 * count)]
    bounds = [(values[i], values[count + i], values[2 * count + i]) for i in range(count)]
    inits = list(args[3 * count :])
    if not any_active(lanes):
        return tuple(inits)
    for _, _, step in bounds:
        check_steps(op, step, lanes)
    block = op.body.blocks[0]
    dtypes = [np.dtype(np.int64)] * count
    out = run_parallel(interpreter, block, bounds, dtypes, lanes)
    if not inits or out is None:
        return tuple(inits)
    inner, partials = out
    reduce_op = block.last_op
    assert reduce_op is not None
    return tuple(
        tree_reduce(
            interpreter, op, region, as_array(op, partial), as_array(op, init), inner, lanes
        )
        for region, partial, init in zip(reduce_op.regions, partials, inits, strict=True)
    )


def entry_block(op: Operation) -> Block:
    """The single block of function `op`."""
    blocks = op.regions[0].blocks
    if not blocks:
        raise EvaluationError(f"evaluator: function {op.properties.get('sym_name')} has no body")
    if len(blocks) > 1:
        raise EvaluationError("evaluator: functions with several blocks are not supported")
    return blocks.first  # pyright: ignore[reportReturnType]


def call_function(interpreter: Interpreter, op: Operation, args: PythonValues) -> list[Entry]:
    """Run function `op` on `args` over the current lanes, in a scope of its own."""
    block = entry_block(op)
    state = simt(interpreter)
    lanes = state.lanes
    bound = [arg.as_parameter() if isinstance(arg, View) else arg for arg in args]
    filled = state.padded_params.get(op)
    if filled is None:
        filled = [i for i, arg in enumerate(block.args) if fills_padding(arg)]
        state.padded_params[op] = filled
    for index in filled:
        entry = bound[index] if index < len(bound) else None
        if isinstance(entry, View):
            fill_padding(entry, lanes, f"entry of {op.properties.get('sym_name')}")
    return call_frame(interpreter, block, bound)


@register_impls
class FuncFunctions(InterpreterFunctions):
    """`func.func` (callable), `func.call`, `func.return`."""

    @impl_callable(func.FuncOp)
    def call_func(
        self, interpreter: Interpreter, op: func.FuncOp, args: PythonValues
    ) -> PythonValues:
        return tuple(call_function(interpreter, op, args))

    @impl(func.CallOp)
    def run_call(
        self, interpreter: Interpreter, op: func.CallOp, args: PythonValues
    ) -> PythonValues:
        callee = function_named(interpreter, op.callee.root_reference.data)
        return interpreter.call_op(callee, args)

    @impl_terminator(func.ReturnOp)
    def run_return(
        self, interpreter: Interpreter, op: func.ReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
