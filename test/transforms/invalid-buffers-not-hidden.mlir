// A pass must not hide an invalid buffer: apply-layout, flatten-buffers and lower-layout erase
// dead declarations (or lower every buffer away), so they refuse input that verify-buffers
// rejects (so does the OpenCL target: test/opencl/target-invalid-buffers.mlir). Adding one of
// them before verify-buffers reports the same problem as verify-buffers alone; vectorize-texels
// cannot erase a declaration, so verify-buffers still sees the problem after it.
// RUN: xdsl-opt %s -p verify-buffers --split-input-file --verify-diagnostics | filecheck %s --check-prefix=VERIFY
// RUN: xdsl-opt %s -p flatten-buffers,verify-buffers --split-input-file --verify-diagnostics | filecheck %s --check-prefixes=FLATTEN,VERIFY
// RUN: xdsl-opt %s -p apply-layout,verify-buffers --split-input-file --verify-diagnostics | filecheck %s --check-prefixes=APPLY,VERIFY
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,verify-buffers' --split-input-file --verify-diagnostics | filecheck %s --check-prefixes=APPLY,VERIFY
// RUN: xdsl-opt %s -p lower-layout --split-input-file --verify-diagnostics | filecheck %s --check-prefixes=LOWER,VERIFY
// RUN: xdsl-opt %s -p vectorize-texels,verify-buffers --split-input-file --verify-diagnostics | filecheck %s --check-prefix=VERIFY
// The graph-level passes run greedy walkers that erase dead ops too (found by the random-program
// checker), so they refuse such input as well.
// RUN: xdsl-opt %s -p fold-layout-rewrites --split-input-file --verify-diagnostics | filecheck %s --check-prefixes=FOLD,VERIFY
// RUN: xdsl-opt %s -p flow-layout-rewrites --split-input-file --verify-diagnostics | filecheck %s --check-prefixes=FLOW,VERIFY

// A dead alias larger than the parameter it views, next to a flat access and a pending
// transform (so every pass has something to rewrite).
func.func @dead_alias_too_large(%A: !layout.buffer<16xf32>, %B: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  %d = layout.data %A : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %V = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<8xvector<4xf32>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %A[%i] : !layout.buffer<16xf32>, f32
    layout.store %v, %B[%i] : !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>, f32
  }
  func.return
}

// FLATTEN: flatten-buffers: the input has invalid buffers (see verify-buffers)
// APPLY: apply-layout: the input has invalid buffers (see verify-buffers)
// LOWER: lower-layout: the input has invalid buffers (see verify-buffers)
// FOLD: fold-layout-rewrites: the input has invalid buffers (see verify-buffers)
// FLOW: flow-layout-rewrites: the input has invalid buffers (see verify-buffers)
// VERIFY: verify-buffers: buffer %V of 128 bytes at byte offset 0 does not fit in its storage (parameter %A) of 64 bytes

// -----

// A dead alias of an alias that runs past the allocation, next to a 2-D buffer that
// flatten-buffers flattens.
func.func @dead_alias_of_alias(%M: !layout.buffer<4x4xf32>) {
  %p = layout.allocate [64] : !layout.ptr<f32>
  %b = layout.decl_buffer %p offset 32 : !layout.ptr<f32> -> !layout.buffer<32xf32>
  %h = layout.data %b : !layout.buffer<32xf32> -> !layout.ptr<f32>
  %big = layout.decl_buffer %h offset 8 : !layout.ptr<f32> -> !layout.buffer<16x4xf32>
  %c0 = arith.constant 0 : index
  %v = layout.load %M[%c0, %c0] : !layout.buffer<4x4xf32>, f32
  layout.store %v, %M[%c0, %c0] : !layout.buffer<4x4xf32>, f32
  func.return
}

// FLATTEN: flatten-buffers: the input has invalid buffers (see verify-buffers)
// APPLY: apply-layout: the input has invalid buffers (see verify-buffers)
// LOWER: lower-layout: the input has invalid buffers (see verify-buffers)
// FOLD: fold-layout-rewrites: the input has invalid buffers (see verify-buffers)
// FLOW: flow-layout-rewrites: the input has invalid buffers (see verify-buffers)
// VERIFY: verify-buffers: buffer %big of 256 bytes at byte offset 32 does not fit in its storage (allocation %p) of 256 bytes

// -----

// A dead declaration over a handle that no declaration defines (carried through a loop).
func.func @dead_undefined_handle(%p0: !layout.ptr<f32>, %A: !layout.buffer<2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%p = %p0) -> (!layout.ptr<f32>) {
    %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32>
    scf.yield %p : !layout.ptr<f32>
  }
  %v = layout.load %A[%c0, %c0] : !layout.buffer<2x2xf32>, f32
  layout.store %v, %A[%c1, %c1] : !layout.buffer<2x2xf32>, f32
  func.return
}

// FLATTEN: flatten-buffers: the input has invalid buffers (see verify-buffers)
// APPLY: apply-layout: the input has invalid buffers (see verify-buffers)
// LOWER: lower-layout: the input has invalid buffers (see verify-buffers)
// FOLD: fold-layout-rewrites: the input has invalid buffers (see verify-buffers)
// FLOW: flow-layout-rewrites: the input has invalid buffers (see verify-buffers)
// VERIFY: verify-buffers: decl_buffer's data handle %p is not defined by a parameter, layout.allocate, layout.data or a call (it comes from an argument of a block of 'scf.for')

// -----

// A dead alias in a loop over the four lanes of a texel (vectorize-texels leaves a loop
// holding a declaration alone).
func.func @dead_alias_in_lane_loop(%A: !layout.buffer<4x4xf32>, %B: !layout.buffer<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %l = %c0 to %c4 step %c1 {
      %d = layout.data %A : !layout.buffer<4x4xf32> -> !layout.ptr<f32>
      %V = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<32xf32>
      %v = layout.load %A[%i, %l] : !layout.buffer<4x4xf32>, f32
      layout.store %v, %B[%i, %l] : !layout.buffer<4x4xf32>, f32
    }
  }
  func.return
}

// FLATTEN: flatten-buffers: the input has invalid buffers (see verify-buffers)
// APPLY: apply-layout: the input has invalid buffers (see verify-buffers)
// LOWER: lower-layout: the input has invalid buffers (see verify-buffers)
// FOLD: fold-layout-rewrites: the input has invalid buffers (see verify-buffers)
// FLOW: flow-layout-rewrites: the input has invalid buffers (see verify-buffers)
// VERIFY: verify-buffers: buffer %V of 128 bytes at byte offset 0 does not fit in its storage (parameter %A) of 64 bytes
