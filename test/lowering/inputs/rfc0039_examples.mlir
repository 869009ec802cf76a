// The four worked examples of RFC 0039 ("Buffer physical layout"), scaled down, as
// buffer-level kernels plus a driver. Each kernel fills its buffer through logical indices
// with a value that spells the index (x[i, j] = 10*i + j, x[n, h, w, c] = 1000*n + 100*h +
// 10*w + c), reads one element into %probe (the RFC's `val = BufferLoad(x, ...)`) and,
// for the 2-D examples, stores 7 at one index (`BufferStore(x, 7, ...)`). The driver prints
// every buffer in its physical layout. Used by run-rfc0039.mlir (mlir-runner) and
// test/python/test_lower_layout.py (numpy evaluator).

// Example 1: no transform, row-major flattening to 1-D; val = x[1, 5]; x[2, 3] = 7.
func.func @flat_2d(%x: !layout.buffer<4x6xf32>, %probe: !layout.buffer<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c10 = arith.constant 10 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c6 step %c1 {
      %t = arith.muli %i, %c10 : index
      %s = arith.addi %t, %j : index
      %s32 = arith.index_cast %s : index to i32
      %v = arith.sitofp %s32 : i32 to f32
      layout.store %v, %x[%i, %j] : !layout.buffer<4x6xf32>, f32
    }
  }
  %val = layout.load %x[%c1, %c5] : !layout.buffer<4x6xf32>, f32
  layout.store %val, %probe[%c0] : !layout.buffer<1xf32>, f32
  %seven = arith.constant 7.0 : f32
  layout.store %seven, %x[%c2, %c3] : !layout.buffer<4x6xf32>, f32
  func.return
}

// Example 2: transform_layout(lambda i, j: [j, i]): the fastest axis is the logical first.
func.func @transpose_2d(%x: !layout.buffer<4x6xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, %probe: !layout.buffer<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c10 = arith.constant 10 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c6 step %c1 {
      %t = arith.muli %i, %c10 : index
      %s = arith.addi %t, %j : index
      %s32 = arith.index_cast %s : index to i32
      %v = arith.sitofp %s32 : i32 to f32
      layout.store %v, %x[%i, %j] : !layout.buffer<4x6xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, f32
    }
  }
  %val = layout.load %x[%c1, %c5] : !layout.buffer<4x6xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, f32
  layout.store %val, %probe[%c0] : !layout.buffer<1xf32>, f32
  %seven = arith.constant 7.0 : f32
  layout.store %seven, %x[%c2, %c3] : !layout.buffer<4x6xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, f32
  func.return
}

// Example 3: NHWC -> NCHWc, flattened to 1-D; val = x[1, 3, 2, 5].
func.func @nchwc_1d(%x: !layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>>, %probe: !layout.buffer<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %c100 = arith.constant 100 : index
  %c1000 = arith.constant 1000 : index
  scf.for %n = %c0 to %c2 step %c1 {
    scf.for %h = %c0 to %c4 step %c1 {
      scf.for %w = %c0 to %c4 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %a = arith.muli %n, %c1000 : index
          %b = arith.muli %h, %c100 : index
          %d = arith.muli %w, %c10 : index
          %ab = arith.addi %a, %b : index
          %abd = arith.addi %ab, %d : index
          %s = arith.addi %abd, %c : index
          %s32 = arith.index_cast %s : index to i32
          %v = arith.sitofp %s32 : i32 to f32
          layout.store %v, %x[%n, %h, %w, %c] : !layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>>, f32
        }
      }
    }
  }
  %val = layout.load %x[%c1, %c3, %c2, %c5] : !layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>>, f32
  layout.store %val, %probe[%c0] : !layout.buffer<1xf32>, f32
  func.return
}

// Example 4: NHWC -> NCHWc with an axis separator after h: a 2-D physical buffer
// [n*C4*H + c4*H + h, w*4 + c mod 4] (the global.texture layout); val = x[1, 3, 2, 5].
func.func @nchwc_2d(%x: !layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>, %probe: !layout.buffer<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %c100 = arith.constant 100 : index
  %c1000 = arith.constant 1000 : index
  scf.for %n = %c0 to %c2 step %c1 {
    scf.for %h = %c0 to %c4 step %c1 {
      scf.for %w = %c0 to %c4 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %a = arith.muli %n, %c1000 : index
          %b = arith.muli %h, %c100 : index
          %d = arith.muli %w, %c10 : index
          %ab = arith.addi %a, %b : index
          %abd = arith.addi %ab, %d : index
          %s = arith.addi %abd, %c : index
          %s32 = arith.index_cast %s : index to i32
          %v = arith.sitofp %s32 : i32 to f32
          layout.store %v, %x[%n, %h, %w, %c] : !layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>, f32
        }
      }
    }
  }
  %val = layout.load %x[%c1, %c3, %c2, %c5] : !layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>, f32
  layout.store %val, %probe[%c0] : !layout.buffer<1xf32>, f32
  func.return
}

