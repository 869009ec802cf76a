// The OpenCL target emits nothing for a dead declaration, so it refuses input that
// verify-buffers rejects (test/transforms/invalid-buffers-not-hidden.mlir has the passes).
// RUN: xdsl-opt %s -t opencl --split-input-file --verify-diagnostics | filecheck %s

// Without %V this kernel compiles (second case).
func.func @copy(%A: !layout.buffer<16xf32>, %B: !layout.buffer<16xf32>) {
  %d = layout.data %A : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %V = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<8xvector<4xf32>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %A[%i] : !layout.buffer<16xf32>, f32
    layout.store %v, %B[%i] : !layout.buffer<16xf32>, f32
  }
  func.return
}

// CHECK: opencl: the input has invalid buffers (see verify-buffers)
// CHECK-NEXT: verify-buffers: buffer %V of 128 bytes at byte offset 0 does not fit in its storage (parameter %A) of 64 bytes

// -----

func.func @copy(%A: !layout.buffer<16xf32>, %B: !layout.buffer<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %A[%i] : !layout.buffer<16xf32>, f32
    layout.store %v, %B[%i] : !layout.buffer<16xf32>, f32
  }
  func.return
}

// CHECK: __kernel void copy(__global const float* A, __global float* B) {
