// REQUIRES: opencl
// The whole Adreno pipeline (physlayout-adreno, the default of `physlayout run` for graph
// IR) on OpenCL, checked against the graph evaluator: the RFC's conv -> relu -> conv with a
// smaller spatial size (the full-size example is `make demo`). More channel counts, the
// weights in global and the Relax example run in test/python/test_adreno_pipeline.py.
// fuse-elementwise makes conv1 + relu one kernel and each fill its conv's accumulator
// start, and conv2 stores the NCHW result itself (relayout_stores: 5 launches); with
// fuse=false each graph op but that relayout is a launch (8), with the same results.
// RUN: physlayout run --texture-storage image %s --check --rtol 1e-4 | filecheck %s
// RUN: physlayout run --texture-storage image %s --check --rtol 1e-4 --pipeline 'physlayout-adreno{fuse=false}' | filecheck %s --check-prefix=UNFUSED
// RUN: physlayout run %s --check --rtol 1e-4 --texture-storage buffer | filecheck %s

// CHECK: @rfc_small: 5 launch(es)
// CHECK-NEXT: rfc_small_transform_x
// CHECK-NEXT: rfc_small_transform_w1
// CHECK-NEXT: rfc_small_fused_r
// CHECK-NEXT: rfc_small_transform_w2
// CHECK-NEXT: rfc_small_fused_c2
// CHECK-NOT: rfc_small_transform_c2
// CHECK: %result0 {{.*}} shape [2, 32, 6, 6] {{.*}} OK
// CHECK-NEXT: check: passed

// UNFUSED: @rfc_small: 8 launch(es)
// UNFUSED-NEXT: rfc_small_transform_x
// UNFUSED-NEXT: rfc_small_transform_w1
// UNFUSED-NEXT: rfc_small_generic_f_c1
// UNFUSED-NEXT: rfc_small_generic_c1
// UNFUSED-NEXT: rfc_small_generic_r
// UNFUSED-NEXT: rfc_small_transform_w2
// UNFUSED-NEXT: rfc_small_generic_f_c2
// UNFUSED-NEXT: rfc_small_generic_c2
// UNFUSED-NOT: rfc_small_transform_c2
// UNFUSED: %result0 {{.*}} shape [2, 32, 6, 6] {{.*}} OK
// UNFUSED-NEXT: check: passed

func.func @rfc_small(%x: tensor<2x64x10x10xf32>, %w1: tensor<32x64x3x3xf32>, %w2: tensor<32x32x3x3xf32>) -> tensor<2x32x6x6xf32> {
  %z_c1 = arith.constant 0.0 : f32
  %e_c1 = tensor.empty() : tensor<2x32x8x8xf32>
  %f_c1 = linalg.fill ins(%z_c1 : f32) outs(%e_c1 : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<2x64x10x10xf32>, tensor<32x64x3x3xf32>) outs(%f_c1 : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %e_r = tensor.empty() : tensor<2x32x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<2x32x8x8xf32>) outs(%e_r : tensor<2x32x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<2x32x8x8xf32>
  %z_c2 = arith.constant 0.0 : f32
  %e_c2 = tensor.empty() : tensor<2x32x6x6xf32>
  %f_c2 = linalg.fill ins(%z_c2 : f32) outs(%e_c2 : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r, %w2 : tensor<2x32x8x8xf32>, tensor<32x32x3x3xf32>) outs(%f_c2 : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  func.return %c2 : tensor<2x32x6x6xf32>
}