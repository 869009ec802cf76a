"""The numpy reference evaluator (`physlayout.semantics.evaluator`) against numpy references."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, func, memref, scf, vector
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from physlayout.dialects.layout_dialect import Layout
from physlayout.semantics.evaluator import Evaluator, run_function


def parse(text: str, verify: bool = True) -> ModuleOp:
    ctx = Context()
    for dialect in (
        builtin.Builtin,
        func.Func,
        arith.Arith,
        scf.Scf,
        affine.Affine,
        memref.MemRef,
        math_dialect.Math,
        vector.Vector,
        Layout,
    ):
        ctx.load_dialect(dialect)
    module = Parser(ctx, text).parse_module()
    if verify:
        module.verify()
    return module


def par(
    ivs: Sequence[str],
    lbs: Sequence[str],
    ubs: Sequence[str],
    steps: Sequence[str],
    body: str,
    inits: Sequence[tuple[str, str]] = (),
    results: str = "",
    reduce: str = "scf.reduce",
) -> str:
    """Generic-form `scf.parallel` (the form tests wrote before physlayout parsed the custom
    one, `dialects.scf_syntax`; both must keep parsing)."""
    n = len(ivs)
    operands = ", ".join([*lbs, *ubs, *steps, *(v for v, _ in inits)])
    types = ", ".join(["index"] * (3 * n) + [t for _, t in inits])
    result_types = ", ".join(t for _, t in inits)
    args = ", ".join(f"{iv}: index" for iv in ivs)
    head = f"{results} = " if results else ""
    return (
        f'{head}"scf.parallel"({operands}) <{{operandSegmentSizes = array<i32: {n}, {n}, '
        f"{n}, {len(inits)}>}}> ({{\n^bb0({args}):\n{body}\n{reduce}\n}}) : ({types}) -> "
        f"({result_types})"
    )


CONSTANTS = """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
"""

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


def random(shape: Sequence[int], seed: int = 0, dtype: Any = np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# Elementwise kernels ----------------------------------------------------------------------


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


# Control flow with lanes ------------------------------------------------------------------


def test_scf_if_per_lane_condition():
    body = """
    %v = memref.load %A[%i] : memref<16xf32>
    %pos = arith.cmpf ogt, %v, %zero : f32
    %r = scf.if %pos -> (f32) {
      %d = arith.addf %v, %v : f32
      memref.store %d, %B[%i] : memref<16xf32>
      scf.yield %d : f32
    } else {
      %n = arith.negf %v : f32
      scf.yield %n : f32
    }
    memref.store %r, %C[%i] : memref<16xf32>"""
    loop = par(["%i"], ["%c0"], ["%c16"], ["%c1"], body)
    text = f"""
func.func @f(%A: memref<16xf32>, %B: memref<16xf32>, %C: memref<16xf32>) {{
  {CONSTANTS}
  {loop}
  func.return
}}"""
    a = random((16,), seed=7)
    b = np.full(16, -5.0, np.float32)
    c = np.zeros(16, np.float32)
    run_function(parse(text), "f", [a, b, c])
    np.testing.assert_array_equal(b, np.where(a > 0, 2 * a, -5.0))
    np.testing.assert_array_equal(c, np.where(a > 0, 2 * a, -a))


def test_guarded_access_does_not_fault_on_inactive_lanes():
    # Lanes with i >= 5 would read out of bounds; the guard masks them off.
    body = """
    %ok = arith.cmpi slt, %i, %c5 : index
    scf.if %ok {
      %v = memref.load %A[%i] : memref<5xf32>
      memref.store %v, %B[%i] : memref<8xf32>
    }"""
    loop = par(["%i"], ["%c0"], ["%c8"], ["%c1"], body)
    text = f"""
func.func @f(%A: memref<5xf32>, %B: memref<8xf32>) {{
  {CONSTANTS}
  %c5 = arith.constant 5 : index
  {loop}
  func.return
}}"""
    a = random((5,), seed=8)
    b = np.zeros(8, np.float32)
    run_function(parse(text), "f", [a, b])
    np.testing.assert_array_equal(b[:5], a)
    np.testing.assert_array_equal(b[5:], 0)


def test_triangular_loops_inside_parallel():
    # Inner bounds depend on the lane: a masked sequential loop (iter_args) and a vectorized
    # loop (no iter_args) with per-lane trip counts.
    body = """
    %s = scf.for %j = %c0 to %i step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %A[%j] : memref<8xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %P[%i] : memref<8xf32>
    scf.for %j = %i to %c8 step %c1 {
      %one = arith.constant 1.0 : f32
      memref.store %one, %T[%i, %j] : memref<8x8xf32>
    }"""
    loop = par(["%i"], ["%c0"], ["%c8"], ["%c1"], body)
    text = f"""
