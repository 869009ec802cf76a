// Found by the random-program checker (not one of issue 12's items; fixed, a regression test); see
// map-ndarray-rank0-result.mlir. flow-layout-rewrites moves the two final transforms
// through the relu generic on tensor<1xf32> and gives the generic's operand the transform
// `(a0) -> ()` (to tensor<f32>), which the graph evaluator cannot run (the flowed module
// itself verifies). Minimized by hand from the checker's program.
//   xdsl-opt THIS_FILE -p flow-layout-rewrites   (then evaluate: EvaluationError)
// re-check: PYTHONPATH=test/python python -m fuzz.campaign --check THIS_FILE
func.func @g(%x: tensor<2xf32>) -> (tensor<1xf32>) {
  %c = layout.crop %x {start = array<i64: 1>, sizes = array<i64: 1>} : tensor<2xf32> -> tensor<1xf32>
  %init = arith.constant dense<0.0> : tensor<1xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%c : tensor<1xf32>) outs(%init : tensor<1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  %t = layout.transform %g {index_map = #layout.index_map<(i) -> (0 - i)>} : tensor<1xf32> -> tensor<1xf32>
  %t2 = layout.transform %t {index_map = #layout.index_map<(i) -> (i)>} : tensor<1xf32> -> tensor<1xf32>
  func.return %t2 : tensor<1xf32>
}
