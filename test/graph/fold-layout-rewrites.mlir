// One behaviour of fold-layout-rewrites per function, negative cases next to positive ones.
// test/python/test_graph_numeric.py runs every function before and after the pass.
// RUN: xdsl-opt %s -p fold-layout-rewrites | filecheck %s
// RUN: xdsl-opt %s -p fold-layout-rewrites | xdsl-opt -p fold-layout-rewrites | filecheck %s
// RUN: xdsl-opt %s -p 'fold-layout-rewrites{max_constant_elements=4}' | filecheck %s --check-prefix=LIMIT
//
// Functions named @promise_* make `cropped_value` promises about their arguments (random
// inputs do not keep them, and "undef" allows the results to change), so the numeric test
// skips them; every other function computes the same results before and after.

// A transpose written as split + fused-in-the-other-order: TVM's OptimizeLayoutTransform
// cancels the pair because the shapes match; here it becomes one transform.
// CHECK-LABEL: func.func @transpose_pair_does_not_cancel
// CHECK-SAME:    (%[[X:.*]]: tensor<16xf32>)
// CHECK-NEXT:    %[[T:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(i) -> ((i mod 4) * 4 + i floordiv 4)>} : tensor<16xf32> -> tensor<16xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @transpose_pair_does_not_cancel(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<16xf32> -> tensor<4x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(i, j) -> (j * 4 + i)>} : tensor<4x4xf32> -> tensor<16xf32>
  func.return %b : tensor<16xf32>
}

// CHECK-LABEL: func.func @inverse_pair_cancels
// CHECK-SAME:    (%[[X:.*]]: tensor<16xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @inverse_pair_cancels(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<16xf32> -> tensor<4x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(i, j) -> (i * 4 + j)>} : tensor<4x4xf32> -> tensor<16xf32>
  func.return %b : tensor<16xf32>
}

// CHECK-LABEL: func.func @nchw4c_round_trip_cancels
// CHECK-SAME:    (%[[X:.*]]: tensor<1x8x3x3xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @nchw4c_round_trip_cancels(%x: tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x8x3x3xf32> -> tensor<1x2x3x3x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  func.return %b : tensor<1x8x3x3xf32>
}

// Same shapes, different maps: the composition is a transpose, not the identity.
// CHECK-LABEL: func.func @nchw4c_to_nhwc_does_not_cancel
// CHECK-NEXT:    %[[T:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(n, c, h, w) -> (n, h, w, c)>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @nchw4c_to_nhwc_does_not_cancel(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x4x4x4xf32> -> tensor<1x1x4x4x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, h, w, c4 * 4 + c)>} : tensor<1x1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  func.return %b : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @compose_two_permutations
// CHECK-NEXT:    %[[T:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(a, b, c) -> (c, a, b)>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @compose_two_permutations(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(a, b, c) -> (b, c, a)>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(a, b, c) -> (b, c, a)>} : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  func.return %b : tensor<4x2x3xf32>
}

// Tensors smaller than one tile: the pair keeps its step-by-step extents (a tile is whole at
// every step, as for a buffer's transform list), the composed map its own; a high pad with
// the pad value makes up the difference.
// CHECK-LABEL: func.func @split_smaller_than_tile_then_fuse
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[P:.*]] = layout.pad %[[X]] {low = array<i64: 0>, high = array<i64: 1>, pad_value = 2.000000e+00 : f32} : tensor<3xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[P]]
func.func @split_smaller_than_tile_then_fuse(%x: tensor<3xf32>) -> tensor<4xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 2.0 : f32} : tensor<3xf32> -> tensor<1x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(a, b) -> (a * 4 + b)>} : tensor<1x4xf32> -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// CHECK-LABEL: func.func @split_smaller_than_tile_then_transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<14xf32>)
// CHECK-NEXT:    %[[T:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(i) -> (i, 0)>} : tensor<14xf32> -> tensor<14x1xf32>
// CHECK-NEXT:    %[[P:.*]] = layout.pad %[[T]] {low = array<i64: 0, 0>, high = array<i64: 2, 0>, pad_value = 2.000000e+00 : f32} : tensor<14x1xf32> -> tensor<16x1xf32>
// CHECK-NEXT:    func.return %[[P]]
func.func @split_smaller_than_tile_then_transpose(%x: tensor<14xf32>) -> tensor<16x1xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 16, i mod 16)>, pad_value = 2.0 : f32} : tensor<14xf32> -> tensor<1x16xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(a, b) -> (b, a)>} : tensor<1x16xf32> -> tensor<16x1xf32>
  func.return %b : tensor<16x1xf32>
}

