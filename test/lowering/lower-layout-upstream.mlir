// REQUIRES: mlir
// Upstream interop for lower-layout.mlir: mlir-opt parses and verifies the output in custom
// and in generic form (both print the same upstream IR, so one set of checks reads both),
// reads the dimension maps as written, and lowers everything to the LLVM dialect.
// RUN: xdsl-opt %S/lower-layout.mlir -p 'physlayout-memref{rewrite-loops=false}' | %mlir-opt --verify-each | filecheck %s
// RUN: xdsl-opt %S/lower-layout.mlir -p 'physlayout-memref{rewrite-loops=false}' --print-op-generic | %mlir-opt --verify-each | filecheck %s
// RUN: xdsl-opt %S/lower-layout.mlir -p apply-layout,flatten-buffers,lower-layout | %mlir-opt --verify-each | filecheck %s
// RUN: xdsl-opt %S/lower-layout.mlir -p 'physlayout-memref{rewrite-loops=false affine-loops=false}' | %mlir-opt --verify-each | filecheck %s --check-prefix=SCF
// RUN: xdsl-opt %S/lower-layout.mlir -p 'physlayout-memref{rewrite-loops=false affine-loops=false}' --print-op-generic | %mlir-opt --verify-each | filecheck %s --check-prefix=SCF
// RUN: xdsl-opt %S/lower-layout.mlir -p 'physlayout-memref{rewrite-loops=false}' | %mlir-opt -expand-strided-metadata -lower-affine -convert-scf-to-cf -convert-vector-to-llvm -arith-expand -finalize-memref-to-llvm -convert-func-to-llvm -convert-arith-to-llvm -convert-index-to-llvm -convert-cf-to-llvm -reconcile-unrealized-casts | filecheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @relu_nchw4c
// CHECK:         affine.for %[[H:.*]] = 0 to 8 {
// CHECK-NEXT:      affine.for %[[W:.*]] = 0 to 8 {
// CHECK-NEXT:        affine.for %[[C:.*]] = 0 to 16 {
// CHECK-NEXT:          affine.load %{{.*}}[%[[H]] * 128 + %[[W]] * 16 + %[[C]]] : memref<1024xf32>
// CHECK:               affine.store %{{.*}}, %{{.*}}[(%[[C]] floordiv 4) * 8 + %[[H]], %[[W]] * 4 + %[[C]] mod 4] : memref<32x32xf32>
// CHECK-LABEL: func.func @constant_and_argument_indices
// CHECK:         affine.load %{{.*}}[1295] : memref<8192xf32>
// CHECK-LABEL: func.func @affine_and_memref_accesses
// CHECK:         memref.load %{{.*}}[%{{.*}}] : memref<64xf32>
// CHECK-LABEL: func.func @parallel_copy
// CHECK:         affine.parallel (%[[I:.*]], %[[J:.*]]) = (0, 0) to (4, 8) {
// CHECK-NEXT:      affine.load %{{.*}}[%[[I]] * 8 + %[[J]]] : memref<32xf32>
// CHECK-NEXT:      affine.store %{{.*}}, %{{.*}}[%[[J]] * 4 + %[[I]]] : memref<32xf32>
// CHECK-LABEL: func.func @allocation
// CHECK:         memref.reinterpret_cast %{{.*}} to offset: [32], sizes: [64], strides: [1] : memref<96xf32> to memref<64xf32, strided<[1], offset: 32>>
// CHECK-LABEL: func.func @vector_accesses
// CHECK:         affine.vector_load %{{.*}}[%{{.*}} * 4] : memref<64xf32>, vector<4xf32>
// CHECK-LABEL: func.func @caller
// CHECK:         memref.cast %{{.*}} : memref<4x4xf32> to memref<*xf32>

// SCF-LABEL: func.func @relu_nchw4c
// SCF:         scf.for
// SCF:           memref.load %{{.*}}[%{{.*}}] : memref<1024xf32>
// SCF:           memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<32x32xf32>

// LLVM-LABEL: llvm.func @relu_nchw4c
// LLVM-NOT:   affine.
// LLVM-NOT:   memref.
// LLVM:       llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// LLVM-LABEL: llvm.func @caller
// CHECK-LABEL: func.func @print_tail
// CHECK:         memref.cast %{{.*}} : memref<8xf32, strided<[1], offset: 8>> to memref<*xf32>
// CHECK-LABEL: func.func @symbolic_bounds
// CHECK:         affine.for %{{.*}} = %{{.*}} to %{{.*}} step 2 {
