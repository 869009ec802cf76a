func.func @h(%a: !layout.buffer<4x4xf32>, %i: index) {
  %v = layout.load %a[%i] : !layout.buffer<4x4xf32>, f32
  func.return
}
