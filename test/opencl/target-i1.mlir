// i1 buffers (torch-mlir's boolean masks, e.g. the transformer's all--inf row check) are
// one byte per element in memory, like numpy's bool: `uchar` kernel arguments (OpenCL C
// forbids bool there), read as `!= 0` and written as 0 or 1.
// RUN: xdsl-opt %s -t opencl | filecheck %s

// CHECK-LABEL: __kernel void i1_buffer(
// CHECK-SAME:    __global const uchar* a
// CHECK-SAME:    __global uchar* b
// CHECK:         bool [[X:[a-z0-9_]+]] = (a[{{.*}}] != 0);
// CHECK-NEXT:    bool [[Y:[a-z0-9_]+]] = [[X]] ^ true;
// CHECK-NEXT:    b[{{.*}}] = (uchar)([[Y]]);
func.func @i1_buffer(%a: !layout.buffer<16xi1>, %b: !layout.buffer<16xi1>) {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %x = layout.load %a[%i] : !layout.buffer<16xi1>, i1
    %y = arith.xori %x, %true : i1
    layout.store %y, %b[%i] : !layout.buffer<16xi1>, i1
  }
  func.return
}
