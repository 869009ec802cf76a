// Issue 12 item 9 (fixed; a regression test), as the random-program checker found it:
// a dead declaration past the end of a parameter's storage. verify-buffers rejects the
// module; flatten-buffers, fold-layout-rewrites, flow-layout-rewrites (and apply-layout,
// in modules with a pending transform) erase the unused declaration (the greedy rewrite
// driver drops unused pure ops), so their output passes verify-buffers: the invalid buffer
// is hidden instead of reported.
//   PYTHONPATH=test/python python -m fuzz.campaign --check THIS_FILE
//   -> flatten-buffers, fold-layout-rewrites, flow-layout-rewrites: mismatch (accepted an
//      invalid buffer and hid it)
func.func @k0(%a0: !layout.buffer<1xf32>) {
  %h1 = layout.data %a0 : !layout.buffer<1xf32> -> !layout.ptr<f32>
  %dead2 = layout.decl_buffer %h1 offset 1 : !layout.ptr<f32> -> !layout.buffer<1xf32>
  func.return
}
