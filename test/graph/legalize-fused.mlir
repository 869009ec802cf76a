// legalize-layout on `layout.fused` groups: ONE kernel per group; the root's fill is the
// accumulator's start (no fill kernel), the epilogue runs on the final accumulator after
// the reduction loops, before the one store.
// RUN: xdsl-opt %s -p fuse-elementwise,legalize-layout | filecheck %s

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch4 = affine_map<(n, c, h, w) -> (c, 0, 0)>
#par4 = ["parallel", "parallel", "parallel", "parallel"]

// CHECK-LABEL: func.func @conv_bias_relu_fused_y(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x2x4x4xf32>, %[[W:[^:]*]]: !layout.buffer<3x2x3x3xf32>, %[[OUT:[^:]*]]: !layout.buffer<1x3x2x2xf32>, %[[B:[^:]*]]: !layout.buffer<3x1x1xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.parallel (%[[N:[^,]*]], %[[C:[^,]*]], %[[H:[^,]*]], %[[WW:[^)]*]]) = {{.*}} {
// CHECK-NEXT:      %[[ACC:.*]] = scf.for {{.*}} iter_args({{.*}} = %[[ZERO]]) -> (f32) {
// CHECK:             arith.mulf
// CHECK:           %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[BV:.*]] = layout.load %[[B]][%[[C]], %[[I0]], %[[I0]]]
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ACC]], %[[BV]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.maximumf %[[SUM]], %[[ZERO]] : f32
// CHECK-NEXT:      layout.store %[[Y]], %[[OUT]][%[[N]], %[[C]], %[[H]], %[[WW]]]
// CHECK-NEXT:      scf.reduce
// CHECK-NOT:     func.func @conv_bias_relu_generic
// CHECK-LABEL: func.func @conv_bias_relu(
// CHECK-NEXT:    func.call @conv_bias_relu_fused_y(
// CHECK-NEXT:    func.return
func.func @conv_bias_relu(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32> {
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
