// REQUIRES: mlir-runner
// examples/nhwc_relu_nchw4c.mlir end to end, with the commands the README shows: physlayout
// lowers the NHWC -> NCHW4c relu to memref/affine, mlir-opt lowers it to LLVM, mlir-runner
// runs @main, which prints the output in its physical NCHW4c layout [1, 2, 4, 4, 4]
// (numpy reference: relu of (i mod 13) - 6, transposed to NCHW4c; test_lower_layout.py
// checks every element).
// RUN: xdsl-opt %S/../../examples/nhwc_relu_nchw4c.mlir -p apply-layout,flatten-buffers,lower-layout | %mlir-opt -expand-strided-metadata -lower-affine -convert-scf-to-cf -convert-vector-to-llvm -arith-expand -finalize-memref-to-llvm -convert-func-to-llvm -convert-arith-to-llvm -convert-index-to-llvm -convert-cf-to-llvm -reconcile-unrealized-casts | %mlir-runner -e main -entry-point-result=void -shared-libs=%runner-libs | filecheck %s
// RUN: xdsl-opt %S/../../examples/nhwc_relu_nchw4c.mlir -p physlayout-memref --print-op-generic | %python -m physlayout.runtime.mlir_runner | filecheck %s

// CHECK:      rank = 5 offset = 0 sizes = [1, 2, 4, 4, 4] strides = [128, 64, 16, 4, 1] data =
// CHECK-NEXT: {{\[\[\[\[\[}}0,      0,      0,      0],
// CHECK-NEXT:     [2,      3,      4,      5],
// CHECK-NEXT:     [0,      0,      0,      0],
// CHECK-NEXT:     [5,      6,      0,      0]],
// CHECK-NEXT:    {{\[\[}}0,      1,      2,      3],
// CHECK:      {{^  \[\[\[}}0,      0,      0,      1],
// CHECK-NEXT:     [6,      0,      0,      0],
// CHECK-NEXT:     [1,      2,      3,      4],
// CHECK-NEXT:     [0,      0,      0,      0]],
