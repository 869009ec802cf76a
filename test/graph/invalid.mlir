// One case per verifier error of the graph-level layout ops, each with its exact message.
// RUN: xdsl-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @not_injective(%x: tensor<4xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 2)>} : tensor<4xf32> -> tensor<2xf32>
  func.return
}
// CHECK: 'layout.transform' index map (i) -> (i floordiv 2) is not injective on shape [4]: indices [0] and [1] have the same image

// -----
func.func @padding_without_pad_value(%x: tensor<10xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<10xf32> -> tensor<3x4xf32>
  func.return
}
// CHECK: 'layout.transform' index map (i) -> (i floordiv 4, i mod 4) introduces padding on shape [10] where i0 == 2 and i1 >= 2; a pad_value is required

// -----
func.func @wrong_result_shape(%x: tensor<16xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<16xf32> -> tensor<2x8xf32>
  func.return
}
// CHECK: 'layout.transform' result type tensor<2x8xf32> does not match the shape [4, 4] of index map (i) -> (i floordiv 4, i mod 4) on [16]

// -----
func.func @tile_not_whole(%x: tensor<3xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<3xf32> -> tensor<1x3xf32>
  func.return
}
// CHECK: 'layout.transform' result type tensor<1x3xf32> does not match the shape [1, 4] of index map (i) -> (i floordiv 4, i mod 4) on [3]

// -----
func.func @wrong_rank(%x: tensor<4x4xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i)>} : tensor<4x4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: 'layout.transform' index map (i) -> (i) expects 1 indices but the input tensor<4x4xf32> has rank 2

// -----
func.func @pad_value_type(%x: tensor<10xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0 : i32} : tensor<10xf32> -> tensor<3x4xf32>
  func.return
}
// CHECK: 'layout.transform' pad_value must be a constant of type f32, got 0 : i32

// -----
func.func @separators(%x: tensor<16xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4 | i mod 4)>} : tensor<16xf32> -> tensor<4x4xf32>
  func.return
}
// CHECK: 'layout.transform' index map (i) -> (i floordiv 4 | i mod 4) carries axis separators ('|'); tensors have no physical axes

// -----
func.func @element_type_changes(%x: tensor<16xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<16xf32> -> tensor<4x4xf16>
  func.return
}
// CHECK: 'layout.transform' must keep the element type: tensor<16xf32> -> tensor<4x4xf16>

// -----
func.func @output_not_from_zero(%x: tensor<4xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i + 1)>} : tensor<4xf32> -> tensor<5xf32>
  func.return
}
// CHECK: 'layout.transform' output 0 (i + 1) of index map (i) -> (i + 1) has minimum 1 on shape [4]; every output must start at 0

// -----
func.func @dynamic_tensor(%x: tensor<?xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i)>} : tensor<?xf32> -> tensor<?xf32>
  func.return
}
// CHECK: 'layout.transform' expects statically shaped tensors, got tensor<?xf32> -> tensor<?xf32>

// -----
func.func @transform_not_a_map(%x: tensor<4xf32>) {
  %r = layout.transform %x {index_map = 3 : i64} : tensor<4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: 3 : i64 should be of base attribute layout.index_map

// -----
func.func @pad_width_count(%x: tensor<4x4xf32>) {
  %r = layout.pad %x {low = array<i64: 1>, high = array<i64: 1>, pad_value = 0.0 : f32} : tensor<4x4xf32> -> tensor<6x4xf32>
  func.return
}
// CHECK: 'layout.pad' expects 2 low and high widths for tensor<4x4xf32>, got 1 and 1

// -----
func.func @pad_negative(%x: tensor<4xf32>) {
  %r = layout.pad %x {low = array<i64: -1>, high = array<i64: 2>, pad_value = 0.0 : f32} : tensor<4xf32> -> tensor<5xf32>
  func.return
}
// CHECK: 'layout.pad' pad widths must be non-negative, got low = [-1], high = [2]

// -----
func.func @pad_shape(%x: tensor<4xf32>) {
  %r = layout.pad %x {low = array<i64: 1>, high = array<i64: 2>, pad_value = 0.0 : f32} : tensor<4xf32> -> tensor<8xf32>
  func.return
}
// CHECK: 'layout.pad' result type tensor<8xf32> does not match the padded shape [7]

// -----
func.func @pad_value_wrong_type(%x: tensor<4xi32>) {
  %r = layout.pad %x {low = array<i64: 1>, high = array<i64: 2>, pad_value = 0.0 : f32} : tensor<4xi32> -> tensor<7xi32>
  func.return
}
// CHECK: 'layout.pad' pad_value must be a constant of type i32, got 0.000000e+00 : f32

// -----
func.func @crop_window(%x: tensor<4xf32>) {
  %r = layout.crop %x {start = array<i64: 2>, sizes = array<i64: 3>} : tensor<4xf32> -> tensor<3xf32>
  func.return
}
// CHECK: 'layout.crop' window [2, 5) on axis 0 does not fit in extent 4 (start must be >= 0, sizes > 0)

// -----
func.func @crop_count(%x: tensor<4x4xf32>) {
  %r = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 2>} : tensor<4x4xf32> -> tensor<2xf32>
  func.return
}
// CHECK: 'layout.crop' expects 2 start indices and sizes for tensor<4x4xf32>, got 1 and 1

// -----
func.func @crop_result(%x: tensor<4xf32>) {
  %r = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 2>} : tensor<4xf32> -> tensor<3xf32>
  func.return
}
// CHECK: 'layout.crop' result type tensor<3xf32> does not match the sizes [2]

// -----
func.func @cropped_value(%x: tensor<4xf32>) {
  %r = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 2>, cropped_value = "zero"} : tensor<4xf32> -> tensor<2xf32>
  func.return
}
// CHECK: 'layout.crop' cropped_value must be a constant of type f32 or "undef", got "zero"

// -----
func.func @pad_without_value(%x: tensor<4xf32>) {
  %r = layout.pad %x {low = array<i64: 1>, high = array<i64: 2>} : tensor<4xf32> -> tensor<7xf32>
  func.return
}
// CHECK: property 'pad_value' expected
