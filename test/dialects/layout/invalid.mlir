// One case per verifier error of the `layout` dialect, each with its exact message.
// RUN: xdsl-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s
// physlayout-opt reports the same diagnostics MLIR-style, at their source lines:
// RUN: physlayout-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s --check-prefix=LOC

func.func @not_quasi_affine(%a: !layout.buffer<4x4xf32, transform = #layout.index_map<(i, j) -> (i * j)>>) {
  func.return
}
// CHECK: invalid index map: expression 'i * j' is not quasi-affine: product of two non-constant terms

// -----
func.func @zero_divisor() attributes {m = #layout.index_map<(i) -> (i floordiv 0)>} {
  func.return
}
// CHECK: invalid index map: divisor must be a positive constant, got 0

// -----
func.func @negative_divisor() attributes {m = #layout.index_map<(i) -> (i mod -4)>} {
  func.return
}
// CHECK: invalid index map: divisor must be a positive constant, got -4

// -----
func.func @duplicate_dims() attributes {m = #layout.index_map<(i, i) -> (i)>} {
  func.return
}
// CHECK: invalid index map: duplicate dimension name 'i'

// -----
func.func @unknown_dim() attributes {m = #layout.index_map<(i) -> (j)>} {
  func.return
}
// CHECK: invalid index map: unknown dimension 'j'

// -----
func.func @bad_map_separator() attributes {m = #layout.index_map<(i, j) -> (| i, j)>} {
  func.return
}
// CHECK: invalid index map: axis separator '|' must stand between two outputs

// -----
func.func @transform_arity(%a: !layout.buffer<4x4xf32, transform = #layout.index_map<(i) -> (i)>>) {
  func.return
}
// CHECK: transform #0 expects 1 indices but the buffer has rank 2 at that point

// -----
func.func @separators_not_increasing(%a: !layout.buffer<4x4x4xf32, axis_separators = [2, 1]>) {
  func.return
}
// CHECK: axis separators must be strictly increasing, got [2, 1]

// -----
func.func @separator_zero(%a: !layout.buffer<4x4xf32, axis_separators = [0]>) {
  func.return
}
// CHECK: axis separator 0 is out of range 1..1 for rank 2

// -----
func.func @separator_past_end(%a: !layout.buffer<4x4xf32, axis_separators = [2]>) {
  func.return
}
// CHECK: axis separator 2 is out of range 1..1 for rank 2

// -----
func.func @separators_and_transform(%a: !layout.buffer<4x4xf32, transform = #layout.index_map<(i, j) -> (j, i)>, axis_separators = [1]>) {
  func.return
}
// CHECK: a buffer with a pending transform takes its axis separators from the transform ('|'), not from axis_separators