func.func @f(%A: memref<8xf32>, %P: memref<8xf32>, %T: memref<8x8xf32>) {{
  {CONSTANTS}
  {loop}
  func.return
}}"""
    for vectorize in (True, False):
        a = random((8,), seed=9)
        p = np.zeros(8, np.float32)
        t = np.zeros((8, 8), np.float32)
        run_function(parse(text), "f", [a, p, t], vectorize_loops=vectorize)
        expected = np.array([np.sum(a[:i], dtype=np.float32) for i in range(8)], np.float32)
        np.testing.assert_allclose(p, expected, rtol=1e-6)
        np.testing.assert_array_equal(t, np.triu(np.ones((8, 8), np.float32)))


def test_nested_parallel_broadcasts_new_axis():
    inner = par(
        ["%j"],
        ["%c0"],
        ["%c8"],
        ["%c1"],
        """
      %v = memref.load %A[%i, %j] : memref<4x8xi32>
      %w = arith.muli %v, %v : i32
      memref.store %w, %B[%i, %j] : memref<4x8xi32>""",
    )
    outer = par(["%i"], ["%c0"], ["%c4"], ["%c1"], inner)
    text = f"""
func.func @f(%A: memref<4x8xi32>, %B: memref<4x8xi32>) {{
  {CONSTANTS}
  {outer}
  func.return
}}"""
    a = np.arange(32, dtype=np.int32).reshape(4, 8) - 16
    b = np.zeros_like(a)
    run_function(parse(text), "f", [a, b])
    np.testing.assert_array_equal(b, a * a)


def test_lane_private_allocation():
    body = """
    %p = layout.allocate [4] : !layout.ptr<f32>
    %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<4xf32>
    %v = layout.load %A[%i] : !layout.buffer<8xf32>, f32
    scf.for %k = %c0 to %c4 step %c1 {
      %kf = arith.index_cast %k : index to i32
      %f = arith.sitofp %kf : i32 to f32
      %x = arith.mulf %v, %f : f32
      layout.store %x, %t[%k] : !layout.buffer<4xf32>, f32
    }
    %s = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
      %y = layout.load %t[%k] : !layout.buffer<4xf32>, f32
      %n = arith.addf %acc, %y : f32
      scf.yield %n : f32
    }
    layout.store %s, %B[%i] : !layout.buffer<8xf32>, f32"""
    loop = par(["%i"], ["%c0"], ["%c8"], ["%c1"], body)
    text = f"""
func.func @f(%A: !layout.buffer<8xf32>, %B: !layout.buffer<8xf32>) {{
  {CONSTANTS}
  {loop}
  func.return
}}"""
    a = random((8,), seed=10)
    b = np.zeros(8, np.float32)
    run_function(parse(text), "f", [a, b])
    np.testing.assert_allclose(b, a * 6, rtol=1e-6)


# The vectorize_loops rule -----------------------------------------------------------------


def test_loop_carried_dependence_through_memory_stays_sequential():
    # Prefix sum in place: A[i] += A[i-1] reads what the previous iteration wrote.
    text = """
func.func @scan(%A: memref<10xf32>) {
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  scf.for %i = %c1 to %c10 step %c1 {
    %im1 = arith.subi %i, %c1 : index
    %p = memref.load %A[%im1] : memref<10xf32>
    %v = memref.load %A[%i] : memref<10xf32>
    %s = arith.addf %p, %v : f32
    memref.store %s, %A[%i] : memref<10xf32>
  }
  func.return
}"""
    a = random((10,), seed=11)
    expected = np.cumsum(a, dtype=np.float32)
    run_function(parse(text), "scan", [a])
    np.testing.assert_allclose(a, expected, rtol=1e-6)


def test_dependence_through_an_alias_stays_sequential():
    # %x and %y are different SSA buffers over the same storage: still one buffer.
    text = """
func.func @shift(%A: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %d = layout.data %A : !layout.buffer<8xf32> -> !layout.ptr<f32>
  %x = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<8xf32>
  %y = layout.decl_buffer %d offset 1 : !layout.ptr<f32> -> !layout.buffer<7xf32>
  scf.for %i = %c0 to %c7 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<8xf32>, f32
    layout.store %v, %y[%i] : !layout.buffer<7xf32>, f32
  }
  func.return
}"""
    a = random((8,), seed=12)
    expected = np.full(8, a[0], np.float32)  # sequentially, a[0] propagates to the end
    run_function(parse(text), "shift", [a])
    np.testing.assert_array_equal(a, expected)


def test_write_write_order_is_sequential():
    text = """
