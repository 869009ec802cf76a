// flow-layout-rewrites' ReadGathersThroughBlockedForm: a value read by a bijective layout
// transform T and otherwise only by gathers proven inside it has its gathers read T(x) at
// M(i); T (moved up to just after x's producer) is then x's only use and flows on, so the
// producer writes the blocked form itself. Refusals next to the rewrite.
// test/python/test_flow_gathers.py runs every function before and after the pass.
// RUN: xdsl-opt %s -p flow-layout-rewrites | filecheck %s
// RUN: xdsl-opt %s -p flow-layout-rewrites | xdsl-opt -p flow-layout-rewrites | filecheck %s

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>

// fpn_tiny's top-down sum: read by the next level's 2x nearest upsample and, in NCHW4c, by
// its output conv. The sum is computed in NCHW4c (its operands get the transform) and the
// upsample reads the blocked sum at (n, c floordiv 4, h', w', c mod 4); no transform of the
// sum is left.
// CHECK-LABEL: func.func @sum_read_blocked_and_upsampled
// CHECK-SAME:    (%[[A:.*]]: tensor<1x8x4x4xf32>, %[[B:.*]]: tensor<1x8x4x4xf32>)
// CHECK:         %[[S:.*]] = linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<1x2x4x4x4xf32>, tensor<1x2x4x4x4xf32>)
// CHECK:         } -> tensor<1x2x4x4x4xf32>
// CHECK-NOT:     layout.transform %[[S]]
// CHECK:           %[[C:.*]] = linalg.index 1 : index
// CHECK:           %[[C4:.*]] = arith.divsi %[[C]], %{{.*}} : index
// CHECK-NEXT:      %[[L:.*]] = arith.remsi %[[C]], %{{.*}} : index
// CHECK-NEXT:      tensor.extract %[[S]][%{{.*}}, %[[C4]], %{{.*}}, %{{.*}}, %[[L]]] : tensor<1x2x4x4x4xf32>
// CHECK-NOT:     layout.transform
// CHECK:         func.return %[[S]], %{{.*}} : tensor<1x2x4x4x4xf32>, tensor<1x8x8x8xf32>
func.func @sum_read_blocked_and_upsampled(%a: tensor<1x8x4x4xf32>, %b: tensor<1x8x4x4xf32>) -> (tensor<1x2x4x4x4xf32>, tensor<1x8x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a, %b : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %z = arith.addf %x, %y : f32
    linalg.yield %z : f32
  } -> tensor<1x8x4x4xf32>
  %e2 = tensor.empty() : tensor<1x8x8x8xf32>
  %up = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e2 : tensor<1x8x8x8xf32>) {
  ^bb0(%o: f32):
    %c = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %h2 = arith.divsi %h, %c2 : index
    %w2 = arith.divsi %w, %c2 : index
    %v = tensor.extract %s[%c0, %c, %h2, %w2] : tensor<1x8x4x4xf32>
    linalg.yield %v : f32
  } -> tensor<1x8x8x8xf32>
  %t = layout.transform %s {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x8x4x4xf32> -> tensor<1x2x4x4x4xf32>
  func.return %t, %up : tensor<1x2x4x4x4xf32>, tensor<1x8x8x8xf32>
}

// 5 channels: T pads the second texel (a pad lane is no element of the sum), so the
// upsample keeps reading the NCHW sum, and the sum keeps its transform.
// CHECK-LABEL: func.func @padding_transform_stays
// CHECK:         %[[S:.*]] = linalg.generic
// CHECK:         } -> tensor<1x5x3x3xf32>
// CHECK:         layout.transform %[[S]]
// CHECK:           tensor.extract %[[S]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x5x3x3xf32>
func.func @padding_transform_stays(%a: tensor<1x5x3x3xf32>) -> (tensor<1x2x3x3x4xf32>, tensor<1x5x6x6xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<1x5x3x3xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x5x3x3xf32>) outs(%e : tensor<1x5x3x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.addf %x, %x : f32
    linalg.yield %z : f32
  } -> tensor<1x5x3x3xf32>
  %t = layout.transform %s {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<1x5x3x3xf32> -> tensor<1x2x3x3x4xf32>
  %e2 = tensor.empty() : tensor<1x5x6x6xf32>
  %up = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e2 : tensor<1x5x6x6xf32>) {
  ^bb0(%o: f32):
    %c = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %h2 = arith.divsi %h, %c2 : index
    %w2 = arith.divsi %w, %c2 : index
    %v = tensor.extract %s[%c0, %c, %h2, %w2] : tensor<1x5x3x3xf32>
    linalg.yield %v : f32
  } -> tensor<1x5x6x6xf32>
  func.return %t, %up : tensor<1x2x3x3x4xf32>, tensor<1x5x6x6xf32>
}