// RFC 0039 "option 1" vector accesses: a vector<4xf32> load from a scalar buffer reads 4
// consecutive elements (`A[T.ramp(4*i, 1, 4)]`); a vector<4xf32> buffer declared over
// scalar storage (`A_vector = T.buffer_decl([4], "float32x4", data=A.data)`) indexes whole
// vectors. out[4*i + l] = 2 * a[4*i + l].
func.func @vector_views(%a: !layout.buffer<16xf32>, %out: !layout.buffer<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = layout.data %out : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %out4 = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<4xvector<4xf32>>
  scf.for %i = %c0 to %c4 step %c1 {
    %base = arith.muli %i, %c4 : index
    %v = layout.load %a[%base] : !layout.buffer<16xf32>, vector<4xf32>
    %y = arith.addf %v, %v : vector<4xf32>
    layout.store %y, %out4[%i] : !layout.buffer<4xvector<4xf32>>, vector<4xf32>
  }
  func.return
}

// Driver: each buffer is allocated with its logical extents (apply-layout and
// flatten-buffers make the allocations physical) and printed through a declaration of the
// physical shape over the same allocation (RFC DeclBuffer aliasing).
func.func @main() {
  %probes = layout.allocate [4] : !layout.ptr<f32>
  %all = layout.decl_buffer %probes : !layout.ptr<f32> -> !layout.buffer<4xf32>

  %p1 = layout.allocate [4, 6] : !layout.ptr<f32>
  %x1 = layout.decl_buffer %p1 : !layout.ptr<f32> -> !layout.buffer<4x6xf32>
  %q1 = layout.allocate [1] : !layout.ptr<f32>
  %probe1 = layout.decl_buffer %q1 : !layout.ptr<f32> -> !layout.buffer<1xf32>
  func.call @flat_2d(%x1, %probe1) : (!layout.buffer<4x6xf32>, !layout.buffer<1xf32>) -> ()
  %phys1 = layout.decl_buffer %p1 : !layout.ptr<f32> -> !layout.buffer<24xf32>
  %m1 = builtin.unrealized_conversion_cast %phys1 : !layout.buffer<24xf32> to memref<*xf32>
  func.call @printMemrefF32(%m1) : (memref<*xf32>) -> ()

  %p2 = layout.allocate [4, 6] : !layout.ptr<f32>
  %x2 = layout.decl_buffer %p2 : !layout.ptr<f32> -> !layout.buffer<4x6xf32, transform = #layout.index_map<(i, j) -> (j, i)>>
  %q2 = layout.allocate [1] : !layout.ptr<f32>
  %probe2 = layout.decl_buffer %q2 : !layout.ptr<f32> -> !layout.buffer<1xf32>
  func.call @transpose_2d(%x2, %probe2) : (!layout.buffer<4x6xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, !layout.buffer<1xf32>) -> ()
  %phys2 = layout.decl_buffer %p2 : !layout.ptr<f32> -> !layout.buffer<6x4xf32, axis_separators = [1]>
  %m2 = builtin.unrealized_conversion_cast %phys2 : !layout.buffer<6x4xf32, axis_separators = [1]> to memref<*xf32>
  func.call @printMemrefF32(%m2) : (memref<*xf32>) -> ()

  %p3 = layout.allocate [2, 4, 4, 8] : !layout.ptr<f32>
  %x3 = layout.decl_buffer %p3 : !layout.ptr<f32> -> !layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>>
  %q3 = layout.allocate [1] : !layout.ptr<f32>
  %probe3 = layout.decl_buffer %q3 : !layout.ptr<f32> -> !layout.buffer<1xf32>
  func.call @nchwc_1d(%x3, %probe3) : (!layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>>, !layout.buffer<1xf32>) -> ()
  %m3 = builtin.unrealized_conversion_cast %x3 : !layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>> to memref<*xf32>
  func.call @printMemrefF32(%m3) : (memref<*xf32>) -> ()

  %p4 = layout.allocate [2, 4, 4, 8] : !layout.ptr<f32>
  %x4 = layout.decl_buffer %p4 : !layout.ptr<f32> -> !layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>
  %q4 = layout.allocate [1] : !layout.ptr<f32>
  %probe4 = layout.decl_buffer %q4 : !layout.ptr<f32> -> !layout.buffer<1xf32>
  func.call @nchwc_2d(%x4, %probe4) : (!layout.buffer<2x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>, !layout.buffer<1xf32>) -> ()
  %phys4 = layout.decl_buffer %p4 : !layout.ptr<f32> -> !layout.buffer<16x16xf32, axis_separators = [1]>
  %m4 = builtin.unrealized_conversion_cast %phys4 : !layout.buffer<16x16xf32, axis_separators = [1]> to memref<*xf32>
  func.call @printMemrefF32(%m4) : (memref<*xf32>) -> ()

  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %v1 = layout.load %probe1[%c0] : !layout.buffer<1xf32>, f32
  layout.store %v1, %all[%c0] : !layout.buffer<4xf32>, f32
  %v2 = layout.load %probe2[%c0] : !layout.buffer<1xf32>, f32
  layout.store %v2, %all[%c1] : !layout.buffer<4xf32>, f32
  %v3 = layout.load %probe3[%c0] : !layout.buffer<1xf32>, f32
  layout.store %v3, %all[%c2] : !layout.buffer<4xf32>, f32
  %v4 = layout.load %probe4[%c0] : !layout.buffer<1xf32>, f32
  layout.store %v4, %all[%c3] : !layout.buffer<4xf32>, f32
  %m5 = builtin.unrealized_conversion_cast %all : !layout.buffer<4xf32> to memref<*xf32>
  func.call @printMemrefF32(%m5) : (memref<*xf32>) -> ()
  func.return
}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