func.func @ww(%B: memref<5xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %ten = arith.constant 10 : i32
  %twenty = arith.constant 20 : i32
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %ten, %B[%i] : memref<5xi32>
    %ip1 = arith.addi %i, %c1 : index
    memref.store %twenty, %B[%ip1] : memref<5xi32>
  }
  func.return
}"""
    b = np.zeros(5, np.int32)
    run_function(parse(text), "ww", [b])
    np.testing.assert_array_equal(b, [10, 10, 10, 10, 20])


def test_single_writer_last_iteration_wins():
    # No reads of %B, one store at a lane-independent index: vectorized, and the last
    # iteration's value must win as in sequential execution.
    text = """
func.func @last(%A: memref<6xf32>, %B: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %v = memref.load %A[%i] : memref<6xf32>
    memref.store %v, %B[%c0] : memref<1xf32>
  }
  func.return
}"""
    module = parse(text)
    evaluator = Evaluator(module)
    a = random((6,), seed=13)
    b = np.zeros(1, np.float32)
    evaluator.run("last", [a, b])
    assert b[0] == a[-1]
    loop = next(op for op in module.walk() if op.name == "scf.for")
    assert evaluator._decisions[loop][1]  # pyright: ignore[reportPrivateUsage]


def test_read_modify_write_indexed_by_the_loop_variable_is_vectorized():
    # C[i, j] += A[i, k]: the i and j loops are disjoint by their induction variable, the k
    # loop reads and writes C at the same place in every iteration and stays sequential.
    text = """
func.func @acc(%A: memref<3x4xf32>, %C: memref<3x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c5 step %c1 {
      scf.for %k = %c0 to %c4 step %c1 {
        %a = memref.load %A[%i, %k] : memref<3x4xf32>
        %c = memref.load %C[%i, %j] : memref<3x5xf32>
        %s = arith.addf %a, %c : f32
        memref.store %s, %C[%i, %j] : memref<3x5xf32>
      }
    }
  }
  func.return
}"""
    module = parse(text)
    evaluator = Evaluator(module)
    a = random((3, 4), seed=14)
    c = random((3, 5), seed=15)
    expected = c.copy()
    for k in range(4):
        expected = expected + a[:, k : k + 1]
    evaluator.run("acc", [a, c])
    np.testing.assert_array_equal(c, expected)
    loops = [op for op in module.walk() if op.name == "scf.for"]
    decisions = {i: evaluator._decisions[op][1] for i, op in enumerate(loops)}  # pyright: ignore[reportPrivateUsage]
    assert decisions == {0: True, 1: True, 2: False}


# Memory: aliasing, vector elements, memref views ------------------------------------------


def test_aliasing_views_over_one_allocation():
    text = """
func.func @alias(%out: !layout.buffer<4xvector<4xf32>>, %sub: !layout.buffer<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = layout.allocate [16] : !layout.ptr<f32>
  %flat = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<4x4xf32>
  %vec = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<4xvector<4xf32>>
  %tail = layout.decl_buffer %p offset 8 : !layout.ptr<f32> -> !layout.buffer<2x4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %k = affine.apply affine_map<(d0, d1) -> (d0 * 4 + d1)>(%i, %j)
      %ki = arith.index_cast %k : index to i32
      %f = arith.sitofp %ki : i32 to f32
      layout.store %f, %flat[%i, %j] : !layout.buffer<4x4xf32>, f32
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = layout.load %vec[%i] : !layout.buffer<4xvector<4xf32>>, vector<4xf32>
    layout.store %v, %out[%i] : !layout.buffer<4xvector<4xf32>>, vector<4xf32>
  }
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %w = layout.load %tail[%i, %c0] : !layout.buffer<2x4xf32>, vector<4xf32>
    layout.store %w, %sub[%i, %c0] : !layout.buffer<2x4xf32>, vector<4xf32>
  }
  func.return
}"""
    out = np.zeros((4, 4), np.float32)
    sub = np.zeros((2, 4), np.float32)
    run_function(parse(text), "alias", [out, sub])
    np.testing.assert_array_equal(out, np.arange(16, dtype=np.float32).reshape(4, 4))
    np.testing.assert_array_equal(sub, np.arange(8, 16, dtype=np.float32).reshape(2, 4))


def test_writes_through_data_handle_alias_reach_the_argument():
    text = """
