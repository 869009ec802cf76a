// RUN: xdsl-opt %S/inputs/offset_calls.mlir -p physlayout-memref | filecheck %s
// RUN: xdsl-opt %S/inputs/offset_calls.mlir -p physlayout-memref --print-op-generic | xdsl-opt | filecheck %s

// Buffers declared at an element offset passed to calls: a parameter that some call binds
// to a view at an offset (directly, or through a host function's own parameter) gets a
// dynamic offset; each call casts its view to it; a view declared at an offset of such a
// parameter is a subview (relative to the parameter's offset), not a reinterpret_cast.
// (test/python/test_lower_layout.py runs this module under mlir-runner and the evaluator.)

// CHECK-LABEL: func.func @add1
// CHECK-SAME:    (%[[X:.*]]: memref<2x4xf32, strided<[4, 1], offset: ?>>, %[[Y:.*]]: memref<2x4xf32, strided<[4, 1], offset: ?>>)
// CHECK-DAG:     %[[FY:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0 : i64, 1 : i64]] : memref<2x4xf32, strided<[4, 1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
// CHECK-DAG:     %[[FX:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0 : i64, 1 : i64]] : memref<2x4xf32, strided<[4, 1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
// CHECK:         affine.load %[[FX]][%{{.*}} * 4 + %{{.*}}] : memref<8xf32, strided<[1], offset: ?>>
// CHECK:         affine.store %{{.*}}, %[[FY]][%{{.*}} * 4 + %{{.*}}] : memref<8xf32, strided<[1], offset: ?>>

// CHECK-LABEL: func.func @rows
// CHECK-SAME:    (%[[X:.*]]: memref<12xf32, strided<[1], offset: ?>>, %[[Y:.*]]: memref<12xf32, strided<[1], offset: ?>>)
// CHECK-NEXT:    %[[SX:.*]] = memref.subview %[[X]][3] [8] [1] : memref<12xf32, strided<[1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT:    %[[X2:.*]] = memref.expand_shape %[[SX]] {{\[\[}}0 : i64, 1 : i64]] output_shape [2, 4] : memref<8xf32, strided<[1], offset: ?>> into memref<2x4xf32, strided<[4, 1], offset: ?>>
// CHECK-NEXT:    %[[SY:.*]] = memref.subview %[[Y]][1] [8] [1] : memref<12xf32, strided<[1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT:    %[[Y2:.*]] = memref.expand_shape %[[SY]] {{\[\[}}0 : i64, 1 : i64]] output_shape [2, 4] : memref<8xf32, strided<[1], offset: ?>> into memref<2x4xf32, strided<[4, 1], offset: ?>>
// CHECK-NEXT:    func.call @add1(%[[X2]], %[[Y2]]) : (memref<2x4xf32, strided<[4, 1], offset: ?>>, memref<2x4xf32, strided<[4, 1], offset: ?>>) -> ()

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[A:.*]]: memref<16xf32>, %[[B:.*]]: memref<16xf32>)
// CHECK-NEXT:    %[[A1:.*]] = memref.reinterpret_cast %[[A]] to offset: [4], sizes: [12], strides: [1] : memref<16xf32> to memref<12xf32, strided<[1], offset: 4>>
// CHECK-NEXT:    %[[B1:.*]] = memref.reinterpret_cast %[[B]] to offset: [2], sizes: [12], strides: [1] : memref<16xf32> to memref<12xf32, strided<[1], offset: 2>>
// CHECK-NEXT:    %[[CA1:.*]] = "memref.cast"(%[[A1]]) : (memref<12xf32, strided<[1], offset: 4>>) -> memref<12xf32, strided<[1], offset: ?>>
// CHECK-NEXT:    %[[CB1:.*]] = "memref.cast"(%[[B1]]) : (memref<12xf32, strided<[1], offset: 2>>) -> memref<12xf32, strided<[1], offset: ?>>
// CHECK-NEXT:    func.call @rows(%[[CA1]], %[[CB1]])
// CHECK-NEXT:    %[[A2:.*]] = memref.reinterpret_cast %[[A]] to offset: [8], sizes: [2, 4], strides: [4, 1] : memref<16xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
// CHECK-NEXT:    %[[B2:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [2, 4], strides: [4, 1] : memref<16xf32> to memref<2x4xf32>
// CHECK-NEXT:    %[[CA2:.*]] = "memref.cast"(%[[A2]]) : (memref<2x4xf32, strided<[4, 1], offset: 8>>) -> memref<2x4xf32, strided<[4, 1], offset: ?>>
// CHECK-NEXT:    %[[CB2:.*]] = "memref.cast"(%[[B2]]) : (memref<2x4xf32>) -> memref<2x4xf32, strided<[4, 1], offset: ?>>
// CHECK-NEXT:    func.call @add1(%[[CA2]], %[[CB2]])
