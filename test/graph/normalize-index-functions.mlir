// normalize-graph's index functions (transforms/index_functions.py) on IR as torch-mlir
// prints an upsample's gather: an arange of the channels reshaped to Cx1x1, a tensor of
// zeros for the batch, i64 index tensors wrapped with select(i < 0, i + n, i).
// test/python/test_index_functions.py runs these functions before and after the pass.
// RUN: xdsl-opt %s -p normalize-graph | filecheck %s

#map3 = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, 0)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id1 = affine_map<(d0) -> (d0)>

// The channel arange and the zeros are computed in the gather (linalg.index 1 and the
// constant 0); the wraps of indices proven non-negative (the arange, the zeros, a column
// index clamped into [0, 3]) pick the index itself; the index functions are erased.
// CHECK-LABEL: func.func @upsample_gather
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<6xi64>)
// CHECK-NEXT:    ^{{.*}}(%[[COL:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[C:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[N:.*]] = arith.index_cast %c0_i64 : i64 to index
// CHECK-NEXT:      %[[W:.*]] = arith.index_cast %[[COL]] : i64 to index
// CHECK-NEXT:      %[[E:.*]] = tensor.extract %x[%[[N]], %[[C]], %[[W]], %[[W]]] : tensor<1x5x4x4xf32>
// CHECK-NEXT:      linalg.yield %[[E]] : f32
// CHECK-NOT:     arith.select
func.func @upsample_gather(%x: tensor<1x5x4x4xf32>) -> tensor<1x5x6x6xf32> {
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c3_i64 = arith.constant 3 : i64
  %c4_i64 = arith.constant 4 : i64
  %c5_i64 = arith.constant 5 : i64
  %e5 = tensor.empty() : tensor<5xi64>
  %arange = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e5 : tensor<5xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    linalg.yield %ii : i64
  } -> tensor<5xi64>
  %channels = tensor.expand_shape %arange [[0, 1, 2]] output_shape [5, 1, 1] : tensor<5xi64> into tensor<5x1x1xi64>
  %e1 = tensor.empty() : tensor<1xi64>
  %zeros = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e1 : tensor<1xi64>) {
  ^bb0(%out: i64):
    linalg.yield %c0_i64 : i64
  } -> tensor<1xi64>
  %batch = tensor.expand_shape %zeros [[0, 1, 2, 3]] output_shape [1, 1, 1, 1] : tensor<1xi64> into tensor<1x1x1x1xi64>
  %e6 = tensor.empty() : tensor<6xi64>
  %cols = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e6 : tensor<6xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %half = arith.constant 5.000000e-01 : f32
    %scaled = arith.mulf %f, %half : f32
    %fl = math.floor %scaled : f32
    %k = arith.fptosi %fl : f32 to i64
    %hi = arith.minsi %k, %c3_i64 : i64
    linalg.yield %hi : i64
  } -> tensor<6xi64>
  %e = tensor.empty() : tensor<1x5x6x6xf32>
  %g = linalg.generic {indexing_maps = [#map3, #map4, #map6, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%batch, %channels, %cols : tensor<1x1x1x1xi64>, tensor<5x1x1xi64>, tensor<6xi64>) outs(%e : tensor<1x5x6x6xf32>) {
  ^bb0(%n: i64, %c: i64, %w: i64, %out: f32):
    %0 = arith.cmpi slt, %n, %c0_i64 : i64
    %1 = arith.addi %n, %c1_i64 : i64
    %2 = arith.select %0, %1, %n : i64
    %3 = arith.index_cast %2 : i64 to index
    %4 = arith.cmpi slt, %c, %c0_i64 : i64
    %5 = arith.addi %c, %c5_i64 : i64
    %6 = arith.select %4, %5, %c : i64
    %7 = arith.index_cast %6 : i64 to index
    %8 = arith.cmpi slt, %w, %c0_i64 : i64
    %9 = arith.addi %w, %c4_i64 : i64
    %10 = arith.select %8, %9, %w : i64
    %11 = arith.index_cast %10 : i64 to index
    %v = tensor.extract %x[%3, %7, %11, %11] : tensor<1x5x4x4xf32>
    linalg.yield %v : f32
  } -> tensor<1x5x6x6xf32>
  func.return %g : tensor<1x5x6x6xf32>
}