func.func @f(%A: !layout.buffer<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %d = layout.data %A : !layout.buffer<2x3xf32> -> !layout.ptr<f32>
  %flat = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<6xf32>
  %v = layout.load %flat[%c0] : !layout.buffer<6xf32>, f32
  layout.store %v, %flat[%c5] : !layout.buffer<6xf32>, f32
  func.return
}"""
    a = random((2, 3), seed=16)
    first = a[0, 0]
    run_function(parse(text), "f", [a])
    assert a[1, 2] == first


def test_handle_of_a_parameter_starts_at_the_parameter():
    """A callee addresses its parameter from the parameter's first element, also through
    `layout.data` (how flatten-buffers declares its flat alias), when the caller passes a
    view at an offset; the caller's own `layout.data` of that view is its storage's start."""
    text = """
func.func @callee(%x: !layout.buffer<2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %d = layout.data %x : !layout.buffer<2x2xf32> -> !layout.ptr<f32>
  %flat = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<4xf32>
  %one = layout.decl_buffer %d offset 1 : !layout.ptr<f32> -> !layout.buffer<3xf32>
  %v = layout.load %flat[%c0] : !layout.buffer<4xf32>, f32
  %w = layout.load %one[%c0] : !layout.buffer<3xf32>, f32
  %s = arith.addf %v, %w : f32
  layout.store %s, %flat[%c3] : !layout.buffer<4xf32>, f32
  func.return
}
func.func @caller(%a: !layout.buffer<8xf32>, %probe: !layout.buffer<1xf32>) {
  %c0 = arith.constant 0 : index
  %p = layout.data %a : !layout.buffer<8xf32> -> !layout.ptr<f32>
  %view = layout.decl_buffer %p offset 3 : !layout.ptr<f32> -> !layout.buffer<2x2xf32>
  func.call @callee(%view) : (!layout.buffer<2x2xf32>) -> ()
  %q = layout.data %view : !layout.buffer<2x2xf32> -> !layout.ptr<f32>
  %again = layout.decl_buffer %q : !layout.ptr<f32> -> !layout.buffer<8xf32>
  %first = layout.load %again[%c0] : !layout.buffer<8xf32>, f32
  layout.store %first, %probe[%c0] : !layout.buffer<1xf32>, f32
  func.return
}"""
    a = np.arange(8, dtype=np.float32) + 10
    probe = np.zeros(1, np.float32)
    run_function(parse(text), "caller", [a, probe])
    np.testing.assert_array_equal(a, [10, 11, 12, 13, 14, 15, 13 + 14, 17])
    assert probe[0] == 10


SPLIT = "transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1.0 : f32"


def test_mapped_parameter_at_an_offset_is_filled_at_its_physical_positions():
    """A buffer with a padded transform declared at an element offset and passed to a
    callee that stores to it: the callee's padding fill on entry and its stores land at
    the physical positions (row-major in the transformed 2x4 shape) after the offset; the
    storage outside [5, 13) is untouched."""
    text = f"""
func.func @fill(%x: !layout.buffer<6xf32>, %t: !layout.buffer<6xf32, {SPLIT}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {{
    %v = layout.load %x[%i] : !layout.buffer<6xf32>, f32
    layout.store %v, %t[%i] : !layout.buffer<6xf32, {SPLIT}>, f32
  }}
  func.return
}}
func.func @main(%x: !layout.buffer<6xf32>, %s: !layout.buffer<20xf32>) {{
  %p = layout.data %s : !layout.buffer<20xf32> -> !layout.ptr<f32>
  %t = layout.decl_buffer %p offset 5 : !layout.ptr<f32> -> !layout.buffer<6xf32, {SPLIT}>
  func.call @fill(%x, %t) : (!layout.buffer<6xf32>, !layout.buffer<6xf32, {SPLIT}>) -> ()
  func.return
}}"""
    x = np.arange(1, 7, dtype=np.float32)
    s = np.full(20, 7.0, np.float32)
    run_function(parse(text), "main", [x, s])
    expected = np.full(20, 7.0, np.float32)
    expected[5:13] = [1, 2, 3, 4, 5, 6, -1, -1]
    np.testing.assert_array_equal(s, expected)


def test_vector_access_of_scalar_buffer_in_parallel():
    body = """
    %j = arith.muli %jj, %c4 : index
    %v = layout.load %A[%i, %j] : !layout.buffer<3x8xf32>, vector<4xf32>
    %two = arith.constant dense<2.0> : vector<4xf32>
    %w = arith.mulf %v, %two : vector<4xf32>
    layout.store %w, %B[%i, %j] : !layout.buffer<3x8xf32>, vector<4xf32>"""
    loop = par(["%i", "%jj"], ["%c0", "%c0"], ["%c3", "%c2"], ["%c1", "%c1"], body)
    text = f"""
