// Found by the random-program checker (not one of issue 12's items; fixed, a regression test).
// A transform to a rank-0 tensor, `(a0) -> ()` on a one-element tensor, is valid (it
// verifies, and it is injective on [1]), but the reference semantics cannot run it:
// `IndexMap.map_ndarray` raises "setting an array element with a sequence", which the
// graph evaluator reports as an EvaluationError. `flow-layout-rewrites` creates exactly
// such a transform when it flows a transform through a generic on a one-element tensor
// (it drops the unit operand dimension), so flowing, then evaluating, fails:
// see flow-rank0-operand-transform.mlir.
//   python -c "import numpy as np; from physlayout.indexing.index_map import IndexMap; \
//              IndexMap.parse('(a0) -> ()').map_ndarray(np.zeros(1))"
//   -> ValueError: setting an array element with a sequence. (dialects/index_map.py map_ndarray)
// re-check: PYTHONPATH=test/python python -m fuzz.campaign --check THIS_FILE
func.func @g(%x: tensor<1xf32>) -> (tensor<f32>) {
  %v = layout.transform %x {index_map = #layout.index_map<(a0) -> ()>} : tensor<1xf32> -> tensor<f32>
  func.return %v : tensor<f32>
}
