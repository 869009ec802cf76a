// lower-layout accepts graph-level input: it runs lower-layout-rewrites first (the padded
// NCHW -> NCHW4c transform becomes linalg.pack, its inverse with the crop one truncating
// linalg.unpack, the shear the generic fallback). mlir-opt bufferizes the result and
// mlir-runner runs it (python -m physlayout.runtime.mlir_runner --graph --print-pipeline
// prints the commands); the printed values are the numpy graph evaluator's.
// REQUIRES: mlir-runner
// RUN: xdsl-opt %s -p lower-layout | filecheck %s --check-prefix=IR
// RUN: xdsl-opt %s -p lower-layout | %python -m physlayout.runtime.mlir_runner --graph | filecheck %s

// IR-NOT: = layout.
// IR:     linalg.pack %{{.*}} padding_value(%{{.*}} : f32) inner_dims_pos = [1] inner_tiles = [4]
// IR:     linalg.unpack %{{.*}} inner_dims_pos = [1] inner_tiles = [4] into %{{.*}} : tensor<1x2x1x2x4xf32> -> tensor<1x6x1x2xf32>
// IR:     linalg.generic
// IR-SAME:  physlayout.layout_transform = "(i, j) -> (i, i + j)"

func.func @relu_nchw4c(%x: tensor<1x6x1x2xf32>) -> (tensor<1x2x1x2x4xf32>, tensor<1x6x1x2xf32>) {
  %t = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x6x1x2xf32> -> tensor<1x2x1x2x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>, affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<1x2x1x2x4xf32>) outs(%e : tensor<1x2x1x2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.maximumf %v, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x1x2x4xf32>
  %b = layout.transform %r {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x1x2x4xf32> -> tensor<1x8x1x2xf32>
  %c = layout.crop %b {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 6, 1, 2>} : tensor<1x8x1x2xf32> -> tensor<1x6x1x2xf32>
  func.return %r, %c : tensor<1x2x1x2x4xf32>, tensor<1x6x1x2xf32>
}

func.func @shear(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (i, i + j)>, pad_value = -1.0 : f32} : tensor<2x3xf32> -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

// CHECK:      sizes = [1, 2, 1, 2, 4]
// CHECK-NEXT: {{\[\[\[\[\[}}0,   2,   0,   6],
// CHECK-NEXT: [1,   0,   5,   0]]],
// CHECK-NEXT: {{\[\[\[}}8,   0,   0,   0],
// CHECK-NEXT: [0,   11,   0,   0]]]]]
// CHECK:      sizes = [1, 6, 1, 2]
// CHECK-NEXT: {{\[\[\[\[}}0,    1]],
// CHECK-NEXT: {{\[\[}}2,    0]],
// CHECK-NEXT: {{\[\[}}0,    5]],
// CHECK-NEXT: {{\[\[}}6,    0]],
// CHECK-NEXT: {{\[\[}}8,    0]],
// CHECK-NEXT: {{\[\[}}0,    11]]]]
// CHECK:      sizes = [2, 4]
// CHECK-NEXT: {{\[\[}}1,   2,   3,   -1],
// CHECK-NEXT: [-1,   4,   5,   6]]
func.func @main() attributes {llvm.emit_c_interface} {
  %x = arith.constant dense<[[[[0.0, 1.0]], [[2.0, -3.0]], [[-4.0, 5.0]], [[6.0, -7.0]], [[8.0, -9.0]], [[-10.0, 11.0]]]]> : tensor<1x6x1x2xf32>
  %r:2 = func.call @relu_nchw4c(%x) : (tensor<1x6x1x2xf32>) -> (tensor<1x2x1x2x4xf32>, tensor<1x6x1x2xf32>)
  %m0 = bufferization.to_buffer %r#0 : tensor<1x2x1x2x4xf32> to memref<1x2x1x2x4xf32>
  %u0 = "memref.cast"(%m0) : (memref<1x2x1x2x4xf32>) -> memref<*xf32>
  func.call @printMemrefF32(%u0) : (memref<*xf32>) -> ()
  %m1 = bufferization.to_buffer %r#1 : tensor<1x6x1x2xf32> to memref<1x6x1x2xf32>
  %u1 = "memref.cast"(%m1) : (memref<1x6x1x2xf32>) -> memref<*xf32>
  func.call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  %y = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = func.call @shear(%y) : (tensor<2x3xf32>) -> tensor<2x4xf32>
  %m2 = bufferization.to_buffer %s : tensor<2x4xf32> to memref<2x4xf32>
  %u2 = "memref.cast"(%m2) : (memref<2x4xf32>) -> memref<*xf32>
  func.call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  func.return
}
