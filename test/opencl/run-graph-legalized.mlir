// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %S/../../examples/graph_conv_bias_conv.mlir --entry conv_bias_conv --pipeline legalize-layout --check | filecheck %s
// RUN: physlayout run --texture-storage image %S/../../examples/graph_conv_bias_conv.mlir --entry conv_bias_conv_padded --pipeline legalize-layout --check | filecheck %s --check-prefix=PADDED
// RUN: physlayout run --texture-storage image %s --pipeline legalize-layout --check --seed 3 --output result0=%t.npy | filecheck %s --check-prefix=TEXTURE
// RUN: %python -c "import numpy; print(numpy.load('%t.npy').shape)" | filecheck %s --check-prefix=SHAPE
// RUN: physlayout run %s --pipeline legalize-layout --check --seed 3 --texture-storage buffer | filecheck %s --check-prefix=TEXTURE

// `physlayout run` on graph-level IR: legalize-layout, then the buffer pipeline and OpenCL;
// the result out-parameter is compared with the graph evaluator.
// CHECK: @conv_bias_conv: 9 launch(es)
// CHECK: conv_bias_conv_generic_c1
// CHECK: %result0 {{.*}} shape [1, 8, 2, 2] {{.*}} OK
// CHECK-NEXT: check: passed
// The last conv's 6 channels: it stores them through the NCHW relayout and the crop of the
// padded channels itself (relayout_stores.CroppedStore), no crop kernel.
// PADDED: @conv_bias_conv_padded: 10 launch(es)
// PADDED: conv_bias_conv_padded_generic_c2
// PADDED-NOT: conv_bias_conv_padded_crop_out
// PADDED: %result0 {{.*}} shape [1, 6, 2, 2] {{.*}} OK
// PADDED-NEXT: check: passed

// Hand-annotated scopes: NCHW -> NCHW4c texture, relu on the texture, back to NCHW (the
// relu stores the NCHW result itself: relayout_stores).
// TEXTURE: @main: 2 launch(es)
// TEXTURE-NEXT: main_transform_xt
// TEXTURE-NEXT: main_generic_r
// TEXTURE-NOT: main_transform_y
// TEXTURE: %result0 {{.*}} shape [1, 8, 4, 4] {{.*}} OK
// SHAPE: (1, 8, 4, 4)
#id5 = affine_map<(n, c, h, w, b) -> (n, c, h, w, b)>
func.func @main(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %xt = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, layout.scope = "global.texture"} : tensor<1x8x4x4xf32> -> tensor<1x2x4x4x4xf32>
  %e = tensor.empty() : tensor<1x2x4x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%xt : tensor<1x2x4x4x4xf32>) outs(%e : tensor<1x2x4x4x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x4x4xf32>
  %y = layout.transform %r {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x4x4x4xf32> -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
