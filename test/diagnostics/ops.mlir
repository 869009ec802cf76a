// The invalid-input corpus, area ops: every `layout` op given wrong operands, attributes or
// types (verifiers and custom syntax), each with its exact message and source location.
// RUN: physlayout-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @allocate_negative() {
  %p = layout.allocate [-4] : !layout.ptr<f32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.allocate' op allocation extents must be positive, got [-4]
// CHECK-NEXT: %p = layout.allocate [-4] : !layout.ptr<f32>

// -----
func.func @allocate_no_extents() {
  %p = layout.allocate [] : !layout.ptr<f32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.allocate' op allocation extents must be positive, got []
// CHECK-NEXT: %p = layout.allocate [] : !layout.ptr<f32>

// -----
func.func @allocate_buffer_result() {
  %p = "layout.allocate"() <{extents = [#builtin.int<4>]}> : () -> !layout.buffer<4xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.allocate' op result 'ptr' at position 0 does not verify: !layout.buffer<4xf32> should be of base attribute layout.ptr
// CHECK-NEXT: %p = "layout.allocate"() <{extents = [#builtin.int<4>]}> : () -> !layout.buffer<4xf32>

// -----
func.func @allocate_too_big() {
  %p = layout.allocate [4294967296, 4294967296] : !layout.ptr<f32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.allocate' op allocation of 18446744073709551616 elements exceeds the index range (at most 9223372036854775807)
// CHECK-NEXT: %p = layout.allocate [4294967296, 4294967296] : !layout.ptr<f32>

// -----
func.func @decl_negative_offset() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %b = layout.decl_buffer %p offset -4 : !layout.ptr<f32> -> !layout.buffer<4xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.decl_buffer' op elem_offset must be non-negative, got -4
// CHECK-NEXT: %b = layout.decl_buffer %p offset -4 : !layout.ptr<f32> -> !layout.buffer<4xf32>

// -----
func.func @decl_from_buffer(%a: !layout.buffer<16xf32>) {
  %b = "layout.decl_buffer"(%a) : (!layout.buffer<16xf32>) -> !layout.buffer<16xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.decl_buffer' op operand 'ptr' at position 0 does not verify: !layout.buffer<16xf32> should be of base attribute layout.ptr
// CHECK-NEXT: %b = "layout.decl_buffer"(%a) : (!layout.buffer<16xf32>) -> !layout.buffer<16xf32>

// -----
func.func @decl_result_not_buffer() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %b = "layout.decl_buffer"(%p) : (!layout.ptr<f32>) -> memref<16xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.decl_buffer' op result 'buffer' at position 0 does not verify: memref<16xf32> should be of base attribute layout.buffer
// CHECK-NEXT: %b = "layout.decl_buffer"(%p) : (!layout.ptr<f32>) -> memref<16xf32>

// -----
func.func @decl_offset_past_end() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %b = layout.decl_buffer %p offset 16 : !layout.ptr<f32> -> !layout.buffer<1xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.decl_buffer' op buffer of 4 bytes at byte offset 64 does not fit in its allocation of 64 bytes
// CHECK-NEXT: %b = layout.decl_buffer %p offset 16 : !layout.ptr<f32> -> !layout.buffer<1xf32>

// -----
func.func @decl_wider_elements() {
  %p = layout.allocate [6] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<2xvector<4xf32>>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.decl_buffer' op buffer of 32 bytes at byte offset 0 does not fit in its allocation of 24 bytes
// CHECK-NEXT: %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<2xvector<4xf32>>

// -----
func.func @data_of_pointer(%p: !layout.ptr<f32>) {
  %d = "layout.data"(%p) : (!layout.ptr<f32>) -> !layout.ptr<f32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.data' op operand 'buffer' at position 0 does not verify: !layout.ptr<f32> should be of base attribute layout.buffer
// CHECK-NEXT: %d = "layout.data"(%p) : (!layout.ptr<f32>) -> !layout.ptr<f32>

// -----
func.func @data_scope(%a: !layout.buffer<4xf32, scope = "shared">) {
  %d = layout.data %a : !layout.buffer<4xf32, scope = "shared"> -> !layout.ptr<f32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.data' op expected result type !layout.ptr<f32, scope = "shared"> for the data handle of !layout.buffer<4xf32, scope = "shared">, got !layout.ptr<f32>
// CHECK-NEXT: %d = layout.data %a : !layout.buffer<4xf32, scope = "shared"> -> !layout.ptr<f32>

// -----
func.func @load_from_memref(%m: memref<4xf32>, %i: index) {
  %x = "layout.load"(%m, %i) : (memref<4xf32>, index) -> f32
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.load' op operand 'buffer' at position 0 does not verify: memref<4xf32> should be of base attribute layout.buffer
// CHECK-NEXT: %x = "layout.load"(%m, %i) : (memref<4xf32>, index) -> f32

// -----
func.func @load_i32_index(%a: !layout.buffer<4xf32>, %i: i32) {
  %x = "layout.load"(%a, %i) : (!layout.buffer<4xf32>, i32) -> f32
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.load' op operand 'indices' at position 1 does not verify: Expected attribute index but got i32
// CHECK-NEXT: %x = "layout.load"(%a, %i) : (!layout.buffer<4xf32>, i32) -> f32

// -----
func.func @load_matrix(%a: !layout.buffer<4x4xf32>, %i: index) {
  %x = layout.load %a[%i, %i] : !layout.buffer<4x4xf32>, vector<2x2xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.load' value type vector<2x2xf32> does not match the buffer element type f32 (or a 1-D vector of it)
// CHECK-NEXT: %x = layout.load %a[%i, %i] : !layout.buffer<4x4xf32>, vector<2x2xf32>

// -----
func.func @load_negative_index(%a: !layout.buffer<4xf32>) {
  %c = arith.constant -1 : index
  %x = layout.load %a[%c] : !layout.buffer<4xf32>, f32
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.load' index -1 on axis 0 is out of bounds for extent 4
// CHECK-NEXT: %x = layout.load %a[%c] : !layout.buffer<4xf32>, f32

// -----
func.func @load_lanes_past_end(%a: !layout.buffer<2x6xf32>, %i: index) {
  %c4 = arith.constant 4 : index
  %x = layout.load %a[%i, %c4] : !layout.buffer<2x6xf32>, vector<4xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.load' index 4 on axis 1 is out of bounds for extent 6 (accessing 4 lanes)
// CHECK-NEXT: %x = layout.load %a[%i, %c4] : !layout.buffer<2x6xf32>, vector<4xf32>

// -----
func.func @load_vector_of_vectors(%a: !layout.buffer<8xvector<4xf32>>, %i: index) {
  %x = layout.load %a[%i] : !layout.buffer<8xvector<4xf32>>, vector<8xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.load' value type vector<8xf32> does not match the buffer element type vector<4xf32> (or a 1-D vector of it)
// CHECK-NEXT: %x = layout.load %a[%i] : !layout.buffer<8xvector<4xf32>>, vector<8xf32>

// -----
func.func @store_half_vector(%a: !layout.buffer<8xf32>, %v: vector<4xf16>, %i: index) {
  layout.store %v, %a[%i] : !layout.buffer<8xf32>, vector<4xf16>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.store' value type vector<4xf16> does not match the buffer element type f32 (or a 1-D vector of it)
// CHECK-NEXT: layout.store %v, %a[%i] : !layout.buffer<8xf32>, vector<4xf16>

// -----
func.func @store_index_out_of_bounds(%a: !layout.buffer<4x4xf32>, %x: f32, %i: index) {
  %c9 = arith.constant 9 : index
  layout.store %x, %a[%c9, %i] : !layout.buffer<4x4xf32>, f32
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.store' index 9 on axis 0 is out of bounds for extent 4
// CHECK-NEXT: layout.store %x, %a[%c9, %i] : !layout.buffer<4x4xf32>, f32

// -----
func.func @store_no_indices(%a: !layout.buffer<4xf32>, %x: f32) {
  layout.store %x, %a[] : !layout.buffer<4xf32>, f32
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.store' expects 1 indices for a rank-1 buffer, got 0
// CHECK-NEXT: layout.store %x, %a[] : !layout.buffer<4xf32>, f32

// -----
func.func @store_missing_type(%a: !layout.buffer<4xf32>, %x: f32, %i: index) {
  layout.store %x, %a[%i]
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 2]]:3: error: Expected ':'
// CHECK-NEXT: func.return

// -----
func.func @unknown_op() {
  layout.frobnicate
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 2]]:3: error: Operation layout.frobnicate is not registered
// CHECK-NEXT: func.return

// -----
func.func @transform_memref(%m: memref<4xf32>) {
  %r = "layout.transform"(%m) <{index_map = #layout.index_map<(i) -> (i)>}> : (memref<4xf32>) -> memref<4xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.transform' op operand 'input' at position 0 does not verify: memref<4xf32> should be of base attribute tensor
// CHECK-NEXT: %r = "layout.transform"(%m) <{index_map = #layout.index_map<(i) -> (i)>}> : (memref<4xf32>) -> memref<4xf32>

// -----
func.func @transform_missing_map(%x: tensor<4xf32>) {
  %r = "layout.transform"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.transform' op property 'index_map' expected in operation 'layout.transform'
// CHECK-NEXT: %r = "layout.transform"(%x) : (tensor<4xf32>) -> tensor<4xf32>

// -----
func.func @pad_wrong_rank_result(%x: tensor<4xf32>) {
  %r = layout.pad %x {low = array<i64: 1>, high = array<i64: 1>, pad_value = 0.0 : f32} : tensor<4xf32> -> tensor<6x1xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.pad' result type tensor<6x1xf32> does not match the padded shape [6]
// CHECK-NEXT: %r = layout.pad %x {low = array<i64: 1>, high = array<i64: 1>, pad_value = 0.0 : f32} : tensor<4xf32> -> tensor<6x1xf32>

// -----
func.func @pad_element_type(%x: tensor<4xf32>) {
  %r = layout.pad %x {low = array<i64: 1>, high = array<i64: 1>, pad_value = 0.0 : f32} : tensor<4xf32> -> tensor<6xf16>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.pad' must keep the element type: tensor<4xf32> -> tensor<6xf16>
// CHECK-NEXT: %r = layout.pad %x {low = array<i64: 1>, high = array<i64: 1>, pad_value = 0.0 : f32} : tensor<4xf32> -> tensor<6xf16>

// -----
func.func @crop_zero_size(%x: tensor<4xf32>) {
  %r = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 0>} : tensor<4xf32> -> tensor<0xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.crop' window [0, 0) on axis 0 does not fit in extent 4 (start must be >= 0, sizes > 0)
// CHECK-NEXT: %r = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 0>} : tensor<4xf32> -> tensor<0xf32>

// -----
func.func @crop_negative_start(%x: tensor<4xf32>) {
  %r = layout.crop %x {start = array<i64: -1>, sizes = array<i64: 2>} : tensor<4xf32> -> tensor<2xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.crop' window [-1, 1) on axis 0 does not fit in extent 4 (start must be >= 0, sizes > 0)
// CHECK-NEXT: %r = layout.crop %x {start = array<i64: -1>, sizes = array<i64: 2>} : tensor<4xf32> -> tensor<2xf32>

// -----
func.func @crop_wrong_cropped_type(%x: tensor<4xf32>) {
  %r = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 2>, cropped_value = 0 : i32} : tensor<4xf32> -> tensor<2xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.crop' cropped_value must be a constant of type f32 or "undef", got 0 : i32
// CHECK-NEXT: %r = layout.crop %x {start = array<i64: 0>, sizes = array<i64: 2>, cropped_value = 0 : i32} : tensor<4xf32> -> tensor<2xf32>

// -----
func.func @copy_buffer(%a: !layout.buffer<4xf32>) {
  %r = "layout.copy"(%a) <{scope = #layout<memory_scope global>}> : (!layout.buffer<4xf32>) -> !layout.buffer<4xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.copy' op operand 'input' at position 0 does not verify: !layout.buffer<4xf32> should be of base attribute tensor
// CHECK-NEXT: %r = "layout.copy"(%a) <{scope = #layout<memory_scope global>}> : (!layout.buffer<4xf32>) -> !layout.buffer<4xf32>

// -----
func.func @copy_without_scope(%x: tensor<4xf32>) {
  %r = "layout.copy"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
// CHECK: ops.mlir:[[# @LINE - 3]]:3: error: 'layout.copy' op property 'scope' expected in operation 'layout.copy'
// CHECK-NEXT: %r = "layout.copy"(%x) : (tensor<4xf32>) -> tensor<4xf32>
