"""The numpy reference evaluator (`physlayout.semantics.evaluator`) against numpy references:
loop forms (`scf.for`, `scf.parallel`, the affine loops, `affine.apply`/`if`/`min`),
reductions, calls, and errors (unsupported ops, out-of-bounds accesses, bad arguments).

The other op families are in `test_evaluator_lanes.py` (vectorized execution: per-lane
control flow, lane-private scratch, the `vectorize_loops` rule), `test_evaluator_memory.py`
(aliasing views, vector elements, memref views), `test_evaluator_scalars.py` (integer,
float and vector op semantics), `test_evaluator_views.py` (views of transformed storage)
and `test_evaluator_interp.py` (xDSL's interpreter); `evaluator_harness.py` holds the
shared helpers.
"""

from __future__ import annotations

import numpy as np
import pytest
from evaluator_harness import CONSTANTS, par, parse, random
from xdsl.utils.exceptions import DiagnosticException

from physlayout.semantics.evaluator import Evaluator, run_function

SHAPE = (1, 6, 5, 16)
BUF = "!layout.buffer<1x6x5x16xf32>"


def relu_parallel() -> str:
    body = f"""
    %v = layout.load %A[%n, %h, %w, %c] : {BUF}, f32
    %r = arith.maximumf %v, %zero : f32
    layout.store %r, %B[%n, %h, %w, %c] : {BUF}, f32"""
    loop = par(
        ["%n", "%h", "%w", "%c"], ["%c0"] * 4, ["%c1", "%c6", "%c5", "%c16"], ["%c1"] * 4, body
    )
    return f"""
func.func @relu(%A: {BUF}, %B: {BUF}) {{
  {CONSTANTS}
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  {loop}
  func.return
}}"""


RELU_FOR = f"""
func.func @relu(%A: {BUF}, %B: {BUF}) {{
  {CONSTANTS}
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  scf.for %n = %c0 to %c1 step %c1 {{
    scf.for %h = %c0 to %c6 step %c1 {{
      scf.for %w = %c0 to %c5 step %c1 {{
        scf.for %c = %c0 to %c16 step %c1 {{
          %v = layout.load %A[%n, %h, %w, %c] : {BUF}, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %B[%n, %h, %w, %c] : {BUF}, f32
        }}
      }}
    }}
  }}
  func.return
}}"""


# Loop forms -------------------------------------------------------------------------------


def test_relu_scf_parallel():
    a = random(SHAPE)
    b = np.zeros_like(a)
    assert run_function(parse(relu_parallel()), "relu", [a, b]) == []
    np.testing.assert_array_equal(b, np.maximum(a, 0))
    assert b.dtype == np.float32


@pytest.mark.parametrize("vectorize", [True, False])
def test_relu_nested_scf_for(vectorize: bool):
    a = random(SHAPE, seed=1)
    b = np.full_like(a, 7.0)
    evaluator = Evaluator(parse(RELU_FOR), vectorize_loops=vectorize)
    evaluator.run("relu", [a, b])
    np.testing.assert_array_equal(b, np.maximum(a, 0))


def test_nested_scf_for_is_vectorized():
    module = parse(RELU_FOR)
    evaluator = Evaluator(module, vectorize_loops=True)
    a = random(SHAPE, seed=2)
    evaluator.run("relu", [a, np.zeros_like(a)])
    loops = [op for op in module.walk() if op.name == "scf.for"]
    # Every loop is found parallelizable and runs as a lane axis.
    decisions = [evaluator._decisions.get(op) for op in loops]  # pyright: ignore[reportPrivateUsage]
    assert all(d is not None and d[1] for d in decisions)


def test_relu_affine_loops_with_maps():
    text = """
func.func @relu(%A: memref<6x16xf32>, %B: memref<6x16xf32>) {
  %zero = arith.constant 0.0 : f32
  affine.for %i = 0 to 6 {
    affine.for %j = 0 to 16 step 2 {
      %v = affine.load %A[%i, %j] : memref<6x16xf32>
      %r = arith.maximumf %v, %zero : f32
      affine.store %r, %B[%i, %j] : memref<6x16xf32>
      %w = affine.load %A[%i, %j + 1] : memref<6x16xf32>
      %s = arith.maximumf %w, %zero : f32
      affine.store %s, %B[%i, %j + 1] : memref<6x16xf32>
    }
  }
  func.return
}"""
    for vectorize in (True, False):
        a = random((6, 16), seed=3)
        b = np.zeros_like(a)
        run_function(parse(text), "relu", [a, b], vectorize_loops=vectorize)
        np.testing.assert_array_equal(b, np.maximum(a, 0))


