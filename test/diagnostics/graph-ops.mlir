// The invalid-input corpus, area graph-ops: graph-level functions (tensors) that
// legalize-layout cannot turn into buffer-level kernels, and malformed layout rewrites.
// RUN: physlayout-opt %s -p legalize-layout --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @unknown_result_scope(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) attrs = {layout.scope = "vram"} {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  func.return %a : tensor<2x4xf32>
}
// CHECK: graph-ops.mlir:[[# @LINE - 8]]:1: error: legalize-layout: 'linalg.generic' has an invalid layout.scope "vram", expected one of ['global', 'shared', 'local', 'global.texture', 'global.texture-nhwc', 'global.texture-weight']
// CHECK-NEXT: func.func @unknown_result_scope(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {

// -----
func.func @dynamic_tensor(%x: tensor<?xf32>) -> tensor<?xf32> {
  func.return %x : tensor<?xf32>
}
// CHECK: graph-ops.mlir:[[# @LINE - 3]]:1: error: legalize-layout: 'func.func' has a dynamic tensor tensor<?xf32>; only static tensors legalize
// CHECK-NEXT: func.func @dynamic_tensor(%x: tensor<?xf32>) -> tensor<?xf32> {

// -----
func.func @tensor_insert(%x: tensor<4xf32>, %v: f32, %i: index) -> tensor<4xf32> {
  %y = tensor.insert %v into %x[%i] : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: graph-ops.mlir:[[# @LINE - 4]]:1: error: legalize-layout: 'tensor.insert' cannot be legalized (supported: linalg ops, layout.transform/pad/crop/copy/check, tensor.empty, tensor.insert_slice, constants and scalar ops)
// CHECK-NEXT: func.func @tensor_insert(%x: tensor<4xf32>, %v: f32, %i: index) -> tensor<4xf32> {

// -----
func.func @transform_not_injective(%x: tensor<8xf32>) -> tensor<4xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i mod 4)>} : tensor<8xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK: graph-ops.mlir:[[# @LINE - 3]]:3: error: 'layout.transform' index map (i) -> (i mod 4) is not injective on shape [8]: indices [0] and [4] have the same image
// CHECK-NEXT: %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i mod 4)>} : tensor<8xf32> -> tensor<4xf32>

// -----
func.func @pad_rank(%x: tensor<4xf32>) -> tensor<6xf32> {
  %r = layout.pad %x {low = array<i64: 1, 1>, high = array<i64: 1>, pad_value = 0.0 : f32} : tensor<4xf32> -> tensor<6xf32>
  func.return %r : tensor<6xf32>
}
// CHECK: graph-ops.mlir:[[# @LINE - 3]]:3: error: 'layout.pad' expects 1 low and high widths for tensor<4xf32>, got 2 and 1
// CHECK-NEXT: %r = layout.pad %x {low = array<i64: 1, 1>, high = array<i64: 1>, pad_value = 0.0 : f32} : tensor<4xf32> -> tensor<6xf32>

// -----
func.func @crop_past_end(%x: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %r = layout.crop %x {start = array<i64: 3, 0>, sizes = array<i64: 2, 4>} : tensor<4x4xf32> -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
// CHECK: graph-ops.mlir:[[# @LINE - 3]]:3: error: 'layout.crop' window [3, 5) on axis 0 does not fit in extent 4 (start must be >= 0, sizes > 0)
// CHECK-NEXT: %r = layout.crop %x {start = array<i64: 3, 0>, sizes = array<i64: 2, 4>} : tensor<4x4xf32> -> tensor<2x4xf32>

// -----
func.func @transform_missing_pad(%x: tensor<6xf32>) -> tensor<2x4xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<6xf32> -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
// CHECK: graph-ops.mlir:[[# @LINE - 3]]:3: error: 'layout.transform' index map (i) -> (i floordiv 4, i mod 4) introduces padding on shape [6] where i0 == 1 and i1 >= 2; a pad_value is required
// CHECK-NEXT: %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<6xf32> -> tensor<2x4xf32>

// -----
func.func @i1_pad_value(%x: tensor<6xi1>) -> tensor<2x4xi1> {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<6xi1> -> tensor<2x4xi1>
  func.return %r : tensor<2x4xi1>
}
// CHECK: graph-ops.mlir:[[# @LINE - 3]]:3: error: 'layout.transform' pad_value must be a constant of type i1, got 0.000000e+00 : f32
// CHECK-NEXT: %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<6xi1> -> tensor<2x4xi1>
