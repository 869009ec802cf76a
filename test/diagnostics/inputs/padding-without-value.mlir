func.func @nchw4c(%x: !layout.buffer<1x3x4x4xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>>) {
  func.return
}
