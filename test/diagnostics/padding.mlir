// The invalid-input corpus, area padding: transforms that are not injective, not onto a box
// starting at 0, or that pad without a usable pad value, refused by apply-layout.
// RUN: physlayout-opt %s -p apply-layout --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @padding_2d_without_pad_value(%a: !layout.buffer<3x5xf32, transform = #layout.index_map<(i, j) -> (i, j floordiv 4, j mod 4)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<3x5xf32, transform = #layout.index_map<(i, j) -> (i, j floordiv 4, j mod 4)>>: transform (i, j) -> (i, j floordiv 4, j mod 4) introduces padding on shape [3, 5] (padding where j floordiv 4 == 1 and j mod 4 >= 1); give the buffer a pad_value{{$}}

// -----
func.func @ceildiv_padding(%a: !layout.buffer<6xf32, transform = #layout.index_map<(i) -> (i ceildiv 4, i mod 4)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<6xf32, transform = #layout.index_map<(i) -> (i ceildiv 4, i mod 4)>>: transform (i) -> (i ceildiv 4, i mod 4) introduces padding on shape [6] (padding where (i ceildiv 4 == 0 and i mod 4 >= 1) or (i ceildiv 4 == 2 and ((i mod 4) + 3) mod 4 <= 3 and ((i mod 4) + 3) mod 4 >= 1)); give the buffer a pad_value{{$}}

// -----
func.func @negative_coefficient(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (0 - i)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (0 - i)>>: output 0 (0 - i) of index map (i) -> (0 - i) has minimum -3 on shape [4]; every output must start at 0{{$}}

// -----
func.func @unused_dimension(%a: !layout.buffer<4x4xf32, transform = #layout.index_map<(i, j) -> (i)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<4x4xf32, transform = #layout.index_map<(i, j) -> (i)>>: index map (i, j) -> (i) is not injective on shape [4, 4]: indices [0, 0] and [0, 1] both map to [0]{{$}}

// -----
func.func @constant_output(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i, 1)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i, 1)>>: output 1 (1) of index map (i) -> (i, 1) has minimum 1 on shape [4]; every output must start at 0{{$}}

// -----
func.func @stride_collision(%a: !layout.buffer<4x8xf32, transform = #layout.index_map<(i, j) -> (i * 4 + j)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<4x8xf32, transform = #layout.index_map<(i, j) -> (i * 4 + j)>>: index map (i, j) -> (i * 4 + j) is not injective on shape [4, 8]: indices [0, 4] and [1, 0] both map to [4]{{$}}

// -----
func.func @mod_collision(%a: !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i mod 4)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i mod 4)>>: index map (i) -> (i mod 4) is not injective on shape [8]: indices [0] and [4] both map to [0]{{$}}

// -----
func.func @chain_second_not_injective(%a: !layout.buffer<8xf32, transform = [#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a, b) -> (a + b)>]>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<8xf32, transform = [#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a, b) -> (a + b)>]>: index map (a, b) -> (a + b) is not injective on shape [2, 4]: indices [0, 1] and [1, 0] both map to [1]{{$}}

// -----
func.func @chain_padding_without_value(%a: !layout.buffer<4x4xf32, transform = [#layout.index_map<(i, j) -> (j, i)>, #layout.index_map<(a, b) -> (a floordiv 3, a mod 3, b)>]>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<4x4xf32, transform = [#layout.index_map<(i, j) -> (j, i)>, #layout.index_map<(a, b) -> (a floordiv 3, a mod 3, b)>]>: transform [(i, j) -> (j, i), (a, b) -> (a floordiv 3, a mod 3, b)] introduces padding on shape [4, 4] (padding where j floordiv 3 == 1 and j mod 3 >= 1); give the buffer a pad_value{{$}}

// -----
func.func @gap_padding(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i * 2)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i * 2)>>: transform (i) -> (i * 2) introduces padding on shape [4] (padding where (i * 2) mod 2 == 1); give the buffer a pad_value{{$}}

// -----
func.func @padding_of_local_value(%i: index) -> f32 {
  %p = layout.allocate [10] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>
  %x = layout.load %b[%i] : !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>, f32
  func.return %x : f32
}
// CHECK: padding.mlir:[[# @LINE - 4]]:3: error: apply-layout: %b of type !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>: transform (i) -> (i floordiv 4, i mod 4) introduces padding on shape [10] (padding where i floordiv 4 == 2 and i mod 4 >= 2); give the buffer a pad_value{{$}}

// -----
func.func @negative_offset_output(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i - 3)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %a of type !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i - 3)>>: output 0 (i - 3) of index map (i) -> (i - 3) has minimum -3 on shape [4]; every output must start at 0{{$}}

// -----
func.func @vector_across_padding(%a: !layout.buffer<6xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>, %i: index) -> vector<2xf32> {
  %c3 = arith.constant 3 : index
  %v = layout.load %a[%c3] : !layout.buffer<6xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>, vector<2xf32>
  func.return %v : vector<2xf32>
}
// CHECK: padding.mlir:[[# @LINE - 3]]:3: error: apply-layout: vector access 'layout.load' on !layout.buffer<6xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.000000e+00 : f32> needs the innermost axis kept contiguous, but the transform maps it by (i) -> (i floordiv 4, i mod 4) (the last output must be 'i' itself, and no other output may use 'i')
// CHECK-NEXT: %v = layout.load %a[%c3] : !layout.buffer<6xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>, vector<2xf32>

// -----
func.func @vector_split_axis(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>, %i: index) -> vector<4xf32> {
  %v = layout.load %a[%i] : !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>, vector<4xf32>
  func.return %v : vector<4xf32>
}
// CHECK: padding.mlir:[[# @LINE - 3]]:3: error: apply-layout: vector access 'layout.load' on !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>> needs the innermost axis kept contiguous, but the transform maps it by (i) -> (i mod 4, i floordiv 4) (the last output must be 'i' itself, and no other output may use 'i')
// CHECK-NEXT: %v = layout.load %a[%i] : !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>, vector<4xf32>

// -----
// The padding is named with the map's own dimensions (c, not i4), at the function's line.
func.func @nchw4c_three_channels(%x: !layout.buffer<1x3x4x4xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %x of type !layout.buffer<1x3x4x4xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>>: transform (n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4) introduces padding on shape [1, 3, 4, 4] (padding where c == 3); give the buffer a pad_value{{$}}
// CHECK-NEXT: {{^}}func.func @nchw4c_three_channels(
// CHECK-NEXT: {{^}}^^^^^^^^^{{$}}

// -----
// Two blocked axes: both named by their output expressions.
func.func @two_blocked_axes(%x: !layout.buffer<6x3xf32, transform = #layout.index_map<(h, w) -> (h floordiv 4, w floordiv 2, h mod 4, w mod 2)>>) {
  func.return
}
// CHECK: padding.mlir:[[# @LINE - 3]]:1: error: apply-layout: %x of type {{.*}} (padding where {{.*}}h floordiv 4{{.*}}w mod 2{{.*}}); give the buffer a pad_value{{$}}
