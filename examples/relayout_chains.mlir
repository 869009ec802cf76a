// Chains of upstream relayout ops (what an upstream pipeline leaves between layout-critical
// ops), one per function. raise-layout-rewrites + fold-layout-rewrites fold a chain into
// one layout rewrite, or into nothing exactly when isl proves the composition the identity;
// lower-layout-rewrites turns what is left back into upstream ops:
//
//   physlayout-opt examples/relayout_chains.mlir -p raise-layout-rewrites,fold-layout-rewrites,lower-layout-rewrites
//
// bench/bench_relayout_chains.py compares this with mlir-opt-22's own folding and runs
// every output against numpy (README "Graph-level interop with upstream MLIR").

// NCHW -> NCHW4c with 6 channels (padded with 0) and back: the identity.
func.func @pack_unpack_padded(%x: tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x2x3x3x4xf32>
  %p = linalg.pack %x padding_value(%zero : f32) inner_dims_pos = [1] inner_tiles = [4] into %e0 : tensor<1x6x3x3xf32> -> tensor<1x2x3x3x4xf32>
  %e1 = tensor.empty() : tensor<1x6x3x3xf32>
  %u = linalg.unpack %p inner_dims_pos = [1] inner_tiles = [4] into %e1 : tensor<1x2x3x3x4xf32> -> tensor<1x6x3x3xf32>
  func.return %u : tensor<1x6x3x3xf32>
}

// OIHW -> OIHW4i4o (outer dims permuted to IOHW) and back, without padding: the identity.
func.func @pack_unpack_permuted(%x: tensor<8x4x3x3xf32>) -> tensor<8x4x3x3xf32> {
  %e0 = tensor.empty() : tensor<1x2x3x3x4x4xf32>
  %p = linalg.pack %x outer_dims_perm = [1, 0, 2, 3] inner_dims_pos = [1, 0] inner_tiles = [4, 4] into %e0 : tensor<8x4x3x3xf32> -> tensor<1x2x3x3x4x4xf32>
  %e1 = tensor.empty() : tensor<8x4x3x3xf32>
  %u = linalg.unpack %p outer_dims_perm = [1, 0, 2, 3] inner_dims_pos = [1, 0] inner_tiles = [4, 4] into %e1 : tensor<1x2x3x3x4x4xf32> -> tensor<8x4x3x3xf32>
  func.return %u : tensor<8x4x3x3xf32>
}

// Unpack then pack with padding: the padded positions of %y need not hold the padding
// value, so this is NOT the identity and must not fold away.
func.func @unpack_pack_padded(%y: tensor<1x2x3x3x4xf32>) -> tensor<1x2x3x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x6x3x3xf32>
  %u = linalg.unpack %y inner_dims_pos = [1] inner_tiles = [4] into %e0 : tensor<1x2x3x3x4xf32> -> tensor<1x6x3x3xf32>
  %e1 = tensor.empty() : tensor<1x2x3x3x4xf32>
  %p = linalg.pack %u padding_value(%zero : f32) inner_dims_pos = [1] inner_tiles = [4] into %e1 : tensor<1x6x3x3xf32> -> tensor<1x2x3x3x4xf32>
  func.return %p : tensor<1x2x3x3x4xf32>
}