func.func @f(%A: !layout.buffer<3x8xf32>, %B: !layout.buffer<3x8xf32>) {{
  {CONSTANTS}
  %c3 = arith.constant 3 : index
  {loop}
  func.return
}}"""
    a = random((3, 8), seed=17)
    b = np.zeros_like(a)
    run_function(parse(text), "f", [a, b])
    np.testing.assert_array_equal(b, 2 * a)


def test_memref_views():
    text = """
func.func @views(%A: memref<4x6xf32>, %B: memref<24xf32>, %C: memref<2x3xf32>, %D: memref<2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %flat = memref.collapse_shape %A [[0, 1]] : memref<4x6xf32> into memref<24xf32>
  "memref.copy"(%flat, %B) : (memref<24xf32>, memref<24xf32>) -> ()
  %e = memref.expand_shape %B [[0, 1, 2]] output_shape [2, 3, 4] : memref<24xf32> into memref<2x3x4xf32>
  %x = memref.load %e[%c1, %c2, %c3] : memref<2x3x4xf32>
  memref.store %x, %C[%c0, %c0] : memref<2x3xf32>
  %r = memref.reinterpret_cast %A to offset: [5], sizes: [2, 3], strides: [6, 2] : memref<4x6xf32> to memref<2x3xf32, strided<[6, 2], offset: 5>>
  %y = memref.load %r[%c1, %c2] : memref<2x3xf32, strided<[6, 2], offset: 5>>
  memref.store %y, %C[%c1, %c2] : memref<2x3xf32>
  %s = memref.subview %A[1, 2] [2, 2] [2, 1] : memref<4x6xf32> to memref<2x2xf32, strided<[12, 1], offset: 8>>
  "memref.copy"(%s, %D) : (memref<2x2xf32, strided<[12, 1], offset: 8>>, memref<2x2xf32>) -> ()
  func.return
}"""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    b = np.zeros(24, np.float32)
    c = np.zeros((2, 3), np.float32)
    d = np.zeros((2, 2), np.float32)
    run_function(parse(text), "views", [a, b, c, d])
    np.testing.assert_array_equal(b, a.reshape(-1))
    assert c[0, 0] == b.reshape(2, 3, 4)[1, 2, 3]
    assert c[1, 2] == a.reshape(-1)[5 + 6 * 1 + 2 * 2]
    np.testing.assert_array_equal(d, a[1:4:2, 2:4])


def test_memref_alloc_and_returned_buffer():
    text = """
func.func @make() -> memref<3xi16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %m = memref.alloc() : memref<3xi16>
  %v = arith.constant -3 : i16
  memref.store %v, %m[%c2] : memref<3xi16>
  func.return %m : memref<3xi16>
}"""
    (result,) = run_function(parse(text), "make", [])
    assert isinstance(result, np.ndarray)
    np.testing.assert_array_equal(result, np.array([0, 0, -3], np.int16))


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


# Scalar semantics -------------------------------------------------------------------------


def test_integer_division_semantics():
    text = """
func.func @div(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32, i32) {
  %q = arith.divsi %a, %b : i32
  %f = arith.floordivsi %a, %b : i32
  %r = arith.remsi %a, %b : i32
  %c = arith.ceildivsi %a, %b : i32
  %u = arith.divui %a, %b : i32
  %m = arith.remui %a, %b : i32
  func.return %q, %f, %r, %c, %u, %m : i32, i32, i32, i32, i32, i32
}"""
    module = parse(text)
    assert run_function(module, "div", [-7, 4]) == [-1, -2, -3, -1, (2**32 - 7) // 4, 1]
    assert run_function(module, "div", [7, -4]) == [-1, -2, 3, -1, 0, 7]
    assert run_function(module, "div", [7, 4]) == [1, 1, 3, 2, 1, 3]
    with pytest.raises(DiagnosticException, match="division by zero"):
        run_function(module, "div", [7, 0])


def test_integer_wraparound_shifts_and_comparisons():
    text = """
