// Round trip of linalg.pack / linalg.unpack (physlayout.dialects.linalg_pack) in custom and
// generic form, with every optional part: padding_value, outer_dims_perm, dynamic tiles,
// discardable attributes.
// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @pack_unpack
// CHECK-SAME:    (%[[S:.*]]: tensor<10x6xf32>, %[[D:.*]]: tensor<3x6x4xf32>, %[[P:.*]]: f32, %[[T:.*]]: index, %[[DD:.*]]: tensor<10x2x?xf32>)
// CHECK-NEXT:    %[[A:.*]] = linalg.pack %[[S]] padding_value(%[[P]] : f32) inner_dims_pos = [0] inner_tiles = [4] into %[[D]] : tensor<10x6xf32> -> tensor<3x6x4xf32>
// CHECK-NEXT:    %{{.*}} = linalg.pack %[[S]] padding_value(%[[P]] : f32) inner_dims_pos = [1] inner_tiles = [%[[T]]] into %[[DD]] {tag} : tensor<10x6xf32> -> tensor<10x2x?xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<6x3x4xf32>
// CHECK-NEXT:    %[[B:.*]] = linalg.pack %[[S]] padding_value(%[[P]] : f32) outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %[[E]] : tensor<10x6xf32> -> tensor<6x3x4xf32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<9x6xf32>
// CHECK-NEXT:    %{{.*}} = linalg.unpack %[[B]] outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %[[E2]] : tensor<6x3x4xf32> -> tensor<9x6xf32>
// CHECK-NEXT:    %{{.*}} = tensor.empty() : tensor<10x6xf32>
// CHECK-NEXT:    %{{.*}} = linalg.pack %[[S]] inner_dims_pos = [] inner_tiles = [] into %{{.*}} : tensor<10x6xf32> -> tensor<10x6xf32>
// CHECK-NEXT:    %{{.*}} = tensor.empty() : tensor<2x2x3x5xf32>
// CHECK-NEXT:    %{{.*}} = linalg.pack %[[S]] inner_dims_pos = [1, 0] inner_tiles = [3, 5] into %{{.*}} : tensor<10x6xf32> -> tensor<2x2x3x5xf32>
// CHECK-NEXT:    func.return %[[A]]

// GENERIC: "linalg.pack"(%{{.*}}, %{{.*}}, %{{.*}}) <{inner_dims_pos = array<i64: 0>, static_inner_tiles = array<i64: 4>, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<10x6xf32>, tensor<3x6x4xf32>, f32) -> tensor<3x6x4xf32>
// GENERIC: "linalg.pack"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{inner_dims_pos = array<i64: 1>, static_inner_tiles = array<i64: -9223372036854775808>, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> {tag} : (tensor<10x6xf32>, tensor<10x2x?xf32>, f32, index) -> tensor<10x2x?xf32>
// GENERIC: "linalg.pack"(%{{.*}}, %{{.*}}, %{{.*}}) <{inner_dims_pos = array<i64: 0>, static_inner_tiles = array<i64: 4>, outer_dims_perm = array<i64: 1, 0>, operandSegmentSizes = array<i32: 1, 1, 1, 0>}>
// GENERIC: "linalg.unpack"(%{{.*}}, %{{.*}}) <{inner_dims_pos = array<i64: 0>, static_inner_tiles = array<i64: 4>, outer_dims_perm = array<i64: 1, 0>}> : (tensor<6x3x4xf32>, tensor<9x6xf32>) -> tensor<9x6xf32>
func.func @pack_unpack(%s: tensor<10x6xf32>, %d: tensor<3x6x4xf32>, %p: f32, %t: index, %dd: tensor<10x2x?xf32>) -> tensor<3x6x4xf32> {
  %0 = linalg.pack %s padding_value(%p : f32) inner_dims_pos = [0] inner_tiles = [4] into %d : tensor<10x6xf32> -> tensor<3x6x4xf32>
  %1 = linalg.pack %s padding_value(%p : f32) inner_dims_pos = [1] inner_tiles = [%t] into %dd {tag} : tensor<10x6xf32> -> tensor<10x2x?xf32>
  %e = tensor.empty() : tensor<6x3x4xf32>
  %2 = linalg.pack %s padding_value(%p : f32) outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %e : tensor<10x6xf32> -> tensor<6x3x4xf32>
  %e2 = tensor.empty() : tensor<9x6xf32>
  %3 = linalg.unpack %2 outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %e2 : tensor<6x3x4xf32> -> tensor<9x6xf32>
  %e3 = tensor.empty() : tensor<10x6xf32>
  %4 = linalg.pack %s inner_dims_pos = [] inner_tiles = [] into %e3 : tensor<10x6xf32> -> tensor<10x6xf32>
  %e4 = tensor.empty() : tensor<2x2x3x5xf32>
  %5 = linalg.pack %s inner_dims_pos = [1, 0] inner_tiles = [3, 5] into %e4 : tensor<10x6xf32> -> tensor<2x2x3x5xf32>
  return %0 : tensor<3x6x4xf32>
}