// transpose -> expand_shape -> transpose -> collapse_shape: the identity.
func.func @transpose_expand_transpose_collapse(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %e0 = tensor.empty() : tensor<6x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x6xf32>) outs(%e0 : tensor<6x4xf32>) permutation = [1, 0]
  %a = tensor.expand_shape %t [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %e1 = tensor.empty() : tensor<4x2x3xf32>
  %b = linalg.transpose ins(%a : tensor<2x3x4xf32>) outs(%e1 : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  %c = tensor.collapse_shape %b [[0], [1, 2]] : tensor<4x2x3xf32> into tensor<4x6xf32>
  func.return %c : tensor<4x6xf32>
}

// The same chain with the two halves of the 6 swapped: one rewrite, not the identity.
func.func @transpose_expand_transpose_collapse_swapped(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %e0 = tensor.empty() : tensor<6x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x6xf32>) outs(%e0 : tensor<6x4xf32>) permutation = [1, 0]
  %a = tensor.expand_shape %t [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %e1 = tensor.empty() : tensor<4x3x2xf32>
  %b = linalg.transpose ins(%a : tensor<2x3x4xf32>) outs(%e1 : tensor<4x3x2xf32>) permutation = [2, 1, 0]
  %c = tensor.collapse_shape %b [[0], [1, 2]] : tensor<4x3x2xf32> into tensor<4x6xf32>
  func.return %c : tensor<4x6xf32>
}

// A transpose and its inverse: the identity.
func.func @transpose_pair(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %e0 = tensor.empty() : tensor<4x2x3xf32>
  %a = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%e0 : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  %e1 = tensor.empty() : tensor<2x3x4xf32>
  %b = linalg.transpose ins(%a : tensor<4x2x3xf32>) outs(%e1 : tensor<2x3x4xf32>) permutation = [1, 2, 0]
  func.return %b : tensor<2x3x4xf32>
}

// expand_shape then collapse_shape into a different shape: one reshape.
func.func @expand_collapse_refold(%x: tensor<6x4xf32>) -> tensor<2x12xf32> {
  %a = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %b = tensor.collapse_shape %a [[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
  func.return %b : tensor<2x12xf32>
}

// Pad, then take the interior back: the identity.
func.func @pad_slice(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 2] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<3x5xf32> to tensor<6x8xf32>
  %s = tensor.extract_slice %p[1, 2] [3, 5] [1, 1] : tensor<6x8xf32> to tensor<3x5xf32>
  func.return %s : tensor<3x5xf32>
}

// A padded pack whose packed tensor is transposed (tile axis moved in front of the channel
// blocks), transposed back and unpacked: the identity.
func.func @pack_transpose_unpack(%x: tensor<5x6xf32>) -> tensor<5x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x6x4xf32>
  %p = linalg.pack %x padding_value(%zero : f32) inner_dims_pos = [0] inner_tiles = [4] into %e0 : tensor<5x6xf32> -> tensor<2x6x4xf32>
  %e1 = tensor.empty() : tensor<4x2x6xf32>
  %t = linalg.transpose ins(%p : tensor<2x6x4xf32>) outs(%e1 : tensor<4x2x6xf32>) permutation = [2, 0, 1]
  %e2 = tensor.empty() : tensor<2x6x4xf32>
  %b = linalg.transpose ins(%t : tensor<4x2x6xf32>) outs(%e2 : tensor<2x6x4xf32>) permutation = [1, 2, 0]
  %e3 = tensor.empty() : tensor<5x6xf32>
  %u = linalg.unpack %b inner_dims_pos = [0] inner_tiles = [4] into %e3 : tensor<2x6x4xf32> -> tensor<5x6xf32>
  func.return %u : tensor<5x6xf32>
}

// Pack (no padding) then collapse the tile into the channel axis: NCHW -> N(C/4)HW4c ->
// N(C/4)(H W 4c): one rewrite.
func.func @pack_collapse(%x: tensor<1x8x2x2xf32>) -> tensor<1x2x16xf32> {
  %e0 = tensor.empty() : tensor<1x2x2x2x4xf32>
  %p = linalg.pack %x inner_dims_pos = [1] inner_tiles = [4] into %e0 : tensor<1x8x2x2xf32> -> tensor<1x2x2x2x4xf32>
  %c = tensor.collapse_shape %p [[0], [1], [2, 3, 4]] : tensor<1x2x2x2x4xf32> into tensor<1x2x16xf32>
  func.return %c : tensor<1x2x16xf32>
}

// Unpack then pack without padding (every channel is real): the identity.
func.func @unpack_pack_full(%y: tensor<1x2x2x2x4xf32>) -> tensor<1x2x2x2x4xf32> {
  %e0 = tensor.empty() : tensor<1x8x2x2xf32>
  %u = linalg.unpack %y inner_dims_pos = [1] inner_tiles = [4] into %e0 : tensor<1x2x2x2x4xf32> -> tensor<1x8x2x2xf32>
  %e1 = tensor.empty() : tensor<1x2x2x2x4xf32>
  %p = linalg.pack %u inner_dims_pos = [1] inner_tiles = [4] into %e1 : tensor<1x8x2x2xf32> -> tensor<1x2x2x2x4xf32>
  func.return %p : tensor<1x2x2x2x4xf32>
}

// NCHW -> NCHW4c, then the channel blocks moved after H and W: one pack (outer_dims_perm).
func.func @pack_then_transpose(%x: tensor<1x8x2x3xf32>) -> tensor<1x2x3x2x4xf32> {
  %e0 = tensor.empty() : tensor<1x2x2x3x4xf32>
  %p = linalg.pack %x inner_dims_pos = [1] inner_tiles = [4] into %e0 : tensor<1x8x2x3xf32> -> tensor<1x2x2x3x4xf32>
  %e1 = tensor.empty() : tensor<1x2x3x2x4xf32>
  %t = linalg.transpose ins(%p : tensor<1x2x2x3x4xf32>) outs(%e1 : tensor<1x2x3x2x4xf32>) permutation = [0, 2, 3, 1, 4]
  func.return %t : tensor<1x2x3x2x4xf32>
}
