// One raised form of raise-layout-rewrites per function, with the ops it leaves alone next
// to them. test/python/test_layout_rewrites_interop.py runs every function before and after.
// RUN: xdsl-opt %s -p raise-layout-rewrites | filecheck %s
// RUN: xdsl-opt %s -p raise-layout-rewrites | xdsl-opt -p raise-layout-rewrites | filecheck %s

// CHECK-LABEL: func.func @transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[R:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(x0, x1, x2) -> (x2, x0, x1)>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %e = tensor.empty() : tensor<4x2x3xf32>
  %r = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  func.return %r : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @expand_and_collapse
// CHECK-NEXT:    %[[C:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(x0, x1, x2) -> (x0 * 3 + x1, x2)>} : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[R:.*]] = layout.transform %[[C]] {index_map = #layout.index_map<(x0, x1) -> (x0 floordiv 2, x0 mod 2, x1)>} : tensor<6x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @expand_and_collapse(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %r = tensor.expand_shape %c [[0, 1], [2]] output_shape [3, 2, 4] : tensor<6x4xf32> into tensor<3x2x4xf32>
  func.return %r : tensor<3x2x4xf32>
}

// torch-mlir's grouped-conv reshapes: a unit batch axis that is its own group stays an axis
// of the map (x0, not the constant 0), so a layout of the batch axis flows through it.
// CHECK-LABEL: func.func @unit_batch_groups
// CHECK-NEXT:    %[[E:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(x0, x1, x2, x3) -> (x0, x1 floordiv 4, x1 mod 4, x2, x3)>} : tensor<1x8x3x3xf32> -> tensor<1x2x4x3x3xf32>
// CHECK-NEXT:    %[[C:.*]] = layout.transform %[[E]] {index_map = #layout.index_map<(x0, x1, x2, x3, x4) -> (x0, x1 * 4 + x2, x3, x4)>} : tensor<1x2x4x3x3xf32> -> tensor<1x8x3x3xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @unit_batch_groups(%x: tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32> {
  %e = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 3, 3] : tensor<1x8x3x3xf32> into tensor<1x2x4x3x3xf32>
  %c = tensor.collapse_shape %e [[0], [1, 2], [3], [4]] : tensor<1x2x4x3x3xf32> into tensor<1x8x3x3xf32>
  func.return %c : tensor<1x8x3x3xf32>
}

// CHECK-LABEL: func.func @pack_padded
// CHECK-NEXT:    %[[R:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(x0, x1) -> (x1 floordiv 3, x0 floordiv 2, x0 mod 2, x1 mod 3)>, pad_value = 9.000000e+00 : f32} : tensor<7x6xf32> -> tensor<2x4x2x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @pack_padded(%x: tensor<7x6xf32>) -> tensor<2x4x2x3xf32> {
  %p = arith.constant 9.0 : f32
  %e = tensor.empty() : tensor<2x4x2x3xf32>
  %r = linalg.pack %x padding_value(%p : f32) outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [2, 3] into %e : tensor<7x6xf32> -> tensor<2x4x2x3xf32>
  func.return %r : tensor<2x4x2x3xf32>
}

// A padding value that pads nothing is dropped.
// CHECK-LABEL: func.func @pack_full_tiles
// CHECK-NEXT:    %[[R:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(x0, x1) -> (x0 floordiv 2, x1, x0 mod 2)>} : tensor<4x6xf32> -> tensor<2x6x2xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @pack_full_tiles(%x: tensor<4x6xf32>, %p: f32) -> tensor<2x6x2xf32> {
  %e = tensor.empty() : tensor<2x6x2xf32>
  %r = linalg.pack %x padding_value(%p : f32) inner_dims_pos = [0] inner_tiles = [2] into %e : tensor<4x6xf32> -> tensor<2x6x2xf32>
  func.return %r : tensor<2x6x2xf32>
}

