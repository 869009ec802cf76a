// physlayout is stricter than upstream here: a pack or unpack that changes the element type
// has no defined meaning, so it is an error (mlir-opt-22 accepts it).
// RUN: xdsl-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @unpack_element_type(%s: tensor<3x6x4xf32>, %d: tensor<10x6xf64>) -> tensor<10x6xf64> {
  %0 = linalg.unpack %s inner_dims_pos = [0] inner_tiles = [4] into %d : tensor<3x6x4xf32> -> tensor<10x6xf64>
  return %0 : tensor<10x6xf64>
}
// CHECK: 'linalg.unpack' op expects the source and the destination to have the same element type, got tensor<3x6x4xf32> and tensor<10x6xf64>

// -----
func.func @pack_element_type(%s: tensor<10x6xf32>, %d: tensor<5x6x2xf16>) -> tensor<5x6x2xf16> {
  %0 = linalg.pack %s inner_dims_pos = [0] inner_tiles = [2] into %d : tensor<10x6xf32> -> tensor<5x6x2xf16>
  return %0 : tensor<5x6x2xf16>
}
// CHECK: 'linalg.pack' op expects the source and the destination to have the same element type, got tensor<10x6xf32> and tensor<5x6x2xf16>
