// The Adreno texture RFC's example: conv -> relu -> conv on an NCHW graph, NCHW in and out
// (x: 2x64x56x56, w1: 32x64x3x3, w2: 32x32x3x3). `physlayout-adreno` converts the convs to
// NCHW4c / OIHW4o, cancels the rewrites between them, puts every activation in a texture
// (global.texture) and the weights in global.texture-weight, and legalizes the graph into
// OpenCL kernels and a host function:
//
//   physlayout run examples/rfc_conv_relu_conv.mlir --check
//   xdsl-opt examples/rfc_conv_relu_conv.mlir -p physlayout-adreno -t opencl

func.func @main(%x: tensor<2x64x56x56xf32>, %w1: tensor<32x64x3x3xf32>, %w2: tensor<32x32x3x3xf32>) -> tensor<2x32x52x52xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x32x54x54xf32>
  %init1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x32x54x54xf32>) -> tensor<2x32x54x54xf32>
  %conv1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<2x64x56x56xf32>, tensor<32x64x3x3xf32>) outs(%init1 : tensor<2x32x54x54xf32>) -> tensor<2x32x54x54xf32>
  %e2 = tensor.empty() : tensor<2x32x54x54xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv1 : tensor<2x32x54x54xf32>) outs(%e2 : tensor<2x32x54x54xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x32x54x54xf32>
  %e3 = tensor.empty() : tensor<2x32x52x52xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x32x52x52xf32>) -> tensor<2x32x52x52xf32>
  %conv2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%relu, %w2 : tensor<2x32x54x54xf32>, tensor<32x32x3x3xf32>) outs(%init2 : tensor<2x32x52x52xf32>) -> tensor<2x32x52x52xf32>
  func.return %conv2 : tensor<2x32x52x52xf32>
}