// -----
func.func @separator_not_last(%a: !layout.buffer<4x4xf32, transform = [#layout.index_map<(i, j) -> (j | i)>, #layout.index_map<(i, j) -> (j, i)>]>) {
  func.return
}
// CHECK: only the last transform may carry axis separators ('|'), not #0

// -----
func.func @unknown_scope(%a: !layout.buffer<4x4xf32, scope = "global.imagination">) {
  func.return
}
// CHECK: unknown memory scope 'global.imagination', expected one of ['global', 'shared', 'local', 'global.texture', 'global.texture-nhwc', 'global.texture-weight']

// -----
func.func @unknown_ptr_scope(%a: !layout.ptr<f32, scope = "texture">) {
  func.return
}
// CHECK: unknown memory scope 'texture', expected one of

// -----
func.func @zero_extent(%a: !layout.buffer<0x4xf32>) {
  func.return
}
// CHECK: buffer extents must be static and positive, got [0, 4]

// -----
func.func @dynamic_extent(%a: !layout.buffer<?x4xf32>) {
  func.return
}
// CHECK: buffer extents must be static and positive, got [?, 4]

// -----
func.func @pad_value_type(%a: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0 : i32>) {
  func.return
}
// CHECK: pad_value must be a constant of type f32

// -----
func.func @pad_value_without_transform(%a: !layout.buffer<10xf32, pad_value = 0.0 : f32>) {
  func.return
}
// CHECK: pad_value is only meaningful with a pending transform

// -----
func.func @load_index_count(%a: !layout.buffer<4x4xf32>, %i: index) {
  %v = layout.load %a[%i] : !layout.buffer<4x4xf32>, f32
// LOC: invalid.mlir:{{[0-9]+}}:3: error: 'layout.load' expects 2 indices for a rank-2 buffer, got 1
  func.return
}
// CHECK: 'layout.load' expects 2 indices for a rank-2 buffer, got 1

// -----
func.func @store_index_count(%a: !layout.buffer<4x4xf32>, %i: index, %v: f32) {
  layout.store %v, %a[%i, %i, %i] : !layout.buffer<4x4xf32>, f32
  func.return
}
// CHECK: 'layout.store' expects 2 indices for a rank-2 buffer, got 3

// -----
func.func @load_type(%a: !layout.buffer<4x4xf32>, %i: index) {
  %v = layout.load %a[%i, %i] : !layout.buffer<4x4xf32>, f16
  func.return
}
// CHECK: 'layout.load' value type f16 does not match the buffer element type f32 (or a 1-D vector of it)

// -----
func.func @store_type(%a: !layout.buffer<4x4xf32>, %i: index, %v: i32) {
  layout.store %v, %a[%i, %i] : !layout.buffer<4x4xf32>, i32
  func.return
}
// CHECK: 'layout.store' value type i32 does not match the buffer element type f32 (or a 1-D vector of it)

// -----
func.func @constant_index_out_of_bounds(%a: !layout.buffer<4x4xf32>, %i: index) {
  %c4 = arith.constant 4 : index
  %v = layout.load %a[%i, %c4] : !layout.buffer<4x4xf32>, f32
  func.return
}
// CHECK: 'layout.load' index 4 on axis 1 is out of bounds for extent 4

// -----
func.func @vector_lanes_out_of_bounds(%a: !layout.buffer<4x8xf32>, %i: index, %v: vector<4xf32>) {
  %c6 = arith.constant 6 : index
  layout.store %v, %a[%i, %c6] : !layout.buffer<4x8xf32>, vector<4xf32>
  func.return
}
// CHECK: 'layout.store' index 6 on axis 1 is out of bounds for extent 8 (accessing 4 lanes)

// -----
func.func @alias_too_large() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<8x4xf32>
// LOC: invalid.mlir:{{[0-9]+}}:3: error: 'layout.decl_buffer' op buffer of 128 bytes at byte offset 0 does not fit in its allocation of 64 bytes
  func.return
}
// CHECK: buffer of 128 bytes at byte offset 0 does not fit in its allocation of 64 bytes

// -----
func.func @alias_offset_too_large() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %b = layout.decl_buffer %p offset 12 : !layout.ptr<f32> -> !layout.buffer<2xvector<4xf32>>
  func.return
}
// CHECK: buffer of 32 bytes at byte offset 48 does not fit in its allocation of 64 bytes

// -----
func.func @scope_mismatch() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32, scope = "shared">
  func.return
}
// CHECK: buffer scope 'shared' does not match the data handle's scope 'global'

// -----
func.func @allocate_extents() {
  %p = layout.allocate [4, 0] : !layout.ptr<f32>
  func.return
}
// CHECK: allocation extents must be positive, got [4, 0]

// -----
func.func @data_type(%a: !layout.buffer<4xf32>) {
  %p = layout.data %a : !layout.buffer<4xf32> -> !layout.ptr<f16>
  func.return
}
// CHECK: expected result type !layout.ptr<f32> for the data handle of !layout.buffer<4xf32>, got !layout.ptr<f16>

// -----
func.func @too_many_elements(%a: !layout.buffer<4294967296x4294967296xf32>) {
  func.return
}
// CHECK: buffer of 18446744073709551616 elements exceeds the index range (at most 9223372036854775807)

// -----
func.func @memory_scope_attr() attributes {scope = #layout<memory_scope texture>} {
  func.return
}
// CHECK: Expected `global`, `shared`, `local`, `global.texture`, `global.texture-nhwc`, or `global.texture-weight`.
