// Round trip of the graph-level layout ops, in custom and generic form.
// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @ops
// CHECK-SAME:    (%[[X:.*]]: tensor<10xf32>, %[[Y:.*]]: tensor<1x8x4x4xf32>, %[[Z:.*]]: tensor<4x4xi32>)
// CHECK-NEXT:    %[[A:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<10xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %[[B:.*]] = layout.transform %[[Y]] {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x8x4x4xf32> -> tensor<1x2x4x4x4xf32>
// CHECK-NEXT:    %[[C:.*]] = layout.pad %[[Z]] {low = array<i64: 1, 0>, high = array<i64: 0, 2>, pad_value = -1 : i32} : tensor<4x4xi32> -> tensor<5x6xi32>
// CHECK-NEXT:    %[[D:.*]] = layout.crop %[[C]] {start = array<i64: 1, 0>, sizes = array<i64: 4, 4>, cropped_value = -1 : i32} : tensor<5x6xi32> -> tensor<4x4xi32>
// CHECK-NEXT:    %[[E:.*]] = layout.crop %[[X]] {start = array<i64: 2>, sizes = array<i64: 8>, cropped_value = "undef"} : tensor<10xf32> -> tensor<8xf32>
// CHECK-NEXT:    %[[F:.*]] = layout.crop %[[X]] {start = array<i64: 0>, sizes = array<i64: 1>} : tensor<10xf32> -> tensor<1xf32>
// CHECK-NEXT:    func.return
// GENERIC: "layout.transform"(%{{.*}}) <{index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.000000e+00 : f32}> : (tensor<10xf32>) -> tensor<3x4xf32>
// GENERIC: "layout.pad"(%{{.*}}) <{low = array<i64: 1, 0>, high = array<i64: 0, 2>, pad_value = -1 : i32}> : (tensor<4x4xi32>) -> tensor<5x6xi32>
// GENERIC: "layout.crop"(%{{.*}}) <{start = array<i64: 1, 0>, sizes = array<i64: 4, 4>, cropped_value = -1 : i32}> : (tensor<5x6xi32>) -> tensor<4x4xi32>
func.func @ops(%x: tensor<10xf32>, %y: tensor<1x8x4x4xf32>, %z: tensor<4x4xi32>) {
  %a = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<10xf32> -> tensor<3x4xf32>
  %b = layout.transform %y {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x8x4x4xf32> -> tensor<1x2x4x4x4xf32>
  %c = layout.pad %z {low = array<i64: 1, 0>, high = array<i64: 0, 2>, pad_value = -1 : i32} : tensor<4x4xi32> -> tensor<5x6xi32>
  %d = layout.crop %c {start = array<i64: 1, 0>, sizes = array<i64: 4, 4>, cropped_value = -1 : i32} : tensor<5x6xi32> -> tensor<4x4xi32>
  %e = layout.crop %x {start = array<i64: 2>, sizes = array<i64: 8>, cropped_value = "undef"} : tensor<10xf32> -> tensor<8xf32>
  %f = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 1>} : tensor<10xf32> -> tensor<1xf32>
  func.return
}

// A scalar (rank-0) tensor and a transform that pads nothing but carries a pad value.
// CHECK-LABEL: func.func @edge_cases
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<() -> ()>} : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(i, j) -> (j, i)>, pad_value = 1.000000e+00 : f16} : tensor<2x3xf16> -> tensor<3x2xf16>
func.func @edge_cases(%s: tensor<f32>, %h: tensor<2x3xf16>) {
  %a = layout.transform %s {index_map = #layout.index_map<() -> ()>} : tensor<f32> -> tensor<f32>
  %b = layout.transform %h {index_map = #layout.index_map<(i, j) -> (j, i)>, pad_value = 1.0 : f16} : tensor<2x3xf16> -> tensor<3x2xf16>
  func.return
}

// Tensors smaller than one tile get whole tiles (docs/semantics.md "Shapes and padding"), the same
// extents as a buffer with the same pending transform.
// CHECK-LABEL: func.func @smaller_than_one_tile
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<3xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(i) -> (i floordiv 16, i mod 16)>, pad_value = 0.000000e+00 : f32} : tensor<14xf32> -> tensor<1x16xf32>
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(i) -> (i mod 16)>, pad_value = 0.000000e+00 : f32} : tensor<14xf32> -> tensor<16xf32>
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<1x4x4x3xf32> -> tensor<1x1x4x4x4xf32>
func.func @smaller_than_one_tile(%a: tensor<3xf32>, %b: tensor<14xf32>, %t: tensor<1x4x4x3xf32>) {
  %0 = layout.transform %a {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<3xf32> -> tensor<1x4xf32>
  %1 = layout.transform %b {index_map = #layout.index_map<(i) -> (i floordiv 16, i mod 16)>, pad_value = 0.0 : f32} : tensor<14xf32> -> tensor<1x16xf32>
  %2 = layout.transform %b {index_map = #layout.index_map<(i) -> (i mod 16)>, pad_value = 0.0 : f32} : tensor<14xf32> -> tensor<16xf32>
  %3 = layout.transform %t {index_map = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x4x4x3xf32> -> tensor<1x1x4x4x4xf32>
  func.return
}