func.func @ints(%a: i8, %b: i8) -> (i8, i8, i8, i8, i8, i1, i1, i32, i32, index) {
  %s = arith.addi %a, %b : i8
  %p = arith.muli %a, %b : i8
  %one = arith.constant 1 : i8
  %l = arith.shli %a, %one : i8
  %rs = arith.shrsi %b, %one : i8
  %ru = arith.shrui %b, %one : i8
  %lt = arith.cmpi slt, %b, %a : i8
  %ult = arith.cmpi ult, %b, %a : i8
  %es = arith.extsi %b : i8 to i32
  %eu = arith.extui %b : i8 to i32
  %ix = arith.index_cast %b : i8 to index
  func.return %s, %p, %l, %rs, %ru, %lt, %ult, %es, %eu, %ix : i8, i8, i8, i8, i8, i1, i1, i32, i32, index
}"""
    results = run_function(parse(text), "ints", [127, -2])
    assert results == [125, 2, -2, -1, 127, True, False, -2, 254, -2]
    assert run_function(parse(text), "ints", [127, 1])[0] == -128


def test_float_ops_and_predicates():
    text = """
func.func @floats(%x: f32, %y: f32) -> (f32, f32, f32, f32, f32, f32, i1, i1, i1, i1, f16, f64) {
  %mx = arith.maximumf %x, %y : f32
  %mn = arith.maxnumf %x, %y : f32
  %e = math.erf %x : f32
  %rs = math.rsqrt %y : f32
  %fm = math.fma %x, %y, %x : f32
  %rem = arith.subf %x, %y : f32
  %olt = arith.cmpf olt, %x, %y : f32
  %ult = arith.cmpf ult, %x, %y : f32
  %une = arith.cmpf une, %x, %x : f32
  %ord = arith.cmpf ord, %x, %y : f32
  %h = arith.truncf %y : f32 to f16
  %d = arith.extf %y : f32 to f64
  func.return %mx, %mn, %e, %rs, %fm, %rem, %olt, %ult, %une, %ord, %h, %d : f32, f32, f32, f32, f32, f32, i1, i1, i1, i1, f16, f64
}"""
    module = parse(text)
    x, y = np.float32(-1.5), np.float32(2.25)
    out = run_function(module, "floats", [x, y])
    assert out[0] == 2.25 and out[1] == 2.25
    assert out[2] == pytest.approx(math.erf(-1.5), rel=1e-6)
    assert out[3] == pytest.approx(1 / 1.5, rel=1e-6)
    assert out[4] == np.float32(x * y + x)
    assert out[5] == np.float32(-1.5 - 2.25)
    assert out[6:10] == [True, True, False, True]
    assert out[10] == 2.25 and out[11] == 2.25
    nan = run_function(module, "floats", [np.float32("nan"), y])
    assert math.isnan(nan[0]) and nan[1] == 2.25
    assert nan[6:10] == [False, True, True, False]


def test_f32_values_stay_float32():
    text = """
func.func @third(%x: f32) -> f32 {
  %three = arith.constant 3.0 : f32
  %r = arith.divf %x, %three : f32
  func.return %r : f32
}"""
    (r,) = run_function(parse(text), "third", [1.0])
    assert r == float(np.float32(1.0) / np.float32(3.0))
    assert r != 1.0 / 3.0


def test_vector_register_ops():
    text = """
func.func @vec(%x: f32, %v: vector<4xf32>) -> (vector<4xf32>, f32, vector<4xf32>, f32, f32) {
  %b = vector.broadcast %x : f32 to vector<4xf32>
  %e = vector.extract %v[2] : f32 from vector<4xf32>
  %i = vector.insert %x, %v [0] : f32 into vector<4xf32>
  %s = vector.reduction <add>, %v : vector<4xf32> into f32
  %m = vector.reduction <maxnumf>, %v, %x : vector<4xf32> into f32
  func.return %b, %e, %i, %s, %m : vector<4xf32>, f32, vector<4xf32>, f32, f32
}"""
    v = np.array([1.0, -2.0, 3.5, 0.25], np.float32)
    b, e, i, s, m = run_function(parse(text), "vec", [np.float32(9.0), v])
    np.testing.assert_array_equal(b, np.full(4, 9.0, np.float32))
    assert e == 3.5
    np.testing.assert_array_equal(i, [9.0, -2.0, 3.5, 0.25])
    assert s == 2.75 and m == 9.0


def test_vector_ops_in_lanes_and_vector_element_buffer():
    body = """
    %v = layout.load %A[%i] : !layout.buffer<6xvector<4xf32>>, vector<4xf32>
    %s = vector.reduction <add>, %v : vector<4xf32> into f32
    %b = vector.broadcast %s : f32 to vector<4xf32>
    %f = vector.fma %v, %v, %b : vector<4xf32>
    %cond = arith.cmpf ogt, %s, %zero : f32
    %sel = arith.select %cond, %f, %v : vector<4xf32>
    layout.store %sel, %B[%i] : !layout.buffer<6xvector<4xf32>>, vector<4xf32>"""
    loop = par(["%i"], ["%c0"], ["%c6"], ["%c1"], body)
    text = f"""
