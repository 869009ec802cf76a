// The invalid-input corpus, area buffer-type: malformed `!layout.buffer` and `!layout.ptr`
// types (syntax, extents, element types, transforms, pad values, separators, scopes).
// RUN: physlayout-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @negative_extent(%a: !layout.buffer<-4xf32>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:47: error: Expected shape type: !layout.buffer expects positive integer extents and an element type, e.g. !layout.buffer<4x8xf32>
// CHECK-NEXT: func.func @negative_extent(%a: !layout.buffer<-4xf32>) {

// -----
func.func @symbolic_extent(%a: !layout.buffer<Nx4xf32>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:47: error: Expected shape type: !layout.buffer expects positive integer extents and an element type, e.g. !layout.buffer<4x8xf32>
// CHECK-NEXT: func.func @symbolic_extent(%a: !layout.buffer<Nx4xf32>) {

// -----
func.func @dynamic_inner_extent(%a: !layout.buffer<4x?xf32>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:51: error: buffer extents must be static and positive, got [4, ?]
// CHECK-NEXT: func.func @dynamic_inner_extent(%a: !layout.buffer<4x?xf32>) {

// -----
func.func @no_element_type(%a: !layout.buffer<4x5>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:50: error: Expected 'x' in shape delimiter, got GREATER: !layout.buffer expects positive integer extents and an element type, e.g. !layout.buffer<4x8xf32>
// CHECK-NEXT: func.func @no_element_type(%a: !layout.buffer<4x5>) {

// -----
func.func @tensor_element(%a: !layout.buffer<4xtensor<4xf32>>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:45: error: element type must be an integer, float or index type, or a vector of one, got tensor<4xf32>
// CHECK-NEXT: func.func @tensor_element(%a: !layout.buffer<4xtensor<4xf32>>) {

// -----
func.func @memref_element(%a: !layout.buffer<4xmemref<4xf32>>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:45: error: element type must be an integer, float or index type, or a vector of one, got memref<4xf32>
// CHECK-NEXT: func.func @memref_element(%a: !layout.buffer<4xmemref<4xf32>>) {

// -----
func.func @unknown_key(%a: !layout.buffer<4xf32, layout = #layout.index_map<(i) -> (i)>>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:50: error: Expected one of 'axis_separators', 'pad_value', 'scope', 'transform' in !layout.buffer
// CHECK-NEXT: func.func @unknown_key(%a: !layout.buffer<4xf32, layout = #layout.index_map<(i) -> (i)>>) {

// -----
func.func @duplicate_transform(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i)>, transform = #layout.index_map<(i) -> (i)>>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:111: error: duplicate 'transform' in !layout.buffer
// CHECK-NEXT: func.func @duplicate_transform(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i)>, transform = #layout.index_map<(i) -> (i)>>) {

// -----
func.func @transform_not_a_map(%a: !layout.buffer<4xf32, transform = 3>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:70: error: expected a #layout.index_map attribute
// CHECK-NEXT: func.func @transform_not_a_map(%a: !layout.buffer<4xf32, transform = 3>) {

// -----
func.func @transform_affine_map(%a: !layout.buffer<4xf32, transform = affine_map<(d0) -> (d0)>>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:71: error: expected a #layout.index_map attribute
// CHECK-NEXT: func.func @transform_affine_map(%a: !layout.buffer<4xf32, transform = affine_map<(d0) -> (d0)>>) {

// -----
func.func @empty_transform_list(%a: !layout.buffer<4xf32, transform = []>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:72: error: attribute expected
// CHECK-NEXT: func.func @empty_transform_list(%a: !layout.buffer<4xf32, transform = []>) {

// -----
func.func @transform_too_many_indices(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i, j) -> (j, i)>>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:57: error: transform #0 expects 2 indices but the buffer has rank 1 at that point
// CHECK-NEXT: func.func @transform_too_many_indices(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i, j) -> (j, i)>>) {

// -----
func.func @second_transform_arity(%a: !layout.buffer<16xf32, transform = [#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a) -> (a)>]>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:53: error: transform #1 expects 1 indices but the buffer has rank 2 at that point
// CHECK-NEXT: func.func @second_transform_arity(%a: !layout.buffer<16xf32, transform = [#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a) -> (a)>]>) {

// -----
func.func @pad_value_float_on_int(%a: !layout.buffer<10xi32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:53: error: pad_value must be a constant of type i32, got 0.000000e+00 : f32
// CHECK-NEXT: func.func @pad_value_float_on_int(%a: !layout.buffer<10xi32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>) {

// -----
func.func @pad_value_string(%a: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = "zero">) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:47: error: pad_value must be a constant of type f32, got "zero"
// CHECK-NEXT: func.func @pad_value_string(%a: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = "zero">) {

// -----
func.func @pad_value_f64_on_f32(%a: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f64>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:51: error: pad_value must be a constant of type f32, got 0.000000e+00 : f64
// CHECK-NEXT: func.func @pad_value_f64_on_f32(%a: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f64>) {

// -----
func.func @separators_not_a_list(%a: !layout.buffer<4x4xf32, axis_separators = 1>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:80: error: '[' expected
// CHECK-NEXT: func.func @separators_not_a_list(%a: !layout.buffer<4x4xf32, axis_separators = 1>) {

// -----
func.func @separators_negative(%a: !layout.buffer<4x4xf32, axis_separators = [-1]>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:50: error: axis separator -1 is out of range 1..1 for rank 2 (no leading or trailing separator)
// CHECK-NEXT: func.func @separators_negative(%a: !layout.buffer<4x4xf32, axis_separators = [-1]>) {

// -----
func.func @separators_repeated(%a: !layout.buffer<4x4x4xf32, axis_separators = [1, 1]>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:50: error: axis separators must be strictly increasing, got [1, 1]
// CHECK-NEXT: func.func @separators_repeated(%a: !layout.buffer<4x4x4xf32, axis_separators = [1, 1]>) {

// -----
func.func @separators_rank_1(%a: !layout.buffer<16xf32, axis_separators = [1]>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:48: error: axis separator 1 cannot split rank 1: separators stand between two axes (rank >= 2)
// CHECK-NEXT: func.func @separators_rank_1(%a: !layout.buffer<16xf32, axis_separators = [1]>) {

// -----
func.func @scope_not_a_string(%a: !layout.buffer<4xf32, scope = 3>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:65: error: string literal expected
// CHECK-NEXT: func.func @scope_not_a_string(%a: !layout.buffer<4xf32, scope = 3>) {

// -----
func.func @scope_empty(%a: !layout.buffer<4xf32, scope = "">) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:42: error: unknown memory scope '', expected one of ['global', 'shared', 'local', 'global.texture', 'global.texture-nhwc', 'global.texture-weight']
// CHECK-NEXT: func.func @scope_empty(%a: !layout.buffer<4xf32, scope = "">) {

// -----
func.func @missing_close(%a: !layout.buffer<4xf32) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:50: error: Expected '>'
// CHECK-NEXT: func.func @missing_close(%a: !layout.buffer<4xf32) {

// -----
func.func @trailing_comma(%a: !layout.buffer<4xf32, >) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:53: error: Expected one of 'axis_separators', 'pad_value', 'scope', 'transform' in !layout.buffer
// CHECK-NEXT: func.func @trailing_comma(%a: !layout.buffer<4xf32, >) {

// -----
func.func @ptr_empty(%a: !layout.ptr<>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:38: error: type expected
// CHECK-NEXT: func.func @ptr_empty(%a: !layout.ptr<>) {

// -----
func.func @ptr_shaped(%a: !layout.ptr<4xf32>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:39: error: type expected
// CHECK-NEXT: func.func @ptr_shaped(%a: !layout.ptr<4xf32>) {

// -----
func.func @ptr_unknown_scope(%a: !layout.ptr<f32, scope = "nowhere">) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:45: error: unknown memory scope 'nowhere', expected one of ['global', 'shared', 'local', 'global.texture', 'global.texture-nhwc', 'global.texture-weight']
// CHECK-NEXT: func.func @ptr_unknown_scope(%a: !layout.ptr<f32, scope = "nowhere">) {

// -----
func.func @ptr_unknown_key(%a: !layout.ptr<f32, space = 1>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:49: error: Expected 'scope'
// CHECK-NEXT: func.func @ptr_unknown_key(%a: !layout.ptr<f32, space = 1>) {

// -----
func.func @unknown_type(%a: !layout.tensor<4xf32>) {
  func.return
}
// CHECK: buffer-type.mlir:[[# @LINE - 3]]:43: error: 'layout.tensor' is not registered
// CHECK-NEXT: func.func @unknown_type(%a: !layout.tensor<4xf32>) {