// A padding value that is not a constant: left alone.
// CHECK-LABEL: func.func @pack_runtime_padding
// CHECK:         linalg.pack
func.func @pack_runtime_padding(%x: tensor<5x6xf32>, %p: f32) -> tensor<3x6x2xf32> {
  %e = tensor.empty() : tensor<3x6x2xf32>
  %r = linalg.pack %x padding_value(%p : f32) inner_dims_pos = [0] inner_tiles = [2] into %e : tensor<5x6xf32> -> tensor<3x6x2xf32>
  func.return %r : tensor<3x6x2xf32>
}

// A dynamic tile: left alone.
// CHECK-LABEL: func.func @pack_dynamic_tile
// CHECK:         linalg.pack
func.func @pack_dynamic_tile(%x: tensor<4x6xf32>, %t: index, %e: tensor<?x6x?xf32>) -> tensor<?x6x?xf32> {
  %r = linalg.pack %x inner_dims_pos = [0] inner_tiles = [%t] into %e : tensor<4x6xf32> -> tensor<?x6x?xf32>
  func.return %r : tensor<?x6x?xf32>
}

// CHECK-LABEL: func.func @unpack_whole_tiles
// CHECK-NEXT:    %[[R:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(y0, y1, y2, y3, y4) -> (y0, y1 * 4 + y4, y2, y3)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @unpack_whole_tiles(%x: tensor<1x2x3x3x4xf32>) -> tensor<1x8x3x3xf32> {
  %e = tensor.empty() : tensor<1x8x3x3xf32>
  %r = linalg.unpack %x inner_dims_pos = [1] inner_tiles = [4] into %e : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  func.return %r : tensor<1x8x3x3xf32>
}

// A truncating unpack: whole tiles, then a crop (without a promise).
// CHECK-LABEL: func.func @unpack_truncating
// CHECK-NEXT:    %[[T:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(y0, y1, y2, y3) -> (y1 * 2 + y2, y0 * 3 + y3)>} : tensor<2x4x2x3xf32> -> tensor<8x6xf32>
// CHECK-NEXT:    %[[R:.*]] = layout.crop %[[T]] {start = array<i64: 0, 0>, sizes = array<i64: 7, 5>} : tensor<8x6xf32> -> tensor<7x5xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @unpack_truncating(%x: tensor<2x4x2x3xf32>) -> tensor<7x5xf32> {
  %e = tensor.empty() : tensor<7x5xf32>
  %r = linalg.unpack %x outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [2, 3] into %e : tensor<2x4x2x3xf32> -> tensor<7x5xf32>
  func.return %r : tensor<7x5xf32>
}

// CHECK-LABEL: func.func @pad
// CHECK-NEXT:    %[[R:.*]] = layout.pad %{{.*}} {low = array<i64: 1, 0>, high = array<i64: 2, 1>, pad_value = 4.000000e+00 : f32} : tensor<2x3xf32> -> tensor<5x4xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @pad(%x: tensor<2x3xf32>) -> tensor<5x4xf32> {
  %p = arith.constant 4.0 : f32
  %r = tensor.pad %x low[1, 0] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %p : f32
  } : tensor<2x3xf32> to tensor<5x4xf32>
  func.return %r : tensor<5x4xf32>
}

// nofold pads and pads of a runtime value are left alone.
// CHECK-LABEL: func.func @pads_left_alone
// CHECK-COUNT-2: tensor.pad
func.func @pads_left_alone(%x: tensor<2x3xf32>, %v: f32) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %p = arith.constant 4.0 : f32
  %a = tensor.pad %x nofold low[1, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %p : f32
  } : tensor<2x3xf32> to tensor<3x3xf32>
  %b = tensor.pad %x low[1, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<2x3xf32> to tensor<3x3xf32>
  func.return %a, %b : tensor<3x3xf32>, tensor<3x3xf32>
}

