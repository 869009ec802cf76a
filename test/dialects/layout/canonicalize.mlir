// Canonicalization patterns of the graph-level layout ops (dialects/canonicalization_patterns.py),
// applied by stock `-p canonicalize`. Negative cases next to positive ones.
// test/python/test_graph_numeric.py runs every function before and after canonicalize.
// RUN: xdsl-opt %s -p canonicalize | filecheck %s
// RUN: xdsl-opt %s -p canonicalize | xdsl-opt -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @identity_transform
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT:     layout.transform
// CHECK:         func.return %[[X]]
func.func @identity_transform(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(n, c) -> (n, c)>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// Not the identity as written, but on the box: i mod 8 == i for i in [0, 8).
// CHECK-LABEL: func.func @identity_on_the_box
// CHECK-SAME:    (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @identity_on_the_box(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i mod 8)>} : tensor<8xf32> -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// A transpose of extents 1 x 1 moves nothing.
// CHECK-LABEL: func.func @transpose_of_extent_one
// CHECK-SAME:    (%[[X:.*]]: tensor<1x1xi32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @transpose_of_extent_one(%x: tensor<1x1xi32>) -> tensor<1x1xi32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (j, i)>} : tensor<1x1xi32> -> tensor<1x1xi32>
  func.return %r : tensor<1x1xi32>
}

// Same shape, not the identity: a reversal stays.
// CHECK-LABEL: func.func @reversal_stays
// CHECK-SAME:    (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT:    %[[R:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(i) -> (7 - i)>}
// CHECK-NEXT:    func.return %[[R]]
func.func @reversal_stays(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (7 - i)>} : tensor<8xf32> -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// A 3 x 3 transpose has the input's type but is not the identity.
// CHECK-LABEL: func.func @square_transpose_stays
// CHECK:         layout.transform
// CHECK-NEXT:    func.return
func.func @square_transpose_stays(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (j, i)>} : tensor<3x3xf32> -> tensor<3x3xf32>
  func.return %r : tensor<3x3xf32>
}

// CHECK-LABEL: func.func @inverse_pair
// CHECK-SAME:    (%[[X:.*]]: tensor<16xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @inverse_pair(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<16xf32> -> tensor<4x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(i, j) -> (i * 4 + j)>} : tensor<4x4xf32> -> tensor<16xf32>
  func.return %b : tensor<16xf32>
}

// Prime extents: fuse [7, 5] to [35], then split it back.
// CHECK-LABEL: func.func @inverse_pair_prime_extents
// CHECK-SAME:    (%[[X:.*]]: tensor<7x5xi32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @inverse_pair_prime_extents(%x: tensor<7x5xi32>) -> tensor<7x5xi32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i, j) -> (i * 5 + j)>} : tensor<7x5xi32> -> tensor<35xi32>
  %b = layout.transform %a {index_map = #layout.index_map<(k) -> (k floordiv 5, k mod 5)>} : tensor<35xi32> -> tensor<7x5xi32>
  func.return %b : tensor<7x5xi32>
}

// NCHW -> NCHW4c -> NCHW with 8 channels: no padding, the pair cancels.
// CHECK-LABEL: func.func @nchw4c_round_trip
// CHECK-SAME:    (%[[X:.*]]: tensor<1x8x3x3xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @nchw4c_round_trip(%x: tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x8x3x3xf32> -> tensor<1x2x3x3x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  func.return %b : tensor<1x8x3x3xf32>
}

// The inner transform has another use: only the outer one goes.
// CHECK-LABEL: func.func @inverse_pair_inner_kept
// CHECK-SAME:    (%[[X:.*]]: tensor<16xf32>)
// CHECK-NEXT:    %[[A:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>}
// CHECK-NOT:     layout.transform
// CHECK:         func.return %[[X]], %[[A]]
func.func @inverse_pair_inner_kept(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<4x4xf32>) {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<16xf32> -> tensor<4x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(i, j) -> (i * 4 + j)>} : tensor<4x4xf32> -> tensor<16xf32>
  func.return %b, %a : tensor<16xf32>, tensor<4x4xf32>
}

// Not inverses: split, then fuse in the other order (a transpose). Canonicalize does not
// compose transforms; both stay.
// CHECK-LABEL: func.func @non_inverse_pair_stays
// CHECK-SAME:    (%[[X:.*]]: tensor<16xf32>)
// CHECK-NEXT:    %[[A:.*]] = layout.transform %[[X]]
// CHECK-NEXT:    %[[B:.*]] = layout.transform %[[A]] {index_map = #layout.index_map<(i, j) -> (j * 4 + i)>}
// CHECK-NEXT:    func.return %[[B]]
func.func @non_inverse_pair_stays(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<16xf32> -> tensor<4x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(i, j) -> (j * 4 + i)>} : tensor<4x4xf32> -> tensor<16xf32>
  func.return %b : tensor<16xf32>
}

// The inner transform pads [6] to [2, 4]; the inverse map keeps the padding: the result
// is tensor<8xf32> (x then two pad values), not x. Both stay.
// CHECK-LABEL: func.func @padded_then_inverse_map_stays
// CHECK-SAME:    (%[[X:.*]]: tensor<6xf32>)
// CHECK-NEXT:    %[[A:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 5.000000e-01 : f32}
// CHECK-NEXT:    %[[B:.*]] = layout.transform %[[A]] {index_map = #layout.index_map<(a, b) -> (a * 4 + b)>}
// CHECK-NEXT:    func.return %[[B]] : tensor<8xf32>
func.func @padded_then_inverse_map_stays(%x: tensor<6xf32>) -> tensor<8xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.5 : f32} : tensor<6xf32> -> tensor<2x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(a, b) -> (a * 4 + b)>} : tensor<2x4xf32> -> tensor<8xf32>
  func.return %b : tensor<8xf32>
}

// 3 channels padded to a texel of 4, then back to channels: 4 channels come out.
// CHECK-LABEL: func.func @three_channels_padded_stays
// CHECK-COUNT-2: layout.transform
// CHECK-NEXT:    func.return
func.func @three_channels_padded_stays(%x: tensor<1x3x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x3x2x2xf32> -> tensor<1x1x2x2x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x1x2x2x4xf32> -> tensor<1x4x2x2xf32>
  func.return %b : tensor<1x4x2x2xf32>
}

// CHECK-LABEL: func.func @trivial_pad_and_crop
// CHECK-SAME:    (%[[X:.*]]: tensor<3x5xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @trivial_pad_and_crop(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %p = layout.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, 0>, pad_value = 0.0 : f32} : tensor<3x5xf32> -> tensor<3x5xf32>
  %c = layout.crop %p {start = array<i64: 0, 0>, sizes = array<i64: 3, 5>} : tensor<3x5xf32> -> tensor<3x5xf32>
  func.return %c : tensor<3x5xf32>
}

// A real pad and a real crop stay (canonicalize does not fold crop(pad)).
// CHECK-LABEL: func.func @pad_and_crop_stay
// CHECK-NEXT:    layout.pad
// CHECK-NEXT:    layout.crop
// CHECK-NEXT:    func.return
func.func @pad_and_crop_stay(%x: tensor<3x5xf32>) -> tensor<3x4xf32> {
  %p = layout.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 0>, pad_value = 0.0 : f32} : tensor<3x5xf32> -> tensor<3x6xf32>
  %c = layout.crop %p {start = array<i64: 0, 2>, sizes = array<i64: 3, 4>} : tensor<3x6xf32> -> tensor<3x4xf32>
  func.return %c : tensor<3x4xf32>
}