def test_affine_parallel_and_apply():
    text = """
func.func @f(%A: memref<4x8xf32>, %B: memref<8x4xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>,
      lowerBoundsGroups = dense<1> : tensor<2xi32>, upperBoundsMap = affine_map<() -> (4, 8)>,
      upperBoundsGroups = dense<1> : tensor<2xi32>, steps = [1 : i64, 1 : i64]}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %A[%i, %j] : memref<4x8xf32>
    %t = affine.apply affine_map<(d0, d1) -> (d0 * 8 + d1)>(%i, %j)
    %q = affine.apply affine_map<(d0) -> (d0 floordiv 4)>(%t)
    %r = affine.apply affine_map<(d0) -> (d0 mod 4)>(%t)
    memref.store %v, %B[%q, %r] : memref<8x4xf32>
    affine.yield
  }) : () -> ()
  func.return
}"""
    a = random((4, 8), seed=4)
    b = np.zeros((8, 4), np.float32)
    run_function(parse(text), "f", [a, b])
    np.testing.assert_array_equal(b, a.reshape(8, 4))


def test_affine_if_and_min():
    # affine.if and affine.min have no custom syntax in xDSL 0.74: generic form.
    text = """
func.func @f(%A: memref<10xi32>) {
  affine.for %i = 0 to 10 {
    %m = "affine.min"(%i) <{map = affine_map<(d0) -> (d0, 6)>}> : (index) -> index
    %v = arith.index_cast %m : index to i32
    "affine.if"(%i) <{condition = affine_set<(d0) : (d0 - 3 >= 0, -d0 + 7 >= 0)>}> ({
      affine.store %v, %A[%i] : memref<10xi32>
      "affine.yield"() : () -> ()
    }, {
      %neg = arith.constant -1 : i32
      affine.store %neg, %A[%i] : memref<10xi32>
      "affine.yield"() : () -> ()
    }) : (index) -> ()
  }
  func.return
}"""
    a = np.zeros(10, np.int32)
    run_function(parse(text), "f", [a])
    i = np.arange(10)
    np.testing.assert_array_equal(a, np.where((i >= 3) & (i <= 7), np.minimum(i, 6), -1))


def test_scf_for_with_i32_induction_variable():
    text = """
func.func @f(%A: memref<5xi32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c5 = arith.constant 5 : i32
  scf.for %i = %c0 to %c5 step %c1 : i32 {
    %sq = arith.muli %i, %i : i32
    %ix = arith.index_cast %i : i32 to index
    memref.store %sq, %A[%ix] : memref<5xi32>
  }
  func.return
}"""
    for vectorize in (True, False):
        a = np.zeros(5, np.int32)
        run_function(parse(text), "f", [a], vectorize_loops=vectorize)
        np.testing.assert_array_equal(a, np.arange(5) ** 2)


# Reductions -------------------------------------------------------------------------------


ROW_SUM = """
func.func @rowsum(%A: !layout.buffer<4x8xf32>, %S: !layout.buffer<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %sum = scf.for %j = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = layout.load %A[%i, %j] : !layout.buffer<4x8xf32>, f32
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    layout.store %sum, %S[%i] : !layout.buffer<4xf32>, f32
  }
  func.return
}"""


@pytest.mark.parametrize("vectorize", [True, False])
def test_reduction_with_iter_args(vectorize: bool):
    a = random((4, 8), seed=5)
    s = np.zeros(4, np.float32)
    run_function(parse(ROW_SUM), "rowsum", [a, s], vectorize_loops=vectorize)
    expected = np.zeros(4, np.float32)
    for j in range(8):
        expected = expected + a[:, j]
    np.testing.assert_array_equal(s, expected)


