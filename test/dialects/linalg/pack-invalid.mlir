// One case per verifier error of linalg.pack / linalg.unpack, with physlayout's exact
// message; upstream mlir-opt rejects the same cases (its messages are the expected-error
// annotations, matched by mlir-opt --verify-diagnostics).
// RUN: xdsl-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s
// RUN: %if mlir %{ %mlir-opt %s -split-input-file -verify-diagnostics %}

func.func @zero_tile(%s: tensor<10x6xf32>, %d: tensor<5x6x0xf32>) -> tensor<5x6x0xf32> {
  // expected-error @+1 {{invalid zero tile factor}}
  %0 = linalg.pack %s inner_dims_pos = [0] inner_tiles = [0] into %d : tensor<10x6xf32> -> tensor<5x6x0xf32>
  return %0 : tensor<5x6x0xf32>
}
// CHECK: invalid zero tile factor

// -----
func.func @repeated_inner_dim(%s: tensor<10x6xf32>, %d: tensor<3x6x4x2xf32>, %p: f32) -> tensor<3x6x4x2xf32> {
  // expected-error @+1 {{invalid inner_dims_pos vector}}
  %0 = linalg.pack %s padding_value(%p : f32) inner_dims_pos = [0, 0] inner_tiles = [4, 2] into %d : tensor<10x6xf32> -> tensor<3x6x4x2xf32>
  return %0 : tensor<3x6x4x2xf32>
}
// CHECK: invalid inner_dims_pos vector

// -----
func.func @inner_dim_out_of_range(%s: tensor<10x6xf32>, %d: tensor<10x6x2xf32>) -> tensor<10x6x2xf32> {
  // expected-error @+1 {{invalid inner_dims_pos vector}}
  %0 = linalg.pack %s inner_dims_pos = [2] inner_tiles = [2] into %d : tensor<10x6xf32> -> tensor<10x6x2xf32>
  return %0 : tensor<10x6x2xf32>
}
// CHECK: invalid inner_dims_pos vector

// -----
func.func @short_outer_perm(%s: tensor<10x6xf32>, %d: tensor<5x6x2xf32>) -> tensor<5x6x2xf32> {
  // expected-error @+1 {{outer_dims_perm must be a permutation or empty}}
  %0 = linalg.pack %s outer_dims_perm = [1] inner_dims_pos = [0] inner_tiles = [2] into %d : tensor<10x6xf32> -> tensor<5x6x2xf32>
  return %0 : tensor<5x6x2xf32>
}
// CHECK: outer_dims_perm must be a permutation or empty

// -----
func.func @not_a_permutation(%s: tensor<10x6xf32>, %d: tensor<6x5x2xf32>) -> tensor<6x5x2xf32> {
  // expected-error @+1 {{invalid outer_dims_perm vector}}
  %0 = linalg.pack %s outer_dims_perm = [1, 1] inner_dims_pos = [0] inner_tiles = [2] into %d : tensor<10x6xf32> -> tensor<6x5x2xf32>
  return %0 : tensor<6x5x2xf32>
}
// CHECK: invalid outer_dims_perm vector

// -----
func.func @tile_count(%s: tensor<10x6xf32>, %d: tensor<5x3x2xf32>) -> tensor<5x3x2xf32> {
  // expected-error @+1 {{tiling factors must equal the number of dimensions to tile}}
  %0 = linalg.pack %s inner_dims_pos = [0, 1] inner_tiles = [2] into %d : tensor<10x6xf32> -> tensor<5x3x2xf32>
  return %0 : tensor<5x3x2xf32>
}
// CHECK: tiling factors must equal the number of dimensions to tile

// -----
func.func @packed_rank(%s: tensor<10x6xf32>, %d: tensor<5x6xf32>) -> tensor<5x6xf32> {
  // expected-error @+1 {{packed rank != (unpacked rank + num tiling factors), got 2 != 3}}
  %0 = linalg.pack %s inner_dims_pos = [0] inner_tiles = [2] into %d : tensor<10x6xf32> -> tensor<5x6xf32>
  return %0 : tensor<5x6xf32>
}
// CHECK: packed rank != (unpacked rank + num tiling factors), got 2 != 3

// -----
func.func @tile_extent(%s: tensor<10x6xf32>, %d: tensor<5x2x3x2xf32>) -> tensor<5x2x3x2xf32> {
  // expected-error @+1 {{mismatch in inner tile sizes specified and shaped of tiled dimension in the packed type}}
  %0 = linalg.pack %s inner_dims_pos = [0, 1] inner_tiles = [2, 3] into %d : tensor<10x6xf32> -> tensor<5x2x3x2xf32>
  return %0 : tensor<5x2x3x2xf32>
}
// CHECK: mismatch in inner tile sizes specified and shaped of tiled dimension in the packed type

// -----
func.func @negative_tile(%s: tensor<10x6xf32>, %d: tensor<5x6x2xf32>) -> tensor<5x6x2xf32> {
  // expected-error @+1 {{mismatch in inner tile sizes specified and shaped of tiled dimension in the packed type}}
  %0 = linalg.pack %s inner_dims_pos = [0] inner_tiles = [-2] into %d : tensor<10x6xf32> -> tensor<5x6x2xf32>
  return %0 : tensor<5x6x2xf32>
}
// CHECK: mismatch in inner tile sizes specified and shaped of tiled dimension in the packed type

