func.func @views(%A: !layout.buffer<8xf32>) {
  %p = layout.data %A : !layout.buffer<8xf32> -> !layout.ptr<f32>
  %v = layout.decl_buffer %p offset 4 : !layout.ptr<f32> -> !layout.buffer<2x4xf32>
  func.return
}
