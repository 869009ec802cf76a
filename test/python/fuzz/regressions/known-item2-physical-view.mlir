// Issue 12 item 2 (fixed; a regression test), as the random-program checker found it:
// a second declaration over the storage of a transformed parameter, in its physical
// shape. After apply-layout the storage is physical ([0, 3 - i, 0]: reversed), so %b5
// reads logical element 3; the evaluator, before apply-layout, reads logical element 0.
//   PYTHONPATH=test/python python -m fuzz.campaign --check THIS_FILE
//   -> apply-layout: mismatch (result 0)
func.func @k0(%a1: !layout.buffer<4xf32, transform = [#layout.index_map<(i) -> (3 - i, 0)>, #layout.index_map<(a, b) -> (0 | a, b)>], pad_value = 0.0 : f32>) -> f32 {
  %c0 = arith.constant 0 : index
  %h4 = layout.data %a1 : !layout.buffer<4xf32, transform = [#layout.index_map<(i) -> (3 - i, 0)>, #layout.index_map<(a, b) -> (0 | a, b)>], pad_value = 0.0 : f32> -> !layout.ptr<f32>
  %b5 = layout.decl_buffer %h4 : !layout.ptr<f32> -> !layout.buffer<1x4x1xf32>
  %v6 = layout.load %b5[%c0, %c0, %c0] : !layout.buffer<1x4x1xf32>, f32
  func.return %v6 : f32
}
