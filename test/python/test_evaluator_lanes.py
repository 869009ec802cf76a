"""The numpy reference evaluator's vectorized execution: loops run as lane axes, per-lane
control flow (`scf.if`, guarded accesses that must not fault on inactive lanes, lane-
dependent bounds and subviews), lane-private scratch allocations, and the
`vectorize_loops` rule that keeps loops with dependences through memory (also through an
alias or shared scratch) sequential while vectorizing independent ones.
"""

from __future__ import annotations

import numpy as np
from evaluator_harness import CONSTANTS, par, parse, random

from physlayout.semantics.evaluator import Evaluator, run_function

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
