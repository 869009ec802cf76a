// Found by the random-program checker (not one of issue 12's items; fixed, a regression test).
// apply-layout (with or without rewrite-loops) crashes with a bare ValueError from the
// IndexMap engine: to fill the padding of a buffer the function writes, it asks for the
// map's single quasi-affine inverse (IndexMap.non_surjective_inverse), and this padded
// ceildiv map only has a piecewise one. Expected: the padding filled (the fill needs the
// padding predicate, not the inverse), or a diagnostic.
//   physlayout-opt THIS_FILE -p apply-layout
//   -> ValueError: no single quasi-affine expression was found for the inverse of index map
//      (i, j) -> ((i * 3 + j) ceildiv 4, (j - i) mod 4) on shape [13, 3] (isl gives a piecewise inverse)
//      (transforms/apply_layout.py _fill_padding -> dialects/index_map.py _inverse)
// re-check: PYTHONPATH=test/python python -m fuzz.campaign --check THIS_FILE
func.func @f(%y: !layout.buffer<13x3xf32, transform = #layout.index_map<(i, j) -> ((i * 3 + j) ceildiv 4, (i * 3 + j) mod 4)>, pad_value = 7.0 : f32>, %v: f32) {
  %c0 = arith.constant 0 : index
  layout.store %v, %y[%c0, %c0] : !layout.buffer<13x3xf32, transform = #layout.index_map<(i, j) -> ((i * 3 + j) ceildiv 4, (i * 3 + j) mod 4)>, pad_value = 7.0 : f32>, f32
  func.return
}
