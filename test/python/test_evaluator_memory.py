"""The numpy reference evaluator's memory model: views of one allocation (`layout.decl_buffer`
aliases, offsets, `layout.data` handles of parameters, vector-element buffers), a padded
transformed parameter at an offset, vector accesses of scalar buffers, and upstream
memref views (`collapse_shape`, `expand_shape`, `reinterpret_cast`, `subview`, `copy`) and
allocations.
"""

from __future__ import annotations

import numpy as np
from evaluator_harness import CONSTANTS, par, parse, random

from physlayout.semantics.evaluator import run_function


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
