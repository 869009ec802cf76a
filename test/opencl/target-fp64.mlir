// RUN: xdsl-opt %s -t opencl | filecheck %s
// RUN: xdsl-opt %s -t 'opencl{fp64=false}' --verify-diagnostics | filecheck %s --check-prefix=REFUSED

// f64 is `double`, which needs cl_khr_fp64: the program enables it; for a device without
// it (`physlayout run` passes the device's answer as fp64) the target refuses f64 values.
// CHECK: #pragma OPENCL EXTENSION cl_khr_fp64 : enable
// CHECK: __kernel void scale(__global double* a, double k, __global const float* b) {
// CHECK: double w = v * k;
// CHECK: double h = (double)e;
// REFUSED: opencl: @scale: parameter %a: type f64 needs the OpenCL extension cl_khr_fp64 (double), which the device does not report (target option fp64=false says so)

func.func @scale(%a: !layout.buffer<8xf64>, %k: f64, %b: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = layout.load %a[%i] : !layout.buffer<8xf64>, f64
    %w = arith.mulf %v, %k : f64
    %e = layout.load %b[%i] : !layout.buffer<8xf32>, f32
    %h = arith.extf %e : f32 to f64
    %s = arith.addf %w, %h : f64
    layout.store %s, %a[%i] : !layout.buffer<8xf64>, f64
  }
  func.return
}