def test_scalar_result_of_reduction():
    text = """
func.func @total(%A: memref<10xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %z = arith.constant 0 : i64
  %r = scf.for %i = %c0 to %c10 step %c1 iter_args(%acc = %z) -> (i64) {
    %v = memref.load %A[%i] : memref<10xi64>
    %n = arith.addi %acc, %v : i64
    scf.yield %n : i64
  }
  func.return %r : i64
}"""
    a = np.arange(10, dtype=np.int64) * 3
    (result,) = run_function(parse(text), "total", [a])
    assert result == 135 and isinstance(result, int)


def test_scf_parallel_reduce_region_and_affine_parallel_reduction():
    body = """
    %v = memref.load %A[%i] : memref<37xf64>"""
    reduce = """scf.reduce(%v : f64) {
    ^bb0(%x: f64, %y: f64):
      %s = arith.addf %x, %y : f64
      scf.reduce.return %s : f64
    }"""
    loop = par(
        ["%i"],
        ["%c0"],
        ["%c37"],
        ["%c1"],
        body,
        inits=[("%init", "f64")],
        results="%total",
        reduce=reduce,
    )
    text = f"""
func.func @sum(%A: memref<37xf64>) -> (f64, f64) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c37 = arith.constant 37 : index
  %init = arith.constant 100.0 : f64
  {loop}
  %m = "affine.parallel"() <{{reductions = ["maximumf"], lowerBoundsMap = affine_map<() -> (0)>,
      lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (37)>,
      upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}}> ({{
  ^bb0(%i: index):
    %v = memref.load %A[%i] : memref<37xf64>
    affine.yield %v : f64
  }}) : () -> f64
  func.return %total, %m : f64, f64
}}"""
    a = random((37,), seed=6, dtype=np.float64)
    # xDSL 0.74's affine.parallel verifier miscounts operands when the op has results.
    total, largest = run_function(parse(text, verify=False), "sum", [a])
    assert total == pytest.approx(100.0 + a.sum(), rel=1e-12)
    assert largest == a.max()


def test_affine_parallel_integer_and_empty_reductions():
    text = """
func.func @f(%A: memref<9xi32>, %n: index) -> (i32, i32) {
  %s, %m = "affine.parallel"(%n) <{reductions = ["addi", "maxs"],
      lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>,
      upperBoundsMap = affine_map<()[s0] -> (s0)>, upperBoundsGroups = dense<1> : tensor<1xi32>,
      steps = [1 : i64]}> ({
  ^bb0(%i: index):
    %v = memref.load %A[%i] : memref<9xi32>
    affine.yield %v, %v : i32, i32
  }) : (index) -> (i32, i32)
  func.return %s, %m : i32, i32
}"""
    module = parse(text, verify=False)
    a = np.array([3, -9, 4, 1, -5, 9, 2, 6, -5], np.int32)
    assert run_function(module, "f", [a, 9]) == [6, 9]
    assert run_function(module, "f", [a, 2]) == [-6, 3]
    assert run_function(module, "f", [a, 0]) == [0, -(2**31)]


# Functions --------------------------------------------------------------------------------


def test_func_call_inside_parallel_loop():
    body = """
    %v = memref.load %A[%i] : memref<8xf32>
    %r = func.call @square_plus(%v, %i) : (f32, index) -> f32
    memref.store %r, %B[%i] : memref<8xf32>"""
    loop = par(["%i"], ["%c0"], ["%c8"], ["%c1"], body)
    text = f"""
func.func @square_plus(%x: f32, %i: index) -> f32 {{
  %ii = arith.index_cast %i : index to i32
  %f = arith.sitofp %ii : i32 to f32
  %s = arith.mulf %x, %x : f32
  %r = arith.addf %s, %f : f32
  func.return %r : f32
}}
func.func @main(%A: memref<8xf32>, %B: memref<8xf32>) {{
  {CONSTANTS}
  {loop}
  func.return
}}"""
    a = random((8,), seed=18)
    b = np.zeros(8, np.float32)
    run_function(parse(text), "main", [a, b])
    np.testing.assert_array_equal(b, a * a + np.arange(8, dtype=np.float32))