func.func @f(%A: !layout.buffer<6xvector<4xf32>>, %B: !layout.buffer<6xvector<4xf32>>) {{
  {CONSTANTS}
  %c6 = arith.constant 6 : index
  {loop}
  func.return
}}"""
    a = random((6, 4), seed=20)
    b = np.zeros_like(a)
    run_function(parse(text), "f", [a, b])
    s = a.sum(axis=1, keepdims=True, dtype=np.float32)
    np.testing.assert_allclose(b, np.where(s > 0, a * a + s, a), rtol=1e-6)


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


# More lanes, rules and integer semantics --------------------------------------------------


def test_scratch_allocated_in_vectorized_loop_is_private():
    text = """
func.func @f(%A: !layout.buffer<6xf32>, %B: !layout.buffer<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %p = layout.allocate [2] : !layout.ptr<f32>
    %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<2xf32>
    %v = layout.load %A[%i] : !layout.buffer<6xf32>, f32
    layout.store %v, %t[%c0] : !layout.buffer<2xf32>, f32
    %w = layout.load %t[%c0] : !layout.buffer<2xf32>, f32
    %x = layout.load %t[%c1] : !layout.buffer<2xf32>, f32
    %s = arith.addf %w, %x : f32
    layout.store %s, %t[%c1] : !layout.buffer<2xf32>, f32
    %y = layout.load %t[%c1] : !layout.buffer<2xf32>, f32
    layout.store %y, %B[%i] : !layout.buffer<6xf32>, f32
  }
  func.return
}"""
    module = parse(text)
    evaluator = Evaluator(module)
    a = random((6,), seed=22)
    b = np.zeros(6, np.float32)
    evaluator.run("f", [a, b])
    np.testing.assert_array_equal(b, a)
    loop = next(op for op in module.walk() if op.name == "scf.for")
    assert evaluator._decisions[loop][1]  # pyright: ignore[reportPrivateUsage]


def test_scratch_shared_across_iterations_stays_sequential():
    text = """
func.func @f(%A: !layout.buffer<6xf32>, %B: !layout.buffer<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %p = layout.allocate [1] : !layout.ptr<f32>
  %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<1xf32>
  scf.for %i = %c0 to %c6 step %c1 {
    %v = layout.load %A[%i] : !layout.buffer<6xf32>, f32
    %w = layout.load %t[%c0] : !layout.buffer<1xf32>, f32
    %s = arith.addf %v, %w : f32
    layout.store %s, %t[%c0] : !layout.buffer<1xf32>, f32
    layout.store %s, %B[%i] : !layout.buffer<6xf32>, f32
  }
  func.return
}"""
    a = random((6,), seed=23)
    b = np.zeros(6, np.float32)
    run_function(parse(text), "f", [a, b])
    np.testing.assert_allclose(b, np.cumsum(a, dtype=np.float32), rtol=1e-6)


def test_nested_parallel_with_lane_dependent_bounds():
    inner = par(
        ["%j"],
        ["%i"],
        ["%c8"],
        ["%c2"],
        """
      %one = arith.constant 1 : i32
      memref.store %one, %T[%i, %j] : memref<8x8xi32>""",
    )
    outer = par(["%i"], ["%c0"], ["%c8"], ["%c1"], inner)
    text = f"""