// CHECK-LABEL: func.func @slices
// CHECK-NEXT:    %[[A:.*]] = layout.crop %[[X:.*]] {start = array<i64: 1, 2>, sizes = array<i64: 2, 3>} : tensor<5x6xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[C:.*]] = layout.crop %[[X]] {start = array<i64: 4, 2>, sizes = array<i64: 1, 3>} : tensor<5x6xf32> -> tensor<1x3xf32>
// CHECK-NEXT:    %[[B:.*]] = layout.transform %[[C]] {index_map = #layout.index_map<(x0, x1) -> (x1)>} : tensor<1x3xf32> -> tensor<3xf32>
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %[[X]][1, 0] [2, 3] [2, 2] : tensor<5x6xf32> to tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[S]]
func.func @slices(%x: tensor<5x6xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>) {
  %a = tensor.extract_slice %x[1, 2] [2, 3] [1, 1] : tensor<5x6xf32> to tensor<2x3xf32>
  %b = tensor.extract_slice %x[4, 2] [1, 3] [1, 1] : tensor<5x6xf32> to tensor<3xf32>
  %s = tensor.extract_slice %x[1, 0] [2, 3] [2, 2] : tensor<5x6xf32> to tensor<2x3xf32>
  func.return %a, %b, %s : tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>
}

// The generic fallback of lower-layout-rewrites (as it prints it) is raised back.
// CHECK-LABEL: func.func @lowered_shear
// CHECK-NEXT:    %[[R:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(i, j) -> (i, i + j)>, pad_value = -1.000000e+00 : f32} : tensor<4x5xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @lowered_shear(%x: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%0 : tensor<4x8xf32>) attrs = {physlayout.layout_transform = "(i, j) -> (i, i + j)"} {
  ^bb0(%2: f32):
    %3 = linalg.index 0 : index
    %4 = linalg.index 1 : index
    %5 = arith.subi %4, %3 : index
    %6 = arith.constant 0 : index
    %7 = arith.constant -5 : index
    %8 = arith.addi %5, %7 : index
    %9 = arith.cmpi sge, %8, %6 : index
    %10 = arith.subi %3, %4 : index
    %11 = arith.constant -1 : index
    %12 = arith.addi %10, %11 : index
    %13 = arith.cmpi sge, %12, %6 : index
    %14 = arith.ori %9, %13 : i1
    %15 = arith.select %14, %6, %3 : index
    %16 = arith.select %14, %6, %5 : index
    %17 = tensor.extract %x[%15, %16] : tensor<4x5xf32>
    %18 = arith.constant -1.000000e+00 : f32
    %19 = arith.select %14, %18, %17 : f32
    linalg.yield %19 : f32
  } -> tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

// The same attribute on a generic that computes something else (here: the predicate also
// holds where j - i == 4, so that column gets the pad value) proves nothing: left alone.
// CHECK-LABEL: func.func @tampered_shear
// CHECK:         linalg.generic
func.func @tampered_shear(%x: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%0 : tensor<4x8xf32>) attrs = {physlayout.layout_transform = "(i, j) -> (i, i + j)"} {
  ^bb0(%2: f32):
    %3 = linalg.index 0 : index
    %4 = linalg.index 1 : index
    %5 = arith.subi %4, %3 : index
    %6 = arith.constant 0 : index
    %7 = arith.constant -4 : index
    %8 = arith.addi %5, %7 : index
    %9 = arith.cmpi sge, %8, %6 : index
    %10 = arith.subi %3, %4 : index
    %11 = arith.constant -1 : index
    %12 = arith.addi %10, %11 : index
    %13 = arith.cmpi sge, %12, %6 : index
    %14 = arith.ori %9, %13 : i1
    %15 = arith.select %14, %6, %3 : index
    %16 = arith.select %14, %6, %5 : index
    %17 = tensor.extract %x[%15, %16] : tensor<4x5xf32>
    %18 = arith.constant -1.000000e+00 : f32
    %19 = arith.select %14, %18, %17 : f32
    linalg.yield %19 : f32
  } -> tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}