// -----
func.func @outer_too_large(%s: tensor<10x6xf32>, %d: tensor<4x6x4xf32>, %p: f32) -> tensor<4x6x4xf32> {
  // expected-error @+1 {{expected 'tensor<3x6x4xf32>' for the packed domain value, got 'tensor<4x6x4xf32>'}}
  %0 = linalg.pack %s padding_value(%p : f32) inner_dims_pos = [0] inner_tiles = [4] into %d : tensor<10x6xf32> -> tensor<4x6x4xf32>
  return %0 : tensor<4x6x4xf32>
}
// CHECK: expected 'tensor<3x6x4xf32>' for the packed domain value, got 'tensor<4x6x4xf32>'

// -----
func.func @outer_permuted(%s: tensor<10x6xf32>, %d: tensor<3x6x4xf32>, %p: f32) -> tensor<3x6x4xf32> {
  // expected-error @+1 {{expected 'tensor<6x3x4xf32>' for the packed domain value, got 'tensor<3x6x4xf32>'}}
  %0 = linalg.pack %s padding_value(%p : f32) outer_dims_perm = [1, 0] inner_dims_pos = [0] inner_tiles = [4] into %d : tensor<10x6xf32> -> tensor<3x6x4xf32>
  return %0 : tensor<3x6x4xf32>
}
// CHECK: expected 'tensor<6x3x4xf32>' for the packed domain value, got 'tensor<3x6x4xf32>'

// -----
func.func @partial_tile_without_padding(%s: tensor<10x6xf32>, %d: tensor<3x6x4xf32>) -> tensor<3x6x4xf32> {
  // expected-error @+1 {{'linalg.pack' op invalid tile factor or output size provided. Only full tiles are supported when padding_value is not set}}
  %0 = linalg.pack %s inner_dims_pos = [0] inner_tiles = [4] into %d : tensor<10x6xf32> -> tensor<3x6x4xf32>
  return %0 : tensor<3x6x4xf32>
}
// CHECK: 'linalg.pack' op invalid tile factor or output size provided. Only full tiles are supported when padding_value is not set

// -----
func.func @dynamic_tile_cannot_divide(%s: tensor<10x6xf32>, %d: tensor<5x4x?x2xf32>, %t: index) -> tensor<5x4x?x2xf32> {
  // expected-error @+1 {{'linalg.pack' op invalid tile factor or output size provided. Only full tiles are supported when padding_value is not set}}
  %0 = linalg.pack %s inner_dims_pos = [1, 0] inner_tiles = [%t, 2] into %d : tensor<10x6xf32> -> tensor<5x4x?x2xf32>
  return %0 : tensor<5x4x?x2xf32>
}
// CHECK: 'linalg.pack' op invalid tile factor or output size provided. Only full tiles are supported when padding_value is not set

// -----
func.func @padding_type(%s: tensor<10x6xf32>, %d: tensor<5x6x2xf32>, %p: f64) -> tensor<5x6x2xf32> {
  // expected-error @+1 {{'linalg.pack' op expected padding_value has 'f32' but got: 'f64'}}
  %0 = linalg.pack %s padding_value(%p : f64) inner_dims_pos = [0] inner_tiles = [2] into %d : tensor<10x6xf32> -> tensor<5x6x2xf32>
  return %0 : tensor<5x6x2xf32>
}
// CHECK: 'linalg.pack' op expected padding_value has 'f32' but got: 'f64'

// -----
func.func @result_is_not_dest(%s: tensor<10x6xf32>, %d: tensor<5x6x2xf32>) -> tensor<5x6x3xf32> {
  // expected-error @+1 {{'linalg.pack' op failed to verify that result type matches type of dest}}
  %0 = "linalg.pack"(%s, %d) <{inner_dims_pos = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0, 0>, static_inner_tiles = array<i64: 2>}> : (tensor<10x6xf32>, tensor<5x6x2xf32>) -> tensor<5x6x3xf32>
  return %0 : tensor<5x6x3xf32>
}
// CHECK: 'linalg.pack' op failed to verify that result type matches type of dest

// -----
func.func @unpack_dest_too_small(%s: tensor<3x6x4xf32>, %d: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{expected 'tensor<2x6x4xf32>' for the packed domain value, got 'tensor<3x6x4xf32>'}}
  %0 = linalg.unpack %s inner_dims_pos = [0] inner_tiles = [4] into %d : tensor<3x6x4xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}
// CHECK: expected 'tensor<2x6x4xf32>' for the packed domain value, got 'tensor<3x6x4xf32>'

// -----
func.func @unpack_dest_too_large(%s: tensor<3x6x4xf32>, %d: tensor<13x6xf32>) -> tensor<13x6xf32> {
  // expected-error @+1 {{expected 'tensor<4x6x4xf32>' for the packed domain value, got 'tensor<3x6x4xf32>'}}
  %0 = linalg.unpack %s inner_dims_pos = [0] inner_tiles = [4] into %d : tensor<3x6x4xf32> -> tensor<13x6xf32>
  return %0 : tensor<13x6xf32>
}
// CHECK: expected 'tensor<4x6x4xf32>' for the packed domain value, got 'tensor<3x6x4xf32>'