func.func @f(%T: memref<8x8xi32>) {{
  {CONSTANTS}
  {outer}
  func.return
}}"""
    t = np.zeros((8, 8), np.int32)
    run_function(parse(text), "f", [t])
    i, j = np.indices((8, 8))
    np.testing.assert_array_equal(t, ((j >= i) & ((j - i) % 2 == 0)).astype(np.int32))


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


INT_OPS = """
func.func @ops(%a: i8, %b: i8) -> (i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8) {
  %0 = arith.divsi %a, %b : i8
  %1 = arith.remsi %a, %b : i8
  %2 = arith.floordivsi %a, %b : i8
  %3 = arith.ceildivsi %a, %b : i8
  %4 = arith.divui %a, %b : i8
  %5 = arith.remui %a, %b : i8
  %6 = arith.muli %a, %b : i8
  %7 = arith.subi %a, %b : i8
  %8 = arith.minsi %a, %b : i8
  %9 = arith.maxui %a, %b : i8
  %c3 = arith.constant 3 : i8
  %10 = arith.shrsi %a, %c3 : i8
  %11 = arith.shrui %a, %c3 : i8
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8
}"""


def _i8(x: int) -> int:
    return (x + 128) % 256 - 128


def _int_model(a: int, b: int) -> list[int]:
    """C / MLIR semantics of the ops in INT_OPS, in plain Python."""
    ua, ub = a % 256, b % 256
    trunc = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return [
        _i8(trunc),
        _i8(a - trunc * b),
        _i8(a // b),
        _i8(-((-a) // b)),
        _i8(ua // ub),
        _i8(ua % ub),
        _i8(a * b),
        _i8(a - b),
        min(a, b),
        _i8(max(ua, ub)),
        a >> 3,
        _i8(ua >> 3),
    ]


INT_MODULE = parse(INT_OPS)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(-128, 127), st.integers(-128, 127).filter(lambda b: b != 0))
def test_i8_semantics_match_python_model(a: int, b: int):
    if a == -128 and b == -1:
        return  # signed overflow: undefined behaviour
    assert run_function(INT_MODULE, "ops", [a, b]) == _int_model(a, b)


def test_lane_dependent_subview_with_private_scratch_and_copy():
    body = """
    %t = memref.alloca() : memref<4xf32>
    %row = memref.subview %A[%i, 0] [1, 4] [1, 1] : memref<3x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    "memref.copy"(%row, %t) : (memref<4xf32, strided<[1], offset: ?>>, memref<4xf32>) -> ()
    %v = memref.load %t[%c2] : memref<4xf32>
    memref.store %v, %B[%i] : memref<3xf32>"""
    loop = par(["%i"], ["%c0"], ["%c3"], ["%c1"], body)
    text = f"""
func.func @f(%A: memref<3x4xf32>, %B: memref<3xf32>) {{
  {CONSTANTS}
  %c3 = arith.constant 3 : index
  {loop}
  func.return
}}"""
    a = random((3, 4), seed=24)
    b = np.zeros(3, np.float32)
    run_function(parse(text), "f", [a, b])
    np.testing.assert_array_equal(b, a[:, 2])


def test_scf_reduce_with_lane_dependent_bounds():
    inner = par(
        ["%j"],
        ["%c0"],
        ["%i"],
        ["%c1"],
        """
      %v = memref.load %A[%j] : memref<8xi64>""",
        inits=[("%zero64", "i64")],
        results="%s",
        reduce="""scf.reduce(%v : i64) {
      ^bb0(%x: i64, %y: i64):
        %t = arith.addi %x, %y : i64
        scf.reduce.return %t : i64
      }""",
    )
    body = inner + "\n    memref.store %s, %P[%i] : memref<8xi64>"
    outer = par(["%i"], ["%c0"], ["%c8"], ["%c1"], body)
    text = f"""
func.func @f(%A: memref<8xi64>, %P: memref<8xi64>) {{
  {CONSTANTS}
  %zero64 = arith.constant 0 : i64
  {outer}
  func.return
}}"""
    a = np.arange(1, 9, dtype=np.int64) ** 2
    p = np.full(8, -1, np.int64)
    run_function(parse(text), "f", [a, p])
    np.testing.assert_array_equal(p, np.concatenate([[0], np.cumsum(a)[:-1]]))


def test_i1_arithmetic_is_modulo_two_and_signed():
    text = """
func.func @g(%a: i1, %b: i1) -> (i1, i1, i1, i32, i32) {
  %s = arith.addi %a, %b : i1
  %m = arith.muli %a, %b : i1
  %lt = arith.cmpi slt, %a, %b : i1
  %e = arith.extsi %a : i1 to i32
  %u = arith.extui %a : i1 to i32
  func.return %s, %m, %lt, %e, %u : i1, i1, i1, i32, i32
}"""
    module = parse(text)
    assert run_function(module, "g", [True, True]) == [False, True, False, -1, 1]
    assert run_function(module, "g", [True, False]) == [True, False, True, -1, 1]