// A wrap of an index nothing bounds (a function argument) stays; an arange read through
// a reshape that groups two axes is linearized (c = 4 * d1 + d2), computed with muli/addi.
// CHECK-LABEL: func.func @grouped_and_unbounded
// CHECK:         ^{{.*}}(%[[I:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[D1:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[K:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[M:.*]] = arith.muli %[[D1]], %[[K]] : index
// CHECK-NEXT:      %[[D2:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[A:.*]] = arith.addi %[[M]], %[[D2]] : index
// CHECK-NEXT:      %[[CAST:.*]] = arith.index_cast %[[A]] : index to i64
// CHECK-NEXT:      arith.cmpi slt, %[[I]], %c0_i64 : i64
// CHECK-NEXT:      arith.addi %[[I]], %c12_i64 : i64
// CHECK-NEXT:      arith.select
// CHECK:           arith.addi %{{.*}}, %[[CAST]] : i64
func.func @grouped_and_unbounded(%idx: tensor<2xi64>, %x: tensor<24xf32>) -> tensor<2x3x4xf32> {
  %c0_i64 = arith.constant 0 : i64
  %c12_i64 = arith.constant 12 : i64
  %e12 = tensor.empty() : tensor<12xi64>
  %arange = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e12 : tensor<12xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    linalg.yield %ii : i64
  } -> tensor<12xi64>
  %grid = tensor.expand_shape %arange [[0, 1]] output_shape [3, 4] : tensor<12xi64> into tensor<3x4xi64>
  %e = tensor.empty() : tensor<2x3x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%idx, %grid : tensor<2xi64>, tensor<3x4xi64>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%i: i64, %c: i64, %out: f32):
    %0 = arith.cmpi slt, %i, %c0_i64 : i64
    %1 = arith.addi %i, %c12_i64 : i64
    %2 = arith.select %0, %1, %i : i64
    %3 = arith.addi %2, %c : i64
    %4 = arith.index_cast %3 : i64 to index
    %v = tensor.extract %x[%4] : tensor<24xf32>
    linalg.yield %v : f32
  } -> tensor<2x3x4xf32>
  func.return %g : tensor<2x3x4xf32>
}

// Left alone: a sum over an arange (its reduction loop's extent is known only from the
// arange), and an arange computed with a float op (not an index function).
// CHECK-LABEL: func.func @left_alone
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%{{.*}} : tensor<7xi64>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs
// CHECK:         arith.sitofp
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{.*}} : tensor<7xf32>)
func.func @left_alone(%acc: tensor<i64>) -> (tensor<i64>, tensor<7xf32>) {
  %e7 = tensor.empty() : tensor<7xi64>
  %arange = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e7 : tensor<7xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    linalg.yield %ii : i64
  } -> tensor<7xi64>
  %sum = linalg.generic {indexing_maps = [#id1, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%arange : tensor<7xi64>) outs(%acc : tensor<i64>) {
  ^bb0(%in: i64, %out: i64):
    %s = arith.addi %in, %out : i64
    linalg.yield %s : i64
  } -> tensor<i64>
  %ef = tensor.empty() : tensor<7xf32>
  %farange = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%ef : tensor<7xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    linalg.yield %f : f32
  } -> tensor<7xf32>
  %half = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%farange : tensor<7xf32>) outs(%ef : tensor<7xf32>) {
  ^bb0(%in: f32, %out: f32):
    %h = arith.addf %in, %in : f32
    linalg.yield %h : f32
  } -> tensor<7xf32>
  func.return %sum, %half : tensor<i64>, tensor<7xf32>
}

// FoldDecidedSelect and FoldIndexCastPair on a gather without index functions: the wrap
// of a row index proven in [0, 3] picks the index (the compare and the add are erased);
// index_cast(index_cast(linalg.index 2)) is the loop index itself.
// CHECK-LABEL: func.func @bounded_wrap
// CHECK:         ^{{.*}}(%[[R:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[W:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[RI:.*]] = arith.index_cast %[[R]] : i64 to index
// CHECK-NEXT:      %[[E:.*]] = tensor.extract %x[%[[RI]], %[[W]]] : tensor<4x4xf32>
// CHECK-NEXT:      linalg.yield %[[E]] : f32
func.func @bounded_wrap(%x: tensor<4x4xf32>) -> tensor<1x6x4xf32> {
  %c0_i64 = arith.constant 0 : i64
  %c3_i64 = arith.constant 3 : i64
  %c4_i64 = arith.constant 4 : i64
  %e6 = tensor.empty() : tensor<6xi64>
  %rows = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e6 : tensor<6xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %half = arith.constant 5.000000e-01 : f32
    %scaled = arith.mulf %f, %half : f32
    %k = arith.fptosi %scaled : f32 to i64
    %hi = arith.minsi %k, %c3_i64 : i64
    linalg.yield %hi : i64
  } -> tensor<6xi64>
  %e = tensor.empty() : tensor<1x6x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%rows : tensor<6xi64>) outs(%e : tensor<1x6x4xf32>) {
  ^bb0(%r: i64, %out: f32):
    %w = linalg.index 2 : index
    %0 = arith.cmpi slt, %r, %c0_i64 : i64
    %1 = arith.addi %r, %c4_i64 : i64
    %2 = arith.select %0, %1, %r : i64
    %3 = arith.index_cast %2 : i64 to index
    %w64 = arith.index_cast %w : index to i64
    %wi = arith.index_cast %w64 : i64 to index
    %v = tensor.extract %x[%3, %wi] : tensor<4x4xf32>
    linalg.yield %v : f32
  } -> tensor<1x6x4xf32>
  func.return %g : tensor<1x6x4xf32>
}
