// Upstream relayout ops on static tensors, one per function: the numpy graph evaluator's
// semantics are checked against mlir-opt + mlir-runner on these
// (test/python/test_layout_rewrites_interop.py).
func.func @pack_padded(%x: tensor<5x3xf32>) -> tensor<3x3x2xf32> {
  %p = arith.constant -1.0 : f32
  %e = tensor.empty() : tensor<3x3x2xf32>
  %r = linalg.pack %x padding_value(%p : f32) inner_dims_pos = [0] inner_tiles = [2] into %e : tensor<5x3xf32> -> tensor<3x3x2xf32>
  func.return %r : tensor<3x3x2xf32>
}
func.func @pack_outer_perm(%x: tensor<7x6xf32>) -> tensor<2x4x2x3xf32> {
  %p = arith.constant 9.0 : f32
  %e = tensor.empty() : tensor<2x4x2x3xf32>
  %r = linalg.pack %x padding_value(%p : f32) outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [2, 3] into %e : tensor<7x6xf32> -> tensor<2x4x2x3xf32>
  func.return %r : tensor<2x4x2x3xf32>
}
func.func @pack_inner_order(%x: tensor<4x6xf32>) -> tensor<2x2x3x2xf32> {
  %e = tensor.empty() : tensor<2x2x3x2xf32>
  %r = linalg.pack %x inner_dims_pos = [1, 0] inner_tiles = [3, 2] into %e : tensor<4x6xf32> -> tensor<2x2x3x2xf32>
  func.return %r : tensor<2x2x3x2xf32>
}
func.func @unpack_truncating(%x: tensor<2x4x2x3xf32>) -> tensor<7x5xf32> {
  %e = tensor.empty() : tensor<7x5xf32>
  %r = linalg.unpack %x outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [2, 3] into %e : tensor<2x4x2x3xf32> -> tensor<7x5xf32>
  func.return %r : tensor<7x5xf32>
}
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %e = tensor.empty() : tensor<4x2x3xf32>
  %r = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  func.return %r : tensor<4x2x3xf32>
}
func.func @reshapes(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %r = tensor.expand_shape %c [[0, 1], [2]] output_shape [3, 2, 4] : tensor<6x4xf32> into tensor<3x2x4xf32>
  func.return %r : tensor<3x2x4xf32>
}
func.func @pad(%x: tensor<2x3xf32>) -> tensor<5x4xf32> {
  %p = arith.constant 4.0 : f32
  %r = tensor.pad %x low[1, 0] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %p : f32
  } : tensor<2x3xf32> to tensor<5x4xf32>
  func.return %r : tensor<5x4xf32>
}
func.func @slices(%x: tensor<5x6xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %a = tensor.extract_slice %x[1, 0] [2, 3] [2, 2] : tensor<5x6xf32> to tensor<2x3xf32>
  %b = tensor.extract_slice %x[4, 2] [1, 3] [1, 1] : tensor<5x6xf32> to tensor<3xf32>
  func.return %a, %b : tensor<2x3xf32>, tensor<3xf32>
}