// NHWC with 3 channels -> NCHW4c (one padded channel block) -> NHWC with 4 -> crop: all
// of it folds away.
// CHECK-LABEL: func.func @nhwc3_nchw4c_round_trip
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4x4x3xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @nhwc3_nchw4c_round_trip(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x4x4x3xf32> -> tensor<1x1x4x4x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(n, c4, h, w, l) -> (n, h, w, c4 * 4 + l)>} : tensor<1x1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %c = layout.crop %b {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 4, 4, 3>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x3xf32>
  func.return %c : tensor<1x4x4x3xf32>
}

// The inner transform keeps its other use; the outer one reads %x directly.
// CHECK-LABEL: func.func @compose_with_other_use
// CHECK-SAME:    (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT:    %[[A:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(i) -> (i floordiv 2, i mod 2)>}
// CHECK-NEXT:    %[[B:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(i) -> (i mod 2, i floordiv 2)>}
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @compose_with_other_use(%x: tensor<8xf32>) -> (tensor<4x2xf32>, tensor<2x4xf32>) {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 2, i mod 2)>} : tensor<8xf32> -> tensor<4x2xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(i, j) -> (j, i)>} : tensor<4x2xf32> -> tensor<2x4xf32>
  func.return %a, %b : tensor<4x2xf32>, tensor<2x4xf32>
}

// A map that is the identity on the box only (not syntactically).
// CHECK-LABEL: func.func @identity_on_the_box
// CHECK-SAME:    (%[[X:.*]]: tensor<4x4xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @identity_on_the_box(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i, j) -> ((i * 4 + j) floordiv 4, j mod 4)>} : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %a : tensor<4x4xf32>
}

// The identity on [4] but not on [5]: `i mod 4` wraps.
// CHECK-LABEL: func.func @not_identity_on_the_box
// CHECK-NEXT:    layout.transform
func.func @not_identity_on_the_box(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i, j) -> ((i + 1) mod 4, j)>} : tensor<4x2xf32> -> tensor<4x2xf32>
  func.return %a : tensor<4x2xf32>
}

// A padded transform followed by its inverse and a crop folds away (seed rule).
// CHECK-LABEL: func.func @padded_inverse_crop_folds_away
// CHECK-SAME:    (%[[X:.*]]: tensor<6xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @padded_inverse_crop_folds_away(%x: tensor<6xf32>) -> tensor<6xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<2x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(i, j) -> (i * 4 + j)>} : tensor<2x4xf32> -> tensor<8xf32>
  %c = layout.crop %b {start = array<i64: 0>, sizes = array<i64: 6>} : tensor<8xf32> -> tensor<6xf32>
  func.return %c : tensor<6xf32>
}

// ... to the crop when the crop keeps less.
// CHECK-LABEL: func.func @padded_inverse_crop_folds_to_crop
// CHECK-SAME:    (%[[X:.*]]: tensor<6xf32>)
// CHECK-NEXT:    %[[C:.*]] = layout.crop %[[X]] {start = array<i64: 1>, sizes = array<i64: 4>} : tensor<6xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @padded_inverse_crop_folds_to_crop(%x: tensor<6xf32>) -> tensor<4xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<2x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(i, j) -> (i * 4 + j)>} : tensor<2x4xf32> -> tensor<8xf32>
  %c = layout.crop %b {start = array<i64: 1>, sizes = array<i64: 4>} : tensor<8xf32> -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// Without the crop the padding stays, as an explicit pad.
// CHECK-LABEL: func.func @padded_inverse_becomes_pad
// CHECK-SAME:    (%[[X:.*]]: tensor<6xf32>)
// CHECK-NEXT:    %[[P:.*]] = layout.pad %[[X]] {low = array<i64: 0>, high = array<i64: 2>, pad_value = 1.000000e+00 : f32} : tensor<6xf32> -> tensor<8xf32>
// CHECK-NEXT:    func.return %[[P]]
func.func @padded_inverse_becomes_pad(%x: tensor<6xf32>) -> tensor<8xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 1.0 : f32} : tensor<6xf32> -> tensor<2x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(i, j) -> (i * 4 + j)>} : tensor<2x4xf32> -> tensor<8xf32>
  func.return %b : tensor<8xf32>
}

