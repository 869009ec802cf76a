// After flowing and folding, these functions hold upstream ops only; upstream mlir-opt accepts
// the rewritten linalg.generic ops (quasi-affine and constant indexing maps included).
// REQUIRES: mlir
// RUN: xdsl-opt %s -p flow-layout-rewrites,fold-layout-rewrites | %mlir-opt --verify-each | filecheck %s
// test/python/test_graph_numeric.py runs every function before and after the passes.

// CHECK-DAG: affine_map<(d0, d1, d2, d3, d4) -> (d1, 0, 0, d4)>
// CHECK-DAG: affine_map<(d0, d1) -> (d0 * 4 + d1 + 1)>

// CHECK-LABEL: func.func @bias_relu
// CHECK-NOT:     layout.
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<1x2x2x2x4xf32>, tensor<2x1x1x4xf32>)
// CHECK:         return
func.func @bias_relu() -> tensor<1x2x2x2x4xf32> {
  %x = arith.constant dense<2.0> : tensor<1x8x2x2xf32>
  %bias = arith.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]]]> : tensor<8x1x1xf32>
  %e = tensor.empty() : tensor<1x8x2x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c, 0, 0)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %bias : tensor<1x8x2x2xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x8x2x2xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x8x2x2xf32> -> tensor<1x2x2x2x4xf32>
  func.return %t : tensor<1x2x2x2x4xf32>
}

// The operands keep their layout (identity operand transforms); the transpose moves into
// the indexing maps.
// CHECK-LABEL: func.func @matmul_transposed
// CHECK-NOT:     layout.
// CHECK:         linalg.generic
// CHECK:         return
func.func @matmul_transposed(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant dense<0.0> : tensor<3x5xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%zero : tensor<3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  %t = layout.transform %m {index_map = #layout.index_map<(i, j) -> (j, i)>} : tensor<3x5xf32> -> tensor<5x3xf32>
  func.return %t : tensor<5x3xf32>
}

// A window access (x[i + 1]) is no tied dimension: the input keeps its layout and the
// transform moves into its indexing map.
// CHECK-LABEL: func.func @shifted
// CHECK-NOT:     layout.
// CHECK:         linalg.generic
// CHECK:         return
func.func @shifted(%x: tensor<9xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i + 1)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<9xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.negf %a : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<8xf32> -> tensor<2x4xf32>
  func.return %t : tensor<2x4xf32>
}
