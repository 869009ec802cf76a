// The invalid-input corpus, area frontend ops: asserts normalize-graph cannot move to the
// host, and malformed layout.check ops.
// RUN: physlayout-opt %s -p normalize-graph --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @assert_in_reduction(%x: tensor<4xf32>, %init: tensor<f32>) -> tensor<f32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<4xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.cmpf one, %in, %cst : f32
    cf.assert %c, "nonzero"
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  func.return %0 : tensor<f32>
}
// CHECK: frontend-ops.mlir:[[# @LINE - 6]]:5: error: normalize-graph: 'cf.assert' in a linalg.generic with reduction loops is not supported

// -----
func.func @assert_on_output(%x: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.cmpf one, %out, %cst : f32
    cf.assert %c, "nonzero init"
    linalg.yield %in : f32
  } -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: frontend-ops.mlir:[[# @LINE - 5]]:5: error: normalize-graph: 'cf.assert' depends on the outputs of its linalg.generic

// -----
func.func @scalar_assert(%x: tensor<4xf32>, %flag: i1) -> tensor<4xf32> {
  cf.assert %flag, "scalar"
  func.return %x : tensor<4xf32>
}
// CHECK: frontend-ops.mlir:[[# @LINE - 3]]:3: error: normalize-graph: 'cf.assert' with a condition only known at run time is only supported inside a linalg.generic body

// -----
func.func @float_flags(%x: tensor<4xf32>) {
  layout.check %x, "floats" : tensor<4xf32>
  func.return
}
// CHECK: frontend-ops.mlir:[[# @LINE - 3]]:3: error: 'layout.check' expects flags of an integer element type, got f32
