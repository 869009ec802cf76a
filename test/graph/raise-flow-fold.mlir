// Raised upstream IR gets physlayout's flow and folds: NCHW4c -> NCHW (unpack), relu, NCHW ->
// NCHW4c (pack) becomes one relu on the NCHW4c tensor with no relayout left (upstream's
// -test-linalg-data-layout-propagation does the same here). With padding (6 channels) the
// chain must stay: the unpack drops the packed input's padding, which need not be 0, and the
// pack puts zeros there. test/python/test_layout_rewrites_interop.py runs both before and
// after.
// RUN: xdsl-opt %s -p raise-layout-rewrites,flow-layout-rewrites,fold-layout-rewrites | filecheck %s
// RUN: %if mlir %{ xdsl-opt %s -p raise-layout-rewrites,flow-layout-rewrites,fold-layout-rewrites,lower-layout-rewrites | %mlir-opt --verify-each | filecheck %s --check-prefix=MLIR %}

// CHECK-LABEL: func.func @unpack_relu_pack
// CHECK-SAME:    (%[[Y:.*]]: tensor<1x2x2x2x4xf32>)
// CHECK-NOT:     layout.
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<1x2x2x2x4xf32>)
// CHECK-NOT:     layout.
// CHECK:         func.return %[[R]]
// MLIR-LABEL: func.func @unpack_relu_pack
// MLIR-NOT:     linalg.pack
// MLIR-NOT:     linalg.unpack
// MLIR:         return
func.func @unpack_relu_pack(%y: tensor<1x2x2x2x4xf32>) -> tensor<1x2x2x2x4xf32> {
  %e0 = tensor.empty() : tensor<1x8x2x2xf32>
  %u = linalg.unpack %y inner_dims_pos = [1] inner_tiles = [4] into %e0 : tensor<1x2x2x2x4xf32> -> tensor<1x8x2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x8x2x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%u : tensor<1x8x2x2xf32>) outs(%e1 : tensor<1x8x2x2xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x2x2xf32>
  %e2 = tensor.empty() : tensor<1x2x2x2x4xf32>
  %p = linalg.pack %r inner_dims_pos = [1] inner_tiles = [4] into %e2 : tensor<1x8x2x2xf32> -> tensor<1x2x2x2x4xf32>
  func.return %p : tensor<1x2x2x2x4xf32>
}

// CHECK-LABEL: func.func @unpack_relu_pack_padded
// CHECK:         layout.transform
// CHECK:         layout.crop
// CHECK:         layout.transform {{.*}} pad_value = 0.000000e+00 : f32
// CHECK:         linalg.generic
// CHECK:         func.return
// MLIR-LABEL: func.func @unpack_relu_pack_padded
// MLIR:         linalg.unpack
// MLIR:         linalg.pack
func.func @unpack_relu_pack_padded(%y: tensor<1x2x2x2x4xf32>) -> tensor<1x2x2x2x4xf32> {
  %e0 = tensor.empty() : tensor<1x6x2x2xf32>
  %u = linalg.unpack %y inner_dims_pos = [1] inner_tiles = [4] into %e0 : tensor<1x2x2x2x4xf32> -> tensor<1x6x2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x6x2x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%u : tensor<1x6x2x2xf32>) outs(%e1 : tensor<1x6x2x2xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x6x2x2xf32>
  %e2 = tensor.empty() : tensor<1x2x2x2x4xf32>
  %p = linalg.pack %r padding_value(%zero : f32) inner_dims_pos = [1] inner_tiles = [4] into %e2 : tensor<1x6x2x2xf32> -> tensor<1x2x2x2x4xf32>
  func.return %p : tensor<1x2x2x2x4xf32>
}
