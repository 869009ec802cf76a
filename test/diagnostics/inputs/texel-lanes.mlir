func.func @load4(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>, %i: index) -> vector<4xf32> {
  %v = layout.load %a[%i] : !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>, vector<4xf32>
  func.return %v : vector<4xf32>
}
