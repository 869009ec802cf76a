// The invalid-input corpus, area aliases: buffer views (layout.decl_buffer) that overflow or
// misalign their storage, mix element types, or are declared implicitly, refused by
// verify-buffers.
// RUN: physlayout-opt %s -p verify-buffers --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @view_past_parameter(%A: !layout.buffer<8xf32>) {
  %p = layout.data %A : !layout.buffer<8xf32> -> !layout.ptr<f32>
  %v = layout.decl_buffer %p offset 4 : !layout.ptr<f32> -> !layout.buffer<2x4xf32>
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 3]]:3: error: verify-buffers: buffer %v of 32 bytes at byte offset 16 does not fit in its storage (parameter %A) of 32 bytes
// CHECK-NEXT: %v = layout.decl_buffer %p offset 4 : !layout.ptr<f32> -> !layout.buffer<2x4xf32>

// -----
func.func @vector_view_past_parameter(%A: !layout.buffer<6xf32>) {
  %p = layout.data %A : !layout.buffer<6xf32> -> !layout.ptr<f32>
  %v = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<2xvector<4xf32>>
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 3]]:3: error: verify-buffers: buffer %v of 32 bytes at byte offset 0 does not fit in its storage (parameter %A) of 24 bytes
// CHECK-NEXT: %v = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<2xvector<4xf32>>

// -----
func.func @f16_view_of_f32(%A: !layout.buffer<8xf32>) {
  %p = layout.data %A : !layout.buffer<8xf32> -> !layout.ptr<f32>
  %v = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf16>
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 3]]:3: error: verify-buffers: buffer %v has element type f16, which is not compatible with its data handle's element type f32
// CHECK-NEXT: %v = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf16>

// -----
// layout.data gives the handle %v was declared over: %w's offset counts from the start of %A.
func.func @view_of_view_overflows(%A: !layout.buffer<16xf32>) {
  %p = layout.data %A : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %v = layout.decl_buffer %p offset 8 : !layout.ptr<f32> -> !layout.buffer<8xf32>
  %q = layout.data %v : !layout.buffer<8xf32> -> !layout.ptr<f32>
  %w = layout.decl_buffer %q offset 12 : !layout.ptr<f32> -> !layout.buffer<8xf32>
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 3]]:3: error: verify-buffers: buffer %w of 32 bytes at byte offset 48 does not fit in its storage (parameter %A) of 64 bytes
// CHECK-NEXT: %w = layout.decl_buffer %q offset 12 : !layout.ptr<f32> -> !layout.buffer<8xf32>

// -----
func.func @view_of_padded_parameter(%A: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>) {
  %p = layout.data %A : !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32> -> !layout.ptr<f32>
  %v = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32>
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 3]]:3: error: verify-buffers: buffer %v of 64 bytes at byte offset 0 does not fit in its storage (parameter %A) of 48 bytes
// CHECK-NEXT: %v = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32>

// -----
func.func @implicit_select(%A: !layout.buffer<4xf32>, %B: !layout.buffer<4xf32>, %c: i1) {
  %b = arith.select %c, %A, %B : !layout.buffer<4xf32>
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 3]]:3: error: verify-buffers: buffer %b is implicitly declared as a result of 'arith.select'; a buffer must be a function parameter or the result of layout.decl_buffer
// CHECK-NEXT: %b = arith.select %c, %A, %B : !layout.buffer<4xf32>

// -----
func.func @implicit_if(%A: !layout.buffer<4xf32>, %c: i1) {
  %b = scf.if %c -> (!layout.buffer<4xf32>) {
    scf.yield %A : !layout.buffer<4xf32>
  } else {
    scf.yield %A : !layout.buffer<4xf32>
  }
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 7]]:3: error: verify-buffers: buffer %b is implicitly declared as a result of 'scf.if'; a buffer must be a function parameter or the result of layout.decl_buffer
// CHECK-NEXT: %b = scf.if %c -> (!layout.buffer<4xf32>) {

// -----
func.func @handle_from_select(%A: !layout.buffer<4xf32>, %c: i1) {
  %p = layout.data %A : !layout.buffer<4xf32> -> !layout.ptr<f32>
  %q = arith.select %c, %p, %p : !layout.ptr<f32>
  %v = layout.decl_buffer %q : !layout.ptr<f32> -> !layout.buffer<4xf32>
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 3]]:3: error: verify-buffers: decl_buffer's data handle %q is not defined by a parameter, layout.allocate, layout.data or a call (it comes from 'arith.select')
// CHECK-NEXT: %v = layout.decl_buffer %q : !layout.ptr<f32> -> !layout.buffer<4xf32>

// -----
func.func @allocation_overflow() {
  %p = layout.allocate [4, 4] : !layout.ptr<f32>
  %a = layout.decl_buffer %p offset 12 : !layout.ptr<f32> -> !layout.buffer<8xf32>
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 3]]:3: error: 'layout.decl_buffer' op buffer of 32 bytes at byte offset 48 does not fit in its allocation of 64 bytes
// CHECK-NEXT: %a = layout.decl_buffer %p offset 12 : !layout.ptr<f32> -> !layout.buffer<8xf32>

// -----
func.func @i64_view_of_i32(%A: !layout.buffer<8xi32>) {
  %p = layout.data %A : !layout.buffer<8xi32> -> !layout.ptr<i32>
  %v = layout.decl_buffer %p : !layout.ptr<i32> -> !layout.buffer<4xi64>
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 3]]:3: error: verify-buffers: buffer %v has element type i64, which is not compatible with its data handle's element type i32
// CHECK-NEXT: %v = layout.decl_buffer %p : !layout.ptr<i32> -> !layout.buffer<4xi64>

// -----
func.func @scope_mismatch(%A: !layout.buffer<8xf32, scope = "local">) {
  %p = layout.data %A : !layout.buffer<8xf32, scope = "local"> -> !layout.ptr<f32, scope = "local">
  %v = layout.decl_buffer %p : !layout.ptr<f32, scope = "local"> -> !layout.buffer<8xf32>
  func.return
}
// CHECK: aliases.mlir:[[# @LINE - 3]]:3: error: 'layout.decl_buffer' op buffer scope 'global' does not match the data handle's scope 'local'
// CHECK-NEXT: %v = layout.decl_buffer %p : !layout.ptr<f32, scope = "local"> -> !layout.buffer<8xf32>
