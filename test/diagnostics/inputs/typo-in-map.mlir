func.func @scale(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mdo 4)>>) {
  func.return
}