// Padding from both transforms, with different values: not one transform. (The middle
// transform does not pad, so its pad value is ignored and it folds into the first.)
// CHECK-LABEL: func.func @different_pad_values_do_not_fold
// CHECK-NEXT:    %[[A:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 1.000000e+00 : f32}
// CHECK-NEXT:    %[[B:.*]] = layout.transform %[[A]] {index_map = #layout.index_map<(i, j) -> (i + j floordiv 2, j)>, pad_value = 2.000000e+00 : f32}
// CHECK-NEXT:    func.return %[[B]]
func.func @different_pad_values_do_not_fold(%x: tensor<6xf32>) -> tensor<3x4xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 1.0 : f32} : tensor<6xf32> -> tensor<2x4xf32>
  %b = layout.transform %a {index_map = #layout.index_map<(i, j) -> (i, j)>, pad_value = 2.0 : f32} : tensor<2x4xf32> -> tensor<2x4xf32>
  %c = layout.transform %b {index_map = #layout.index_map<(i, j) -> (i + j floordiv 2, j)>, pad_value = 2.0 : f32} : tensor<2x4xf32> -> tensor<3x4xf32>
  func.return %c : tensor<3x4xf32>
}

// Same pad value on both sides: one padded transform.
// CHECK-LABEL: func.func @same_pad_values_fold
// CHECK-NEXT:    %[[T:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(i) -> ((i mod 4) floordiv 2 + i floordiv 4, i mod 4)>, pad_value = 2.000000e+00 : f32} : tensor<6xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @same_pad_values_fold(%x: tensor<6xf32>) -> tensor<3x4xf32> {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 2.0 : f32} : tensor<6xf32> -> tensor<2x4xf32>
  %c = layout.transform %a {index_map = #layout.index_map<(i, j) -> (i + j floordiv 2, j)>, pad_value = 2.0 : f32} : tensor<2x4xf32> -> tensor<3x4xf32>
  func.return %c : tensor<3x4xf32>
}

// The seed's "layout rewrite folded into a constant".
// CHECK-LABEL: func.func @transform_of_constant
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]], {{\[\[\[}}5.000000e+00, 6.000000e+00, 0.000000e+00, 0.000000e+00]]]]> : tensor<2x1x1x4xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @transform_of_constant() -> tensor<2x1x1x4xf32> {
  %bias = arith.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]]]> : tensor<6x1x1xf32>
  %t = layout.transform %bias {index_map = #layout.index_map<(i, j, k) -> (i floordiv 4, 0, 0, i mod 4)>, pad_value = 0.0 : f32} : tensor<6x1x1xf32> -> tensor<2x1x1x4xf32>
  func.return %t : tensor<2x1x1x4xf32>
}

// CHECK-LABEL: func.func @pad_and_crop_of_constants
// CHECK-NEXT:    %[[P:.*]] = arith.constant dense<{{\[\[}}1, 2, 3, 9], [4, 5, 6, 9]]> : tensor<2x4xi32>
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<{{\[\[}}2, 3]]> : tensor<1x2xi32>
// CHECK-NEXT:    %[[S:.*]] = arith.constant dense<7> : tensor<3x3xi32>
// CHECK-NEXT:    func.return %[[P]], %[[C]], %[[S]]
func.func @pad_and_crop_of_constants() -> (tensor<2x4xi32>, tensor<1x2xi32>, tensor<3x3xi32>) {
  %c = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %p = layout.pad %c {low = array<i64: 0, 0>, high = array<i64: 0, 1>, pad_value = 9 : i32} : tensor<2x3xi32> -> tensor<2x4xi32>
  %k = layout.crop %c {start = array<i64: 0, 1>, sizes = array<i64: 1, 2>} : tensor<2x3xi32> -> tensor<1x2xi32>
  %s = arith.constant dense<7> : tensor<2x2xi32>
  %q = layout.pad %s {low = array<i64: 1, 0>, high = array<i64: 0, 1>, pad_value = 7 : i32} : tensor<2x2xi32> -> tensor<3x3xi32>
  func.return %p, %k, %q : tensor<2x4xi32>, tensor<1x2xi32>, tensor<3x3xi32>
}

