// RUN: xdsl-opt %s -p apply-layout --split-input-file --verify-diagnostics | filecheck %s

// TVM and MLIR's normalize-memrefs accept i -> i floordiv 2 and silently alias; we refuse.
func.func @not_injective(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>) {
  func.return
}
// CHECK: apply-layout: %a of type !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>: index map (i) -> (i floordiv 2) is not injective on shape [4]: indices [0] and [1] both map to [0]

// -----
// A 2-D map that drops information (i + j) collides too.
func.func @not_injective_2d(%a: !layout.buffer<3x3xf32, transform = #layout.index_map<(i, j) -> (i + j)>>) {
  func.return
}
// CHECK: index map (i, j) -> (i + j) is not injective on shape [3, 3]: indices [0, 1] and [1, 0] both map to [1]

// -----
// Padding needs a pad value: the message names the padding predicate.
func.func @missing_pad_value(%a: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  func.return
}
// CHECK: apply-layout: %a of type !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>: transform (i) -> (i floordiv 4, i mod 4) introduces padding on shape [10] (padding where i floordiv 4 == 2 and i mod 4 >= 2); give the buffer a pad_value

// -----
// A vector access needs its lanes kept contiguous by the map.
func.func @vector_lanes(%a: !layout.buffer<4x8xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, %i: index) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %v = layout.load %a[%i, %c0] : !layout.buffer<4x8xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, vector<4xf32>
  func.return %v : vector<4xf32>
}
// CHECK: apply-layout: vector access 'layout.load' on !layout.buffer<4x8xf32, transform = #layout.index_map<(i, j) -> (j, i)>> needs the innermost axis kept contiguous, but the transform maps it by (i, j) -> (j, i)

// -----
// An output with a non-zero minimum has no structural extent.
func.func @negative_min(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i + 2)>>) {
  func.return
}
// CHECK: apply-layout: %a of type !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i + 2)>>: output 0 (i + 2) of index map (i) -> (i + 2) has minimum 2 on shape [4]; every output must start at 0

// -----
// The transformed buffer must stay addressable by a 64-bit index.
func.func @too_large(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i * 100000000000000000000)>, pad_value = 0.0 : f32>) {
  func.return
}
// CHECK: transform (i) -> (i * 100000000000000000000) gives shape [300000000000000000001] on [4], 300000000000000000001 elements: more than the index range (at most 9223372036854775807)

// -----
// Found by the random-program checker: filling the padding needs the map's exact inverse on
// its image; a map whose inverse is only piecewise quasi-affine is refused (not a crash).
func.func @piecewise_inverse(%y: !layout.buffer<13x3xf32, transform = #layout.index_map<(i, j) -> ((i * 3 + j) ceildiv 4, (i * 3 + j) mod 4)>, pad_value = 7.0 : f32>, %v: f32) {
  %c0 = arith.constant 0 : index
  layout.store %v, %y[%c0, %c0] : !layout.buffer<13x3xf32, transform = #layout.index_map<(i, j) -> ((i * 3 + j) ceildiv 4, (i * 3 + j) mod 4)>, pad_value = 7.0 : f32>, f32
  func.return
}
// CHECK: apply-layout: cannot fill the padding of %y of type !layout.buffer<13x3xf32, transform = #layout.index_map<(i, j) -> ((i * 3 + j) ceildiv 4, (i * 3 + j) mod 4)>, pad_value = 7.000000e+00 : f32>: no single quasi-affine expression was found for the inverse of index map (i, j) -> ((i * 3 + j) ceildiv 4, (j - i) mod 4) on shape [13, 3] (isl gives a piecewise inverse)