// The sum is also returned (a use that is no gather): it is needed in NCHW anyway, so the
// gather keeps reading it there.
// CHECK-LABEL: func.func @other_use_stays
// CHECK:         %[[S:.*]] = linalg.generic
// CHECK:         } -> tensor<1x4x2x2xf32>
// CHECK:         layout.transform %[[S]]
// CHECK:           tensor.extract %[[S]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x4x2x2xf32>
func.func @other_use_stays(%a: tensor<1x4x2x2xf32>) -> (tensor<1x1x2x2x4xf32>, tensor<1x4x2x2xf32>, tensor<1x4x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x4x2x2xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.mulf %x, %x : f32
    linalg.yield %z : f32
  } -> tensor<1x4x2x2xf32>
  %t = layout.transform %s {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x4x2x2xf32> -> tensor<1x1x2x2x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %up = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e2 : tensor<1x4x4x4xf32>) {
  ^bb0(%o: f32):
    %c = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %h2 = arith.divsi %h, %c2 : index
    %w2 = arith.divsi %w, %c2 : index
    %v = tensor.extract %s[%c0, %c, %h2, %w2] : tensor<1x4x2x2xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x4x4xf32>
  func.return %t, %s, %up : tensor<1x1x2x2x4xf32>, tensor<1x4x2x2xf32>, tensor<1x4x4x4xf32>
}

// A function argument read by a gather and by its transform: its layout is the caller's,
// nothing moves.
// CHECK-LABEL: func.func @argument_stays
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4x2x2xf32>)
// CHECK:         layout.transform %[[X]]
// CHECK:           tensor.extract %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x4x2x2xf32>
func.func @argument_stays(%x: tensor<1x4x2x2xf32>) -> (tensor<1x1x2x2x4xf32>, tensor<1x4x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %t = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x4x2x2xf32> -> tensor<1x1x2x2x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %up = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e2 : tensor<1x4x4x4xf32>) {
  ^bb0(%o: f32):
    %c = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %h2 = arith.divsi %h, %c2 : index
    %w2 = arith.divsi %w, %c2 : index
    %v = tensor.extract %x[%c0, %c, %h2, %w2] : tensor<1x4x2x2xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x4x4xf32>
  func.return %t, %up : tensor<1x1x2x2x4xf32>, tensor<1x4x4x4xf32>
}

// A gather whose row index is not proven inside the sum (it is read from a tensor): the
// index arithmetic of the blocked read would not be exact, so nothing moves.
// CHECK-LABEL: func.func @unproven_index_stays
// CHECK:         %[[S:.*]] = linalg.generic
// CHECK:         } -> tensor<1x4x2x2xf32>
// CHECK:           tensor.extract %[[S]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x4x2x2xf32>
// CHECK:         layout.transform %[[S]]
func.func @unproven_index_stays(%a: tensor<1x4x2x2xf32>, %rows: tensor<4xi64>) -> (tensor<1x1x2x2x4xf32>, tensor<1x4x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x4x2x2xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.mulf %x, %x : f32
    linalg.yield %z : f32
  } -> tensor<1x4x2x2xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %up = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (h)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rows : tensor<4xi64>) outs(%e2 : tensor<1x4x4x4xf32>) {
  ^bb0(%r: i64, %o: f32):
    %c = linalg.index 1 : index
    %w = linalg.index 3 : index
    %h2 = arith.index_cast %r : i64 to index
    %w2 = arith.divsi %w, %c2 : index
    %v = tensor.extract %s[%c0, %c, %h2, %w2] : tensor<1x4x2x2xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x4x4xf32>
  %t = layout.transform %s {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x4x2x2xf32> -> tensor<1x1x2x2x4xf32>
  func.return %t, %up : tensor<1x1x2x2x4xf32>, tensor<1x4x4x4xf32>
}
