// linalg.pack / linalg.unpack as physlayout prints them (custom and generic) parse and verify
// in upstream mlir-opt, and what mlir-opt prints (custom and generic) parses in physlayout.
// REQUIRES: mlir
// RUN: xdsl-opt %s | %mlir-opt | filecheck %s --check-prefix=MLIR
// RUN: xdsl-opt %s --print-op-generic | %mlir-opt | filecheck %s --check-prefix=MLIR
// RUN: %mlir-opt %s | xdsl-opt | filecheck %s
// RUN: %mlir-opt %s --mlir-print-op-generic | xdsl-opt | filecheck %s

// MLIR-LABEL: func.func @relayout
// MLIR:         linalg.pack %{{.*}} padding_value(%{{.*}} : f32) outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %{{.*}} : tensor<10x6xf32> -> tensor<6x3x4xf32>
// MLIR:         linalg.pack %{{.*}} inner_dims_pos = [1, 0] inner_tiles = [%{{.*}}, 2] into %{{.*}} : tensor<10x6xf32> -> tensor<5x?x?x2xf32>
// MLIR:         linalg.unpack %{{.*}} outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %{{.*}} : tensor<6x3x4xf32> -> tensor<9x6xf32>

// CHECK-LABEL: func.func @relayout
// CHECK:         linalg.pack %{{.*}} padding_value(%{{.*}} : f32) outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %{{.*}} : tensor<10x6xf32> -> tensor<6x3x4xf32>
// CHECK:         linalg.pack %{{.*}} inner_dims_pos = [1, 0] inner_tiles = [%{{.*}}, 2] into %{{.*}} : tensor<10x6xf32> -> tensor<5x?x?x2xf32>
// CHECK:         linalg.unpack %{{.*}} outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %{{.*}} : tensor<6x3x4xf32> -> tensor<9x6xf32>
func.func @relayout(%s: tensor<10x6xf32>, %p: f32, %t: index, %d: tensor<5x?x?x2xf32>) -> tensor<9x6xf32> {
  %e = tensor.empty() : tensor<6x3x4xf32>
  %0 = linalg.pack %s padding_value(%p : f32) outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %e : tensor<10x6xf32> -> tensor<6x3x4xf32>
  %1 = linalg.pack %s inner_dims_pos = [1, 0] inner_tiles = [%t, 2] into %d : tensor<10x6xf32> -> tensor<5x?x?x2xf32>
  %e2 = tensor.empty() : tensor<9x6xf32>
  %2 = linalg.unpack %0 outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %e2 : tensor<6x3x4xf32> -> tensor<9x6xf32>
  return %2 : tensor<9x6xf32>
}
