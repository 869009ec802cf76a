// Gathers from a texture: a convolution (whose result convert-layout puts in NCHW4c texture
// memory) read by torch-mlir's nearest-upsample gather (odd extents 5x7 -> 10x14) and by a
// bilinear corner gather twice: with i64 index tensors that are parameters (nothing is
// known of them: negative indices wrap, out-of-range ones are clamped at the border) and
// with index tensors computed as torch-mlir does, shifted to include negative indices
// (proven inside after the wrap: read straight from the texture). Used with C = 3 and
// C = 5 channels (test_gathers.py substitutes CH).
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map_n = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, 0)>
#map_c = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#map_h = affine_map<(d0, d1, d2, d3) -> (d2, 0)>
#map_w = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @gathers(%x: tensor<1xCHx7x9xf32>, %weight: tensor<CHxCHx3x3xf32>, %expanded_6: tensor<1x1x1x1xi64>, %expanded_5: tensor<CHx1x1xi64>, %20: tensor<6x1xi64>, %23: tensor<8xi64>) -> (tensor<1xCHx10x14xf32>, tensor<1xCHx6x8xf32>, tensor<1xCHx6x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_h = arith.constant 4.000000e+00 : f32
  %cst_w = arith.constant 6.000000e+00 : f32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %cC_i64 = arith.constant CH : i64
  %c5_i64 = arith.constant 5 : i64
  %c7_i64 = arith.constant 7 : i64
  %e = tensor.empty() : tensor<1xCHx5x7xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1xCHx5x7xf32>) -> tensor<1xCHx5x7xf32>
  %61 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %weight : tensor<1xCHx7x9xf32>, tensor<CHxCHx3x3xf32>) outs(%f : tensor<1xCHx5x7xf32>) -> tensor<1xCHx5x7xf32>
  %36 = tensor.empty() : tensor<1xCHx10x14xf32>
  %63 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%36 : tensor<1xCHx10x14xf32>) {
  ^bb0(%out: f32):
    %78 = linalg.index 1 : index
    %79 = linalg.index 2 : index
    %80 = linalg.index 3 : index
    %81 = arith.index_cast %79 : index to i64
    %82 = arith.sitofp %81 : i64 to f32
    %83 = arith.divf %82, %cst_3 : f32
    %84 = math.floor %83 : f32
    %85 = arith.maximumf %84, %cst : f32
    %86 = arith.minimumf %85, %cst_h : f32
    %87 = arith.fptosi %86 : f32 to i64
    %88 = arith.index_cast %87 : i64 to index
    %89 = arith.index_cast %80 : index to i64
    %90 = arith.sitofp %89 : i64 to f32
    %91 = arith.divf %90, %cst_3 : f32
    %92 = math.floor %91 : f32
    %93 = arith.maximumf %92, %cst : f32
    %94 = arith.minimumf %93, %cst_w : f32
    %95 = arith.fptosi %94 : f32 to i64
    %96 = arith.index_cast %95 : i64 to index
    %extracted = tensor.extract %61[%c0, %78, %88, %96] : tensor<1xCHx5x7xf32>
    linalg.yield %extracted : f32
  } -> tensor<1xCHx10x14xf32>
  %30 = tensor.empty() : tensor<1xCHx6x8xf32>
  %31 = linalg.generic {indexing_maps = [#map_n, #map_c, #map_h, #map_w, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6, %expanded_5, %20, %23 : tensor<1x1x1x1xi64>, tensor<CHx1x1xi64>, tensor<6x1xi64>, tensor<8xi64>) outs(%30 : tensor<1xCHx6x8xf32>) {
  ^bb0(%in: i64, %in_9: i64, %in_10: i64, %in_11: i64, %out: f32):
    %52 = arith.cmpi slt, %in, %c0_i64 : i64
    %53 = arith.addi %in, %c1_i64 : i64
    %54 = arith.select %52, %53, %in : i64
    %55 = arith.index_cast %54 : i64 to index
    %56 = arith.cmpi slt, %in_9, %c0_i64 : i64
    %57 = arith.addi %in_9, %cC_i64 : i64
    %58 = arith.select %56, %57, %in_9 : i64
    %59 = arith.index_cast %58 : i64 to index
    %60 = arith.cmpi slt, %in_10, %c0_i64 : i64
    %h_wrap = arith.addi %in_10, %c5_i64 : i64
    %62 = arith.select %60, %h_wrap, %in_10 : i64
    %h_index = arith.index_cast %62 : i64 to index
    %64 = arith.cmpi slt, %in_11, %c0_i64 : i64
    %65 = arith.addi %in_11, %c7_i64 : i64
    %66 = arith.select %64, %65, %in_11 : i64
    %67 = arith.index_cast %66 : i64 to index
    %extracted = tensor.extract %61[%55, %59, %h_index, %67] : tensor<1xCHx5x7xf32>
    linalg.yield %extracted : f32
  } -> tensor<1xCHx6x8xf32>
  %c2_i64 = arith.constant 2 : i64
  %h0 = tensor.empty() : tensor<6xi64>
  %hi = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%h0 : tensor<6xi64>) {
  ^bb0(%out: i64):
    %52 = linalg.index 0 : index
    %53 = arith.index_cast %52 : index to i64
    %54 = arith.subi %53, %c2_i64 : i64
    linalg.yield %54 : i64
  } -> tensor<6xi64>
  %hx = tensor.expand_shape %hi [[0, 1]] output_shape [6, 1] : tensor<6xi64> into tensor<6x1xi64>
  %w0 = tensor.empty() : tensor<8xi64>
  %wi = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%w0 : tensor<8xi64>) {
  ^bb0(%out: i64):
    %52 = linalg.index 0 : index
    %53 = arith.index_cast %52 : index to i64
    %54 = arith.subi %53, %c1_i64 : i64
    linalg.yield %54 : i64
  } -> tensor<8xi64>
  %k0 = tensor.empty() : tensor<CHxi64>
  %ki = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%k0 : tensor<CHxi64>) {
  ^bb0(%out: i64):
    %52 = linalg.index 0 : index
    %53 = arith.index_cast %52 : index to i64
    linalg.yield %53 : i64
  } -> tensor<CHxi64>
  %kx = tensor.expand_shape %ki [[0, 1, 2]] output_shape [CH, 1, 1] : tensor<CHxi64> into tensor<CHx1x1xi64>
  %n0 = tensor.empty() : tensor<1xi64>
  %ni = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%n0 : tensor<1xi64>) {
  ^bb0(%out: i64):
    %52 = linalg.index 0 : index
    %53 = arith.index_cast %52 : index to i64
    linalg.yield %53 : i64
  } -> tensor<1xi64>
  %nx = tensor.expand_shape %ni [[0, 1, 2, 3]] output_shape [1, 1, 1, 1] : tensor<1xi64> into tensor<1x1x1x1xi64>
  %32 = linalg.generic {indexing_maps = [#map_n, #map_c, #map_h, #map_w, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%nx, %kx, %hx, %wi : tensor<1x1x1x1xi64>, tensor<CHx1x1xi64>, tensor<6x1xi64>, tensor<8xi64>) outs(%30 : tensor<1xCHx6x8xf32>) {
  ^bb0(%in: i64, %in_9: i64, %in_10: i64, %in_11: i64, %out: f32):
    %52 = arith.cmpi slt, %in, %c0_i64 : i64
    %53 = arith.addi %in, %c1_i64 : i64
    %54 = arith.select %52, %53, %in : i64
    %55 = arith.index_cast %54 : i64 to index
    %56 = arith.cmpi slt, %in_9, %c0_i64 : i64
    %57 = arith.addi %in_9, %cC_i64 : i64
    %58 = arith.select %56, %57, %in_9 : i64
    %59 = arith.index_cast %58 : i64 to index
    %60 = arith.cmpi slt, %in_10, %c0_i64 : i64
    %h_wrap = arith.addi %in_10, %c5_i64 : i64
    %62 = arith.select %60, %h_wrap, %in_10 : i64
    %h_index = arith.index_cast %62 : i64 to index
    %64 = arith.cmpi slt, %in_11, %c0_i64 : i64
    %65 = arith.addi %in_11, %c7_i64 : i64
    %66 = arith.select %64, %65, %in_11 : i64
    %67 = arith.index_cast %66 : i64 to index
    %extracted = tensor.extract %61[%55, %59, %h_index, %67] : tensor<1xCHx5x7xf32>
    linalg.yield %extracted : f32
  } -> tensor<1xCHx6x8xf32>
  return %63, %31, %32 : tensor<1xCHx10x14xf32>, tensor<1xCHx6x8xf32>, tensor<1xCHx6x8xf32>
}
