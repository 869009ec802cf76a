"""The reference evaluator as xDSL interpreter functions (`physlayout.semantics.evaluator`)."""

from __future__ import annotations

import numpy as np
import pytest
from evaluator_harness import parse
from graph_harness import parse as parse_graph
from xdsl.dialects import affine, arith, func, math, memref, scf, vector
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.ir import Operation

from physlayout.dialects import layout
from physlayout.semantics.evaluator import FUNCTIONS, make_interpreter, run_function
from physlayout.semantics.evaluator_affine import AffineFunctions
from physlayout.semantics.evaluator_arith import ArithFunctions, MathFunctions
from physlayout.semantics.evaluator_frame import impl_of
from physlayout.semantics.evaluator_memory import LayoutFunctions, MemRefFunctions
from physlayout.semantics.evaluator_scf import FuncFunctions, ScfFunctions
from physlayout.semantics.evaluator_values import EvaluationError
from physlayout.semantics.evaluator_vector import VectorFunctions
from physlayout.semantics.graph_evaluator import GRAPH_FUNCTIONS, run_graph

SMALL = """
func.func @poly(%x: f32, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f32) {
    %p = arith.mulf %acc, %x : f32
    %s = math.sqrt %p : f32
    scf.yield %s : f32
  }
  func.return %r : f32
}
"""

FAMILIES: list[tuple[type[InterpreterFunctions], list[type[Operation]]]] = [
    (ArithFunctions, [arith.ConstantOp, arith.AddiOp, arith.CmpfOp, arith.SelectOp]),
    (MathFunctions, [math.SqrtOp, math.FmaOp, math.AbsIOp]),
    (VectorFunctions, [vector.BroadcastOp, vector.ReductionOp, vector.LoadOp]),
    (LayoutFunctions, [layout.AllocateOp, layout.DeclBufferOp, layout.DataOp, layout.StoreOp]),
    (MemRefFunctions, [memref.AllocOp, memref.SubviewOp, memref.CopyOp, memref.DimOp]),
    (ScfFunctions, [scf.ForOp, scf.ParallelOp, scf.IfOp, scf.YieldOp, scf.ReduceOp]),
    (FuncFunctions, [func.CallOp, func.ReturnOp]),
    (AffineFunctions, [affine.ForOp, affine.ParallelOp, affine.ApplyOp, affine.LoadOp]),
]


def test_every_family_is_registered():
    assert {functions for functions, _ in FAMILIES} == set(FUNCTIONS)


@pytest.mark.parametrize("functions, op_types", FAMILIES, ids=lambda f: getattr(f, "__name__", ""))
def test_functions_implement_their_dialect_only(
    functions: type[InterpreterFunctions], op_types: list[type[Operation]]
):
    interpreter = Interpreter(parse(SMALL))
    interpreter.register_implementations(functions())
    for op_type in op_types:
        op = op_type.__new__(op_type)
        found = impl_of(interpreter, op)
        assert found is not None and isinstance(found[0], functions), op_type.name
    for other, other_types in FAMILIES:
        if other is not functions:
            op = other_types[0].__new__(other_types[0])
            assert impl_of(interpreter, op) is None, other_types[0].name


def test_interpreter_built_from_the_functions_runs_a_module():
    module = parse(SMALL)
    interpreter = Interpreter(module)
    for functions in (ArithFunctions, MathFunctions, ScfFunctions, FuncFunctions):
        interpreter.register_implementations(functions())
    (result,) = interpreter.call_op("poly", (np.float32(4.0), np.int64(2)))
    # acc: 1 -> sqrt(4) = 2 -> sqrt(8)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, np.sqrt(np.float32(8.0)), rtol=1e-6)
    assert run_function(module, "poly", [np.float32(4.0), 2]) == [pytest.approx(np.sqrt(8.0))]


def test_missing_family_gives_located_error():
    interpreter = Interpreter(parse(SMALL))
    for functions in (ArithFunctions, ScfFunctions, FuncFunctions):
        interpreter.register_implementations(functions())
    with pytest.raises(EvaluationError, match=r"unsupported operation 'math\.sqrt'") as info:
        interpreter.call_op("poly", (np.float32(4.0), np.int64(2)))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert '"math.sqrt"' in notes and "unsupported operation 'math.sqrt'" in notes


def test_unknown_op_gives_located_evaluation_error():
    text = """
func.func @f(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  %r = math.ctpop %y : i32
  func.return %r : i32
}"""
    module = parse(text)
    interpreter = make_interpreter(module)
    with pytest.raises(
        EvaluationError, match=r"evaluator: unsupported operation 'math\.ctpop'"
    ) as info:
        interpreter.call_op("f", (np.int32(3),))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    # The note prints the module with the message under the offending op.
    lines = notes.splitlines()
    at = next(i for i, line in enumerate(lines) if '"math.ctpop"' in line)
    assert "unsupported operation 'math.ctpop'" in "\n".join(lines[at + 1 : at + 3])


GRAPH = """
func.func @f(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  %c = layout.copy %t {scope = "global.texture"} : tensor<3x2xf32> -> tensor<3x2xf32>
  func.return %c : tensor<3x2xf32>
}
"""


def test_graph_functions_run_a_graph_module():
    module = parse_graph(GRAPH)
    interpreter = Interpreter(module)
    for functions in GRAPH_FUNCTIONS:
        interpreter.register_implementations(functions())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (result,) = interpreter.call_op("f", (x,))
    np.testing.assert_array_equal(result, x.T)
    np.testing.assert_array_equal(run_graph(module, "f", [x])[0], x.T)


def test_graph_unknown_op_gives_located_evaluation_error():
    module = parse_graph(
        """
func.func @f(%x: i32) -> i32 {
  %r = math.ctpop %x : i32
  func.return %r : i32
}"""
    )
    with pytest.raises(EvaluationError, match=r"unsupported operation 'math\.ctpop'") as info:
        run_graph(module, "f", [3])
    assert '"math.ctpop"' in "\n".join(getattr(info.value, "__notes__", []))
