func.func @h(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>) {
  func.return
}
