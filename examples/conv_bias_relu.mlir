// conv -> per-channel bias -> relu, as torch-mlir writes them (a named convolution with a
// `linalg.fill` init, elementwise generics with a broadcast operand (n, c, h, w) -> (c, 0, 0)).
// fuse-elementwise groups the three (and the fill) into one `layout.fused`; legalize-layout
// makes it ONE kernel: the bias and the relu run on the conv's final accumulator, before
// its one store (docs/fusion.md):
//
//   physlayout-opt examples/conv_bias_relu.mlir -p fuse-elementwise,legalize-layout
//   physlayout run examples/conv_bias_relu.mlir --check

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch4 = affine_map<(n, c, h, w) -> (c, 0, 0)>
#par4 = ["parallel", "parallel", "parallel", "parallel"]

func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %a = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%c, %b : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%a : tensor<1x3x2x2xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}
