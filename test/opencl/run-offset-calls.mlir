// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %S/../lowering/inputs/offset_calls.mlir --check --rtol 0 | filecheck %s
// RUN: physlayout run --texture-storage image %S/../lowering/inputs/offset_calls.mlir --print-opencl | filecheck %s --check-prefix=SOURCE

// Buffers declared at element offsets passed to calls run on OpenCL: the kernel takes an
// offset argument after each buffer that a call may bind to a view at an offset, moves
// the pointer by it, and uses unaligned vload4/vstore4 (the start may not be aligned).
// SOURCE:      __kernel void add1(__global const float* x, int x_offset, __global float* y, int y_offset) {
// SOURCE-NEXT:   x += x_offset;
// SOURCE-NEXT:   y += y_offset;
// SOURCE:        vload4(0, x + {{.*}})
// SOURCE:        vstore4({{.*}}, 0, y + {{.*}})
// SOURCE:      // host function @rows launches: add1
// SOURCE:      // host function @main launches: rows, add1

// CHECK:      @main: 2 launch(es)
// CHECK:      %a {{.*}} OK
// CHECK-NEXT: %b {{.*}} OK
// CHECK-NEXT: check: passed (rtol 0)