// A constant larger than max_constant_elements is left alone.
// CHECK-LABEL: func.func @constant_limit
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<{{\[}}0, 4, 1, 5, 2, 6, 3, 7]> : tensor<8xi32>
// CHECK-NEXT:    func.return %[[C]]
// LIMIT-LABEL: func.func @constant_limit
// LIMIT-NEXT:    arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi32>
// LIMIT-NEXT:    layout.transform
func.func @constant_limit() -> tensor<8xi32> {
  %c = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi32>
  %t = layout.transform %c {index_map = #layout.index_map<(i) -> ((i mod 4) * 2 + i floordiv 4)>} : tensor<8xi32> -> tensor<8xi32>
  func.return %t : tensor<8xi32>
}

// CHECK-LABEL: func.func @fill_and_empty
// CHECK-DAG:     %[[E1:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-DAG:     %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-DAG:     %[[E2:.*]] = tensor.empty() : tensor<4x2xf32>
// CHECK-NOT:     layout.
// CHECK:         func.return %[[F]], %[[E2]]
func.func @fill_and_empty() -> (tensor<2x4xf32>, tensor<4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %t = layout.transform %f {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<2x4xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %u = layout.transform %e8 {index_map = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>} : tensor<8xf32> -> tensor<4x2xf32>
  func.return %t, %u : tensor<2x4xf32>, tensor<4x2xf32>
}

// A fill padded with another value, and an empty tensor padded: the rewrite stays.
// CHECK-LABEL: func.func @fill_and_empty_with_other_padding
// CHECK:         layout.transform
// CHECK:         layout.transform
// CHECK:         func.return
func.func @fill_and_empty_with_other_padding() -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %t = layout.transform %f {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<2x4xf32>
  %u = layout.transform %e {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<2x4xf32>
  func.return %t, %u : tensor<2x4xf32>, tensor<2x4xf32>
}

// Crop after pad always folds.
// CHECK-LABEL: func.func @crop_of_pad_exact
// CHECK-SAME:    (%[[X:.*]]: tensor<3x4xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @crop_of_pad_exact(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %p = layout.pad %x {low = array<i64: 1, 0>, high = array<i64: 2, 3>, pad_value = 0.0 : f32} : tensor<3x4xf32> -> tensor<6x7xf32>
  %c = layout.crop %p {start = array<i64: 1, 0>, sizes = array<i64: 3, 4>} : tensor<6x7xf32> -> tensor<3x4xf32>
  func.return %c : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @crop_of_pad_inside
// CHECK-SAME:    (%[[X:.*]]: tensor<3x4xf32>)
// CHECK-NEXT:    %[[C:.*]] = layout.crop %[[X]] {start = array<i64: 1, 1>, sizes = array<i64: 2, 2>} : tensor<3x4xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @crop_of_pad_inside(%x: tensor<3x4xf32>) -> tensor<2x2xf32> {
  %p = layout.pad %x {low = array<i64: 1, 0>, high = array<i64: 2, 3>, pad_value = 0.0 : f32} : tensor<3x4xf32> -> tensor<6x7xf32>
  %c = layout.crop %p {start = array<i64: 2, 1>, sizes = array<i64: 2, 2>} : tensor<6x7xf32> -> tensor<2x2xf32>
  func.return %c : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @crop_of_pad_overlapping
// CHECK-SAME:    (%[[X:.*]]: tensor<3x4xf32>)
// CHECK-NEXT:    %[[C:.*]] = layout.crop %[[X]] {start = array<i64: 1, 1>, sizes = array<i64: 2, 3>} : tensor<3x4xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[P:.*]] = layout.pad %[[C]] {low = array<i64: 0, 0>, high = array<i64: 2, 2>, pad_value = 0.000000e+00 : f32} : tensor<2x3xf32> -> tensor<4x5xf32>
// CHECK-NEXT:    func.return %[[P]]
func.func @crop_of_pad_overlapping(%x: tensor<3x4xf32>) -> tensor<4x5xf32> {
  %p = layout.pad %x {low = array<i64: 1, 0>, high = array<i64: 2, 3>, pad_value = 0.0 : f32} : tensor<3x4xf32> -> tensor<6x7xf32>
  %c = layout.crop %p {start = array<i64: 2, 1>, sizes = array<i64: 4, 5>} : tensor<6x7xf32> -> tensor<4x5xf32>
  func.return %c : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @crop_of_pad_only_padding
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<7.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @crop_of_pad_only_padding(%x: tensor<3x4xf32>) -> tensor<2x2xf32> {
  %p = layout.pad %x {low = array<i64: 1, 0>, high = array<i64: 2, 3>, pad_value = 7.0 : f32} : tensor<3x4xf32> -> tensor<6x7xf32>
  %c = layout.crop %p {start = array<i64: 4, 0>, sizes = array<i64: 2, 2>} : tensor<6x7xf32> -> tensor<2x2xf32>
  func.return %c : tensor<2x2xf32>
}

// Pad after crop folds only with the promise that the cropped values equal the pad value ...
// CHECK-LABEL: func.func @pad_of_crop_same_value
// CHECK-SAME:    (%[[X:.*]]: tensor<6xf32>)
// CHECK-NEXT:    %[[P:.*]] = layout.pad %[[X]]
// CHECK-NEXT:    func.return %[[P]]
func.func @pad_of_crop_same_value(%x: tensor<6xf32>) -> tensor<8xf32> {
  %p0 = layout.pad %x {low = array<i64: 0>, high = array<i64: 2>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<8xf32>
  %c = layout.crop %p0 {start = array<i64: 0>, sizes = array<i64: 6>, cropped_value = 0.0 : f32} : tensor<8xf32> -> tensor<6xf32>
  %p = layout.pad %c {low = array<i64: 0>, high = array<i64: 2>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<8xf32>
  func.return %p : tensor<8xf32>
}

// CHECK-LABEL: func.func @promise_pad_of_crop
// CHECK-SAME:    (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @promise_pad_of_crop(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = layout.crop %x {start = array<i64: 1>, sizes = array<i64: 6>, cropped_value = 0.0 : f32} : tensor<8xf32> -> tensor<6xf32>
  %p = layout.pad %c {low = array<i64: 1>, high = array<i64: 1>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<8xf32>
  func.return %p : tensor<8xf32>
}

// ... or that they are undefined.
// CHECK-LABEL: func.func @promise_pad_of_crop_undef
// CHECK-SAME:    (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @promise_pad_of_crop_undef(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 6>, cropped_value = "undef"} : tensor<8xf32> -> tensor<6xf32>
  %p = layout.pad %c {low = array<i64: 0>, high = array<i64: 2>, pad_value = 3.0 : f32} : tensor<6xf32> -> tensor<8xf32>
  func.return %p : tensor<8xf32>
}

// No promise, another value, -0.0 for 0.0, or a different window: no fold.
// CHECK-LABEL: func.func @promise_pad_of_crop_not_folded
// CHECK-COUNT-4: layout.crop
// CHECK-NOT:     func.return %arg
// CHECK:         func.return
func.func @promise_pad_of_crop_not_folded(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %c1 = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 6>} : tensor<8xf32> -> tensor<6xf32>
  %p1 = layout.pad %c1 {low = array<i64: 0>, high = array<i64: 2>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<8xf32>
  %c2 = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 6>, cropped_value = 1.0 : f32} : tensor<8xf32> -> tensor<6xf32>
  %p2 = layout.pad %c2 {low = array<i64: 0>, high = array<i64: 2>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<8xf32>
  %c3 = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 6>, cropped_value = -0.0 : f32} : tensor<8xf32> -> tensor<6xf32>
  %p3 = layout.pad %c3 {low = array<i64: 0>, high = array<i64: 2>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<8xf32>
  %c4 = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 6>, cropped_value = "undef"} : tensor<8xf32> -> tensor<6xf32>
  %p4 = layout.pad %c4 {low = array<i64: 1>, high = array<i64: 1>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<8xf32>
  func.return %p1, %p2, %p3, %p4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// The padded transform of a crop restores it when the cropped values may stand for the
// padding (NCHW4c -> NCHW + crop, then NCHW -> NCHW4c): both rewrites cancel.
// CHECK-LABEL: func.func @promise_padded_transform_of_crop_undef
// CHECK-SAME:    (%[[X:.*]]: tensor<1x2x3x3x4xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @promise_padded_transform_of_crop_undef(%x: tensor<1x2x3x3x4xf32>) -> tensor<1x2x3x3x4xf32> {
  %n = layout.transform %x {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  %k = layout.crop %n {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 6, 3, 3>, cropped_value = "undef"} : tensor<1x8x3x3xf32> -> tensor<1x6x3x3xf32>
  %t = layout.transform %k {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x6x3x3xf32> -> tensor<1x2x3x3x4xf32>
  func.return %t : tensor<1x2x3x3x4xf32>
}

// Same with a promise of a different value: nothing folds.
// CHECK-LABEL: func.func @promise_padded_transform_of_crop_other_value
// CHECK:         layout.crop
// CHECK-NEXT:    layout.transform
func.func @promise_padded_transform_of_crop_other_value(%x: tensor<8xf32>) -> tensor<2x4xf32> {
  %k = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 6>, cropped_value = 1.0 : f32} : tensor<8xf32> -> tensor<6xf32>
  %t = layout.transform %k {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<6xf32> -> tensor<2x4xf32>
  func.return %t : tensor<2x4xf32>
}

// A crop at an offset: the transform is shifted.
// CHECK-LABEL: func.func @promise_padded_transform_of_shifted_crop
// CHECK-SAME:    (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT:    %[[T:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(i) -> ((i + 2) floordiv 4, (i + 2) mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<8xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @promise_padded_transform_of_shifted_crop(%x: tensor<8xf32>) -> tensor<3x4xf32> {
  %k = layout.crop %x {start = array<i64: 1>, sizes = array<i64: 7>, cropped_value = 0.0 : f32} : tensor<8xf32> -> tensor<7xf32>
  %t = layout.transform %k {index_map = #layout.index_map<(i) -> ((i + 3) floordiv 4, (i + 3) mod 4)>, pad_value = 0.0 : f32} : tensor<7xf32> -> tensor<3x4xf32>
  func.return %t : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @adjacent_crops_and_pads
// CHECK-SAME:    (%[[X:.*]]: tensor<8x8xf32>)
// CHECK-NEXT:    %[[C:.*]] = layout.crop %[[X]] {start = array<i64: 3, 1>, sizes = array<i64: 2, 2>} : tensor<8x8xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %[[P:.*]] = layout.pad %[[X]] {low = array<i64: 2, 0>, high = array<i64: 0, 3>, pad_value = 1.000000e+00 : f32} : tensor<8x8xf32> -> tensor<10x11xf32>
// CHECK-NEXT:    func.return %[[C]], %[[P]]
func.func @adjacent_crops_and_pads(%x: tensor<8x8xf32>) -> (tensor<2x2xf32>, tensor<10x11xf32>) {
  %c1 = layout.crop %x {start = array<i64: 1, 1>, sizes = array<i64: 6, 6>} : tensor<8x8xf32> -> tensor<6x6xf32>
  %c2 = layout.crop %c1 {start = array<i64: 2, 0>, sizes = array<i64: 2, 2>} : tensor<6x6xf32> -> tensor<2x2xf32>
  %p1 = layout.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 1>, pad_value = 1.0 : f32} : tensor<8x8xf32> -> tensor<9x9xf32>
  %p2 = layout.pad %p1 {low = array<i64: 1, 0>, high = array<i64: 0, 2>, pad_value = 1.0 : f32} : tensor<9x9xf32> -> tensor<10x11xf32>
  func.return %c2, %p2 : tensor<2x2xf32>, tensor<10x11xf32>
}

// CHECK-LABEL: func.func @trivial_pad_and_crop
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT:    func.return %[[X]], %[[X]]
func.func @trivial_pad_and_crop(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %p = layout.pad %x {low = array<i64: 0>, high = array<i64: 0>, pad_value = 1.0 : f32} : tensor<3xf32> -> tensor<3xf32>
  %c = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 3>} : tensor<3xf32> -> tensor<3xf32>
  func.return %p, %c : tensor<3xf32>, tensor<3xf32>
}