def test_func_call_with_buffers_in_vectorized_loop():
    text = """
func.func @put(%B: memref<6xf32>, %i: index, %v: f32) {
  memref.store %v, %B[%i] : memref<6xf32>
  func.return
}
func.func @main(%A: memref<6xf32>, %B: memref<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %v = memref.load %A[%i] : memref<6xf32>
    func.call @put(%B, %i, %v) : (memref<6xf32>, index, f32) -> ()
  }
  func.return
}"""
    for vectorize in (True, False):
        a = random((6,), seed=19)
        b = np.zeros(6, np.float32)
        run_function(parse(text), "main", [a, b], vectorize_loops=vectorize)
        np.testing.assert_array_equal(b, a)


# Errors -----------------------------------------------------------------------------------


def test_unsupported_op_is_named():
    text = """
func.func @f(%x: i32) -> i32 {
  %r = math.ctpop %x : i32
  func.return %r : i32
}"""
    with pytest.raises(DiagnosticException, match=r"unsupported operation 'math\.ctpop'"):
        run_function(parse(text), "f", [3])


def test_out_of_bounds_access_names_buffer_and_index():
    text = """
func.func @f(%A: !layout.buffer<4x5xf32>, %i: index) -> f32 {
  %c1 = arith.constant 1 : index
  %v = layout.load %A[%c1, %i] : !layout.buffer<4x5xf32>, f32
  func.return %v : f32
}"""
    module = parse(text)
    a = random((4, 5), seed=21)
    assert run_function(module, "f", [a, 4]) == a[1, 4]
    with pytest.raises(DiagnosticException, match=r"index \[1, 5\] is out of bounds for %A"):
        run_function(module, "f", [a, 5])
    with pytest.raises(DiagnosticException, match=r"index \[1, -1\] is out of bounds for %A"):
        run_function(module, "f", [a, -1])


def test_out_of_bounds_in_parallel_lanes_and_views():
    body = """
    %j = arith.addi %i, %c1 : index
    %v = memref.load %A[%j] : memref<8xf32>
    memref.store %v, %A[%i] : memref<8xf32>"""
    loop = par(["%i"], ["%c0"], ["%c8"], ["%c1"], body)
    text = f"""
func.func @f(%A: memref<8xf32>) {{
  {CONSTANTS}
  {loop}
  func.return
}}
func.func @g(%A: !layout.buffer<8xf32>) {{
  %p = layout.data %A : !layout.buffer<8xf32> -> !layout.ptr<f32>
  %b = layout.decl_buffer %p offset 4 : !layout.ptr<f32> -> !layout.buffer<2xvector<4xf32>>
  func.return
}}"""
    module = parse(text)
    with pytest.raises(DiagnosticException, match=r"index \[8\] is out of bounds for %A"):
        run_function(module, "f", [np.zeros(8, np.float32)])
    with pytest.raises(DiagnosticException, match="outside its storage"):
        run_function(module, "g", [np.zeros(8, np.float32)])


def test_wrong_arguments_are_rejected():
    module = parse(relu_parallel())
    good = np.zeros(SHAPE, np.float32)
    with pytest.raises(DiagnosticException, match="shape"):
        run_function(module, "relu", [np.zeros((1, 6, 5, 15), np.float32), good])
    with pytest.raises(DiagnosticException, match="dtype"):
        run_function(module, "relu", [np.zeros(SHAPE, np.float64), good])
    with pytest.raises(DiagnosticException, match="C-contiguous"):
        run_function(module, "relu", [np.zeros(SHAPE[::-1], np.float32).T, good])
    with pytest.raises(DiagnosticException, match="takes 2 arguments"):
        run_function(module, "relu", [good])
    with pytest.raises(DiagnosticException, match="no function @nope"):
        run_function(module, "nope", [])


def test_buffer_with_pending_transform_is_passed_in_its_logical_layout():
    text = """
func.func @f(%A: !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  %c3 = arith.constant 3 : index
  %x = arith.constant 42.0 : f32
  layout.store %x, %A[%c3] : !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>, f32
  func.return
}"""
    a = np.zeros(8, np.float32)
    run_function(parse(text), "f", [a])
    assert a[3] == 42.0
