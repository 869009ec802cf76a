// RFC 0039's first example: a 1-D buffer of 14 elements stored as tiles of 4
// (`(i) -> (i floordiv 4, i mod 4)`): the transformed buffer is [4, 4], its last two
// elements are padding (pad_value 0.0). The kernel writes out[i] = i at logical indices.
func.func @iota(%out: !layout.buffer<14xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  scf.for %i = %c0 to %c14 step %c1 {
    %i32 = arith.index_cast %i : index to i32
    %v = arith.sitofp %i32 : i32 to f32
    layout.store %v, %out[%i] : !layout.buffer<14xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>, f32
  }
  func.return
}
