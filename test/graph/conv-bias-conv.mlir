// The seed's running example (examples/graph_conv_bias_conv.mlir): after flowing and folding
// only the layout rewrites on the graph boundary remain (inputs, filters, output), the add
// runs in NCHW4c and the bias is a constant in NCHW4c.
// test/python/test_graph_numeric.py runs the example before and after.
// RUN: xdsl-opt %S/../../examples/graph_conv_bias_conv.mlir -p flow-layout-rewrites,fold-layout-rewrites | filecheck %s

// CHECK-LABEL: func.func @conv_bias_conv
// CHECK-SAME:    (%[[X:.*]]: tensor<1x8x6x6xf32>, %[[F1:.*]]: tensor<8x8x3x3xf32>, %[[F2:.*]]: tensor<8x8x3x3xf32>)
// CHECK-NEXT:    %[[XT:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>}
// CHECK-NEXT:    %[[F1T:.*]] = layout.transform %[[F1]]
// CHECK-NEXT:    arith.constant dense<0.000000e+00>
// CHECK-NEXT:    %[[C1:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[XT]], %[[F1T]] :
// CHECK:         attrs = {layout.frozen}
// CHECK:         %[[BIAS:.*]] = arith.constant dense<{{.*}}> : tensor<2x1x1x4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x2x4x4x4xf32>
// CHECK-NEXT:    %[[ADD:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, 0, 0, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>]
// CHECK-SAME:      ins(%[[C1]], %[[BIAS]] : tensor<1x2x4x4x4xf32>, tensor<2x1x1x4xf32>) outs(%[[E]] : tensor<1x2x4x4x4xf32>)
// CHECK:         %[[F2T:.*]] = layout.transform %[[F2]]
// CHECK-NEXT:    arith.constant dense<0.000000e+00>
// CHECK-NEXT:    %[[C2:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[ADD]], %[[F2T]] :
// CHECK:         %[[OUT:.*]] = layout.transform %[[C2]] {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>}
// CHECK-NEXT:    func.return %[[OUT]]

// Six channels: padded NCHW4c tensors; the crop promises zeros, which the padded rewrite
// after the add needs to cancel against the crop.
// CHECK-LABEL: func.func @conv_bias_conv_padded
// CHECK-SAME:    (%[[X:.*]]: tensor<1x6x6x6xf32>, %[[F1:.*]]: tensor<6x6x3x3xf32>, %[[F2:.*]]: tensor<6x6x3x3xf32>)
// CHECK-NEXT:    %[[XT:.*]] = layout.transform %[[X]] {{.*}} pad_value = 0.000000e+00 : f32}
// CHECK-NEXT:    %[[F1T:.*]] = layout.transform %[[F1]]
// CHECK-NEXT:    arith.constant dense<0.000000e+00>
// CHECK-NEXT:    %[[C1:.*]] = linalg.generic
// CHECK:         %[[BIAS:.*]] = arith.constant dense<{{.*}}0.000000e+00, 0.000000e+00]]]]> : tensor<2x1x1x4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x2x4x4x4xf32>
// CHECK-NEXT:    %[[ADD:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[C1]], %[[BIAS]] : tensor<1x2x4x4x4xf32>, tensor<2x1x1x4xf32>)
// CHECK:         %[[F2T:.*]] = layout.transform %[[F2]]
// CHECK-NEXT:    arith.constant dense<0.000000e+00>
// CHECK-NEXT:    %[[C2:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[ADD]], %[[F2T]] :
// CHECK:         %[[O8:.*]] = layout.transform %[[C2]]
// CHECK-NEXT:    %[[OUT:.*]] = layout.crop %[[O8]]
// CHECK-NEXT:    func.return %[[OUT]]
