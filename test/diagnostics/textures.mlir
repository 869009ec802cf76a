// The invalid-input corpus, area textures: texture-scope buffers that break the image rules
// (element type, rank, texel width, image limits, partial-texel stores), refused by
// verify-buffers with a 64 x 32 image limit and partial-texel writes disallowed.
// RUN: physlayout-opt %s -p 'verify-buffers{allow-partial-texel-writes=false max-image-width=64 max-image-height=32}' --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @texture_f64(%t: !layout.buffer<4x16xf64, axis_separators = [1], scope = "global.texture">) {
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:1: error: verify-buffers: texture buffer %t has element type f64; textures hold f32 or f16 channels (or vector<4xf32> / vector<4xf16> texels)
// CHECK-NEXT: func.func @texture_f64(%t: !layout.buffer<4x16xf64, axis_separators = [1], scope = "global.texture">) {

// -----
func.func @texture_i8(%t: !layout.buffer<2x4x4xi8, scope = "global.texture">) {
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:1: error: verify-buffers: texture buffer %t has element type i8; textures hold f32 or f16 channels (or vector<4xf32> / vector<4xf16> texels)
// CHECK-NEXT: func.func @texture_i8(%t: !layout.buffer<2x4x4xi8, scope = "global.texture">) {

// -----
func.func @texture_two_lane_texels(%t: !layout.buffer<4x8xvector<2xf32>, scope = "global.texture">) {
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:1: error: verify-buffers: texture buffer %t has element type vector<2xf32>; textures hold f32 or f16 channels (or vector<4xf32> / vector<4xf16> texels)
// CHECK-NEXT: func.func @texture_two_lane_texels(%t: !layout.buffer<4x8xvector<2xf32>, scope = "global.texture">) {

// -----
func.func @texture_height(%t: !layout.buffer<33x2x4xf32, scope = "global.texture">) {
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:1: error: verify-buffers: texture buffer %t needs a 2 x 33 image (width x height in texels), beyond the image limit 64 x 32
// CHECK-NEXT: func.func @texture_height(%t: !layout.buffer<33x2x4xf32, scope = "global.texture">) {

// -----
func.func @texture_width_after_transform(%t: !layout.buffer<1x8x2x80xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">) {
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:1: error: verify-buffers: texture buffer %t needs a 80 x 4 image (width x height in texels), beyond the image limit 64 x 32
// CHECK-NEXT: func.func @texture_width_after_transform(%t: !layout.buffer<1x8x2x80xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">) {

// -----
func.func @texture_three_channel_blocks(%t: !layout.buffer<1x6x2x2xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 3, h, w, c mod 3)>, scope = "global.texture">) {
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:1: error: verify-buffers: texture buffer %t has innermost extent 3; the innermost axis of a texture holds one RGBA texel (extent 4)
// CHECK-NEXT: func.func @texture_three_channel_blocks(%t: !layout.buffer<1x6x2x2xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 3, h, w, c mod 3)>, scope = "global.texture">) {

// -----
func.func @texture_nhwc_rank_1(%t: !layout.buffer<16xf32, scope = "global.texture-nhwc">) {
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:1: error: verify-buffers: texture buffer %t has rank 1; a 2-D image needs rank >= 2
// CHECK-NEXT: func.func @texture_nhwc_rank_1(%t: !layout.buffer<16xf32, scope = "global.texture-nhwc">) {

// -----
func.func @texture_weight_width(%t: !layout.buffer<1x100x4xf16, scope = "global.texture-weight">) {
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:1: error: verify-buffers: texture buffer %t needs a 100 x 1 image (width x height in texels), beyond the image limit 64 x 32
// CHECK-NEXT: func.func @texture_weight_width(%t: !layout.buffer<1x100x4xf16, scope = "global.texture-weight">) {

// -----
func.func @flat_store_at_column_2(%img: !layout.buffer<2x16xf32, axis_separators = [1], scope = "global.texture">, %v: vector<4xf32>, %i: index) {
  %c2 = arith.constant 2 : index
  layout.store %v, %img[%i, %c2] : !layout.buffer<2x16xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:3: error: verify-buffers: store to flat texture buffer %img is not proven to start at a texel boundary (its column index mod 4 lies in [2, 2])
// CHECK-NEXT: layout.store %v, %img[%i, %c2] : !layout.buffer<2x16xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>

// -----
func.func @flat_load_across_texels(%img: !layout.buffer<2x16xf32, axis_separators = [1], scope = "global.texture">, %i: index) -> vector<4xf32> {
  %c6 = arith.constant 6 : index
  %v = layout.load %img[%i, %c6] : !layout.buffer<2x16xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
  func.return %v : vector<4xf32>
}
// CHECK: textures.mlir:[[# @LINE - 3]]:3: error: verify-buffers: vector<4xf32> load from texture buffer %img may cross a texel boundary (its innermost index mod 4 lies in [2, 2])
// CHECK-NEXT: %v = layout.load %img[%i, %c6] : !layout.buffer<2x16xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>

// -----
func.func @texture_view_of_global(%A: !layout.buffer<32xf32>) {
  %p = layout.data %A : !layout.buffer<32xf32> -> !layout.ptr<f32>
  %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<2x4x4xf32, scope = "global.texture">
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:3: error: 'layout.decl_buffer' op buffer scope 'global.texture' does not match the data handle's scope 'global'
// CHECK-NEXT: %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<2x4x4xf32, scope = "global.texture">

// -----
func.func @texture_three_separators(%t: !layout.buffer<2x2x2x2x4xf32, axis_separators = [1, 2, 3], scope = "global.texture">) {
  func.return
}
// CHECK: textures.mlir:[[# @LINE - 3]]:1: error: verify-buffers: texture buffer %t has 3 axis separators [1, 2, 3]; a 2-D image allows at most one
// CHECK-NEXT: func.func @texture_three_separators(%t: !layout.buffer<2x2x2x2x4xf32, axis_separators = [1, 2, 3], scope = "global.texture">) {
