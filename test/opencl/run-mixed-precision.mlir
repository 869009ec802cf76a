// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %s --precision f16 --check --rtol 1e-3 | filecheck %s
// RUN: not physlayout run --texture-storage image %S/run-unsigned.mlir --entry ops --precision f16 2>&1 | filecheck %s --check-prefix=BUFFERS
// RUN: physlayout run %s --precision f16 --check --rtol 1e-3 --texture-storage buffer | filecheck %s

// conv -> relu with `--precision f16`: to-mixed-precision (f16 storage, f32 accumulation),
// then physlayout-adreno; the f16 textures run on any device (read_imagef/write_imagef of
// HALF_FLOAT images) and equal the graph evaluator of the mixed-precision module; the
// error against the f32 graph is reported.
// CHECK:      main_fused
// CHECK:      %result0    shape [1, 4, 4, 4]  max|opencl - numpy| = {{.*}}  OK
// CHECK-NEXT: check: passed (rtol 0.001, graph evaluator)
// CHECK-NEXT: error of the f16 graph against the f32 graph (graph evaluator, same inputs):
// CHECK-NEXT:   %result0    max|f16 - f32| = {{.*}} (relative to max|f32| {{.*}})

// BUFFERS: error: --precision f16 applies to graph-level IR (functions over tensors); buffer-level kernels run in the element types they declare

func.func @main(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x4x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv : tensor<1x4x4x4xf32>) outs(%e2 : tensor<1x4x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x4xf32>
  func.return %relu : tensor<1x4x4x4xf32>
}
